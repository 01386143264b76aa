"""A host against its own history (rmpeer.judge.drift, rmpeer.machine.history): a figure that
fell from this host's median is named with the drop and since when, a grown ECC or remapped
row count is named, a warning never changes the verdict unless --drift-fails, and the history
is bounded, written safely, and survives a garbled or foreign file. The runs come from a
committed certificate's figures (docs/evidence), the drops are written here."""

from __future__ import annotations

import copy
import dataclasses
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.judge.drift import DRIFT_MARGIN, MIN_RUNS, drift_findings, entry_of, figure_key
from rmpeer.machine.history import MAX_RUNS, append_run, history_path, load_history
from rmpeer.model.result import DEGRADE, INFO, RunResult
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
CERT = ROOT / "docs" / "evidence" / "h200x1-20261204T2035Z-machinery" / "report" / "full" / "certificate.json"


def result(**change) -> RunResult:
    return dataclasses.replace(RunResult.from_dict(json.loads(CERT.read_text())), **change)


def runs(n: int, figure: str = "same-card 0->0 (256 MiB)", values=None) -> list:
    base = entry_of(result())
    out = []
    for i in range(n):
        e = copy.deepcopy(base)
        e["started"] = f"2026-11-{20 + i:02d}T10:00:00Z"
        if values:
            e["figures"][figure] = values[i]
        out.append(e)
    return out


def test_the_figures_key_names_op_pair_and_size():
    assert figure_key({"op": "read", "src_card": 0, "dst_card": 1, "bytes": 256 << 20}) == "read 0->1 (256 MiB)"
    assert figure_key({"op": "all", "src_card": -1, "dst_card": -1}) == "all all"


def test_a_figure_fallen_from_the_hosts_median_is_named_with_the_drop_and_since_when():
    history = runs(10, values=[560.0, 559.0, 561.0, 560.5, 559.5, 560.0, 560.2, 559.8, 560.1, 560.3])
    now = entry_of(result())
    now["figures"]["same-card 0->0 (256 MiB)"] = 504.0      # 10% below 560.05
    (f,) = drift_findings(history, now)
    assert f.check == "drift" and f.severity == INFO and f.subject == "same-card 0->0 (256 MiB)"
    assert f.found == "504.0 GB/s, 10% below that median"
    assert "median of its last 10 runs, 560.0 GB/s, since 2026-11-20" in f.expected
    (f,) = drift_findings(history, now, fails=True)
    assert f.severity == DEGRADE


def test_within_the_margin_or_with_too_few_runs_nothing_is_said():
    history = runs(10, values=[560.0] * 10)
    now = entry_of(result())
    now["figures"]["same-card 0->0 (256 MiB)"] = 560.0 * (1 - DRIFT_MARGIN) + 0.1
    assert drift_findings(history, now) == []
    now["figures"]["same-card 0->0 (256 MiB)"] = 400.0
    assert drift_findings(history[:MIN_RUNS - 1], now) == []
    assert len(drift_findings(history[:MIN_RUNS], now)) == 1


def test_another_driver_or_other_cards_start_a_new_baseline():
    history = runs(5, values=[560.0] * 5)
    for r in history:
        r["driver"] = "575.57.08"
    now = entry_of(result())
    now["figures"]["same-card 0->0 (256 MiB)"] = 300.0
    assert drift_findings(history, now) == []
    from rmpeer.judge.drift import comparable

    assert comparable(history, now)[1] == ("history: a new baseline (driver 575.57.08 -> 580.159.04): the earlier "
                                           "runs of this host are not compared")


def test_a_grown_corrected_ecc_or_remapped_row_count_is_named():
    history = runs(1)
    history[0]["ecc_corrected"], history[0]["remapped_rows"] = {"0": 3}, {"0": 0}
    now = entry_of(result())
    now["ecc_corrected"], now["remapped_rows"] = {"0": 5}, {"0": 1}
    found = {(f.subject, f.found) for f in drift_findings(history, now)}
    assert found == {("card 0", "5: 2 more"), ("card 0", "1: 1 more")}


def test_a_warning_never_changes_the_verdict_and_is_said_under_it():
    from rmpeer.model.spec import Policies
    from rmpeer.render.verdict import warning_lines
    from rmpeer.run.assemble import judged, with_history

    history = runs(10, values=[560.0] * 10)
    fallen = result(bandwidth=[{**f, "gbps": 500.0} if f["op"] == "same-card" else f for f in result().bandwidth])
    warned = judged(with_history(fallen, history, None, Policies()))
    assert warned.verdict == "CERTIFIED"
    assert warning_lines(warned) == ["drift: same-card 0->0 (256 MiB): 500.0 GB/s, 11% below that median (expected "
                                     "at least 532.0 GB/s (within 5% of this host's median of its last 10 runs, "
                                     "560.0 GB/s, since 2026-11-20))"]
    strict = result(bandwidth=fallen.bandwidth)
    strict = judged(with_history(strict, history, None, Policies(drift_fails=True)))
    assert strict.verdict == "DEGRADED" and any("drift" in r for r in strict.reasons)


