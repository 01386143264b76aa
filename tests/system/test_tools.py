"""tools/ keeps only documented, working tools: each has its row in tools/README.md, answers
--help (a shell script: parses) on a machine without a GPU, and names no path of one machine."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
if not TOOLS.is_dir():
    pytest.skip("tools/ is in the checkout, not in the installed package", allow_module_level=True)
pytestmark = pytest.mark.offline
SCRIPTS = sorted(p.name for p in TOOLS.iterdir() if p.is_file() and p.name != "README.md")


def rows() -> set[str]:
    return set(re.findall(r"^\| `([^`]+)` \|", (TOOLS / "README.md").read_text(), re.M))


def test_every_tool_has_one_row_in_the_readme_and_every_row_a_tool():
    assert set(SCRIPTS) == rows()


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_tool_answers_help_without_a_gpu(name):
    if name.endswith(".sh"):
        done = subprocess.run(["bash", "-n", str(TOOLS / name)], capture_output=True, text=True)
    else:
        done = subprocess.run([sys.executable, str(TOOLS / name), "--help"], capture_output=True, text=True,
                              cwd=TOOLS.parent, timeout=60)
        assert "usage:" in done.stdout
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("name", SCRIPTS)
def test_no_tool_names_a_path_of_one_machine(name):
    text = (TOOLS / name).read_text()
    assert not re.findall(r"/work/|/home/\w+|\.mirror/", text)


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_the_parity_tool_without_sources_says_how_to_get_them(tmp_path):
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(TOOLS / "abi_parity_fixture.py"), "--output", str(tmp_path / "x")],
                          capture_output=True, text=True, env=env, cwd=TOOLS.parent)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert "git clone https://github.com/NVIDIA/open-gpu-kernel-modules" in done.stderr
