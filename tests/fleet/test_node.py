"""`rmpeer fleet node` and the collector's reading of node folders, offline: stand-in hosts
are recordings (RMPEER_STAND_IN), replayed by certify and labelled REPLAY. The exit codes are
rmpeer/errors.py's, the reason line is `rmpeer: <check>: <detail>`, and every way a node can
fail to give a verdict reads as `error`, never as a pass."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from fleet_nodes import RMPEER, fleet_node, make_sweep
from slurm.recordings import HEALTHY, IDLE_CLOCKS

from rmpeer.fleet import outcome as oc
from rmpeer.fleet.checks import load_sweep
from rmpeer.fleet.files import copy_out

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return make_sweep(tmp_path_factory.mktemp("sweep"))


def test_each_node_exits_with_its_verdict_and_says_why(sweep):
    shared, runs = sweep
    assert {n: r[0] for n, r in runs.items()} == {"gpu-ok": 0, "gpu-slow": 4, "gpu-bad": 1, "gpu-tool": 2}
    assert runs["gpu-ok"][1] == ""
    assert runs["gpu-slow"][1].startswith("rmpeer: bandwidth-floor: ") and "below the floor" in runs["gpu-slow"][1]
    # one fault, one reason: the cause of its 32 failed byte checks, counted (issue 44)
    assert runs["gpu-bad"][1].startswith("rmpeer: read: 32 checks: wrong memory: ")
    assert runs["gpu-tool"][1].startswith("rmpeer: tool: certify exit 2: ")
    assert all(len(r[1].strip()) <= oc.REASON_LIMIT for r in runs.values())
    assert "REPLAY of h200x2" in runs["gpu-ok"][2], "a stand-in says it is a replay"


def test_each_node_folder_reads_back_as_its_state(sweep):
    shared, _ = sweep
    got = {o.node: o for o in load_sweep(shared)}
    assert {n: o.state for n, o in got.items()} == {"gpu-ok": "pass", "gpu-slow": "degraded", "gpu-bad": "fail",
                                                    "gpu-tool": "error"}
    assert got["gpu-slow"].floors_only and not got["gpu-bad"].floors_only
    assert Path(got["gpu-ok"].replay_of).resolve() == HEALTHY.resolve(), "the stand-in is named as what was run"
    status = json.loads((shared / "gpu-tool" / oc.STATUS).read_text())
    assert status["exit"] == 2 and status["node"] == "gpu-tool" and status["stand_in"]


def copy_node(shared: Path, node: str, dest: Path) -> Path:
    import shutil

    shutil.copytree(shared / node, dest / node)
    return dest / node


@pytest.mark.parametrize("exit_code", [2, 3, 5, 6, 7, None])
def test_a_passing_certificate_beside_a_run_that_gave_no_verdict_is_an_error(sweep, tmp_path, exit_code):
    shared, _ = sweep
    folder = copy_node(shared, "gpu-ok", tmp_path)
    status = json.loads((folder / oc.STATUS).read_text())
    status["exit"] = exit_code
    (folder / oc.STATUS).write_text(json.dumps(status))
    got = oc.load_node(folder)
    assert got.state == "error", got


def test_an_exit_code_that_contradicts_the_certificate_is_an_error(sweep, tmp_path):
    shared, _ = sweep
    folder = copy_node(shared, "gpu-bad", tmp_path)
    status = json.loads((folder / oc.STATUS).read_text())
    status["exit"] = 0
    (folder / oc.STATUS).write_text(json.dumps(status))
    got = oc.load_node(folder)
    assert got.state == "error" and "does not match" in got.line


def test_an_unreadable_certificate_is_an_error(sweep, tmp_path):
    shared, _ = sweep
    folder = copy_node(shared, "gpu-ok", tmp_path)
    oc.certificate_in(folder).write_text("{ truncated")
    assert oc.load_node(folder).state == "error"


def test_an_earlier_runs_certificate_is_not_taken_for_this_runs(sweep, tmp_path):
    """A run that writes no certificate must not be judged by the one an earlier run left."""
    shared, _ = sweep
    folder = copy_node(shared, "gpu-ok", tmp_path)
    old = time.time() - 3600
    os.utime(oc.certificate_in(folder), (old, old))
    garbage = tmp_path / "garbage.jsonl.gz"
    garbage.write_text("not a recording\n")
    rc, line, _ = fleet_node(tmp_path, "gpu-ok", garbage)
    assert rc == 2 and line.startswith("rmpeer: tool: ")
    assert oc.load_node(folder).state == "error"


def test_the_live_path_without_a_gpu_is_a_tool_error(tmp_path):
    rc, line, _ = fleet_node(tmp_path, "live", None, tier="quick")
    assert rc == 3 and line.startswith("rmpeer: tool: certify exit 3: no NVIDIA device")
    assert oc.load_node(tmp_path / "live").state == "error"


def nhc(tmp_path, recording, **settings) -> tuple[int, str]:
    """The NHC check sourced by bash as NHC does, with NHC's `die` recording its message."""
    files = tmp_path / "files"
    copy_out("slurm", files)
    script = (f'die() {{ echo "DIE $1 $2"; return 1; }}; log() {{ echo "LOG $*"; }}; '
              f'. {files}/check_rmpeer.nhc; check_rmpeer; echo "rc=$?"')
    env = {"PATH": os.environ["PATH"], "RMPEER": RMPEER, "RMPEER_STATE_DIR": str(tmp_path / "state"),
           "NODE_NAME": "n1", **({"RMPEER_STAND_IN": str(recording)} if recording else {}), **settings}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout


