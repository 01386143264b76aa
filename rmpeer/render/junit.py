"""`--junit FILE`: the results of one or many hosts as JUnit XML, as Jenkins and GitLab read it.

One <testsuite> per host under one <testsuites>: its hostname attribute names the host, its
<properties> the driver, SKU, certificate id, tier and verdict. One <testcase> per check;
a failed check carries its reason as the failure's message and text, a skipped one its
reason. A JUnit reader knows only pass, fail, error and skip, so what makes a host DEGRADED
or INCOMPLETE without failing a check (floors, links, Xids, a check that could not run) is
one more <testcase> per such finding, and one <testcase> "verdict" per host fails unless the
host is CERTIFIED: a reader that counts failures never sees a clean host that is not."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import datetime, timezone

from rmpeer.model.result import CERTIFIED, INCOMPLETE, RunResult
from rmpeer.model.selection import selection_line
from rmpeer.render.entries import BROKEN, FAILED, finding_entries
from rmpeer.render.verdict import compact

# XML 1.0 cannot carry these characters at all (not even escaped): a reason quoting raw bytes
# would make the whole file unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MESSAGE_CHARS = 1000      # a message attribute is shown in one line; the element's text keeps it all


def _text(value) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


def host_name(result: RunResult) -> str:
    """The host a suite is about: the node it ran on; a replay names the recorded host too."""
    node = result.node or "unknown-host"
    if result.is_replay and result.target.get("recorded_host"):
        return f"{node} (replay of {result.target['recorded_host']})"
    return node


def sku(result: RunResult) -> str:
    """The cards' model names, counted: "2 x NVIDIA H200"."""
    names = Counter(c.get("name") or "unknown card" for c in result.host.get("cards", []))
    return ", ".join(f"{n} x {name}" for name, n in names.items()) or "no card"


def driver(result: RunResult) -> str:
    h = result.host
    return " ".join(x for x in (h.get("driver_version", ""), f"({h['flavour']})" if h.get("flavour") else "") if x)


def _timestamp(started: str) -> str | None:
    """JUnit's timestamp is an ISO 8601 date and time without a zone: the run's start in UTC."""
    if not started:
        return None
    try:
        t = datetime.fromisoformat(started.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return t.isoformat(timespec="seconds")


def _properties(result: RunResult) -> list[tuple[str, str]]:
    props = [("node", result.node), ("tier", result.tier), ("verdict", result.verdict),
             ("certificate_id", result.certificate_id), ("driver", driver(result)), ("sku", sku(result)),
             ("rmpeer_version", result.version), ("target", result.target.get("kind", "live"))]
    if result.is_replay:
        props += [("replay", "a replay of a recording: rmpeer's requests were checked, not this host"),
                  ("recorded_host", result.target.get("recorded_host") or ""),
                  ("transcript", result.target.get("transcript") or "")]
    if result.valid_until:
        props.append(("valid_until", result.valid_until))
    props += [("reason", r) for r in result.reasons]
    return props + _cards(result)


def _cards(result: RunResult) -> list[tuple[str, str]]:
    """The cards the run took (when it took some: `cards: 1 of 0-1 (from --cards)`), and each
    card's and pair's verdict, by the host's card numbers and UUIDs: a reader of the JUnit
    file sees which GPUs a verdict covers."""
    chosen = selection_line(result.host.get("selection"))
    props = [("selection", chosen)] if chosen else []
    per = compact(result)
    props += [("card", f"{c['card']} ({c['uuid'] or 'uuid unknown'}): {c['verdict']}") for c in per["cards"]]
    props += [("pair", f"{p['pair']}: {p['verdict']}") for p in per["pairs"]]
    return props


def _case(suite: ET.Element, classname: str, name: str, seconds: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=_text(classname), name=_text(name), time=f"{seconds:.3f}")


def _outcome(case: ET.Element, tag: str, kind: str, message: str) -> None:
    el = ET.SubElement(case, tag, message=_text(message.splitlines()[0][:MESSAGE_CHARS] if message else kind),
                       type=kind)
    if tag != "skipped":
        el.text = _text(message or kind)


def _classname(area: str, layout: str | None) -> str:
    # JUnit readers split a classname at its last dot into package and class: keep dots out of the parts
    part = lambda s: re.sub(r"[^A-Za-z0-9_-]+", "-", s).strip("-") or "none"
    return "rmpeer." + part(area or "check") + (f".{part(layout)}" if layout else "")


def testsuite(result: RunResult) -> ET.Element:
    suite = ET.Element("testsuite", name=_text(host_name(result)), hostname=_text(result.node or "unknown-host"))
    stamp = _timestamp(result.started)
    if stamp:
        suite.set("timestamp", stamp)
    props = ET.SubElement(suite, "properties")
    for name, value in _properties(result):
        ET.SubElement(props, "property", name=name, value=_text(value))
    for check in result.checks:
        case = _case(suite, _classname(check.area, check.layout), check.id, check.duration_s)
        if check.outcome == "failed":
            _outcome(case, "failure", "failed", check.reason)
        elif check.outcome == "error":
            _outcome(case, "error", "error", check.reason)
        elif check.outcome == "skipped":
            _outcome(case, "skipped", "skipped", check.reason)
        elif check.outcome != "passed":
            _outcome(case, "error", check.outcome, f"unknown outcome {check.outcome!r}: {check.reason}")
    # the findings no check stands for (health, topology, deadline, ...), once each, as the
    # report shows them (rmpeer.render.entries): a failed check already says its own
    for e in finding_entries(result):
        if e.kind != "finding":
            continue
        tag, kind = {FAILED: ("failure", "NOT CERTIFIED"), BROKEN: ("failure", "DEGRADED")}.get(
            e.status, ("error", "INCOMPLETE"))
        _outcome(_case(suite, "rmpeer.finding", e.name), tag, kind, e.text)
    verdict = _case(suite, "rmpeer", "verdict", result.duration_s)
    if result.verdict != CERTIFIED:
        why = "\n".join([result.verdict, *result.reasons])
        _outcome(verdict, "error" if result.verdict == INCOMPLETE else "failure", result.verdict, why)
    cases = suite.findall("testcase")
    count = lambda tag: sum(1 for c in cases if c.find(tag) is not None)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(count("failure")))
    suite.set("errors", str(count("error")))
    suite.set("skipped", str(count("skipped")))
    suite.set("time", f"{float(result.duration_s):.3f}")
    return suite


def junit_xml(results: list[RunResult]) -> str:
    """One <testsuites> holding one <testsuite> per result (host), as a UTF-8 XML document."""
    root = ET.Element("testsuites", name="rmpeer")
    totals = Counter()
    for result in results:
        suite = testsuite(result)
        root.append(suite)
        for key in ("tests", "failures", "errors", "skipped"):
            totals[key] += int(suite.get(key))
        totals["time"] += float(result.duration_s)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    root.set("time", f"{totals['time']:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
