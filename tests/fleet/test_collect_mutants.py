"""`rmpeer fleet collect` (rmpeer/fleet/collect.py), part by part, in this process: which
nodes a sweep's folder and its sweep.json give, the node table, the signatures line,
summary.jsonl, the merged report's command, the one re-run of a node DEGRADED by its floors
alone, and the drains and resumes. Written to kill the mutants mutmut left alive
(docs/mutation.md). The expected values come from collect.py's docstring and docs/fleet.md
(only a verdict moves a node; a node that gave no verdict is an `error`, never drained nor
resumed; a resume only of a node whose reason starts with `rmpeer:`), errors.py's exit codes
and what `fleet sweep` writes into sweep.json; every row and line is spelled out by hand.
Slurm (srun, scontrol) and the Allure CLI are stood in for: what collect would run is
recorded."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError
from rmpeer.fleet import collect as fc
from rmpeer.fleet import outcome as oc
from rmpeer.machine.signing import BAD, NO_KEY, OTHER_KEY, UNSIGNED, VERIFIED
from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, NOT_CERTIFIED, CheckResult, Finding,
                                 RunResult)

pytestmark = pytest.mark.offline
READ = Finding("read", "pair 0->1", "the bytes written", "3 bytes differ", FAIL)
FLOOR = Finding("bandwidth-floor", "read 1->0", "at least 355 GB/s", "232.9 GB/s", DEGRADE)
XID = Finding("xid", "card 1", "no Xid", "Xid 79", DEGRADE)
SUBMITTED = "2026-12-05T10:00:00Z"


def node(shared: Path, name: str, verdict=CERTIFIED, findings=(), exit_code=None, tier="quick", target=None,
         reasons=(), duration_s=2.0, status=None, **status_fields) -> Path:
    """A node's folder as `rmpeer fleet node` leaves it: certificate.json and status.json."""
    folder = shared / name
    folder.mkdir(parents=True)
    result = RunResult(node=name, tier=tier, verdict=verdict, findings=list(findings), reasons=list(reasons),
                       target=target or {"kind": "live"}, duration_s=duration_s,
                       checks=[CheckResult("read/x", "read", "read/write", "pair 0->1", "passed")])
    (folder / "certificate.json").write_text(json.dumps(result.to_dict()))
    code = {CERTIFIED: EXIT_OK, NOT_CERTIFIED: EXIT_NOT_CERTIFIED, DEGRADED: EXIT_DEGRADED}[verdict]
    st = {"node": name, "exit": code if exit_code is None else exit_code, **status_fields}
    (folder / oc.STATUS).write_text(status if status is not None else json.dumps(st))
    return folder


def record(shared: Path, **fields) -> None:
    (shared / "sweep.json").write_text(json.dumps(fields))


def states(outcomes) -> list:
    return [(o.node, o.state) for o in outcomes]


# ---- gather: the nodes of a sweep --------------------------------------------------------------

def test_without_a_sweep_record_every_folder_is_a_node_in_name_order(tmp_path):
    node(tmp_path, "gpu-b")
    node(tmp_path, "gpu-a", NOT_CERTIFIED, [READ])
    outcomes, rec = fc.gather(tmp_path)
    assert states(outcomes) == [("gpu-a", "fail"), ("gpu-b", "pass")] and rec == {}


def test_a_node_the_record_names_without_a_folder_is_an_error_and_a_folder_it_does_not_name_is_read(tmp_path):
    node(tmp_path, "gpu-c")
    record(tmp_path, nodes=["gpu-d", "gpu-a"], tier="quick")
    outcomes, rec = fc.gather(tmp_path)
    assert states(outcomes) == [("gpu-a", "error"), ("gpu-c", "pass"), ("gpu-d", "error")]
    assert rec == {"nodes": ["gpu-d", "gpu-a"], "tier": "quick"}
    assert outcomes[0].line == "rmpeer: tool: no result: the node did not run or did not finish"
    assert (outcomes[0].verdict, outcomes[0].result, outcomes[0].exit_code) == ("", None, None)


def test_a_record_without_nodes_or_tier_names_no_node_and_asks_the_full_tier(tmp_path):
    node(tmp_path, "gpu-a", tier="quick")
    record(tmp_path, run_id="", submitted=None)
    outcomes, rec = fc.gather(tmp_path)
    assert states(outcomes) == [("gpu-a", "pass")] and rec == {"run_id": "", "submitted": None}


