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


def test_a_lock_folder_its_group_may_write_is_refused(tmp_path, monkeypatch):
    """RMPEER_LOCK in a folder of this user's that its group may write (0770): a member of the
    group could replace the lock file; refused in one line, nothing made."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o770)
    with pytest.raises(ConfigError, match=r"its folder .*: its mode 0770 lets other users replace what is in it"):
        HostLock(folder / "rmpeer.lock").acquire()
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("owner, mode", [(4321, 0o1777), (0, 0o755)], ids=["sticky-world-writable", "roots"])
def test_a_runtime_folder_not_this_users_alone_is_not_where_its_lock_goes(tmp_path, monkeypatch, owner, mode):
    """A user's lock goes in $XDG_RUNTIME_DIR only when that folder is its own and no one else
    may write it (logind makes /run/user/UID so); else in its own /tmp/rmpeer-UID. A sticky
    world-writable folder lets another user make the lock's name first; root's is not the user's."""
    from rmpeer.machine import lock

    uid = 4321
    runtime, own = tmp_path / "run", tmp_path / f"rmpeer-{uid}"
    runtime.mkdir()
    own.mkdir(mode=0o700)
    os.chown(runtime, owner, owner)
    runtime.chmod(mode)
    os.chown(own, uid, uid)
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(lock, "USER_TMP_PREFIX", str(tmp_path / "rmpeer-"))
    monkeypatch.setattr(lock.os, "geteuid", lambda: uid)
    path, note = default_lock_path()
    assert path == own / "rmpeer.lock" and f"uid {uid}" in note


def test_a_lock_folder_that_is_a_link_is_refused(tmp_path):
    """RMPEER_LOCK through a linked folder: whoever may change the link chooses the lock."""
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir(mode=0o700)
    link.symlink_to(real)
    with pytest.raises(ConfigError, match=r"its folder .*link: it is a symbolic link"):
        HostLock(link / "rmpeer.lock").acquire()
    assert list(real.iterdir()) == []
