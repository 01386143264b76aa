"""Each host's history of its last runs, beside the state file (rmpeer.machine.state): what
rmpeer.judge.drift compares a run with. history.json holds at most MAX_RUNS entries
(rmpeer.judge.drift.entry_of), oldest first, per target; it is written safely (a new file,
renamed) and believed only when this user wrote it (rmpeer.safewrite.read_own). A garbled or
foreign file is one line, and a new baseline: never a traceback, never a verdict."""

from __future__ import annotations

import json
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.safewrite import UntrustedFile, make_folder, read_own, write_file

FORMAT = "rmpeer-history/1"
FILE = "history.json"
MAX_RUNS = 50            # per target: ten weeks of a daily run; a file of about 100 KiB
MAX_BYTES = 4 << 20


def history_path(state_path) -> Path:
    return Path(state_path).parent / FILE


def load_history(path, target: str) -> tuple[list, str | None]:
    """(the target's runs, oldest first; None) or ([], why the history could not be used): a
    missing file is a first run, said by nobody."""
    try:
        data = json.loads(read_own(Path(path), limit=MAX_BYTES))
    except FileNotFoundError:
        return [], None
    except UntrustedFile as exc:
        return [], f"history: {exc}; a new baseline"
    except (OSError, ValueError, ConfigError) as exc:
        return [], f"history: {path}: {getattr(exc, 'strerror', None) or exc}; a new baseline"
    runs = data.get("targets", {}).get(target) if isinstance(data, dict) and data.get("format") == FORMAT else None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("targets"), dict):
        return [], f"history: {path}: not an rmpeer history (format {data.get('format') if isinstance(data, dict) else None!r}); a new baseline"
    if runs is None:
        return [], None
    if not isinstance(runs, list) or not all(isinstance(r, dict) and isinstance(r.get("figures", {}), dict) for r in runs):
        return [], f"history: {path}: the runs of {target} are not what rmpeer writes; a new baseline"
    return runs[-MAX_RUNS:], None


def append_run(path, target: str, entry: dict) -> str | None:
    """The entry added to the target's runs (at most MAX_RUNS kept), written safely; None, or
    why it could not be (a garbled file is replaced by a history of this run alone)."""
    path = Path(path)
    try:
        data = json.loads(read_own(path, limit=MAX_BYTES))
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("targets"), dict):
            data = {}
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError, ConfigError):
        data = {}
    targets = data.get("targets") or {}
    runs = [r for r in targets.get(target, []) if isinstance(r, dict)] if isinstance(targets.get(target), list) else []
    targets[target] = (runs + [entry])[-MAX_RUNS:]
    try:
        make_folder(path.parent, mode=0o700)
        write_file(path, json.dumps({"format": FORMAT, "targets": targets}, indent=1, default=str), mode=0o600)
    except ConfigError as exc:
        return str(exc)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None
