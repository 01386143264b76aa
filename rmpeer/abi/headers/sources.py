"""Where NVIDIA's driver sources are: the argument given, else RMPEER_DRIVER_SRC.

No package registry ships open-gpu-kernel-modules and rmpeer never commits it, so every
command and tool that reads the headers takes the tree from the user, never from a path
of one machine, and says in one line how to get one when it has none.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rmpeer.errors import ConfigError

DRIVER_SRC_ENV = "RMPEER_DRIVER_SRC"
OGKM_URL = "https://github.com/NVIDIA/open-gpu-kernel-modules"
HOW_TO_GET = f"git clone {OGKM_URL} DIR (and git -C DIR checkout TAG for one release's tree)"


def driver_source(given: str | None) -> Path:
    """The source tree or clone named by `given`, else by RMPEER_DRIVER_SRC."""
    named = given or os.environ.get(DRIVER_SRC_ENV)
    if not named:
        raise ConfigError(f"no driver sources: name a tree or set {DRIVER_SRC_ENV}; get one with: {HOW_TO_GET}")
    path = Path(named)
    if not path.is_dir():
        raise ConfigError(f"{path}: no such folder (driver sources; get them with: {HOW_TO_GET})")
    return path


def tags_of(repo: Path) -> set[str]:
    """The tags a clone (bare or not) holds; none for a plain tree."""
    done = subprocess.run(["git", "-C", str(repo), "tag"], capture_output=True, text=True)
    return set(done.stdout.split()) if done.returncode == 0 else set()