def test_the_default_margin_is_far_outside_the_committed_recordings_spread():
    """The same figure of one host kind, across the committed recordings that note bandwidth,
    spreads by far less than the margin (both directions at once left out: its method changed
    between them, tests/diff/test_diff_versions.py)."""
    from rmpeer.diff.load import load

    values: dict = {}
    for path in glob.glob(str(transcripts_dir() / "h200x*-2*.jsonl.gz")):
        side = load(path)
        for key, gbps in (side.bandwidth or {}).items():
            if "bidirectional" not in key:
                values.setdefault((side.context["label"], key), []).append(gbps)
    spreads = [(max(v) - min(v)) / min(v) for v in values.values() if len(v) > 1]
    assert spreads and max(spreads) * 10 < DRIFT_MARGIN, max(spreads)


# -- the history file -------------------------------------------------------------------------

def test_the_history_is_bounded_and_oldest_first(tmp_path):
    path = history_path(tmp_path / "state.json")
    for i in range(MAX_RUNS + 5):
        assert append_run(path, "live", {"started": str(i), "figures": {}}) is None
    loaded, problem = load_history(path, "live")
    assert problem is None and [r["started"] for r in loaded] == [str(i) for i in range(5, MAX_RUNS + 5)]
    assert len(json.loads(path.read_text())["targets"]["live"]) == MAX_RUNS      # the file itself, bounded
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "something-else"}),
                                     json.dumps({"format": "rmpeer-history/1", "targets": {"live": "x"}})],
                         ids=["garbled", "foreign", "runs-not-a-list"])
def test_a_garbled_or_foreign_history_is_one_line_and_a_new_baseline(tmp_path, content):
    path = history_path(tmp_path / "state.json")
    path.write_text(content)
    os.chmod(path, 0o600)
    loaded, problem = load_history(path, "live")
    assert loaded == [] and problem.startswith("history: ") and problem.endswith("a new baseline")
    assert "\n" not in problem
    assert append_run(path, "live", {"started": "now", "figures": {}}) is None
    assert load_history(path, "live") == ([{"started": "now", "figures": {}}], None)


def test_a_history_at_a_link_is_not_believed_nor_written_through(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"format": "rmpeer-history/1", "targets": {"live": [{"figures": {"x": 1}}]}}))
    path = history_path(tmp_path / "state.json")
    path.symlink_to(target)
    loaded, problem = load_history(path, "live")
    assert loaded == [] and "link" in problem
    assert append_run(path, "live", {"started": "now", "figures": {}}) is not None
    assert json.loads(target.read_text())["targets"]["live"] == [{"figures": {"x": 1}}]


def test_rmpeer_history_prints_the_trend_per_figure(tmp_path):
    state = tmp_path / "state.json"
    for e in runs(4, values=[560.0, 561.0, 559.0, 500.0]):
        append_run(history_path(state), "live", e)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "history", "--state", str(state)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("same-card 0->0 (256 MiB)"))
    assert row.split()[-6:] == ["561.0", "559.0", "500.0", "559.5", "-10.6%", "!"], row
    empty = subprocess.run([sys.executable, "-m", "rmpeer", "history", "--state", str(tmp_path / "none" / "s.json")],
                           capture_output=True, text=True, timeout=60)
    assert empty.returncode == 2 and "no run of live" in empty.stderr


def test_a_live_run_is_compared_then_kept_and_a_no_boost_run_only_compared(tmp_path):
    """rmpeer.run.execute's wiring, without a GPU: a run of a live spec (a certificate of a live
    1 x H200 run stands for its result) is judged against the history, then joins it; one at
    idle clocks (--no-boost) gets the warning and is not kept; a replay touches no history."""
    from types import SimpleNamespace

    from rmpeer.model.spec import Policies
    from rmpeer.run import execute
    from rmpeer.run.assemble import judged

    state = tmp_path / "state.json"
    live = SimpleNamespace(tier="full", is_replay=False, boost=True, policies=Policies())
    for _ in range(3):
        path, r = execute._history(live, result(), state)
        execute._remember(live, judged(r), path)
    assert len(load_history(history_path(state), "live")[0]) == 3
    idle = SimpleNamespace(tier="quick", is_replay=False, boost=False, policies=Policies())
    slow = result(bandwidth=[{**f, "gbps": 247.8} for f in result().bandwidth])
    path, slow = execute._history(idle, slow, state)
    slow = judged(slow)
    execute._remember(idle, slow, path)
    assert [f.found for f in slow.findings if f.check == "drift"] == ["247.8 GB/s, 56% below that median"]
    assert slow.verdict == "CERTIFIED"           # the warning alone changes no verdict (its floors were judged before)
    assert len(load_history(history_path(state), "live")[0]) == 3
    replay = SimpleNamespace(tier="full", is_replay=True, boost=True, policies=Policies())
    assert execute._history(replay, result(), state)[0] is None