@pytest.mark.parametrize("text, said", [
    ("{", "unreadable (Expecting property name enclosed in double quotes)"),
    ("", "unreadable (Expecting value)"),
    ('{"nodes": NaN}', "unreadable (NaN is not a number rmpeer writes)"),
    (b'\xff{}', "unreadable ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"),
    ("[]", "not a sweep record (no list of node names)"),
    ('{"nodes": "gpu-a"}', "not a sweep record (no list of node names)"),
    ('{"nodes": ["gpu-a", 5]}', "not a sweep record (no list of node names)"),
    ('{"nodes": ["gpu-a", ".hidden", "a/b"]}', "not a sweep record (it names '.hidden', no node's folder name)"),
    ('{"nodes": ["a/b"]}', "not a sweep record (it names 'a/b', no node's folder name)"),
    ('{"nodes": [""]}', "not a sweep record (it names '', no node's folder name)"),
    ('{"nodes": ["a\\nb"]}', "not a sweep record (it names 'a\\nb', no node's folder name)"),
    ('{"tier": "deep"}', "not a sweep record (its tier, run id or time is not what fleet sweep writes)"),
    ('{"tier": null}', "not a sweep record (its tier, run id or time is not what fleet sweep writes)"),
    ('{"run_id": ["r1"]}', "not a sweep record (its tier, run id or time is not what fleet sweep writes)"),
    ('{"submitted": 5}', "not a sweep record (its tier, run id or time is not what fleet sweep writes)"),
])
def test_a_sweep_record_of_another_kind_is_one_line_naming_it(tmp_path, text, said):
    node(tmp_path, "gpu-a")
    if isinstance(text, bytes):
        (tmp_path / "sweep.json").write_bytes(text)
    else:
        (tmp_path / "sweep.json").write_text(text)
    with pytest.raises(ConfigError) as caught:
        fc.gather(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'sweep.json'}: {said}"


def test_a_sweep_record_is_read_up_to_16_mib(tmp_path):
    node(tmp_path, "gpu-a")
    head = b'{"nodes": ["gpu-a"], "pad": "'
    (tmp_path / "sweep.json").write_bytes(head + b"x" * ((16 << 20) - len(head) - 2) + b'"}')
    assert states(fc.gather(tmp_path)[0]) == [("gpu-a", "pass")]
    (tmp_path / "sweep.json").write_bytes(head + b"x" * ((16 << 20) - len(head) - 1) + b'"}')
    with pytest.raises(ConfigError) as caught:
        fc.gather(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'sweep.json'}: refused: larger than 16777216 bytes"


def test_a_sweep_record_that_is_a_folder_is_refused_not_taken_for_none(tmp_path):
    node(tmp_path, "gpu-a")
    (tmp_path / "sweep.json").mkdir()
    with pytest.raises(ConfigError) as caught:
        fc.gather(tmp_path)
    assert str(tmp_path / "sweep.json") in str(caught.value)


@pytest.mark.parametrize("names", [["gpu-a", "gpu-b"], ["gpu-a", "gpu-b", "x.y", "n_1"]])
def test_node_names_that_are_folder_names_are_taken(tmp_path, names):
    node(tmp_path, "gpu-a")
    record(tmp_path, nodes=names)
    assert [o.node for o in fc.gather(tmp_path)[0]] == sorted(names)


def test_a_folder_left_by_an_earlier_sweep_is_an_error_unless_its_run_ended_after_this_one_was_submitted(tmp_path):
    node(tmp_path, "same", run_id="r2")
    node(tmp_path, "older", reasons=["r"], duration_s=7.5, run_id="r1", at="2026-12-05T09:59:59Z")
    node(tmp_path, "later", run_id="r1", at="2026-12-05T10:00:01Z")
    node(tmp_path, "at-once", at=SUBMITTED)
    node(tmp_path, "unnamed")
    (tmp_path / "broken").mkdir()        # left nothing
    record(tmp_path, nodes=["same", "older", "later", "at-once", "unnamed", "broken"], run_id="r2", submitted=SUBMITTED)
    outcomes = {o.node: o for o in fc.gather(tmp_path)[0]}
    assert {n: o.state for n, o in outcomes.items()} == {"at-once": "pass", "broken": "error", "later": "pass",
                                                        "older": "error", "same": "pass", "unnamed": "error"}
    older = outcomes["older"]
    assert older.line == ("rmpeer: tool: status.json is of another run (run id r1, this sweep's r2): not this "
                          "sweep's result")
    assert (older.verdict, older.reasons, older.duration_s) == (CERTIFIED, ["r"], 7.5)
    assert outcomes["unnamed"].line == ("rmpeer: tool: status.json is of another run (run id none, this sweep's r2): "
                                        "not this sweep's result")
    # an error already (no certificate) keeps its own reason
    assert outcomes["broken"].line == "rmpeer: tool: no result: the node did not run, or did not finish"


def test_without_a_run_id_in_the_record_no_folder_is_another_runs(tmp_path):
    node(tmp_path, "gpu-a", run_id="r1", at="2026-12-01T00:00:00Z")
    record(tmp_path, nodes=["gpu-a"], submitted=SUBMITTED)
    assert states(fc.gather(tmp_path)[0]) == [("gpu-a", "pass")]


