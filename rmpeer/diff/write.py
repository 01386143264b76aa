"""`rmpeer diff`'s files: --json (the document of rmpeer.diff.render.to_json) and --alluredir
(one Allure result per aspect), written without following a link planted at their names
(rmpeer.safewrite)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from rmpeer.diff.side import percent
from rmpeer.diff.render import describe, show
from rmpeer.errors import ConfigError
from rmpeer.safewrite import make_folder, write_file


def write_json(path: str, doc: dict) -> None:
    try:
        write_file(Path(path), json.dumps(doc, indent=1, default=str) + "\n", what="--json")
    except OSError as exc:
        raise ConfigError(f"--json {path}: cannot write it ({exc.strerror or exc})") from None


def write_allure(folder: str, a, b, aspects, tolerance) -> None:
    """One Allure result per aspect (failed: it differs; passed: the same; skipped: not
    comparable), and a passed 'same behaviour' result when nothing differs."""
    from allure_commons.logger import AllureFileLogger
    from allure_commons.model2 import Attachment, Label, Parameter, Status, StatusDetails, TestResult

    try:
        make_folder(folder)        # a link planted there is refused, never written through
        logger = AllureFileLogger(folder)
    except OSError as exc:
        raise ConfigError(f"--alluredir {folder}: cannot write there ({exc.strerror or exc})") from None
    pair = f"{Path(a.path).name} vs {Path(b.path).name}"
    params = [Parameter(name="A", value=describe(a)), Parameter(name="B", value=describe(b)),
              Parameter(name="tolerance", value=f"±{percent(tolerance)}")]
    labels = [Label(name="parentSuite", value="rmpeer diff"), Label(name="suite", value=pair),
              Label(name="epic", value="driver release"), Label(name="framework", value="rmpeer")]
    results = []
    for x in aspects:
        status = Status.SKIPPED if x.not_comparable else Status.FAILED if x.differs else Status.PASSED
        message = (x.not_comparable if x.not_comparable else
                   f"{len(x.differences)} differ" if x.differs else "same")
        table = "\n".join(f"{k}: A {show(va)} | B {show(vb)}" for k, va, vb in x.differences[:200])
        results.append((x.name, status, message, table))
    if not any(x.differs for x in aspects):
        results.append(("same behaviour", Status.PASSED, "no aspect differs", ""))
    for name, status, message, table in results:
        case = f"rmpeer diff {pair}: {name}"
        result = TestResult(uuid=str(uuid.uuid4()), name=name, fullName=case,
                            historyId=str(uuid.uuid5(uuid.NAMESPACE_URL, case)),
                            testCaseId=str(uuid.uuid5(uuid.NAMESPACE_URL, f"rmpeer diff: {name}")),
                            status=status, stage="finished",
                            statusDetails=StatusDetails(message=message, trace=table or None),
                            labels=labels + [Label(name="feature", value=name)], parameters=params)
        if table:
            source = f"{uuid.uuid4()}-attachment.txt"
            logger.report_attached_data(table, source)
            result.attachments.append(Attachment(name="differences", source=source, type="text/plain"))
        logger.report_result(result)


def write_set_allure(folder: str, found, tolerance) -> None:
    """A set diff's Allure results: one per change (failed, naming its hosts), one per kind
    of pair's bandwidth (failed when a matched host moved beyond the tolerance), and a
    passed 'same behaviour' result when nothing differs."""
    from allure_commons.logger import AllureFileLogger
    from allure_commons.model2 import Label, Parameter, Status, StatusDetails, TestResult

    try:
        make_folder(folder)
        logger = AllureFileLogger(folder)
    except OSError as exc:
        raise ConfigError(f"--alluredir {folder}: cannot write there ({exc.strerror or exc})") from None
    labels = [Label(name="parentSuite", value="rmpeer diff"), Label(name="suite", value="two sets of hosts"),
              Label(name="epic", value="driver release"), Label(name="framework", value="rmpeer")]
    matched = len(found.pairs)
    results = [(f"{c['aspect']}: {c['key']}", Status.FAILED,
                f"A {c['a']} -> B {c['b']} on {len(c['hosts'])} of {matched} host(s): {', '.join(c['hosts'])}",
                c["aspect"]) for c in found.changes]
    for r in found.bandwidth:
        moved = ", ".join(f"{m['b']} {m['a_gbps']:.1f} -> {m['b_gbps']:.1f} GB/s ({m['change']:+.1%})"
                          for m in r["moved"])
        results.append((f"bandwidth: {r['kind']}", Status.FAILED if r["beyond"] else Status.PASSED,
                        f"A median {r['a']['median']} GB/s, B median {r['b']['median']} GB/s; {r['beyond']} of "
                        f"{r['compared']} host(s) moved beyond ±{percent(tolerance)}" + (f"; most: {moved}" if moved
                                                                                        else ""), "bandwidth"))
    if not found.differs:
        results.append(("same behaviour", Status.PASSED, f"no aspect differs on the {matched} matched host(s)", "verdict"))
    for name, status, message, feature in results:
        case = f"rmpeer diff sets: {name}"
        logger.report_result(TestResult(
            uuid=str(uuid.uuid4()), name=name, fullName=case, historyId=str(uuid.uuid5(uuid.NAMESPACE_URL, case)),
            testCaseId=str(uuid.uuid5(uuid.NAMESPACE_URL, case)), status=status, stage="finished",
            statusDetails=StatusDetails(message=message), labels=labels + [Label(name="feature", value=feature)],
            parameters=[Parameter(name="tolerance", value=f"±{percent(tolerance)}")]))
