"""One rmpeer run per host at a time: an exclusive flock on a lock file no other user can
plant, hold or redirect.

Two runs on one host would each see the other's RM objects and video memory (a peer map
that succeeds because the other run made a pair, free memory the other run took), so a
second run waits up to `wait_s` seconds and then gives up with BusyError (exit 6), naming
the holder.

Where the lock lives (docs/threat-model.md):
- root: /run/rmpeer/rmpeer.lock. /run/rmpeer is made by root with mode 0755 and checked
  (a real folder, owned by root, writable by nobody else), the file has mode 0600: no other
  user can open it, so no other user can take the flock or write the holder's record.
- another user: a lock of its own, in $XDG_RUNTIME_DIR (/run/user/UID, made by logind for
  that user alone) or else /tmp/rmpeer-UID (made 0700 and checked). It excludes that user's
  other runs only, and the run says so; root's runs see such a run as another process
  holding the GPUs (rmpeer.machine.gpuprocs), listed and named beside any figure below its floor.
- RMPEER_LOCK=FILE names the file (it must be a file of this user, in a folder no other
  user can replace it in).

The file is opened with O_NOFOLLOW|O_CLOEXEC and checked with fstat after the open: a
symbolic link, a file that is not regular, a file of another owner, or one that other users
may open is refused (ConfigError, exit 2, one line naming the path and what is wrong). It is
never chmod'ed nor truncated unless it is this user's own. Nothing falls back silently.

The holder writes its pid, its start time (field 22 of /proc/PID/stat) and its command line
into the file; a waiting run names it only when that pid is alive, started at that time and
runs rmpeer (else "a holder rmpeer cannot name"). The kernel drops a flock when its holder
dies, so a file left by a killed run never blocks. The file itself is never deleted
(deleting it would let a third run lock a new file while the second still waits on the old).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
import time
from pathlib import Path

from rmpeer.errors import BusyError, ConfigError

LOCK_ENV = "RMPEER_LOCK"
SYSTEM_LOCK_DIR = "/run/rmpeer"
USER_TMP_PREFIX = "/tmp/rmpeer-"
LOCK_NAME = "rmpeer.lock"
POLL_S = 0.1
RECORD_LIMIT = 4096


class LockError(ConfigError):
    """A lock path that another user could have planted or could hold (exit 2)."""


def _folder_problem(folder: Path, uid: int, *, sticky_ok: bool) -> str | None:
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return exc.strerror
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if st.st_uid not in (uid, 0):
        return f"it belongs to uid {st.st_uid}, not to uid {uid} or root"
    if st.st_mode & 0o022 and not (sticky_ok and st.st_mode & stat.S_ISVTX):
        return f"its mode {stat.S_IMODE(st.st_mode):04o} lets other users replace what is in it"
    return None


def _own_folder(folder: Path, mode: int) -> Path:
    """A folder of this user's that no other user can write: made (mode) when absent, checked."""
    uid = os.geteuid()
    try:
        os.mkdir(folder, mode)
    except FileExistsError:
        pass
    except OSError as exc:
        raise LockError(f"lock folder {folder}: cannot make it ({exc.strerror})") from None
    st = os.lstat(folder)
    if st.st_uid != uid and not stat.S_ISLNK(st.st_mode):    # planted by someone else (root included)
        problem = f"it belongs to uid {st.st_uid}, not to this user (uid {uid})"
    else:
        problem = _folder_problem(folder, uid, sticky_ok=False)
    if problem:
        raise LockError(f"lock folder {folder}: refused: {problem}")
    return folder


def default_lock_path() -> tuple[Path, str]:
    """(the lock file, a note for the run's output: '' for root's system lock)."""
    forced = os.environ.get(LOCK_ENV)
    if forced:
        return Path(forced), f"lock: {forced} ({LOCK_ENV})"
    uid = os.geteuid()
    if uid == 0:
        return _own_folder(Path(SYSTEM_LOCK_DIR), 0o755) / LOCK_NAME, ""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _folder_problem(Path(runtime), uid, sticky_ok=False) is None and os.lstat(runtime).st_uid == uid:
        folder = Path(runtime)
    else:
        folder = _own_folder(Path(f"{USER_TMP_PREFIX}{uid}"), 0o700)
    return folder / LOCK_NAME, (f"lock: {folder / LOCK_NAME}, this user's own (uid {uid}): it keeps this user's "
                                f"runs apart, not root's or other users'; root's runs see this run as a GPU process")


def _start_time(pid: int) -> str | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()     # the command in (...) may hold spaces
    return fields[19] if len(fields) > 19 else None