@pytest.mark.parametrize("at, submitted, later", [
    ("2026-12-05T10:00:00Z", "2026-12-05T10:00:00Z", True),
    ("2026-12-05T10:00:01Z", "2026-12-05T10:00:00Z", True),
    ("2026-12-06T00:00:00Z", "2026-12-05T23:59:59Z", True),
    ("2026-12-05T09:59:59Z", "2026-12-05T10:00:00Z", False),
    (None, "2026-12-05T10:00:00Z", False),
    ("2026-12-05T10:00:00Z", None, False),
    ("2026-12-05 10:00:00", "2026-12-05T09:00:00Z", False),
    ("yesterday", "2026-12-05T10:00:00Z", False),
])
def test_a_run_is_later_than_the_sweep_by_their_utc_stamps(at, submitted, later):
    assert fc._later(at, submitted) is later


def test_a_certificate_of_a_shallower_tier_than_the_sweep_asked_is_no_pass_of_it(tmp_path):
    replay = {"kind": "replay", "transcript": "/r/h200x2.jsonl.gz"}
    node(tmp_path, "quick", tier="quick", reasons=["q"], duration_s=3.5)
    node(tmp_path, "full", tier="full")
    node(tmp_path, "stand-in", tier="quick", target=replay, stand_in="/r/h200x2.jsonl.gz")
    node(tmp_path, "replay-unsaid", tier="quick", target=replay)
    node(tmp_path, "live-said", tier="quick", stand_in="/r/h200x2.jsonl.gz")
    node(tmp_path, "partial", tier="partial")
    record(tmp_path, nodes=["quick", "full", "stand-in", "replay-unsaid", "live-said", "partial"], tier="full")
    got = {o.node: o for o in fc.gather(tmp_path)[0]}
    assert {n: o.state for n, o in got.items()} == {"full": "pass", "live-said": "error", "partial": "error",
                                                   "quick": "error", "replay-unsaid": "error", "stand-in": "pass"}
    assert got["quick"].line == ("rmpeer: tool: its certificate is of the quick tier, this sweep asked full: not this "
                                 "sweep's result")
    assert (got["quick"].verdict, got["quick"].reasons, got["quick"].duration_s) == (CERTIFIED, ["q"], 3.5)
    assert got["partial"].line == ("rmpeer: tool: its certificate is of the partial tier, this sweep asked full: not "
                                   "this sweep's result")


def test_a_deeper_or_equal_tier_passes_a_shallower_sweep(tmp_path):
    node(tmp_path, "quick", tier="quick")
    node(tmp_path, "full", tier="full")
    node(tmp_path, "passive", tier="passive")
    record(tmp_path, nodes=["quick", "full", "passive"], tier="quick")
    assert states(fc.gather(tmp_path)[0]) == [("full", "pass"), ("passive", "error"), ("quick", "pass")]
    record(tmp_path, nodes=["quick", "full", "passive"], tier="passive")
    assert states(fc.gather(tmp_path)[0]) == [("full", "pass"), ("passive", "pass"), ("quick", "pass")]


def test_a_node_of_another_run_is_said_so_once_even_of_a_shallower_tier(tmp_path):
    node(tmp_path, "gpu-a", tier="quick", run_id="r1")
    record(tmp_path, nodes=["gpu-a"], tier="full", run_id="r2", submitted=SUBMITTED)
    (o,), _ = fc.gather(tmp_path)
    assert o.line == "rmpeer: tool: status.json is of another run (run id r1, this sweep's r2): not this sweep's result"


# ---- rerun: the one second chance of a node DEGRADED by its floors alone -------------------------

def _degraded(shared, name="gpu-a"):
    node(shared, name, DEGRADED, [FLOOR], reasons=["floor"], duration_s=9.0)
    return oc.load_node(shared / name)


def test_a_rerun_that_left_no_new_status_keeps_the_node_as_it_was_as_an_error(tmp_path, monkeypatch, capsys):
    before = _degraded(tmp_path)
    ran = []
    monkeypatch.setattr(fc.slurmctl, "run_on", lambda *a, **k: ran.append((a, k)) or 1)
    got = fc.rerun(before, tmp_path, "quick", rmpeer="/opt/rm/bin/rmpeer --flag", time_min=7, run_id="r9")
    assert ran == [(("gpu-a", ["/opt/rm/bin/rmpeer", "--flag", "fleet", "node", "--tier", "quick", "--shared",
                             str(tmp_path), "--run-id", "r9"]), {"time_limit_min": 7, "timeout": 540})]
    assert (got.node, got.state, got.verdict, got.reasons, got.duration_s) == ("gpu-a", "error", DEGRADED, ["floor"], 9.0)
    assert got.line == ("rmpeer: tool: the re-run did not run (srun exit 1, no new status.json): the node keeps its "
                        "state")
    assert capsys.readouterr().err == "gpu-a: DEGRADED by bandwidth floors alone: running it once more\n"


