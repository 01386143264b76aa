"""Two rules of a live `rmpeer certify` that no recording can show (a replay takes no lock and
has no other processes to refuse), checked without a GPU: the target is a stand-in live host
and the run itself a stand-in, so what is tested is what certify does around them.

- The host lock is held through the whole run: a second process that asks for it while the
  run is under way is refused (BusyError, errors.py's exit 6).
- --require-idle holds for the passive tier too: one other process on the GPUs is exit 7."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rmpeer.cli import main
from rmpeer.errors import EXIT_NOT_IDLE, EXIT_OK
from rmpeer.machine.lock import LOCK_ENV
from rmpeer.model.result import CheckResult, RunOutcome
from rmpeer.model.target import Target

pytestmark = pytest.mark.offline
LIVE = Target("live", "h200x2", 2)
# Another process asks for the lock, as a second rmpeer run would: "busy" or "free".
SECOND_RUN = """
import sys
from rmpeer.errors import BusyError
from rmpeer.machine.lock import HostLock
try:
    with HostLock(sys.argv[1], wait_s=0):
        print("free")
except BusyError:
    print("busy")
"""


@pytest.fixture
def live_host(tmp_path, monkeypatch):
    monkeypatch.setattr("rmpeer.run.spec.live_target", lambda *a, **k: LIVE)
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "rmpeer.lock"))
    monkeypatch.setenv("RMPEER_STATE", str(tmp_path / "state.json"))
    return tmp_path


def second_run(lock) -> str:
    done = subprocess.run([sys.executable, "-c", SECOND_RUN, str(lock)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_lock_is_held_while_the_run_is_under_way(live_host, monkeypatch):
    """Issue 27 row 6."""
    lock = live_host / "rmpeer.lock"
    seen = []
    monkeypatch.setattr("rmpeer.cli.certify._certify", lambda *args: seen.append(second_run(lock)) or RunOutcome(EXIT_OK))
    assert main(["certify", "--output", str(live_host / "out")]) == EXIT_OK
    assert seen == ["busy"]
    assert second_run(lock) == "free"          # and given back when the run ends


def passive_result(processes, **reading):
    """What a passive run read on a host where `processes` hold the GPUs (rmpeer.run.passive's
    shape; `reading` replaces its fields)."""
    from rmpeer.run.passive import PassiveSeen

    now = {"available": True, "processes": processes, "unreadable": [], "rm_errors": {}, **reading}
    return PassiveSeen(started_s=0.0, started="1970-01-01T00:00:00Z",
                       checks=[CheckResult("passive/cards", "cards", "host", "host", "passed")],
                       gpu_processes={"now": now})


@pytest.mark.parametrize("require_idle, want", [(True, EXIT_NOT_IDLE), (False, EXIT_OK)])
def test_require_idle_refuses_a_busy_host_in_the_passive_tier(live_host, monkeypatch, capsys, require_idle, want):
    """Issue 27 row 7: one other process (pid 4242 on card 0) and --require-idle: exit 7,
    naming it; without --require-idle the passive run certifies (it is safe beside a job)."""
    from rmpeer.model.processes import GpuProcess

    other = GpuProcess(4242, "python train.py", (0,), True, (0,)).as_dict()
    monkeypatch.setattr("rmpeer.run.execute.observe", lambda *a, **k: passive_result([other]))
    argv = ["certify", "--tier", "passive", "--output", str(live_host / "out")]
    assert main(argv + (["--require-idle"] if require_idle else [])) == want
    if require_idle:
        assert "pid 4242 (python train.py) on card 0" in capsys.readouterr().err


@pytest.mark.parametrize("reading, want, said", [
    # a non-root run: /proc hid two processes' files and RM refused its own list
    ({"unreadable": [5, 6], "rm_errors": {"0": "NV_ERR_INSUFFICIENT_PERMISSIONS"}}, EXIT_NOT_IDLE,
     "2 processes whose open files this user may not read"),
    ({"available": False, "reason": "/proc could not be read: Permission denied"}, EXIT_NOT_IDLE,
     "could not tell whether other processes use the GPUs (/proc could not be read: Permission denied)"),
    # the same hidden processes, RM's list read: it names every holder, and none was there
    ({"unreadable": [5, 6]}, EXIT_OK, ""),
], ids=["hidden-and-rm-refused", "unread", "hidden-but-rm-listed"])
def test_require_idle_in_the_passive_tier_refuses_a_host_it_cannot_prove_idle(live_host, monkeypatch, capsys,
                                                                             reading, want, said):
    """The rule the quick and full tiers apply before their run (run/hostrun.py): idle
    unproven is not idle. The passive tier let both through (exit 0)."""
    monkeypatch.setattr("rmpeer.run.execute.observe", lambda *a, **k: passive_result([], **reading))
    argv = ["certify", "--tier", "passive", "--require-idle", "--output", str(live_host / "out")]
    assert main(argv) == want
    assert said in capsys.readouterr().err


def test_a_refused_run_leaves_no_deadline_armed(live_host, monkeypatch):
    """A run that ends before its verdict (here NOT IDLE, exit 7) disarms its deadline: a
    caller in the same process (fleet node, this test run) is never ended 5 s later by
    os._exit(5) (the full suite once died so, at this very test)."""
    import threading

    from rmpeer.model.processes import GpuProcess

    other = GpuProcess(4242, "python train.py", (0,), True, (0,)).as_dict()
    monkeypatch.setattr("rmpeer.run.execute.observe", lambda *a, **k: passive_result([other]))
    argv = ["certify", "--tier", "passive", "--require-idle", "--output", str(live_host / "out")]
    assert main(argv) == EXIT_NOT_IDLE
    watchdogs = [t for t in threading.enumerate() if t.name == "rmpeer-deadline"]
    for t in watchdogs:
        t.join(timeout=2)
    assert not any(t.is_alive() for t in watchdogs)


def test_the_lock_note_reaches_no_terminal_raw(live_host, monkeypatch, capsys):
    """RMPEER_LOCK (or XDG_RUNTIME_DIR) named with terminal controls: certify's note of which
    lock it took printed the path raw (a title escape, a colour)."""
    lock = live_host / "\x1b]0;PWNED\x07\x1b[31mX.lock"
    monkeypatch.setenv(LOCK_ENV, str(lock))
    monkeypatch.setattr("rmpeer.cli.certify._certify", lambda *args: RunOutcome(EXIT_OK))
    assert main(["certify", "--output", str(live_host / "out")]) == EXIT_OK
    said = capsys.readouterr().out
    assert "rmpeer: lock: " in said and "\\x1b]0;PWNED\\x07" in said, said
    assert not [c for c in said if not c.isprintable() and c != "\n"], said
