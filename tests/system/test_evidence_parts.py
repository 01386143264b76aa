"""The parts of tools/device-evidence.sh (tools/evidence/NAME.sh) are ready before a device is
lent: each parses as bash, and tools/evidence/README.md says what each one is. A device
session is 30 minutes: a part that fails on a syntax error there costs a cold start."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
EVIDENCE = Path(__file__).resolve().parents[2] / "tools" / "evidence"
PARTS = sorted(EVIDENCE.glob("*.sh")) if EVIDENCE.is_dir() else []
needs_tools = pytest.mark.skipif(not PARTS, reason="no tools/evidence/ here (a wheel carries no tools)")


@needs_tools
@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.stem)
def test_each_part_parses_as_bash(part):
    bash = shutil.which("bash")
    assert bash, "bash is not installed"
    done = subprocess.run([bash, "-n", str(part)], capture_output=True, text=True)
    assert done.returncode == 0, f"{part.name}: {done.stderr.strip()}"


@needs_tools
def test_the_readme_names_every_part():
    readme = (EVIDENCE / "README.md").read_text()
    assert [p.name for p in PARTS if f"`{p.name}`" not in readme] == []
