"""One run per host: real processes contend for the lock file (rmpeer/machine/lock.py)."""

import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_BUSY, BusyError, ConfigError
from rmpeer.machine.lock import LOCK_ENV, HostLock, default_lock_path

pytestmark = pytest.mark.offline

# A holder: takes the lock, says so, and keeps it until its stdin closes (or it is killed).
HOLDER = """
import sys
from rmpeer.machine.lock import HostLock
with HostLock(sys.argv[1], wait_s=float(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.read()
print("released", flush=True)
"""


def start_holder(path, wait_s=0.0, tag="holder-under-test"):
    """A second python process running HOLDER (its command line carries `tag`)."""
    script = Path(path).parent / "holder.py"
    script.write_text(HOLDER)
    return subprocess.Popen([sys.executable, str(script), str(path), str(wait_s), tag],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_locked(proc):
    line = proc.stdout.readline()
    assert line == "locked\n", (line, proc.stderr.read() if proc.poll() is not None else "")


def stop(proc):
    if proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=30)


@contextmanager
def held_by_another(path):
    """Another process holding the lock at `path` for the duration of the block."""
    holder = start_holder(path)
    try:
        wait_locked(holder)
        yield holder
    finally:
        stop(holder)


def test_a_second_run_is_refused_naming_the_holder(tmp_path):
    path = tmp_path / "rmpeer.lock"
    with held_by_another(path) as holder:
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
        message = str(err.value)
        assert f"pid {holder.pid} (" in message and "holder-under-test" in message
        assert "\n" not in message and err.value.exit_code == EXIT_BUSY == 6


def test_a_waiting_run_gets_the_lock_when_the_holder_releases_it(tmp_path):
    path = tmp_path / "rmpeer.lock"
    with held_by_another(path) as holder:
        waiter = start_holder(path, wait_s=120, tag="waiter")
        try:
            holder.stdin.close()                        # the holder finishes ...
            assert holder.stdout.readline() == "released\n"
            wait_locked(waiter)                         # ... and the waiter, still waiting, takes over
            text = path.read_text().splitlines()
            assert text[0] == str(waiter.pid) and "waiter" in text[2]
        finally:
            stop(waiter)


def test_a_wait_that_runs_out_says_it_waited(tmp_path):
    path = tmp_path / "rmpeer.lock"
    with held_by_another(path) as holder:
        with pytest.raises(BusyError, match=r"after waiting 0\.3 s") as err:
            HostLock(path, wait_s=0.3).acquire()
        assert f"pid {holder.pid}" in str(err.value)


def test_a_lock_file_left_by_a_killed_run_does_not_block(tmp_path):
    path = tmp_path / "rmpeer.lock"
    holder = start_holder(path)
    wait_locked(holder)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    assert path.read_text().startswith(f"{holder.pid}\n")   # the dead run's pid is still written there
    with HostLock(path) as lock:
        assert path.read_text().startswith(f"{os.getpid()}\n") and lock.fd is not None
    assert path.read_text() == ""                           # released: names nobody


def test_the_lock_is_released_for_the_next_run_in_the_same_process(tmp_path):
    path = tmp_path / "rmpeer.lock"
    with HostLock(path):
        pass
    with HostLock(path):
        pass


def test_the_lock_path_is_overridable_and_said(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "x.lock"))
    assert default_lock_path() == (tmp_path / "x.lock", f"lock: {tmp_path / 'x.lock'} (RMPEER_LOCK)")


@pytest.mark.parametrize("wait", [-1, float("nan"), float("inf")])
def test_a_negative_wait_is_refused_in_one_line(tmp_path, wait):
    with pytest.raises(ConfigError, match=r"^--wait .*: give the seconds to wait for another run's lock, 0 or more$"):
        HostLock(tmp_path / "l", wait_s=wait)
    assert not (tmp_path / "l").exists()
