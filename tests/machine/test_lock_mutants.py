"""One rmpeer run per host (rmpeer/machine/lock.py): where the lock lives and how its folder is
made, what is refused before and after the open, how a holder is named, and how long a run
waits. Written to kill the mutants mutmut left alive (docs/mutation.md). The oracles are the
module's docstring (root's folder 0755, a user's /tmp/rmpeer-UID 0700, the file 0600, the
holder's pid, start time (field 22 of /proc/PID/stat) and command line), os.strerror, proc(5),
and holders written here without rmpeer; never the answer of the function under test. The
waits run on a fake clock: nothing here sleeps or times anything."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import subprocess
import sys
import types
from contextlib import contextmanager
from pathlib import Path

import pytest

from rmpeer.errors import BusyError
from rmpeer.machine import lock
from rmpeer.machine.lock import LOCK_ENV, HostLock, LockError

pytestmark = pytest.mark.offline

NOTE = ("lock: {path}, this user's own (uid {uid}): it keeps this user's runs apart, not root's or other users'; "
        "root's runs see this run as a GPU process")


def need_root():
    if os.getuid() != 0:                 # the real uid: a test may run as another (geteuid patched)
        pytest.skip("needs root: a folder of another uid is made with chown")


def busy(path, holder: str, waited: str = "") -> str:
    return f"another rmpeer run holds this host ({holder}; lock {path}){waited}; wait for it or pass --wait SECONDS"


def start_of(pid) -> str:
    """Field 22 of /proc/PID/stat (proc(5)): the fields after the ")" that closes field 2 (the
    command, which may hold spaces and parentheses) start at field 3, so field 22 is the 20th."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


# A holder written without rmpeer: takes the flock, sets its command name (/proc/self/comm)
# when asked, writes the record the docstring describes, and holds until its stdin closes.
HOLDER = r'''
import fcntl, os, sys
path, comm = sys.argv[1], sys.argv[2]
if comm != "-":
    with open("/proc/self/comm", "w") as f:
        f.write(comm)
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
start = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
os.ftruncate(fd, 0)
os.pwrite(fd, f"{os.getpid()}\n{start}\nnot read\n".encode(), 0)
print("locked", flush=True)
sys.stdin.read()
'''


