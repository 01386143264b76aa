"""Where rmpeer's own files are: the matrices, the suites, the pytest plugin and the committed
recordings, whether rmpeer runs from a checkout or from an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _top(name: str) -> Path:
    """A top-level folder of the checkout, or its copy inside the installed package."""
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


def matrices_dir() -> Path:
    """matrices/, or RMPEER_MATRICES (another copy of them, e.g. a changed one in a test)."""
    return Path(os.environ.get("RMPEER_MATRICES") or _top("matrices"))


def suites_dir() -> Path:
    return _top("suites")


def fixtures_dir() -> Path:
    return _top("fixtures")


def transcripts_dir() -> Path:
    return fixtures_dir() / "transcripts"


def plugin_package() -> str:
    """The importable name of fixtures/: 'rmpeer.fixtures' installed, 'fixtures' in a checkout."""
    return "rmpeer.fixtures" if (_PACKAGE / "fixtures").is_dir() else "fixtures"


def import_root() -> Path:
    """What must be on sys.path for plugin_package() to import."""
    return _PACKAGE.parent