def _command_of(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(" ".join(p.decode(errors="replace") for p in raw.split(b"\0") if p).split())[:300]


def _record() -> bytes:
    pid = os.getpid()
    return f"{pid}\n{_start_time(pid) or '?'}\n{_command_of(pid) or ' '.join(sys.argv)}\n".encode()


def holder_of(fd: int) -> str:
    """'pid N (command)' when the record names a live rmpeer process that started when it says;
    else a plain statement that the holder cannot be named."""
    try:
        lines = os.pread(fd, RECORD_LIMIT, 0).decode(errors="replace").splitlines()
    except OSError:
        lines = []
    if len(lines) < 3 or not lines[0].strip().isdigit():
        return "a holder rmpeer cannot name: the lock file holds no record of an rmpeer run yet"
    pid, started = int(lines[0]), lines[1].strip()
    command = _command_of(pid)
    if _start_time(pid) is None:
        return f"a holder rmpeer cannot name: the recorded pid {pid} is not alive"
    if _start_time(pid) != started:
        return f"a holder rmpeer cannot name: pid {pid} is not the process that wrote the record (it started later)"
    if "rmpeer" not in command:
        return f"a holder rmpeer cannot name: pid {pid} is not an rmpeer run"
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.fstat(fd).st_uid:
            return f"a holder rmpeer cannot name: pid {pid} is not run by the lock's owner"
    except OSError:
        return f"a holder rmpeer cannot name: the recorded pid {pid} is not alive"
    return f"pid {pid} ({command})"


def checked_wait(seconds) -> float:
    """--wait SECONDS: how long a run waits for another run's lock (0 or more, finite); a
    ConfigError (exit 2, one line) otherwise."""
    seconds = float(seconds or 0)
    if not 0 <= seconds < float("inf"):
        raise ConfigError(f"--wait {seconds:g}: give the seconds to wait for another run's lock, 0 or more")
    return seconds


def file_problem(st, uid: int) -> str | None:
    """Why an opened lock file (its fstat) could be held or written by another user, or None."""
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid != uid:
        return f"it belongs to uid {st.st_uid}, not to uid {uid}"
    if st.st_mode & 0o077:
        return f"its mode {stat.S_IMODE(st.st_mode):04o} lets other users open it (0600 expected)"
    return None


def precheck(path: Path) -> None:
    """What can be refused before opening: a folder, a link, a file that is not regular at the
    path, or a folder other users can write (LockError). Creates nothing."""
    uid = os.geteuid()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise LockError(f"lock {path}: refused: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise LockError(f"lock {path}: refused: it is a folder ({LOCK_ENV} must name a file)")
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise LockError(f"lock {path}: refused: it is a symbolic link (to {os.readlink(path)})")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise LockError(f"lock {path}: refused: it is not a regular file")   # never opened: a FIFO would block
    problem = _folder_problem(path.parent, uid, sticky_ok=True)
    if problem:
        raise LockError(f"lock {path}: refused: its folder {path.parent}: {problem}")
    problem = file_problem(st, uid) if st is not None else None
    if problem:      # said before the open (a kernel's protected_regular would refuse it less clearly)
        raise LockError(f"lock {path}: refused: {problem}; it is left as it is")


def checked_forced_path() -> None:
    """RMPEER_LOCK when set, else root's lock where its folder exists, checked with the other
    options (before any device is looked for); nothing is made here."""
    forced = os.environ.get(LOCK_ENV)
    if forced:           # empty is unset, as default_lock_path reads it
        precheck(Path(forced))
    elif os.geteuid() == 0 and os.path.lexists(SYSTEM_LOCK_DIR):
        precheck(Path(SYSTEM_LOCK_DIR) / LOCK_NAME)


def open_lock(path: Path) -> int:
    """The lock file, opened for this user only: O_NOFOLLOW, then fstat checked (LockError)."""
    uid = os.geteuid()
    precheck(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK,
                     0o600)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise LockError(f"lock {path}: refused: {why}") from None
    problem = file_problem(os.fstat(fd), uid)
    if problem:
        os.close(fd)
        raise LockError(f"lock {path}: refused: {problem}; it is left as it is")
    return fd


class HostLock:
    """with HostLock(wait_s=30): ... -- the host is this run's until the block ends."""

    def __init__(self, path: str | os.PathLike | None = None, *, wait_s: float = 0.0):
        self.wait_s = checked_wait(wait_s)
        self._given = Path(path) if path is not None else None
        self.path: Path | None = self._given
        self.note = ""
        self.fd: int | None = None

    def acquire(self) -> "HostLock":
        if self._given is None:
            self.path, self.note = default_lock_path()
        fd = open_lock(self.path)
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                holder = holder_of(fd)
                os.close(fd)
                waited = f" after waiting {self.wait_s:g} s" if self.wait_s else ""
                raise BusyError(f"another rmpeer run holds this host ({holder}; lock {self.path}){waited}; "
                                f"wait for it or pass --wait SECONDS")
            time.sleep(POLL_S)
        os.ftruncate(fd, 0)           # our own file (open_lock checked it)
        os.pwrite(fd, _record(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)   # a later reader must not name a finished run
        except OSError:
            pass
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "HostLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