@contextmanager
def holder(tmp_path, *args, comm="-"):
    script = tmp_path / "rmpeer_holder.py"
    script.write_text(HOLDER)
    path = tmp_path / "rmpeer.lock"
    proc = subprocess.Popen([sys.executable, str(script), str(path), comm, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"locked\n", proc.stderr.read()
        yield proc, path, f"{sys.executable} {script} {path} {comm}"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


@contextmanager
def held_here(path: Path, record: bytes):
    """The flock taken by another open of the file in this process (flock locks belong to an
    open file, so HostLock's own open is refused), with `record` in the file."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
        yield fd
    finally:
        os.close(fd)


# ---- naming the holder -----------------------------------------------------------------------

@pytest.mark.parametrize("args, shown", [
    ((), ""),
    (("two  words\tand\na line",), " two words and a line"),          # whitespace runs: one space
    ((os.fsdecode(b"tag-\xff"),), " tag-\ufffd"),                       # a byte no UTF-8: U+FFFD
], ids=["plain", "whitespace", "not-utf8"])
def test_the_holder_is_named_by_its_command_line(tmp_path, args, shown):
    with holder(tmp_path, *args) as (proc, path, command):
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
    assert str(err.value) == busy(path, f"pid {proc.pid} ({command}{shown})")


def test_a_holders_command_line_is_cut_at_300_characters(tmp_path):
    with holder(tmp_path, "r" * 400) as (proc, path, command):
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
    assert str(err.value) == busy(path, f"pid {proc.pid} ({(command + ' ' + 'r' * 400)[:300]})")


def test_a_holder_whose_command_name_holds_a_parenthesis_is_named(tmp_path):
    """/proc/PID/stat's field 2 is "(comm)", and comm may hold ")" and spaces (proc(5))."""
    with holder(tmp_path, comm="rmpeer) 1 2 3 4") as (proc, path, command):
        assert Path(f"/proc/{proc.pid}/comm").read_text() == "rmpeer) 1 2 3 4\n"
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
    assert str(err.value) == busy(path, f"pid {proc.pid} ({command})")


@pytest.mark.parametrize("record", [b"", b"abc\n123\nrmpeer certify\n", b"\xff\xfe\n\x80\n\x81rmpeer\n"],
                         ids=["empty", "no-pid-first", "not-utf8"])
def test_a_lock_file_without_a_record_names_no_holder(tmp_path, record):
    path = tmp_path / "rmpeer.lock"
    with held_here(path, record):
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
    assert str(err.value) == busy(path, "a holder rmpeer cannot name: the lock file holds no record of an rmpeer "
                                        "run yet")


def test_a_record_that_cannot_be_read_back_names_no_holder(tmp_path, monkeypatch):
    path = tmp_path / "rmpeer.lock"

    def fails(*a):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with held_here(path, f"{os.getpid()}\n{start_of(os.getpid())}\nrmpeer\n".encode()):
        monkeypatch.setattr(lock.os, "pread", fails)
        with pytest.raises(BusyError) as err:
            HostLock(path).acquire()
        monkeypatch.undo()
    assert str(err.value) == busy(path, "a holder rmpeer cannot name: the lock file holds no record of an rmpeer "
                                        "run yet")


def test_the_record_is_this_runs_pid_start_time_and_command_line(tmp_path):
    raw = Path("/proc/self/cmdline").read_bytes()
    command = " ".join(raw.replace(b"\0", b" ").decode(errors="replace").split())[:300]
    with HostLock(tmp_path / "rmpeer.lock") as held:
        assert (tmp_path / "rmpeer.lock").read_text() == f"{os.getpid()}\n{start_of(os.getpid())}\n{command}\n"
        assert held.note == ""                        # a lock given by path: nothing to say about it


# ---- waiting ---------------------------------------------------------------------------------

class FakeTime:
    """lock.time on a fake clock: sleep() moves it on and says so, nothing waits."""

    def __init__(self, on_sleep=None):
        self.now, self.sleeps, self.on_sleep = 1000.0, [], on_sleep

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep:
            self.on_sleep()


@pytest.mark.parametrize("wait_s, sleeps, waited", [
    (0, [], ""),                                     # gives up at once, never polls
    (0.2, [0.1, 0.1], " after waiting 0.2 s"),       # polls every 0.1 s until the deadline, inclusive
], ids=["no-wait", "two-polls"])
def test_a_wait_polls_until_its_deadline_and_no_further(tmp_path, monkeypatch, wait_s, sleeps, waited):
    path = tmp_path / "rmpeer.lock"
    clock = FakeTime()
    monkeypatch.setattr(lock, "time", clock)
    with held_here(path, b""):
        with pytest.raises(BusyError) as err:
            HostLock(path, wait_s=wait_s).acquire()
    assert clock.sleeps == sleeps
    assert str(err.value) == busy(path, "a holder rmpeer cannot name: the lock file holds no record of an rmpeer "
                                        "run yet", waited)


def test_a_waiting_run_takes_the_lock_when_the_holder_lets_go(tmp_path, monkeypatch):
    path = tmp_path / "rmpeer.lock"
    with held_here(path, b"") as theirs:
        clock = FakeTime(on_sleep=lambda: fcntl.flock(theirs, fcntl.LOCK_UN))    # let go while it waits
        monkeypatch.setattr(lock, "time", clock)
        with HostLock(path, wait_s=30):
            assert clock.sleeps == [0.1]
            assert path.read_text().startswith(f"{os.getpid()}\n")


def test_a_flock_that_fails_otherwise_is_raised_and_the_file_closed(tmp_path, monkeypatch):
    def fails(fd, op):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(lock, "fcntl", types.SimpleNamespace(LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB,
                                                             LOCK_UN=fcntl.LOCK_UN, flock=fails))
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError) as err:
        HostLock(tmp_path / "rmpeer.lock").acquire()
    assert err.value.errno == errno.ENOLCK
    assert sorted(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("given", [None, 0, "", "0"])
def test_no_wait_given_is_no_wait(tmp_path, given):
    assert lock.checked_wait(given) == 0.0
    assert HostLock(tmp_path / "rmpeer.lock").wait_s == 0.0


def test_release_without_a_lock_and_twice_does_nothing(tmp_path):
    never = HostLock(tmp_path / "never.lock")
    never.release()
    assert never.fd is None and not (tmp_path / "never.lock").exists()
    held = HostLock(tmp_path / "rmpeer.lock").acquire()
    held.release()
    held.release()
    assert held.fd is None
    with HostLock(tmp_path / "rmpeer.lock"):         # released: the next run takes it
        pass


# ---- what is refused, before and after the open ----------------------------------------------

@pytest.mark.parametrize("mode, problem", [
    (0o600, None), (0o700, None),
    (0o640, "its mode 0640 lets other users open it (0600 expected)"),
    (0o604, "its mode 0604 lets other users open it (0600 expected)"),
], ids=["0600", "0700", "0640", "0604"])
def test_file_problem_of_a_files_mode(tmp_path, mode, problem):
    path = tmp_path / "rmpeer.lock"
    path.write_text("")
    path.chmod(mode)
    assert lock.file_problem(os.stat(path), os.geteuid()) == problem


def test_file_problem_of_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo", 0o600)
    assert lock.file_problem(os.stat(tmp_path / "fifo"), os.geteuid()) == "it is not a regular file"


def plant(kind: str, path: Path):
    if kind == "file":
        path.parent.mkdir(exist_ok=True)
        path.write_text("")
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "folder":
        path.mkdir()


@pytest.mark.parametrize("where, kind, problem", [
    ("missing/rmpeer.lock", None, "its folder {tmp}/missing: it does not exist"),
    ("file/rmpeer.lock", "file", os.strerror(errno.ENOTDIR)),
    ("rmpeer.lock", "folder", "it is a folder (RMPEER_LOCK must name a file)"),
    ("rmpeer.lock", "fifo", "it is not a regular file"),
], ids=["no-folder", "under-a-file", "a-folder", "a-fifo"])
def test_a_lock_path_that_cannot_be_a_lock_file_is_refused_in_one_line(tmp_path, where, kind, problem):
    path = tmp_path / where
    if kind:
        plant(kind, tmp_path / where.split("/")[0])
    with pytest.raises(LockError) as err:
        HostLock(path).acquire()
    assert str(err.value) == f"lock {path}: refused: {problem.format(tmp=tmp_path)}"


def test_a_lock_file_others_may_open_is_refused_before_the_open(tmp_path, monkeypatch):
    path = tmp_path / "rmpeer.lock"
    path.write_text("theirs")
    path.chmod(0o644)
    want = f"lock {path}: refused: its mode 0644 lets other users open it (0600 expected); it is left as it is"
    with pytest.raises(LockError) as err:
        lock.precheck(path)
    assert str(err.value) == want
    monkeypatch.setenv(LOCK_ENV, str(path))
    with pytest.raises(LockError) as err:
        lock.checked_forced_path()                   # RMPEER_LOCK, checked with the other options
    assert str(err.value) == want
    assert path.read_text() == "theirs" and stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_a_lock_folder_of_another_uid_is_refused(tmp_path):
    need_root()
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o755)
    os.chown(folder, 1, 1)
    with pytest.raises(LockError) as err:
        HostLock(folder / "rmpeer.lock").acquire()
    assert str(err.value) == f"lock {folder}/rmpeer.lock: refused: its folder {folder}: it belongs to uid 1, not to " \
                             "uid 0 or root"
    assert os.listdir(folder) == []


def test_a_sticky_folder_anyone_may_write_may_hold_the_lock(tmp_path):
    """In a sticky folder (/tmp, /run/lock) no other user can replace or remove this user's file."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    folder.chmod(0o1777)
    with HostLock(folder / "rmpeer.lock") as held:
        assert held.fd is not None


@pytest.fixture
def user(monkeypatch):
    """A run as a user other than root: uid 4321 when this is root (its folders made with
    chown), else this user's own."""
    uid = 4321 if os.geteuid() == 0 else os.geteuid()
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(lock.os, "geteuid", lambda: uid)
    return uid


def test_a_lock_in_a_folder_of_this_users_own_passes_the_check(tmp_path, user):
    folder = tmp_path / "mine"
    folder.mkdir(mode=0o755)
    os.chown(folder, user, -1)
    assert lock.precheck(folder / "rmpeer.lock") is None


@pytest.mark.parametrize("plant_as", ["link", "folder", "file-0644"])
def test_what_is_planted_between_the_check_and_the_open_is_refused(tmp_path, monkeypatch, plant_as):
    path = tmp_path / "rmpeer.lock"
    real = lock.precheck

    def then_planted(p):
        real(p)
        if plant_as == "link":
            os.symlink(tmp_path / "victim", p)
        elif plant_as == "folder":
            p.mkdir()
        else:
            p.write_text("theirs")
            p.chmod(0o644)

    monkeypatch.setattr(lock, "precheck", then_planted)
    before = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(LockError) as err:
        HostLock(path).acquire()
    why = {"link": "it is a symbolic link", "folder": os.strerror(errno.EISDIR),
           "file-0644": "its mode 0644 lets other users open it (0600 expected); it is left as it is"}[plant_as]
    assert str(err.value) == f"lock {path}: refused: {why}"
    assert sorted(os.listdir("/proc/self/fd")) == before       # nothing left open
    assert not (tmp_path / "victim").exists()


def test_the_lock_is_not_inherited_by_programs_the_run_starts(tmp_path):
    """O_CLOEXEC (the docstring): a program the run executes never holds the host's lock.
    (Python's os.open makes every descriptor non-inheritable anyway, PEP 446: this pins the
    promise, not the flag; docs/mutation.md, x_open_lock__mutmut_11.)"""
    with HostLock(tmp_path / "rmpeer.lock") as held:
        assert os.get_inheritable(held.fd) is False


# ---- where the lock lives --------------------------------------------------------------------

@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_roots_lock_folder_is_made_0755(tmp_path, monkeypatch, umask_022):
    need_root()
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.setattr(lock, "SYSTEM_LOCK_DIR", str(tmp_path / "run-rmpeer"))
    assert lock.default_lock_path() == (tmp_path / "run-rmpeer" / "rmpeer.lock", "")
    assert stat.S_IMODE(os.lstat(tmp_path / "run-rmpeer").st_mode) == 0o755


@pytest.mark.parametrize("made, problem", [
    ("no-parent", "cannot make it ({strerror})"),
    ("a-file", "refused: it is not a folder"),
], ids=["no-parent", "a-file"])
def test_roots_lock_folder_that_cannot_be_had_is_refused_in_one_line(tmp_path, monkeypatch, made, problem):
    need_root()
    folder = tmp_path / "missing" / "run-rmpeer" if made == "no-parent" else tmp_path / "run-rmpeer"
    if made == "a-file":
        folder.write_text("")
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.setattr(lock, "SYSTEM_LOCK_DIR", str(folder))
    with pytest.raises(LockError) as err:
        lock.default_lock_path()
    assert str(err.value) == f"lock folder {folder}: {problem.format(strerror=os.strerror(errno.ENOENT))}"


def test_a_users_own_lock_folder_is_made_0700(tmp_path, monkeypatch, user, umask_022):
    monkeypatch.setattr(lock, "USER_TMP_PREFIX", str(tmp_path / "rmpeer-"))
    folder = tmp_path / f"rmpeer-{user}"
    if os.getuid() == 0:                 # made by root for uid 4321 here: the folder is the one checked
        real_mkdir = os.mkdir

        def mkdir_as_user(path, mode=0o777):
            real_mkdir(path, mode)
            os.chown(path, user, -1)

        monkeypatch.setattr(lock.os, "mkdir", mkdir_as_user)
    assert lock.default_lock_path() == (folder / "rmpeer.lock", NOTE.format(path=folder / "rmpeer.lock", uid=user))
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700


def test_a_users_lock_folder_made_by_root_is_refused(tmp_path, monkeypatch, user):
    """/tmp/rmpeer-UID made first by another, root included, is not this user's folder."""
    need_root()
    monkeypatch.setattr(lock, "USER_TMP_PREFIX", str(tmp_path / "rmpeer-"))
    folder = tmp_path / f"rmpeer-{user}"
    folder.mkdir(mode=0o700)            # root's
    with pytest.raises(LockError) as err:
        lock.default_lock_path()
    assert str(err.value) == f"lock folder {folder}: refused: it belongs to uid 0, not to this user (uid {user})"


@pytest.mark.parametrize("mode", [0o777, 0o1777])
def test_a_users_lock_folder_others_may_write_is_refused(tmp_path, monkeypatch, user, mode):
    monkeypatch.setattr(lock, "USER_TMP_PREFIX", str(tmp_path / "rmpeer-"))
    folder = tmp_path / f"rmpeer-{user}"
    folder.mkdir()
    os.chown(folder, user, -1)
    folder.chmod(mode)
    with pytest.raises(LockError) as err:
        lock.default_lock_path()
    assert str(err.value) == (f"lock folder {folder}: refused: its mode {mode:04o} lets other users replace what "
                              "is in it")


def test_a_users_runtime_folder_holds_its_lock(tmp_path, monkeypatch, user):
    runtime = tmp_path / "run-user"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, user, -1)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(lock, "USER_TMP_PREFIX", str(tmp_path / "rmpeer-"))
    assert lock.default_lock_path() == (runtime / "rmpeer.lock", NOTE.format(path=runtime / "rmpeer.lock", uid=user))
    assert not (tmp_path / f"rmpeer-{user}").exists()

