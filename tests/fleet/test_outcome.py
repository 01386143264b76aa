"""What a sweep's node folders say, read back (rmpeer/fleet/outcome.py) and collected
(rmpeer/fleet/collect.py), on folders made here by hand: a status line and a RunResult written
as `rmpeer fleet node` writes them. The expected states come from the rules in
outcome.py's docstring and FLEET.md (a node that gave no verdict is an `error`, never a pass;
only a run DEGRADED by its floors alone is run once more), and collect's exit codes from
errors.py's table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK
from rmpeer.fleet import outcome as oc
from rmpeer.model.result import CERTIFIED, DEGRADE, DEGRADED, FAIL, NOT_CERTIFIED, CheckResult, Finding, RunResult

pytestmark = pytest.mark.offline
FLOOR = Finding("bandwidth-floor", "read 1->0", "at least 355 GB/s", "232.9 GB/s, below the floor of 355 GB/s",
                DEGRADE)
XID = Finding("xid", "card 1", "no Xid but those a detection test provokes", "Xid 79: fell off the bus", DEGRADE)


def node_folder(shared: Path, node: str, verdict=CERTIFIED, findings=(), exit_code=EXIT_OK, status=None) -> Path:
    folder = shared / node
    folder.mkdir(parents=True)
    result = RunResult(node=node, tier="quick", verdict=verdict, findings=list(findings), target={"kind": "live"},
                       checks=[CheckResult("read/x", "read", "read/write", "pair 0->1", "passed")])
    (folder / "certificate.json").write_text(json.dumps(result.to_dict()))
    (folder / oc.STATUS).write_text(status if status is not None else json.dumps({"exit": exit_code}))
    return folder


def test_a_node_degraded_by_floors_and_an_xid_is_not_floors_only(tmp_path):
    """Row 10: one floor finding is a dip worth a second run; an Xid beside it is not."""
    alone = oc.load_node(node_folder(tmp_path, "floors", DEGRADED, [FLOOR], EXIT_DEGRADED))
    both = oc.load_node(node_folder(tmp_path, "floors-and-xid", DEGRADED, [FLOOR, XID], EXIT_DEGRADED))
    assert (alone.state, alone.floors_only) == (oc.DEGRADED_STATE, True)
    assert (both.state, both.floors_only) == (oc.DEGRADED_STATE, False)


def test_an_unreadable_status_line_is_an_error_even_beside_a_pass(tmp_path):
    """Row 12: status.json holding `{` (a run cut while writing it) says nothing about the run:
    the node is an error, whatever certificate lies beside it."""
    got = oc.load_node(node_folder(tmp_path, "cut", status="{"))
    assert got.state == oc.ERROR and "status.json" in got.line


def test_a_node_the_sweep_named_without_a_folder_is_an_error(tmp_path, capsys):
    """Row 11: sweep.json names two nodes, one left no folder: collect reports it as an error
    and exits 5 (errors.py: no verdict), not 0 for the one that passed."""
    from rmpeer.cli import main
    from rmpeer.fleet.sweep import SWEEP

    node_folder(tmp_path, "gpu-a")
    (tmp_path / SWEEP).write_text(json.dumps({"nodes": ["gpu-a", "gpu-b"], "tier": "quick"}))
    assert main(["fleet", "collect", str(tmp_path), "--no-report"]) == EXIT_INCOMPLETE
    rows = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("gpu-")}
    assert rows == {"gpu-a": oc.PASS, "gpu-b": oc.ERROR}
    summary = [json.loads(line) for line in (tmp_path / "summary.jsonl").read_text().splitlines()]
    assert [(s["node"], s["state"]) for s in summary] == [("gpu-a", oc.PASS), ("gpu-b", oc.ERROR)]


@pytest.mark.parametrize("stdout", ["full", "closed pipe"])
def test_collect_whose_stdout_is_gone_still_writes_its_files_and_keeps_its_answer(tmp_path, stdout):
    """A full disk (/dev/full) or a reader gone (`| head`) under the node table: the summary
    and the JUnit file are still written, the exit code is still the answer (1: a node
    failed), and stderr says the table was lost, never an internal error (exit 5)."""
    import os
    import subprocess
    import sys

    node_folder(tmp_path, "gpu-a")
    node_folder(tmp_path, "gpu-b", verdict=NOT_CERTIFIED, exit_code=EXIT_NOT_CERTIFIED,
                findings=[Finding("read", "pair 0->1", "the bytes written", "3 bytes differ", FAIL)])
    argv = [sys.executable, "-m", "rmpeer", "fleet", "collect", "--no-report", str(tmp_path)]
    if stdout == "full":
        with open("/dev/full", "w") as full:
            done = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        code, err = done.returncode, done.stderr
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdout.close()                     # the reader leaves before the first line
        code, err = proc.wait(timeout=120), proc.stderr.read()
    assert code == EXIT_NOT_CERTIFIED and "internal error" not in err and "Traceback" not in err, err
    assert "the node table could not be written to stdout" in err and "exit 1" in err, err
    summary = [json.loads(line) for line in (tmp_path / "summary.jsonl").read_text().splitlines()]
    assert {s["node"]: s["state"] for s in summary} == {"gpu-a": oc.PASS, "gpu-b": oc.FAIL_STATE}
    assert (tmp_path / "junit.xml").is_file()


def test_label_whose_reader_left_is_no_error(tmp_path):
    """`fleet label DIR | head -0`: the reader took what it wanted; label prints patches, no
    verdict, so a closed pipe is exit 0 as for show or plan (was exit 5, "its output could not
    be written"), and the folder is read as before."""
    import subprocess
    import sys

    node_folder(tmp_path, "gpu-a")
    proc = subprocess.Popen([sys.executable, "-m", "rmpeer", "fleet", "label", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    code, err = proc.wait(timeout=120), proc.stderr.read()
    assert code == EXIT_OK and "Traceback" not in err and "could not be written" not in err, err
