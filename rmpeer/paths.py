"""Where rmpeer's data lives: the matrices, the conformance suites and the recordings.

In the repository they are top-level folders beside the package (matrices/, suites/,
fixtures/). The pytest plugin is code, so it lives inside the package (rmpeer/pytest_plugin)
and is loaded by name, never through an entry point: it stays out of a user's other pytest
runs. rmpeer's own self-tests (tests/) are not shipped. A wheel ships the same folders inside the package (rmpeer/matrices, ...; see
[tool.setuptools] in pyproject.toml), because a site-packages directory has no room for
top-level folders of that name. Every other module asks here, so rmpeer finds its data the
same way from a checkout, an editable install or a wheel, whatever the working directory.

RMPEER_MATRICES=DIR points every matrix look-up at another copy of matrices/ (a driver ABI
being added, or the tests' deliberately broken copies).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
MATRICES_ENV = "RMPEER_MATRICES"


def _shipped(name: str) -> Path:
    """rmpeer/<name> in an installed wheel, else the checkout's top-level <name>/."""
    inside = PACKAGE / name
    return inside if inside.is_dir() else PACKAGE.parent / name


def checkout_root() -> Path | None:
    """The repository this package runs from (a checkout or an editable install), or None
    for an installed wheel."""
    root = PACKAGE.parent
    return root if (root / "pyproject.toml").is_file() and (root / "matrices").is_dir() else None


def matrices_dir() -> Path:
    """matrices/, or the folder RMPEER_MATRICES names (read at every call, so a test or a
    caller may set it after import)."""
    override = os.environ.get(MATRICES_ENV)
    return Path(override).expanduser() if override else _shipped("matrices")


def suites_dir() -> Path:
    """suites/: the test modules `rmpeer certify` runs."""
    return _shipped("suites")


def fixtures_dir() -> Path:
    """fixtures/: data only (the recordings, the ABI parity fixture, the header facts)."""
    return _shipped("fixtures")


def fitness_facts_file() -> Path:
    """fixtures/abi/fitness-facts.json: the perf/NVLink facts read from many tags' headers."""
    return fixtures_dir() / "abi/fitness-facts.json"


def fitness_names_file() -> Path:
    """fixtures/abi/fitness-facts.names.yaml: which names fitness-facts measures."""
    return fixtures_dir() / "abi/fitness-facts.names.yaml"


def transcripts_dir() -> Path:
    """fixtures/transcripts/: the committed recordings of real hosts."""
    return fixtures_dir() / "transcripts"


def allure_config() -> Path:
    """The Allure 3 configuration of `rmpeer report` (shipped inside the package)."""
    return PACKAGE / "report" / "allurerc.mjs"


PLUGIN_PACKAGE = "rmpeer.pytest_plugin"
PLUGIN_MODULES = ("plugin", "results", "pairs", "reporting")


def plugin_package() -> str:
    """The importable name of rmpeer's pytest plugin."""
    return PLUGIN_PACKAGE


def import_root() -> Path:
    """What must be on sys.path for rmpeer (and so its plugin) to import."""
    return PACKAGE.parent


def pytest_args(without: tuple = ()) -> list:
    """What a pytest run of rmpeer's suites needs, wherever it starts: rmpeer's own plugins
    named explicitly (less those `without` names), and no conftest.py or ini file picked up
    from the directories around."""
    plugins = [arg for name in PLUGIN_MODULES if name not in without for arg in ("-p", f"{PLUGIN_PACKAGE}.{name}")]
    return ["-c", os.devnull, "--rootdir", str(suites_dir().parent), "--noconftest", *plugins]


def pytest_env(env: dict) -> dict:
    """`env` with the plugin package importable (PYTHONPATH)."""
    paths = [str(import_root())] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}
