"""The one-run-path move changed no verdict: every committed recording, replayed in the passive
tier and in the tier its own layouts cover, gives the exit code and JSON line (verdict, tier,
counts, reasons, not_checked, per-card and per-pair verdicts) of the table that
tools/verdict_table.py made with the code before the move (tests/data/verdicts-before-move.json).
Each replay runs in its own process, with the rmpeer this test run imports. The passive rows
are replayed here; the own-tier rows by tests/cli/test_certify.py, which replays every
committed recording in its own tier anyway (a full replay takes tens of seconds)."""

import importlib.util
import json
import os
from pathlib import Path

import pytest

import rmpeer

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "verdict_table.py"
BEFORE = Path(__file__).resolve().parents[1] / "data" / "verdicts-before-move.json"
if not TOOL.is_file():
    pytest.skip("tools/ is in the checkout, not in the installed package", allow_module_level=True)
pytestmark = pytest.mark.offline

spec = importlib.util.spec_from_file_location("verdict_table", TOOL)
verdict_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdict_table)
TABLE = json.loads(BEFORE.read_text())
CASES = [(name, "passive") for name in sorted(TABLE)]


# Recorded after the move: the code before it gives no verdict of them to compare with (it
# could not replay a passive run's recording at all), so each is replayed by a test of its own.
AFTER_THE_MOVE = {"passive/h200x1-passive-20261201T222835Z.jsonl.gz": "tests/run/test_passive_recording.py"}


def test_the_table_covers_every_committed_recording():
    assert sorted(TABLE) == [r for r in verdict_table.recordings() if r not in AFTER_THE_MOVE]
    assert all((ROOT / test).is_file() for test in AFTER_THE_MOVE.values())
    assert all(set(rows) == {"passive", "own"} for rows in TABLE.values())


@pytest.mark.parametrize("name, tier", CASES, ids=[f"{n.split('.')[0]}-{t}" for n, t in CASES])
def test_the_same_verdict_as_before_the_move(name, tier):
    # the rmpeer this test run imports (the installed wheel under CI, the checkout here)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(rmpeer.__file__).resolve().parents[1])] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    now = verdict_table.replay(name, tier, env=env)
    assert now == TABLE[name][tier]
