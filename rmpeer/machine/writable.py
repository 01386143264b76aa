"""Where an option says to write (certify's --output, --junit, --prometheus, the state file;
report's --output; diff's --json), refused in one line before the run when nothing can be
written there, or when what is there must not be replaced: a run never finds out at its end
that its certificate or its outputs have nowhere to go. Nothing is created.

Refused (exit 2): a symbolic link at any name rmpeer writes (a file, or an output folder:
another user may have planted it), and a file name that is not a regular file (a device
node such as /dev/null, a FIFO, a folder). rmpeer.safewrite does the writing itself."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.machine.lock import checked_forced_path
from rmpeer.machine.signing import load_key
from rmpeer.machine.state import checked_state_path
from rmpeer.model.spec import ALLURE_RESULTS, CERTIFICATE, REPLAY_CERTIFICATE
from rmpeer.safewrite import folder_problem, target_problem

PROMETHEUS_FILE = "rmpeer.prom"


def _nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def writable(option: str, text, *, folder: bool) -> Path:
    """The place `option` names (a folder, or a file when folder is False), resolved; a
    ConfigError naming the option when it cannot be made or written by this user, or when it
    is a symbolic link or (a file) not a regular file."""
    if text is None or not str(text).strip():
        raise ConfigError(f"{option} needs a {'folder' if folder else 'file'} (an empty name would write "
                          f"into the current directory)")
    given = Path(text).absolute()
    try:        # a folder above it this user may not enter, a name too long, a loop of links above it
        os.lstat(given)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        raise ConfigError(f"{option} {given}: cannot write there ({exc.strerror or exc})") from None
    problem = folder_problem(given) if folder else target_problem(given)
    if problem == "it is a folder":
        raise ConfigError(f"{option} {given} is a directory: name the file to write")
    if problem:        # checked before resolve(): resolve() would follow the link
        raise ConfigError(f"{option} {given}: refused: {problem}" +
                          ("; name the folder itself" if folder else "; rmpeer writes only regular files"))
    path = given.resolve()
    probe = _nearest_existing(path if folder else path.parent)
    if not probe.is_dir():
        raise ConfigError(f"{option} {path}: cannot write there ({probe} is not a directory)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: cannot write there ({probe} is read-only for this user)")
    try:    # access() says yes to root everywhere: a file made and removed at once settles it
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot write there ({exc.strerror})") from None
    if not folder and path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"{option} {path}: cannot write there (the file is read-only for this user)")
    return path


def check_inside(option: str, folder: Path, *, files=(), folders=()) -> None:
    """The fixed names rmpeer writes inside an output folder: none may be a symbolic link, a
    file that is not regular, or (for `folders`) anything but a real folder."""
    for name in files:
        problem = target_problem(Path(folder) / name)
        if problem:
            raise ConfigError(f"{option}: {Path(folder) / name}: refused: {problem}; rmpeer writes only "
                              "regular files")
    for name in folders:
        problem = folder_problem(Path(folder) / name)
        if problem:
            raise ConfigError(f"{option}: {Path(folder) / name}: refused: {problem}")


def certify_outputs(output: Path, *, replay: bool = False, junit=None, prometheus=None) -> None:
    """Everything `rmpeer certify` will write, checked before the run: the certificate and the
    Allure results in --output, --junit, --prometheus's rmpeer.prom, the state file, RMPEER_LOCK,
    and the host key that signs the certificate (a key another user could read: exit 2)."""
    check_inside("--output", output, files=(REPLAY_CERTIFICATE if replay else CERTIFICATE,),
                 folders=(ALLURE_RESULTS,))
    if junit is not None:
        writable("--junit", junit, folder=False)
    if prometheus is not None:
        check_inside("--prometheus", writable("--prometheus", prometheus, folder=True), files=(PROMETHEUS_FILE,))

    load_key(create=True)     # the key that will sign the certificate: made at the first run, or refused now
    if not replay:
        checked_state_path()
        checked_forced_path()