def test_the_nhc_check_dies_with_an_rmpeer_reason(tmp_path):
    _, out = nhc(tmp_path, IDLE_CLOCKS)
    assert "DIE 1 rmpeer: bandwidth-floor: " in out and "rc=1" in out


@pytest.mark.parametrize("value, dies", [("drain", True), ("pass", False), ("keep", False), ("PASS", False)])
def test_the_nhc_check_fails_a_degraded_node_only_when_told_drain(tmp_path, value, dies):
    """Issue 47, row 3: a word the check does not know is the safe choice, never a drain, and
    is logged as it is."""
    _, out = nhc(tmp_path, IDLE_CLOCKS, RMPEER_HEALTH_DEGRADED=value)
    assert ("DIE 1 rmpeer: bandwidth-floor: " in out) == dies and ("rc=1" in out) == dies, out
    if value not in ("drain", "pass"):
        assert f"RMPEER_HEALTH_DEGRADED={value} is neither drain nor pass" in out, out


@pytest.mark.parametrize("recording", [HEALTHY, "garbage"])
def test_the_nhc_check_passes_a_healthy_node_and_a_tool_error(tmp_path, recording):
    if recording == "garbage":
        recording = tmp_path / "garbage.jsonl.gz"
        recording.write_text("not a recording\n")
    _, out = nhc(tmp_path, recording)
    assert "DIE" not in out and "rc=0" in out
    if recording.name == "garbage.jsonl.gz":
        assert "LOG rmpeer: no verdict (exit 2" in out


def test_the_shipped_slurm_files_are_executable_shell(tmp_path):
    files = copy_out("slurm", tmp_path)
    names = {p.name for p in files}
    assert names == {"rmpeer-prolog", "rmpeer-healthcheck", "check_rmpeer.nhc"}
    for p in files:
        assert subprocess.run(["sh", "-n", str(p)]).returncode == 0, p
        if p.name.startswith("rmpeer-"):
            assert os.access(p, os.X_OK)
    prolog = (tmp_path / "rmpeer-prolog").read_text()
    assert "scontrol" not in prolog.split("\n# Settings")[1], "a prolog never calls scontrol"


def test_a_crash_inside_certify_is_a_tool_error_never_a_verdict(tmp_path, monkeypatch):
    """Fault injection: certify raising something it never should. The node gives no verdict
    (exit 5, INCOMPLETE): a hook neither passes nor drains it on that."""
    from rmpeer.fleet import node

    def broken(argv=None):
        raise RuntimeError("injected fault")

    monkeypatch.setenv("RMPEER_STAND_IN", str(HEALTHY))
    monkeypatch.setenv("NODE_NAME", "crashy")
    code, line = node.run_node("full", tmp_path / "crashy", certify=broken)
    assert code == 5 and line == "rmpeer: tool: certify exit 5: certify stopped: injected fault"
    got = oc.load_node(tmp_path / "crashy")
    assert got.state == "error" and got.exit_code == 5


def test_certifys_deadline_and_require_complete_are_passed_on():
    """The two options keep certify's own spellings (`rmpeer certify --help`), for a live run
    and for a stand-in replay alike."""
    from rmpeer.fleet.node import certify_args as live

    oc_args = live
    argv = live("quick", Path("/o"), None, None, deadline="30", require_complete=True)
    assert argv[argv.index("--deadline") + 1] == "30" and "--require-complete" in argv
    argv = oc_args("quick", Path("/o"), None, "/r.jsonl.gz", deadline="30", require_complete=True)
    assert argv[argv.index("--deadline") + 1] == "30" and "--require-complete" in argv and "--replay" in argv
    assert "--deadline" not in live("quick", Path("/o"), None, None)


