"""The one way rmpeer writes a file: a new temporary file beside the destination, written,
fsync'd, then renamed into place.

On a shared host another user may plant a symbolic link or a FIFO at any name they can
guess in a folder they can write (/tmp, a shared sweep folder). So:
- the temporary file is made by tempfile.mkstemp: O_CREAT|O_EXCL|O_NOFOLLOW and a random
  name, in the destination's own folder (a rename across file systems is not atomic);
- a destination that is a symbolic link or not a regular file (a device node such as /dev/null,
  a FIFO, a folder) is refused, never replaced: root renaming over /dev/null would replace
  the device node with a regular file;
- rename(2) replaces the name, never what a link at that name points to;
- the temporary file is removed on every path that does not rename it (an error, a signal
  raised as an exception): nothing is left behind.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from pathlib import Path

from rmpeer.errors import ConfigError


class UnsafeTarget(ConfigError):
    """A target path that is a symbolic link or not a regular file (exit 2)."""


def target_problem(path) -> str | None:
    """Why `path` may not be written (replaced), or None: it is absent or a regular file."""
    st, link = _lstat(path)
    if st is None or link:
        return link
    if stat.S_ISDIR(st.st_mode):
        return "it is a folder"
    if not stat.S_ISREG(st.st_mode):
        return f"it is not a regular file ({_kind(st.st_mode)})"
    return None


def folder_problem(path) -> str | None:
    """Why `path` cannot be an output folder rmpeer writes into, or None (absent or a real folder)."""
    st, link = _lstat(path)
    if st is None or link:
        return link
    if not stat.S_ISDIR(st.st_mode):
        return f"it is not a folder ({_kind(st.st_mode)})"
    return None


def _lstat(path):
    """(lstat of path, why it is refused): (None, None) when absent (a file above it: the
    caller says so); a link is never followed, and says where it points; a name that cannot
    be looked up (a folder above it this user may not enter, a name too long, a loop of
    links above it) says why."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, f"it cannot be looked up ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return st, f"it is a symbolic link (to {os.readlink(path)})"
    return st, None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "an unknown kind of file"


def refuse_unsafe(path, what: str) -> None:
    problem = target_problem(path)
    if problem:
        raise UnsafeTarget(f"{what} {path}: refused: {problem}; rmpeer writes only regular files")


def write_file(path, data, *, mode: int = 0o644, replace: bool = True, what: str | None = None,
               durable: bool = True) -> Path:
    """Write `data` (str or bytes) to `path` safely (the module's docstring). replace=False
    never replaces an existing file (os.link: EEXIST), for a file that must be made once.
    durable=False leaves out the two fsyncs, for the many files of a report that nothing
    promises by (the Allure results): as safe against links and planted files, not as durable."""
    path = Path(path)
    what = what or str(path.name)
    refuse_unsafe(path, what)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            _write_all(fd, raw, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        refuse_unsafe(path, what)      # planted while we wrote: still refused, never followed
        if replace:
            os.rename(tmp, path)
        else:
            os.link(tmp, path)         # fails with EEXIST: an existing file is never replaced
            os.unlink(tmp)
        tmp = None
        if durable:
            _sync_folder(path.parent)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return path


def _write_all(fd: int, raw: bytes, mode: int) -> None:
    """Every byte of `raw` written to `fd`, then its mode set (the umask, 0 in a hook, never
    widens it)."""
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view):]
    os.fchmod(fd, mode)


class FolderWriter:
    """Many small files written into one real folder (a report's results, a thousand or more
    a run): the folder opened once, never through a link, and each file created in it at
    its own name with O_CREAT|O_EXCL|O_NOFOLLOW, one open where write_file takes a temporary
    file, two lstats and a rename. Nothing at a name is followed or replaced by the open; a
    name already taken (an earlier run's file, or one planted since the folder was emptied)
    goes through write_file, which replaces a regular file and refuses anything else. Not
    atomic and not fsync'd: for files nobody reads until the run has ended."""

    def __init__(self, folder, *, mode: int = 0o644):
        self.folder, self.mode = Path(folder), mode
        self.fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def __enter__(self) -> "FolderWriter":
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)

    def write(self, name: str, data) -> Path:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"{name!r} is not a file name")
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, self.mode,
                         dir_fd=self.fd)
        except FileExistsError:
            return write_file(self.folder / name, raw, mode=self.mode, durable=False)
        try:
            _write_all(fd, raw, self.mode)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self.fd)     # never half a file left behind
            raise
        finally:
            os.close(fd)
        return self.folder / name


