"""`rmpeer certify` runs each check of pairs as one pytest item per layout (--rm-pairs-per-item,
rmpeer/pytest_plugin/pairs.py), and its certificate still counts and names every pair's check
on its own. Counted from outside: a certify process whose pytest.main gets one more plugin,
which says how many items pytest collected; the items expected are the certificate's own
checks, a layout's pair checks of one kind taken as one."""

import json
import re
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.e2e

COUNTING = """
import sys, pytest
real = pytest.main
class Items:
    def pytest_collection_finish(self, session):
        print("pytest items:", len(session.items), file=sys.stderr, flush=True)
pytest.main = lambda args=None, plugins=None: real(args, [*(plugins or []), Items()])
from rmpeer.cli import entry
sys.argv = ["rmpeer", *sys.argv[1:]]
entry()
"""


def test_certify_runs_a_layouts_pairs_as_one_item(tmp_path):
    recording = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
    done = subprocess.run([sys.executable, "-c", COUNTING, "certify", "--replay", str(recording), "--output",
                           str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    items = int(re.search(r"pytest items: (\d+)", done.stderr).group(1))
    checks = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())["checks"]
    pairs = [c for c in checks if "s" in c]
    layouts = {(c["check"], c["layout"]) for c in pairs}
    assert len(pairs) > 2 * len(layouts), "the recording has layouts of several pairs"
    assert items == len(checks) - len(pairs) + len(layouts)