def test_a_rerun_without_a_run_id_runs_this_rmpeer_for_thirty_minutes(tmp_path, monkeypatch):
    before = _degraded(tmp_path)
    ran = []
    monkeypatch.setattr(fc, "rmpeer_command", lambda: ["/usr/bin/python3", "-m", "rmpeer"])
    monkeypatch.setattr(fc.slurmctl, "run_on", lambda *a, **k: ran.append((a, k)) or 0)
    fc.rerun(before, tmp_path, "full")
    assert ran == [(("gpu-a", ["/usr/bin/python3", "-m", "rmpeer", "fleet", "node", "--tier", "full", "--shared",
                             str(tmp_path)]), {"time_limit_min": 30, "timeout": 1920})]


def _rewrite(shared, name, verdict, findings=(), reasons=()):
    """What the re-run leaves: a new certificate and a new status.json (a new file, as fleet node writes it)."""
    def run_on(node_name, command, time_limit_min, timeout):
        folder = shared / node_name
        result = RunResult(node=node_name, tier="quick", verdict=verdict, findings=list(findings),
                           reasons=list(reasons), target={"kind": "live"}, duration_s=4.0,
                           checks=[CheckResult("read/x", "read", "read/write", "pair 0->1", "passed")])
        (folder / "certificate.json").write_text(json.dumps(result.to_dict()))
        code = {CERTIFIED: EXIT_OK, DEGRADED: EXIT_DEGRADED}[verdict]
        (folder / "new.json").write_text(json.dumps({"node": node_name, "exit": code}))
        os.replace(folder / "new.json", folder / oc.STATUS)
        return 0
    return run_on


def test_a_rerun_that_passes_is_read_back_and_keeps_the_reasons_of_the_first_run(tmp_path, monkeypatch):
    before = _degraded(tmp_path)
    monkeypatch.setattr(fc.slurmctl, "run_on", _rewrite(tmp_path, "gpu-a", CERTIFIED))
    got = fc.rerun(before, tmp_path, "quick", rmpeer="rmpeer")
    assert (got.state, got.verdict, got.reasons, got.duration_s, got.line) == ("pass", CERTIFIED, ["floor"], 4.0, "")


def test_a_rerun_that_says_why_keeps_its_own_reasons(tmp_path, monkeypatch):
    before = _degraded(tmp_path)
    monkeypatch.setattr(fc.slurmctl, "run_on", _rewrite(tmp_path, "gpu-a", DEGRADED, [FLOOR], ["floor again"]))
    got = fc.rerun(before, tmp_path, "quick", rmpeer="rmpeer")
    assert (got.state, got.reasons) == ("degraded", ["floor again"])


def test_the_status_stamp_is_the_files_inode_time_and_size(tmp_path):
    assert fc._status_stamp(tmp_path) is None
    (tmp_path / oc.STATUS).write_text('{"exit": 0}')
    st = os.stat(tmp_path / oc.STATUS)
    assert fc._status_stamp(tmp_path) == (st.st_ino, st.st_mtime_ns, 11)


# ---- table, signatures ------------------------------------------------------------------------

def _selected(cards, of):
    return RunResult(node="x", host={"selection": {"cards": list(cards), "source": "--cards", "how": "asked",
                                                   "of": [{"index": i, "minor": i, "pci": f"0000:{i:02x}:00.0",
                                                           "uuid": f"GPU-{i}"} for i in range(of)]}})


def test_the_table_is_one_row_per_node_in_columns_and_a_count_of_each_state():
    outcomes = [oc.NodeOutcome("gpu-a", "pass", CERTIFIED, duration_s=12.34, result=RunResult(node="gpu-a")),
                oc.NodeOutcome("gpu-long-name", "fail", NOT_CERTIFIED, line="rmpeer: read: x\ny", duration_s=0.06,
                               result=_selected([1], 2)),
                oc.NodeOutcome("n\x1b", "error", "", line="rmpeer: tool: no result",
                               replay_of="/r/h200x2.jsonl.gz")]
    assert fc.table(outcomes).split("\n") == [
        "node" + " " * 11 + "result" + " " * 4 + "verdict" + " " * 8 + "cards" + " " * 7 + "time  reason",
        "gpu-a" + " " * 10 + "pass" + " " * 6 + "CERTIFIED" + " " * 6 + "all" + " " * 7 + " 12.3s  ",
        "gpu-long-name  fail" + " " * 6 + "NOT CERTIFIED  1/2" + " " * 7 + "  0.1s  rmpeer: read: x\\ny",
        "n\\x1b" + " " * 10 + "error" + " " * 5 + "-" + " " * 14 + "-" + " " * 14
        + "-  rmpeer: tool: no result (REPLAY of h200x2.jsonl.gz)",
        "3 node(s): 1 pass, 0 degraded, 1 fail, 1 error",
    ]


