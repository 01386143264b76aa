"""Tests that kill the mutants of rmpeer/render/entries.py (docs/mutation.md): the verdict's and
the findings' entries of RunResults built by hand, each written out here from the statuses,
meanings and categories docs/report.md and the module's docstring give, never taken from
verdict_entry or finding_entries."""

import pytest

from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, UNFINISHED,
                                 CheckResult, Finding, RunResult)
from rmpeer.render.entries import Entry, finding_entries, verdict_entry

pytestmark = pytest.mark.offline


@pytest.mark.parametrize("verdict, status, meaning", [
    (CERTIFIED, "passed", "every check passed"),
    (NOT_CERTIFIED, "failed", "a conformance check failed: drain the node"),
    (DEGRADED, "broken", "correct, but unfit (floors, links, Xids): a soft signal"),
    (INCOMPLETE, "unknown", "no verdict: the run could not finish or a check could not run; not drained")])
def test_the_verdict_entry_of_each_verdict(verdict, status, meaning):
    got = verdict_entry(RunResult(verdict=verdict, reasons=["first", "second"]))
    assert got == Entry(f"verdict: {verdict}", status, f"{verdict}: first", f"{verdict}: {meaning}\nfirst\nsecond",
                        "verdict", "verdict")


def test_the_verdict_entry_without_reasons_and_of_a_verdict_it_does_not_know():
    assert verdict_entry(RunResult(verdict=CERTIFIED)) == Entry("verdict: CERTIFIED", "passed", "CERTIFIED",
                                                                "CERTIFIED: every check passed", "verdict", "verdict")
    assert verdict_entry(RunResult(verdict="BOGUS")) == Entry("verdict: BOGUS", "unknown", "BOGUS", "BOGUS: ",
                                                              "verdict", "verdict")


def test_each_finding_no_check_stands_for_once_then_each_check_not_made():
    findings = [Finding("bandwidth-floor", "read 0->1", "355 GB/s", "120 GB/s", DEGRADE),
                Finding("read", "pair 1->0", "the pattern", "bytes differ", FAIL),       # the read check says it
                Finding("floors", "host", "a floor", "none", FAIL),
                Finding("xid", "host", "no Xid", "Xid 79", UNFINISHED),
                Finding("boost", "card 0", "a", "b", DEGRADE), Finding("clocks", "card 0", "a", "b", DEGRADE),
                Finding("deadline", "host", "a", "b", UNFINISHED), Finding("run", "host", "a", "b", UNFINISHED),
                Finding("topology", "host", "a", "b", FAIL), Finding("pcie", "card 0", "a", "b", DEGRADE),
                Finding("drift", "card 0", "a", "b", INFO),                                 # never an entry
                Finding("floors", "host", "a floor", "none", DEGRADE)]                      # the same text: once
    result = RunResult(checks=[CheckResult("r", "read", "read/write", "pair 1->0", "failed")], findings=findings,
                       not_checked=[{"check": "gpu-processes", "subject": "after", "reason": "no /proc"},
                                    {"check": "xid", "subject": "host", "reason": "no kmsg"}])
    assert finding_entries(result) == [
        Entry("bandwidth-floor: read 0->1", "broken", "bandwidth-floor: read 0->1: expected 355 GB/s, found 120 GB/s",
              "bandwidth-floor: read 0->1: expected 355 GB/s, found 120 GB/s", "floor misses", "finding"),
        Entry("floors: host", "failed", "floors: host: expected a floor, found none",
              "floors: host: expected a floor, found none", "floor misses", "finding"),
        Entry("xid: host", "unknown", "xid: host: expected no Xid, found Xid 79", "xid: host: expected no Xid, found Xid 79",
              "Xids", "finding"),
        Entry("boost: card 0", "broken", "boost: card 0: expected a, found b", "boost: card 0: expected a, found b",
              "clocks and boost", "finding"),
        Entry("clocks: card 0", "broken", "clocks: card 0: expected a, found b", "clocks: card 0: expected a, found b",
              "clocks and boost", "finding"),
        Entry("deadline: host", "unknown", "deadline: host: expected a, found b", "deadline: host: expected a, found b",
              "runs cut short", "finding"),
        Entry("run: host", "unknown", "run: host: expected a, found b", "run: host: expected a, found b",
              "runs cut short", "finding"),
        Entry("topology: host", "failed", "topology: host: expected a, found b", "topology: host: expected a, found b",
              "topology", "finding"),
        Entry("pcie: card 0", "broken", "pcie: card 0: expected a, found b", "pcie: card 0: expected a, found b",
              "health facts", "finding"),
        Entry("not checked: gpu-processes (after)", "skipped", "no /proc", "no /proc", "not checked", "not-checked"),
        Entry("not checked: xid (host)", "skipped", "no kmsg", "no kmsg", "not checked", "not-checked")]


def test_a_run_without_findings_has_no_entries():
    assert finding_entries(RunResult()) == []
