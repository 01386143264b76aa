"""Where rmpeer keeps what one run leaves for the next (NVLink counters, the last kernel log
record read, the cards seen) and the kernel module's remembered hash.

/var/lib/rmpeer/state.json when that folder can be written (a root service), else
~/.cache/rmpeer/state.json; RMPEER_STATE=FILE names another file. A state path that is a
symbolic link or not a regular file (a folder) is refused before the run (exit 2); a state
file another user could have written is not believed (rmpeer.safewrite.read_own).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.safewrite import folder_problem, target_problem, UntrustedFile, read_own, make_folder, write_file

STATE_ENV = "RMPEER_STATE"
SYSTEM_STATE = Path("/var/lib/rmpeer/state.json")
FORMAT = "rmpeer-state/1"


def _writable_dir(path: Path) -> bool:
    while not path.exists():      # the first existing ancestor decides whether it can be made
        path = path.parent
    return os.access(path, os.W_OK | os.X_OK)


def default_state_path() -> Path:
    given = os.environ.get(STATE_ENV)
    if given:
        return Path(given)
    if _writable_dir(SYSTEM_STATE.parent):
        return SYSTEM_STATE
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rmpeer" / "state.json"


def checked_state_path() -> Path:
    """The state file, refused (exit 2, one line) when it, or its folder, is not what rmpeer
    would write: a symbolic link, a folder, a device node."""
    path = default_state_path()
    named = f"{STATE_ENV}={path}" if os.environ.get(STATE_ENV) else f"the state file {path}"
    problem = target_problem(path) or target_problem(module_hash_cache(path))
    if problem == "it is a folder":
        raise ConfigError(f"{named} is a folder: name the state file")
    if problem:
        raise ConfigError(f"{named}: refused: {problem}")
    problem = folder_problem(path.parent)
    if problem:
        raise ConfigError(f"{named}: refused: its folder {path.parent}: {problem}")
    return path


def module_hash_cache(state_path: Path | None = None) -> Path:
    return Path(state_path or default_state_path()).with_name("module-hash.json")


def load_state(path: Path) -> tuple[dict, str | None]:
    """(the state, None) or ({}, why it could not be used): a missing file is a first run."""
    try:
        data = json.loads(read_own(path))
    except FileNotFoundError:
        return {}, None
    except UntrustedFile as exc:
        return {}, str(exc)
    except (OSError, ValueError) as exc:
        return {}, f"{path}: {getattr(exc, 'strerror', None) or exc}"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}, f"{path}: not an rmpeer state file (format {data.get('format') if isinstance(data, dict) else None!r})"
    return data, None


def save_state(path: Path, state: dict) -> str | None:
    """Written safely (rmpeer.safewrite: a new temp file, renamed); None, or why it could
    not be written."""
    path = Path(path)
    try:
        make_folder(path.parent, mode=0o700)
        write_file(path, json.dumps({**state, "format": FORMAT}, indent=1, default=str), mode=0o600)
    except ConfigError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None