def test_the_node_column_is_at_least_as_wide_as_its_title():
    rows = fc.table([oc.NodeOutcome("a", "degraded", DEGRADED, line="rmpeer: floor", duration_s=1)]).split("\n")
    assert rows[1] == "a" + " " * 5 + "degraded  DEGRADED" + " " * 7 + "-" + " " * 9 + "  1.0s  rmpeer: floor"
    assert rows[2] == "1 node(s): 0 pass, 1 degraded, 0 fail, 0 error"
    assert fc.table([]).split("\n")[-1] == "0 node(s): 0 pass, 0 degraded, 0 fail, 0 error"


def test_the_signatures_line_groups_the_nodes_by_how_far_each_signature_was_checked():
    def o(name, signature):
        return oc.NodeOutcome(name, "pass", signature=signature)
    got = fc.signatures([o("a", VERIFIED), o("b", UNSIGNED), o("c", OTHER_KEY), o("d", NO_KEY), o("e", ""),
                         o("f", BAD), o("g\x07", UNSIGNED)])
    assert got == ("signatures: 1 verified with this machine's key (a); 2 unsigned (b, g\\x07); 2 signed by their "
                   "nodes' own keys (c, d); 1 do not verify (f). A node's key stays on the node: its signature is "
                   "checked there (certify --if-stale); here each certificate is checked for its node name, its "
                   "verdict against its own findings, and GPU UUIDs under one node only")
    assert fc.signatures([o("e", ""), oc.NodeOutcome("x", "error")]) == "signatures: no certificate to check"
    assert fc.signatures([]) == "signatures: no certificate to check"


# ---- summary.jsonl, junit.xml, report.html ------------------------------------------------------

def test_the_summary_is_one_line_per_node_certify_json_line_under_the_nodes_own_fields(tmp_path):
    node(tmp_path, "gpu-a", NOT_CERTIFIED, [READ], reasons=["read: 3 bytes differ"], duration_s=2.5)
    outcomes = [oc.load_node(tmp_path / "gpu-a"), oc.NodeOutcome("gpu-b", "error", line="rmpeer: tool: gone")]
    fc.write_summary(outcomes, tmp_path / "summary.jsonl")
    text = (tmp_path / "summary.jsonl").read_text()
    assert text.endswith("\n") and text.count("\n") == 2
    first, second = (json.loads(line) for line in text.splitlines())
    assert second == {"node": "gpu-b", "state": "error", "verdict": "", "exit": None, "reason": "rmpeer: tool: gone",
                      "reasons": [], "duration_s": None, "certificate": None, "replay_of": "", "signature": None}
    assert (first["node"], first["state"], first["verdict"], first["exit"], first["duration_s"]) == \
        ("gpu-a", "fail", NOT_CERTIFIED, 1, 2.5)
    assert first["reason"] == "rmpeer: read: pair 0->1: expected the bytes written, found 3 bytes differ"
    assert first["certificate"] == str(tmp_path / "gpu-a" / "certificate.json")
    # certify --json's fields, of the node's certificate
    assert (first["tier"], first["target"], first["exit_code"], first["reasons"]) == \
        ("quick", "live", 1, ["read: 3 bytes differ"])


def test_a_summary_planted_as_a_link_is_refused_as_the_summary(tmp_path):
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / "nodes.jsonl").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError) as caught:
        fc.write_summary([oc.NodeOutcome("gpu-b", "error")], tmp_path / "nodes.jsonl")
    assert str(caught.value) == (f"summary.jsonl {tmp_path / 'nodes.jsonl'}: refused: it is a symbolic link "
                                 f"(to {tmp_path / 'elsewhere'}); rmpeer writes only regular files")
    assert (tmp_path / "elsewhere").read_text() == ""


def test_junit_is_written_for_the_nodes_with_a_certificate_and_not_without(tmp_path):
    said = fc.write_junit([oc.NodeOutcome("gpu-b", "error")], tmp_path / "junit.xml")
    assert said == "junit.xml not written: no node's certificate is a RunResult (an older rmpeer wrote them)"
    assert not (tmp_path / "junit.xml").exists()
    node(tmp_path, "gpu-a")
    node(tmp_path, "gpu-c")
    outcomes = [oc.load_node(tmp_path / "gpu-a"), oc.NodeOutcome("gpu-b", "error"), oc.load_node(tmp_path / "gpu-c")]
    assert fc.write_junit(outcomes, tmp_path / "junit.xml") == f"wrote {tmp_path / 'junit.xml'}"
    xml = (tmp_path / "junit.xml").read_text()
    assert xml.count("<testsuite ") == 2 and "gpu-a" in xml and "gpu-c" in xml and "gpu-b" not in xml


def _with_results(shared, name):
    folder = node(shared, name)
    (folder / "allure-results").mkdir()
    return oc.load_node(folder)


