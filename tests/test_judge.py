"""The judge is a pure function of findings and check outcomes: each verdict, its order of
strength, and reasons in words (expected vs found, never a Python class name). Expected
verdicts are written here from the rules in docs/architecture.md, not computed by the judge."""

import pytest

from rmpeer.judge import EXIT_CODES, bandwidth_findings, judge, verdict, xid_findings
from rmpeer.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, UNFINISHED,
                           CheckResult, Finding, RunResult)
from rmpeer.topology import Floors, Topology

pytestmark = pytest.mark.offline


def check(outcome="passed", area="read/write", reason="", name="read"):
    return CheckResult(id=f"{name}/x", check=name, area=area, subject="one-per-card s0->t1", outcome=outcome,
                       reason=reason, layout="one-per-card")


def finding(severity, found="233 GB/s"):
    return Finding("bandwidth-floor", "read 0->1", "at least 355 GB/s", found, severity)


@pytest.mark.parametrize("findings, checks, want", [
    ([], [check()], CERTIFIED),
    ([], [], INCOMPLETE),                                            # no hardware check ran
    ([], [check("skipped")], INCOMPLETE),
    ([finding(INFO)], [check()], CERTIFIED),
    ([finding(DEGRADE)], [check()], DEGRADED),
    ([], [check("failed", area="fitness", reason="x")], DEGRADED),
    ([finding(DEGRADE)], [check("failed", reason="wrong memory")], NOT_CERTIFIED),
    ([finding(FAIL)], [check()], NOT_CERTIFIED),
    ([], [check("error", reason="setup refused")], NOT_CERTIFIED),
    ([finding(UNFINISHED)], [check("failed", reason="x")], INCOMPLETE),   # a cut run outranks a failure
], ids=["clean", "nothing-ran", "all-skipped", "info-only", "degraded", "fitness-check-failed",
        "fail-beats-degraded", "fail-finding", "error", "unfinished-beats-fail"])
def test_the_verdict(findings, checks, want):
    got, reasons = verdict(findings, checks)
    assert got == want
    assert (reasons == []) == (want == CERTIFIED)


def test_no_check_run_says_so():
    got, reasons = verdict([], [])
    assert got == INCOMPLETE and reasons == ["run: host: expected at least one hardware check run, "
                                             "found no hardware check ran"]


def test_exit_codes_are_the_documented_ones():
    assert EXIT_CODES == {CERTIFIED: 0, NOT_CERTIFIED: 1, DEGRADED: 4, INCOMPLETE: 5}


def test_one_reason_per_cause_and_no_class_names():
    checks = [check("failed", reason="read: one-per-card s0->t1: expected the buffer pattern of session 1, "
                                     "found session 0")] * 5
    result = RunResult(checks=checks)
    got, reasons = judge(result)
    assert got == NOT_CERTIFIED and len(reasons) == 1
    assert "expected" in reasons[0] and "found" in reasons[0]
    assert "Error" not in reasons[0] and "rmpeer." not in reasons[0]


def test_bandwidth_findings_name_the_floor_and_the_clocks():
    floors = Floors(cross_card_gbps=355.0, same_card_gbps=500.0, bidirectional_gbps=650.0)
    topo = Topology("h200x2-nv18", "", 2, "H200", {}, {}, {}, floors)
    figures = [{"src_card": 1, "dst_card": 0, "op": "read", "bytes": 256 << 20, "gbps": 233.1},
               {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 256 << 20, "gbps": 394.0}]
    clocks = {"after-traffic": {0: {"graphics_mhz": 345, "memory_mhz": 3201, "pstate": "P0"}}}
    found = bandwidth_findings(topo, figures, clocks)
    below = [f for f in found if f.subject == "read 1->0"]
    assert below and below[0].severity == DEGRADE
    assert "at least 355 GB/s" in below[0].expected
    assert "233.1 GB/s, below the floor of 355 GB/s" in below[0].found
    assert "345 MHz" in below[0].found
    assert [f.subject for f in bandwidth_findings(None, figures, clocks)] == ["read 1->0"]   # far below its sibling


def test_an_xid_is_allowed_only_when_a_detection_test_provoked_it():
    seen = {"readable": True, "xids": [{"xid": 31, "pci": None, "text": "Xid 31: MMU fault"}]}
    assert [f.severity for f in xid_findings(seen, [], [], set())] == [DEGRADE]
    assert xid_findings(seen, [], [("unknown", 31)], set()) == []
    assert xid_findings(seen, [], [], {31}) == []                    # the recorded run's detection test
    assert [f.severity for f in xid_findings(seen, [], [], {43})] == [DEGRADE]
