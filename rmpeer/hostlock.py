"""One rmpeer run per host at a time: an exclusive flock on a well-known file.

Two runs on one host would each see the other's RM objects and video memory (a peer map
that succeeds because the other run made a pair, free memory the other run took), so a
second run waits up to `wait_s` seconds and then gives up with BusyError (exit 6), naming
the holder. The holder writes its pid and command line into the file, for that message.

The kernel drops a flock when its holder dies, so a lock file left by a killed run never
blocks: only a live holder does. The file itself is never deleted (deleting it would let
a third run lock a new file while the second still waits on the old one).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import tempfile
import time
from pathlib import Path

from .errors import BusyError, ConfigError

LOCK_ENV = "RMPEER_LOCK"
SYSTEM_LOCK_DIR = "/run/lock"
LOCK_NAME = "rmpeer.lock"
POLL_S = 0.1


def default_lock_path() -> Path:
    """$RMPEER_LOCK, else /run/lock/rmpeer.lock where this user may create or open it (a
    root run leaves it writable to all), else a file in the temp folder."""
    forced = os.environ.get(LOCK_ENV)
    if forced:
        return Path(forced)
    system = Path(SYSTEM_LOCK_DIR) / LOCK_NAME
    if os.access(system, os.W_OK) or (not system.exists() and os.access(SYSTEM_LOCK_DIR, os.W_OK)):
        return system
    return Path(tempfile.gettempdir()) / LOCK_NAME


def _command_line() -> str:
    """This process's command line on one line (the lock file is read line by line)."""
    try:
        raw = Path(f"/proc/{os.getpid()}/cmdline").read_bytes()
        text = " ".join(p.decode(errors="replace") for p in raw.split(b"\0") if p)
    except OSError:
        text = " ".join(sys.argv)
    return " ".join(text.split())[:300]


def _holder(fd: int) -> str:
    """What the holder wrote: 'pid N (command)', or a plain statement when it wrote nothing yet."""
    try:
        text = os.pread(fd, 4096, 0).decode(errors="replace")
    except OSError:
        text = ""
    lines = text.splitlines()
    if not lines or not lines[0].strip().isdigit():
        return "a process that has not written its pid yet"
    command = lines[1].strip() if len(lines) > 1 else "command unknown"
    return f"pid {lines[0].strip()} ({command})"


def checked_wait(seconds) -> float:
    """--wait SECONDS: how long a run waits for another run's lock (0 or more, finite); a
    ConfigError (exit 2, one line) otherwise."""
    seconds = float(seconds or 0)
    if not 0 <= seconds < float("inf"):
        raise ConfigError(f"--wait {seconds:g}: give the seconds to wait for another run's lock, 0 or more")
    return seconds


class HostLock:
    """with HostLock(wait_s=30): ... -- the host is this run's until the block ends."""

    def __init__(self, path: str | os.PathLike | None = None, *, wait_s: float = 0.0):
        self.path = Path(path) if path is not None else default_lock_path()
        self.wait_s = checked_wait(wait_s)
        self.fd: int | None = None

    def acquire(self) -> "HostLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            os.fchmod(fd, 0o666)      # any user's run may lock it after us
        except OSError:
            pass                      # another user's file: it is already shared
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
                holder = _holder(fd)
                os.close(fd)
                waited = f" after waiting {self.wait_s:g} s" if self.wait_s else ""
                raise BusyError(f"another rmpeer run holds this host ({holder}; lock {self.path}){waited}; "
                                f"wait for it or pass --wait SECONDS")
            time.sleep(POLL_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{_command_line()}\n".encode(), 0)
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