def test_the_report_runs_rmpeer_report_over_each_nodes_allure_results(tmp_path, monkeypatch):
    outcomes = [_with_results(tmp_path, "gpu-a"), oc.NodeOutcome("gpu-b", "error"), _with_results(tmp_path, "gpu-c")]
    node(tmp_path, "gpu-d")
    (tmp_path / "gpu-d" / "allure-results").write_text("not a folder")
    outcomes.append(oc.load_node(tmp_path / "gpu-d"))
    ran = []

    class Done:
        returncode, stderr = 0, ""

    monkeypatch.setattr(fc, "allure_command", lambda: ["allure"])
    monkeypatch.setattr(fc.subprocess, "run", lambda argv, **kw: ran.append((argv, kw)) or Done())
    said = fc.write_report(outcomes, tmp_path / "report.html")
    assert said == f"wrote {tmp_path / 'report.html'}"
    assert ran == [([sys.executable, "-m", "rmpeer", "report", "--results", str(tmp_path / "gpu-a" / "allure-results"),
                     str(tmp_path / "gpu-c" / "allure-results"), "--output", str(tmp_path / "report.html"),
                     "--title", "rmpeer fleet: 2 node(s)"], {"capture_output": True, "text": True, "timeout": 600})]
    Done.returncode, Done.stderr = 1, "\n" + "e" * 100 + "x" * 300 + "\n"
    assert fc.write_report(outcomes, tmp_path / "report.html") == "report.html not written: " + "x" * 300


def test_no_report_without_allure_results_or_without_the_allure_cli(tmp_path, monkeypatch):
    node(tmp_path, "gpu-a")
    assert fc.write_report([oc.load_node(tmp_path / "gpu-a")], tmp_path / "report.html") == \
        "report.html not written: no node left Allure results"

    def missing():
        raise ConfigError("the Allure 3 command line is not installed")
    monkeypatch.setattr(fc, "allure_command", missing)
    assert fc.write_report([_with_results(tmp_path, "gpu-b")], tmp_path / "report.html") == \
        "report.html not written: the Allure 3 command line is not installed"


# ---- act: drains and resumes --------------------------------------------------------------------

class Slurm:
    """scontrol stood in for: each node's `show node` answer, and what was asked of it."""

    def __init__(self, monkeypatch, infos, err=""):
        self.infos, self.err, self.asked = infos, err, []
        monkeypatch.setattr(fc.slurmctl, "node_info", lambda n: dict(self.infos.get(n, {})))
        monkeypatch.setattr(fc.slurmctl, "drain", lambda n, reason: self.asked.append(("drain", n, reason)) or self.err)
        monkeypatch.setattr(fc.slurmctl, "resume", lambda n: self.asked.append(("resume", n)) or self.err)
        monkeypatch.setattr(fc.slurmctl, "run_on", lambda *a, **k: pytest.fail("no re-run expected"))


IDLE = {"State": "IDLE", "Reason": ""}
OURS = {"State": "IDLE+DRAIN", "Reason": "rmpeer: read: pair 0->1"}
HUMANS = {"State": "IDLE+DRAIN", "Reason": "maintenance"}


def _outcomes():
    return [oc.NodeOutcome("gone", "fail", line="rmpeer: read: x"),
            oc.NodeOutcome("failed", "fail", line="rmpeer: read: x"),
            oc.NodeOutcome("slow", "degraded", line="rmpeer: bandwidth-floor: y"),
            oc.NodeOutcome("mended", "pass"),
            oc.NodeOutcome("kept", "pass"),
            oc.NodeOutcome("fine", "pass"),
            oc.NodeOutcome("broken", "error", line="rmpeer: tool: z")]


INFOS = {"failed": IDLE, "slow": IDLE, "mended": OURS, "kept": HUMANS, "fine": IDLE, "broken": OURS}


def test_a_failed_or_degraded_node_is_drained_a_mended_one_resumed_and_a_humans_drain_stays(monkeypatch):
    slurm = Slurm(monkeypatch, INFOS)
    assert fc.act(_outcomes(), "drain") == [
        "gone: not a Slurm node here; nothing done",
        "failed: drained: rmpeer: read: x",
        "slow: drained: rmpeer: bandwidth-floor: y",
        "mended: resumed (was: rmpeer: read: pair 0->1)",
        "kept: passes, but stays drained: its reason is not rmpeer's (maintenance)",
    ]
    assert slurm.asked == [("drain", "failed", "rmpeer: read: x"), ("drain", "slow", "rmpeer: bandwidth-floor: y"),
                           ("resume", "mended")]


def test_a_degraded_node_stays_under_keep_and_scontrols_complaints_are_said(monkeypatch):
    slurm = Slurm(monkeypatch, INFOS, err="Invalid node state")
    assert fc.act(_outcomes(), "keep") == [
        "gone: not a Slurm node here; nothing done",
        "failed: drained: rmpeer: read: x (scontrol: Invalid node state)",
        "mended: resumed (was: rmpeer: read: pair 0->1) (scontrol: Invalid node state)",
        "kept: passes, but stays drained: its reason is not rmpeer's (maintenance)",
    ]
    assert slurm.asked == [("drain", "failed", "rmpeer: read: x"), ("resume", "mended")]