def _sync_folder(folder: Path) -> None:
    """The rename itself durable (a crash after it leaves the new file, not an empty name)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def make_folder(path, *, mode: int = 0o755, what: str | None = None) -> Path:
    """mkdir -p that refuses a symbolic link or a non-folder at the path (exit 2)."""
    path = Path(path)
    named = f"{what} {path}" if what else str(path)
    for attempt in (0, 1):
        problem = folder_problem(path)
        if problem:
            raise UnsafeTarget(f"{named}: refused as an output folder: {problem}")
        if attempt == 0:
            make_missing(path, mode=mode)
    return path


def empty_folder(path) -> int:
    """Every file and link directly in the real folder `path` removed (never followed, never a
    folder's contents): a results folder made fresh for a run. The number removed."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    removed = 0
    try:
        for name in os.listdir(fd):
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=fd)
                removed += 1
    finally:
        os.close(fd)
    return removed


def make_missing(path, *, mode: int = 0o755) -> None:
    """Each missing folder of `path` made with `mode`, its parents too: mkdir -p gives them
    0777 less the umask, which under a hook's umask of 0 is a folder anyone could write."""
    path = Path(path)
    for folder in reversed([p for p in (path, *path.parents) if not os.path.lexists(p)]):
        folder.mkdir(mode=mode, exist_ok=True)


class UntrustedFile(ConfigError):
    """A file rmpeer would believe (its state, its key) that another user could have written."""


def _read(path, limit: int, refused, problem_of, *, follow: bool = False) -> bytes:
    """A file opened without following a link (follow=True: through one), a FIFO never
    blocking the open, refused (`refused`, an exception class) when problem_of(its stat)
    says why, or past `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | (0 if follow else os.O_NOFOLLOW) | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:     # O_NOFOLLOW's answer to a link
            raise refused(f"{path}: refused: it is a symbolic link") from None
        raise
    try:
        problem = problem_of(os.fstat(fd))
        if problem:
            raise refused(f"{path}: refused: {problem}")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise refused(f"{path}: refused: larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


def read_own(path, *, limit: int = 1 << 24, private: bool = False) -> bytes:
    """The bytes of a file only this user (or root) could have written: opened without
    following a link, a regular file, owned by this user or root, writable by nobody else
    (private: readable by nobody else either). UntrustedFile otherwise; FileNotFoundError
    when absent."""
    return _read(path, limit, UntrustedFile, lambda st: owner_problem(st, private=private))


def read_found(path, *, limit: int, follow: bool = False) -> bytes:
    """The bytes of a file rmpeer found in a folder another user may write (an Allure result,
    the certificate beside it): opened without following a link, a regular file, at most
    `limit` bytes; UnsafeTarget (exit 2) otherwise, FileNotFoundError when absent. What it
    holds is input: the caller checks every field it reads. follow=True: a configuration
    file of root's (gres.conf), whose link is the administrator's, read just as bounded."""
    return _read(path, limit, UnsafeTarget,
                 lambda st: None if stat.S_ISREG(st.st_mode) else f"it is not a regular file ({_kind(st.st_mode)})",
                 follow=follow)


def json_input(data):
    """JSON (bytes or text) from a file another user may have written, as rmpeer and Allure
    write it: UTF-8, nested within Python's reach, no NaN or Infinity (no measurement compares
    as them). ValueError otherwise (UnicodeDecodeError is one)."""
    def constant(name):
        raise ValueError(f"{name} is not a number rmpeer writes")
    try:
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data, parse_constant=constant)
    except RecursionError:
        raise ValueError("nested deeper than any file rmpeer writes") from None


def owner_problem(st, *, private: bool = False, uid: int | None = None) -> str | None:
    """Why a file (its stat) could have been written by another user, or None."""
    uid = os.geteuid() if uid is None else uid
    if not stat.S_ISREG(st.st_mode):
        return f"it is not a regular file ({_kind(st.st_mode)})"
    if st.st_uid not in (uid, 0):
        return f"it belongs to uid {st.st_uid}, not to this user (uid {uid}) or root"
    if st.st_mode & 0o022:
        return f"its mode {stat.S_IMODE(st.st_mode):04o} lets other users write it"
    if private and st.st_mode & 0o077:
        return f"its mode {stat.S_IMODE(st.st_mode):04o} lets other users read it (0600 expected)"
    return None
