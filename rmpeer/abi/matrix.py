"""Loading matrix files with errors that name the file, the entry and the fault."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import yaml

from ..errors import MatrixError

# RMPEER_MATRICES points the whole suite at another copy of the matrices (the replay
# mutation tests use it to prove that a changed fact makes a replay fail).
MATRICES = Path(os.environ.get("RMPEER_MATRICES") or Path(__file__).resolve().parents[2] / "matrices")


# libyaml's loader when pyyaml has it: drivers.yaml parses ten times faster
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path) -> dict:
    """A matrix file, parsed once per content (callers must not change what comes back)."""
    path = Path(path)
    if not path.is_file():
        raise MatrixError(path, "file", "not found")
    return _parse(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=32)
def _parse(path: str, mtime_ns: int) -> dict:
    try:
        data = yaml.load(Path(path).read_text(), Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise MatrixError(path, "file", f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise MatrixError(path, "file", "top level must be a mapping")
    return data


def require(path, entry, mapping, key, kind, *, optional=False):
    """mapping[key], checked to be of `kind` (a type or tuple of types)."""
    if not isinstance(mapping, dict):
        raise MatrixError(path, entry, f"must be a mapping, found {type(mapping).__name__}")
    if key not in mapping:
        if optional:
            return None
        raise MatrixError(path, entry, f"missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise MatrixError(path, f"{entry}.{key}", f"must be {names}, found {value!r}")
    return value


def parse_bits(path, entry, text) -> tuple[int, int]:
    """'21:20' -> (21, 20); a single bit '15' or '15:15' -> (15, 15)."""
    try:
        parts = [int(p) for p in str(text).split(":")]
    except ValueError:
        raise MatrixError(path, entry, f"bit range {text!r} is not 'hi:lo'") from None
    hi, lo = (parts * 2)[:2] if len(parts) == 1 else parts
    if len(parts) > 2 or not 0 <= lo <= hi <= 63:
        raise MatrixError(path, entry, f"bit range {text!r} is not 'hi:lo' with 0 <= lo <= hi <= 63")
    return hi, lo