# ---- collect: the command ----------------------------------------------------------------------

def test_collect_of_no_folder_or_an_empty_one_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as caught:
        fc.collect(str(tmp_path / "none"))
    assert str(caught.value) == f"{tmp_path / 'none'}: no such folder (the --shared folder of a sweep)"
    with pytest.raises(ConfigError) as caught:
        fc.collect(str(tmp_path), report=False)
    assert str(caught.value) == f"{tmp_path}: no node's result in it (each node writes <dir>/<node>/status.json)"
    assert not (tmp_path / "summary.jsonl").exists()


@pytest.mark.parametrize("planted, report, refused", [
    ("summary.jsonl", False, True), ("junit.xml", False, True), ("report.html", True, True),
    ("report.html", False, False)])
def test_a_link_at_a_file_collect_writes_is_refused_before_anything_is_read(tmp_path, capsys, planted, report, refused):
    node(tmp_path, "gpu-a")
    (tmp_path / "elsewhere").write_text("")
    (tmp_path / planted).symlink_to(tmp_path / "elsewhere")
    if refused:
        with pytest.raises(ConfigError) as caught:
            fc.collect(str(tmp_path), report=report)
        assert str(caught.value) == (f"fleet collect DIR {tmp_path / planted}: refused: it is a symbolic link "
                                     f"(to {tmp_path / 'elsewhere'}); rmpeer writes only regular files")
        assert capsys.readouterr().out == ""
    else:
        assert fc.collect(str(tmp_path), report=report) == EXIT_OK


def test_collect_prints_the_table_the_signatures_and_what_it_wrote_and_exits_by_the_states(tmp_path, capsys):
    node(tmp_path, "gpu-a")
    node(tmp_path, "gpu-b", NOT_CERTIFIED, [READ], duration_s=2.5)
    assert fc.collect(str(tmp_path)) == EXIT_NOT_CERTIFIED
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "node   result    verdict        cards       time  reason",
        "gpu-a  pass      CERTIFIED      all" + " " * 9 + "2.0s  ",
        "gpu-b  fail      NOT CERTIFIED  all" + " " * 9 + "2.5s  rmpeer: read: pair 0->1: expected the bytes written, "
        "found 3 bytes differ",
        "2 node(s): 1 pass, 0 degraded, 1 fail, 0 error",
        "signatures: 2 unsigned (gpu-a, gpu-b). A node's key stays on the node: its signature is checked there "
        "(certify --if-stale); here each certificate is checked for its node name, its verdict against its own "
        "findings, and GPU UUIDs under one node only",
        f"wrote {tmp_path / 'summary.jsonl'}",
        f"wrote {tmp_path / 'junit.xml'}",
        "report.html not written: no node left Allure results",
    ]
    assert [json.loads(x)["node"] for x in (tmp_path / "summary.jsonl").read_text().splitlines()] == ["gpu-a", "gpu-b"]


def test_collect_writes_the_merged_report_beside_the_summary(tmp_path, capsys, monkeypatch):
    _with_results(tmp_path, "gpu-a")
    ran = []

    class Done:
        returncode, stderr = 0, ""

    monkeypatch.setattr(fc, "allure_command", lambda: ["allure"])
    monkeypatch.setattr(fc.subprocess, "run", lambda argv, **kw: ran.append(argv) or Done())
    assert fc.collect(str(tmp_path)) == EXIT_OK
    assert ran == [[sys.executable, "-m", "rmpeer", "report", "--results", str(tmp_path / "gpu-a" / "allure-results"),
                    "--output", str(tmp_path / "report.html"), "--title", "rmpeer fleet: 1 node(s)"]]
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {tmp_path / 'report.html'}"


@pytest.mark.parametrize("nodes, code", [
    ([("a", CERTIFIED, ())], EXIT_OK),
    ([("a", CERTIFIED, ()), ("b", DEGRADED, [XID])], EXIT_NOT_CERTIFIED),
    ([("a", CERTIFIED, ()), ("b", NOT_CERTIFIED, [READ])], EXIT_NOT_CERTIFIED),
    ([("a", CERTIFIED, ()), ("b", None, ())], EXIT_INCOMPLETE),
    ([("a", NOT_CERTIFIED, [READ]), ("b", None, ())], EXIT_NOT_CERTIFIED),
    ([("a", DEGRADED, [XID]), ("b", None, ())], EXIT_NOT_CERTIFIED),
])
def test_collects_exit_is_1_for_a_failed_or_degraded_node_else_5_for_one_without_verdict(tmp_path, nodes, code):
    for name, verdict, findings in nodes:
        if verdict is None:
            (tmp_path / name).mkdir()           # a node that left nothing
        else:
            node(tmp_path, name, verdict, findings)
    assert fc.collect(str(tmp_path), report=False) == code


