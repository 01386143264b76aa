"""What a run could not check, from its result alone (rmpeer.judge.unchecked): each INFO
finding and each GPU-process list that could not be read is one entry of `not_checked`,
once; --require-complete refuses a CERTIFIED run with any. Results are hand-made here, as
the run writes them (RunResult's fields)."""

import pytest

from rmpeer.judge.unchecked import not_checked, refusals
from rmpeer.model.result import CERTIFIED, DEGRADED, INCOMPLETE, INFO, UNFINISHED, Finding, RunResult

pytestmark = pytest.mark.offline


def test_each_gpu_process_list_that_could_not_be_read_is_not_checked():
    """The lists read before the run, after it, and now (passive): each one unread is an
    entry naming when, whatever the others."""
    why = "/proc/1234/fd: Permission denied"
    for when in ("before", "after", "now"):
        result = RunResult(gpu_processes={f"{when}_error": why})
        assert not_checked(result) == [{"check": "gpu-processes", "subject": when, "reason": why}], when


def test_one_reason_of_one_check_is_one_entry_and_two_reasons_are_two():
    log = Finding("xid", "host", "a readable kernel log", "/dev/kmsg: Permission denied", INFO)
    other = Finding("xid", "host", "a readable kernel log", "dmesg: Operation not permitted", INFO)
    result = RunResult(findings=[log, log, other])
    assert [i["reason"] for i in not_checked(result)] == [log.found, other.found]


def test_require_complete_refuses_only_a_certified_run_and_says_so():
    items = [{"check": "xid", "subject": "host", "reason": "/dev/kmsg: Permission denied"}]
    (f,) = refusals(CERTIFIED, items)
    assert (f.check, f.subject, f.severity) == ("require-complete", "xid", UNFINISHED)
    assert refusals(DEGRADED, items) == []
    # its refusal alone is exit 8 (UNCHECKED); beside a run cut short it is that run's exit 5
    alone = RunResult(verdict=INCOMPLETE, findings=[f])
    assert (alone.exit_code, alone.exit_name) == (8, "UNCHECKED")
    cut = Finding("run", "host", "the run to finish", "SIGTERM", UNFINISHED)
    beside = RunResult(verdict=INCOMPLETE, findings=[f, cut])
    assert (beside.exit_code, beside.exit_name) == (5, "INCOMPLETE")


def test_a_drift_warning_is_a_check_made_not_one_left_out():
    """The live --no-boost run of docs/evidence/h200x1-20261205T0424Z-drift-busy printed its
    drift warning also as "not checked: drift (245.6 GB/s, 56% below that median)", and under
    --require-complete a CERTIFIED run with a drift would have been refused (exit 8). A drift
    and a history note are warnings of checks made: said under the verdict line, never in
    not_checked, never refused."""
    import gzip
    import json
    from pathlib import Path

    evidence = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261205T0424Z-drift-busy"
    path = evidence / "drift" / "certificate-noboost.json"
    if not path.is_file():
        pytest.skip("docs/evidence (a checkout, not a wheel)")
    doc = json.loads(path.read_text())
    assert {"check": "drift", "subject": "same-card 0->0 (256 MiB)",
            "reason": "245.6 GB/s, 56% below that median"} in doc["not_checked"]    # what the run wrote
    drift = [Finding(**{k: f[k] for k in ("check", "subject", "expected", "found", "severity")})
             for f in doc["findings"] if f["check"] == "drift"]
    assert drift and all(f.severity == INFO for f in drift)
    note = Finding("history", "host", "this host's history of its runs", "a new baseline: the driver changed", INFO)
    result = RunResult(findings=[*drift, note])
    assert not_checked(result) == []
    assert refusals(CERTIFIED, not_checked(result)) == []
