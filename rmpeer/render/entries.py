"""What a reader of a report sees beside the checks: the verdict as a result of its own, and
each finding no check stands for (health, topology, deadline, boost, Xid, a check that could
not run) as one more. JUnit and Allure both render these, so that a run NOT CERTIFIED by a
health fact alone never reads as a green page of passed tests. Pure: from a RunResult.

Statuses (docs/report.md):
  verdict     CERTIFIED passed, NOT CERTIFIED failed, DEGRADED broken, INCOMPLETE unknown
  finding     fail failed, degraded broken, incomplete unknown; a check not made skipped
INCOMPLETE has a colour of its own (Allure's "unknown"): no verdict was reached, and a
scheduler never drains a node for it."""

from __future__ import annotations

from dataclasses import dataclass

from rmpeer.model.result import CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, NOT_CERTIFIED, UNFINISHED

PASSED, FAILED, BROKEN, SKIPPED, UNKNOWN = "passed", "failed", "broken", "skipped", "unknown"
VERDICT_STATUS = {CERTIFIED: PASSED, NOT_CERTIFIED: FAILED, DEGRADED: BROKEN, INCOMPLETE: UNKNOWN}
FINDING_STATUS = {FAIL: FAILED, DEGRADE: BROKEN, UNFINISHED: UNKNOWN}
# what a verdict means to whoever acts on it, said on the verdict's result
MEANING = {CERTIFIED: "every check passed", NOT_CERTIFIED: "a conformance check failed: drain the node",
           DEGRADED: "correct, but unfit (floors, links, Xids): a soft signal",
           INCOMPLETE: "no verdict: the run could not finish or a check could not run; not drained"}
# the category a finding is filed under, by its check (Allure's categories, docs/report.md)
CATEGORY = {"bandwidth-floor": "floor misses", "floors": "floor misses", "xid": "Xids", "boost": "clocks and boost",
            "clocks": "clocks and boost", "deadline": "runs cut short", "run": "runs cut short",
            "topology": "topology"}


@dataclass(frozen=True)
class Entry:
    name: str          # the title a reader reads
    status: str        # passed, failed, broken, skipped, unknown
    message: str       # one line
    text: str          # the whole of it
    category: str
    kind: str          # verdict, finding, not-checked


def verdict_entry(result) -> Entry:
    message = result.verdict + (f": {result.reasons[0]}" if result.reasons else "")
    text = "\n".join([f"{result.verdict}: {MEANING.get(result.verdict, '')}", *result.reasons])
    return Entry(f"verdict: {result.verdict}", VERDICT_STATUS.get(result.verdict, UNKNOWN), message, text,
                 "verdict", "verdict")


def finding_entries(result) -> list:
    """One entry per finding no check of the run stands for (a failed check already shows its
    own), the same finding once; and one per check that could not run (skipped, with why)."""
    tested = {c.check for c in result.checks}
    out, seen = [], set()
    for f in result.findings:
        if f.severity not in FINDING_STATUS or f.check in tested or f.text in seen:
            continue
        seen.add(f.text)
        out.append(Entry(f"{f.check}: {f.subject}", FINDING_STATUS[f.severity], f.text, f.text,
                         CATEGORY.get(f.check, "health facts"), "finding"))
    for item in result.not_checked:
        out.append(Entry(f"not checked: {item['check']} ({item['subject']})", SKIPPED, item["reason"], item["reason"],
                         "not checked", "not-checked"))
    return out