def test_collect_whose_stdout_is_full_still_writes_and_says_so_on_stderr(tmp_path, capsys, monkeypatch):
    class Full(io.TextIOBase):
        def write(self, text):
            raise OSError(28, "No space left on device")

    node(tmp_path, "gpu-a", NOT_CERTIFIED, [READ])
    monkeypatch.setattr(sys, "stdout", Full())
    assert fc.collect(str(tmp_path), report=False) == EXIT_NOT_CERTIFIED
    assert capsys.readouterr().err == (
        "rmpeer: fleet collect: the node table could not be written to stdout (No space left on device); the answer "
        f"stands (exit 1): {tmp_path / 'summary.jsonl'} holds every node\n")
    assert (tmp_path / "summary.jsonl").is_file() and (tmp_path / "junit.xml").is_file()


def test_collect_says_nothing_on_stderr_when_its_table_was_written(tmp_path, capsys):
    node(tmp_path, "gpu-a")
    assert fc.collect(str(tmp_path), report=False) == EXIT_OK
    assert capsys.readouterr().err == ""


def test_drain_needs_srun(tmp_path, monkeypatch):
    node(tmp_path, "gpu-a")
    monkeypatch.setattr(fc.shutil, "which", lambda name: None if name == "srun" else "/usr/bin/" + name)
    with pytest.raises(ConfigError) as caught:
        fc.collect(str(tmp_path), drain=True, report=False)
    assert str(caught.value) == "--drain needs Slurm's client commands (srun, scontrol) on this machine"


def test_drain_reruns_only_a_node_degraded_by_floors_alone_then_drains_and_resumes(tmp_path, monkeypatch, capsys):
    node(tmp_path, "floors", DEGRADED, [FLOOR])
    node(tmp_path, "xid", DEGRADED, [FLOOR, XID])
    node(tmp_path, "failed", NOT_CERTIFIED, [READ])
    node(tmp_path, "mended")
    slurm = Slurm(monkeypatch, {"floors": IDLE, "xid": IDLE, "failed": IDLE, "mended": OURS})
    reruns = []
    passing = _rewrite(tmp_path, "floors", CERTIFIED)
    monkeypatch.setattr(fc.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(fc.slurmctl, "run_on", lambda n, cmd, **k: reruns.append((n, cmd, k)) or passing(n, cmd, **k))
    code = fc.collect(str(tmp_path), drain=True, report=False, rmpeer="rm", time_min=3)
    assert reruns == [("floors", ["rm", "fleet", "node", "--tier", "full", "--shared", str(tmp_path)],
                       {"time_limit_min": 3, "timeout": 300})]
    xid = "rmpeer: bandwidth-floor: read 1->0: expected at least 355 GB/s, found 232.9 GB/s"   # its first finding
    read = "rmpeer: read: pair 0->1: expected the bytes written, found 3 bytes differ"
    assert slurm.asked == [("drain", "failed", read), ("resume", "mended"), ("drain", "xid", xid)]
    out = capsys.readouterr().out.splitlines()
    assert out[-5:] == [f"wrote {tmp_path / 'summary.jsonl'}", f"wrote {tmp_path / 'junit.xml'}",
                        f"failed: drained: {read}", "mended: resumed (was: rmpeer: read: pair 0->1)",
                        f"xid: drained: {xid}"]
    assert out[2].startswith("floors  pass ") and out[4].startswith("xid     degraded ")
    assert code == EXIT_NOT_CERTIFIED


def test_drain_keeps_a_degraded_node_under_keep_and_reruns_with_the_sweeps_tier_and_run_id(tmp_path, monkeypatch):
    node(tmp_path, "floors", DEGRADED, [FLOOR], run_id="r5")
    node(tmp_path, "xid", DEGRADED, [XID], run_id="r5")
    record(tmp_path, nodes=["floors", "xid"], tier="quick", run_id="r5", submitted=SUBMITTED)
    slurm = Slurm(monkeypatch, {"floors": IDLE, "xid": IDLE})
    reruns = []
    monkeypatch.setattr(fc.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(fc.slurmctl, "run_on", lambda n, cmd, **k: reruns.append((n, cmd, k)) or 1)
    assert fc.collect(str(tmp_path), drain=True, degraded="keep", report=False, rmpeer="rm") == EXIT_NOT_CERTIFIED
    assert reruns == [("floors", ["rm", "fleet", "node", "--tier", "quick", "--shared", str(tmp_path), "--run-id", "r5"],
                       {"time_limit_min": 30, "timeout": 1920})]
    assert slurm.asked == []         # the re-run that did not run: an error, never drained; xid kept