def test_require_complete_on_a_node_is_no_verdict_and_never_a_drain(tmp_path):
    """The healthy recording is CERTIFIED, but it holds no health call: not checked, so
    --require-complete makes it exit 8 (rmpeer/errors.py), a tool error in status.json."""
    rc, line, _ = fleet_node(tmp_path, "n1", HEALTHY, "--require-complete", tier="quick")
    status = json.loads((tmp_path / "n1" / "status.json").read_text())
    assert rc == 8 and line.startswith("rmpeer: tool: certify exit 8") and status["exit"] == 8
    assert status["verdict"] == "" and oc.load_node(tmp_path / "n1").state == "error"


def test_a_deadline_that_ends_the_node_still_leaves_its_status(tmp_path):
    """certify's deadline ends the process (exit 5): the status.json the hooks read is written
    first, INCOMPLETE, with the deadline as its reason."""
    rc, _, _ = fleet_node(tmp_path, "n1", HEALTHY, "--deadline", "0.05", tier="quick")
    status = json.loads((tmp_path / "n1" / "status.json").read_text())
    assert rc == 5 and status["exit"] == 5 and status["verdict"] == ""
    assert status["line"] == "rmpeer: tool: stopped by the deadline of 0.05 s"
    assert oc.load_node(tmp_path / "n1").state == "error"


