"""Where an option says to write (certify's --output, --junit, --prometheus; report's --output),
refused in one line before the run when nothing can be written there: a run never finds out at
its end that its certificate or its outputs have nowhere to go. Nothing is created."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import ConfigError


def _nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def writable(option: str, text, *, folder: bool) -> Path:
    """The place `option` names (a folder, or a file when folder is False), resolved; a
    ConfigError naming the option when it cannot be made or written by this user."""
    if text is None or not str(text).strip():
        raise ConfigError(f"{option} needs a {'folder' if folder else 'file'} (an empty name would write "
                          f"into the current directory)")
    path = Path(text).resolve()
    if not folder and path.is_dir():
        raise ConfigError(f"{option} {path} is a directory: name the file to write")
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
