"""Nothing that could not be checked passes in silence: the checks a run could not make, from
its result alone (pure). A check that could not run is recorded as an INFO finding where it
is found (the kernel log unreadable for the Xid check, no topology to judge the links by,
--no-floors), or as an error beside the GPU-process lists; each becomes one entry of
`not_checked`, which the verdict line, the JSON line and the certificate list.

`certify --require-complete` refuses a run that would be CERTIFIED with any entry: its
certificate says INCOMPLETE (so no --if-stale accepts it) and the exit code is 8
(RunResult.exit_code). A worse
verdict (DEGRADED, NOT CERTIFIED) is never hidden by it."""

from __future__ import annotations

from rmpeer.model.result import CERTIFIED, INFO, REQUIRE_COMPLETE, UNFINISHED, WARNING_CHECKS, Finding

# passive's baseline note, and the warnings of checks made (a drift): no check was left out
NOT_A_CHECK = {"state", *WARNING_CHECKS}


def not_checked(result) -> list:
    out = []
    for f in result.findings:
        if f.severity == INFO and f.check not in NOT_A_CHECK:
            out.append({"check": f.check, "subject": f.subject, "reason": f.found})
    for when in ("before", "after", "now"):
        why = (result.gpu_processes or {}).get(f"{when}_error")
        if why:
            out.append({"check": "gpu-processes", "subject": when, "reason": why})
    seen, unique = set(), []
    for item in out:
        key = (item["check"], item["reason"])
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def refusals(verdict: str, unchecked: list) -> list:
    """--require-complete: the findings that refuse a run judged CERTIFIED while checks in
    `unchecked` (not_checked's entries) could not be made."""
    if verdict != CERTIFIED or not unchecked:
        return []
    return [Finding(REQUIRE_COMPLETE, i["check"], "it to be checked (--require-complete)",
                    f"not checked: {i['reason']}", UNFINISHED) for i in unchecked]
