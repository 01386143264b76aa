"""What an unexpected error becomes: one line naming the step, the traceback in a file, and
exit 5 (INCOMPLETE). Exit 1 is the judge's alone (a scheduler drains a node on it), so
nothing that was not expected may reach it.

The traceback file is created new (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name) in
the first folder that takes it: the run's output folder, the state folder, else the system's
temporary folder. Nothing is opened through a link, and nothing existing is overwritten."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from rmpeer.errors import EXIT_INCOMPLETE
from rmpeer.render.text import escaped

PREFIX = "rmpeer-traceback-"
_step = {"now": ""}


def at(step: str) -> None:
    """Names the step the command is in, for the one line an internal error prints."""
    _step["now"] = step


def _create(folder: Path) -> tuple[int, Path] | None:
    name = f"{PREFIX}{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.urandom(4).hex()}.txt"
    path = Path(folder) / name
    try:
        if not Path(folder).is_dir() or Path(folder).is_symlink():
            return None
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    return fd, path


def write_traceback(exc: BaseException, folders=()) -> Path | None:
    """The traceback of exc in a new file of the first folder that takes it (then the temp
    folder); its path, or None when no folder took it."""
    import tempfile        # only on an internal error: a run that ends well never loads them
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for folder in [*[f for f in folders if f], tempfile.gettempdir()]:
        made = _create(Path(folder))
        if made is None:
            continue
        fd, path = made
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
                f.write(f"rmpeer {' '.join(sys.argv[1:])!r}\n{text}")
        except OSError:
            continue
        return path
    return None


def internal_error(step: str, exc: BaseException, folders=()) -> int:
    """Report an unexpected error in one line on stderr and return exit 5."""
    path = write_traceback(exc, folders)
    step = f"{step}: {_step['now']}" if _step["now"] else step
    where = f"traceback in {path}" if path else "no folder took its traceback"
    first = escaped((str(exc).strip().splitlines() or [""])[0][:200])   # it may quote a file's bytes
    try:
        print(f"rmpeer: {step}: internal error ({type(exc).__name__}{': ' + first if first else ''}); "
              f"INCOMPLETE (exit {EXIT_INCOMPLETE}); {where}", file=sys.stderr, flush=True)
    except (OSError, ValueError):      # no stderr left (a closed terminal): the exit code says it
        pass
    return EXIT_INCOMPLETE
