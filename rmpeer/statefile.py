"""Where rmpeer keeps what one run leaves for the next (NVLink counters, the last kernel log
record read, the cards seen) and the kernel module's remembered hash.

/var/lib/rmpeer/state.json when that folder can be written (a root service), else
~/.cache/rmpeer/state.json; RMPEER_STATE=FILE names another file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

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


def module_hash_cache(state_path: Path | None = None) -> Path:
    return Path(state_path or default_state_path()).with_name("module-hash.json")


def load_state(path: Path) -> tuple[dict, str | None]:
    """(the state, None) or ({}, why it could not be used): a missing file is a first run."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:
        return {}, f"{path}: {getattr(exc, 'strerror', None) or exc}"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}, f"{path}: not an rmpeer state file (format {data.get('format') if isinstance(data, dict) else None!r})"
    return data, None


def save_state(path: Path, state: dict) -> str | None:
    """Written atomically (temp file, rename); None, or why it could not be written."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**state, "format": FORMAT}, indent=1, default=str))
        tmp.replace(path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None
