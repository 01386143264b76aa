"""A failure the fitness judge finds and the fitness check reports is one reason, however
long its sentence: both sides shorten it the same way (rmpeer.judge.verdict.short)."""

from rmpeer.judge.passive import checks_of
from rmpeer.judge.verdict import judge
from rmpeer.pytest_plugin.results import Collector
from rmpeer.model.result import DEGRADE, FAIL, NOT_CERTIFIED, CheckResult, Finding, RunResult

# a floor-miss sentence as an 8-card host words it: well over the 300 characters kept
LONG = ("bandwidth read 0->7: expected at least 355 GB/s, found 231.8 GB/s below "
        + "18 links x 26.562 GB/s x 0.743 = 355.2 GB/s (derived; efficiency calibrated on 2 x H200); " * 5)


def _collected(message: str):
    c = Collector()
    c.tests["suites/test_fitness.py::test_bandwidth"] = {
        "nodeid": "suites/test_fitness.py::test_bandwidth", "check": "bandwidth-floor", "area": "fitness",
        "subject": "read 0->7", "outcome": "failed", "message": message, "duration": 0.1, "params": {}}
    return c.checks()


def test_a_long_floor_miss_is_one_reason():
    assert len(LONG) > 400
    r = RunResult(checks=_collected(LONG),
                  findings=[Finding("bandwidth-floor", "read 0->7", "the check to pass", LONG, DEGRADE)])
    verdict, reasons, _ = judge(r)
    assert verdict == "DEGRADED"
    assert len(reasons) == 1, reasons
    assert reasons[0].startswith("bandwidth read 0->7: expected at least 355 GB/s, found 231.8 GB/s")


def test_a_passive_finding_longer_than_its_checks_reason_is_one_reason():
    """A passive check's reason is its findings' texts joined by "; ", cut at 300 characters
    (judge.passive.checks_of); the judge reads a reason of exactly 300 characters that starts
    one finding's text as that finding (verdict.check_findings): the finding once, not again
    as the failed check's."""
    found = "cards 0->7: P2P NVLINK_SUPPORTED is False, expected True; " * 6
    f = Finding("topology", "host", "the topology h200x8-nvswitch", found, FAIL)
    checks, findings = checks_of([("p2p-caps", "host", [f])])
    assert len(checks[0].reason) == 300 < len(f.text)
    verdict, reasons, _ = judge(RunResult(checks=checks + [CheckResult("read/x", "read", "read/write", "s0->t1",
                                                                    "passed")], findings=findings))
    assert verdict == NOT_CERTIFIED
    assert len(reasons) == 1, reasons
    assert reasons[0].startswith("topology: host: expected the topology h200x8-nvswitch, found cards 0->7")