def test_a_certificate_planted_as_a_link_to_a_fifo_never_hangs_the_node(tmp_path):
    """Another user plants certificate.json in the node's folder as a link to a FIFO. certify
    refuses the link (exit 2); the node's own look for this run's certificate must not read
    through it either: an open that follows it blocks on the FIFO for ever, and the prolog
    with it (no status.json, and the deadline is no longer armed)."""
    folder = tmp_path / "n1"
    folder.mkdir()
    os.mkfifo(folder / ".f")
    (folder / oc.CERTIFICATES[0]).symlink_to(".f")
    env = {k: v for k, v in os.environ.items() if k not in ("RMPEER_STAND_IN", "SLURMD_NODENAME")}
    env["NODE_NAME"] = "n1"
    done = subprocess.run([RMPEER, "fleet", "node", "--tier", "passive", "--shared", str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=60)
    status = json.loads((folder / oc.STATUS).read_text())
    assert done.returncode == 2 and status["exit"] == 2
    assert "symbolic link" in status["line"]


def test_a_folder_where_status_json_goes_is_refused_in_one_line(tmp_path):
    """status.json is a folder (made by mistake, or by another user): it cannot be replaced.
    That was an internal error (IsADirectoryError), exit 5."""
    (tmp_path / "n1" / oc.STATUS).mkdir(parents=True)
    rc, out, err = fleet_node(tmp_path, "n1", HEALTHY, tier="passive")
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and "Traceback" not in err
    assert lines[-1].endswith("status.json is not a file: it cannot hold this node's status; remove it"), err


def test_an_empty_deadline_is_passed_on_and_refused_as_certify_refuses_it(tmp_path):
    """fleet node --deadline '' dropped the option without a word (the tier's default ran);
    certify --deadline '' is exit 2."""
    rc, _, _ = fleet_node(tmp_path, "n1", HEALTHY, "--deadline", "", tier="passive")
    status = json.loads((tmp_path / "n1" / oc.STATUS).read_text())
    assert rc == 2 and status["exit"] == 2 and "--deadline ''" in status["line"], status


def test_the_nodes_folders_are_not_writable_by_others_under_a_umask_of_0(tmp_path):
    """A hook run with umask 0 (slurmd's or NPD's own) made the state folders 0777: another
    user could then plant or change what the next run reads (a hostile-input hunt)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RMPEER_STAND_IN", "SLURMD_NODENAME")}
    env.update(NODE_NAME="n1", RMPEER_STAND_IN=str(HEALTHY))
    subprocess.run([RMPEER, "fleet", "node", "--tier", "passive", "--output", str(tmp_path / "state" / "health")],
                   env=env, capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.umask(0))
    for folder in (tmp_path / "state", tmp_path / "state" / "health"):
        assert folder.is_dir() and folder.stat().st_mode & 0o022 == 0, oct(folder.stat().st_mode)


def test_a_folder_it_cannot_use_is_named_on_one_line(tmp_path):
    """A line break in --output came through raw: the refusal spanned two lines."""
    (tmp_path / "file").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("RMPEER_STAND_IN", "SLURMD_NODENAME")}
    done = subprocess.run([RMPEER, "fleet", "node", "--tier", "passive", "--output", str(tmp_path / "file" / "a\nb")],
                          env={**env, "NODE_NAME": "n1"}, capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "file/a\\nb cannot take this node's results" in lines[0], \
        done.stderr


def _not_certified(folder: Path, certificate_id: str = "c-41"):
    """certify's RunOutcome of a NOT CERTIFIED run, its certificate written as certify writes it."""
    from rmpeer.model.result import FAIL, NOT_CERTIFIED, CheckResult, Finding, RunOutcome, RunResult

    result = RunResult(verdict=NOT_CERTIFIED, certificate_id=certificate_id, reasons=["wrong memory"],
                       checks=[CheckResult("read/one-per-card/s0->t1", "read", "read/write", "s0->t1", "failed")],
                       findings=[Finding("read", "s0->t1", "card 0's buffer pattern", "card 1's buffer pattern", FAIL)])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "certificate.json"
    path.write_text(json.dumps(result.to_dict()))
    return RunOutcome(1, result, str(path))


def test_the_node_reads_certifys_result_never_what_it_printed(tmp_path, monkeypatch, capsys):
    """certify printing a drain-like line of its own: the node's reason is its RunResult's first
    finding, and status.json names that result's certificate id."""
    import sys

    from rmpeer.fleet import node

    monkeypatch.setenv("RMPEER_NODE_NAME", "n41")

    def certify(argv):
        print("rmpeer: printed: drain me for this", file=sys.stderr)
        print("rmpeer: printed: or this")
        return _not_certified(tmp_path / "n41")
    code, line = node.run_node("full", tmp_path / "n41", run_id="r-41", certify=certify)
    status = json.loads((tmp_path / "n41" / "status.json").read_text())
    assert (code, line) == (1, "rmpeer: read: s0->t1: expected card 0's buffer pattern, found card 1's buffer pattern")
    assert (status["verdict"], status["certificate_id"], status["line"]) == ("NOT CERTIFIED", "c-41", line)


def test_a_certificate_replaced_after_the_run_is_no_verdict(tmp_path, monkeypatch):
    """The file certify named holds another certificate id by the time the node reads it (a
    folder others may write): not this run's certificate, so no verdict and no drain."""
    from rmpeer.fleet import node

    monkeypatch.setenv("RMPEER_NODE_NAME", "n42")

    def certify(argv):
        ran = _not_certified(tmp_path / "n42")
        Path(ran.certificate).write_text(json.dumps({**ran.result.to_dict(), "certificate_id": "planted"}))
        return ran
    code, line = node.run_node("full", tmp_path / "n42", run_id="r-42", certify=certify)
    status = json.loads((tmp_path / "n42" / "status.json").read_text())
    assert (code, status["verdict"], status["certificate_id"]) == (5, "", "")
    assert line == f"rmpeer: tool: exit 1 but no certificate of this run in {tmp_path / 'n42'}"


def test_a_link_to_a_fifo_swapped_in_for_the_certificate_never_hangs_the_node(tmp_path, monkeypatch):
    """certify wrote its certificate; another user swaps a link to a FIFO in at its name before
    the node reads it back. The node never reads through it (an open that followed the link
    would block for ever): not this run's certificate, so no verdict."""
    from rmpeer.fleet import node

    monkeypatch.setenv("RMPEER_NODE_NAME", "n43")

    def certify(argv):
        ran = _not_certified(tmp_path / "n43")
        os.mkfifo(tmp_path / "n43" / ".f")
        Path(ran.certificate).unlink()
        Path(ran.certificate).symlink_to(".f")
        return ran
    import threading

    got = []
    worker = threading.Thread(target=lambda: got.append(node.run_node("full", tmp_path / "n43", run_id="r-43",
                                                                       certify=certify)), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():       # blocked on the FIFO: a writer's open releases it, then fail
        os.close(os.open(tmp_path / "n43" / ".f", os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("fleet node opened the FIFO through the link swapped in for its certificate")
    assert got == [(5, f"rmpeer: tool: exit 1 but no certificate of this run in {tmp_path / 'n43'}")]
