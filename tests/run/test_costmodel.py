"""The certify cost model, fitted to the committed 2 x H200 evidence (bench.json and the
certify logs beside it). Expected values come from the evidence itself (test counts and
totals the logs print, figures bench.json lists) and from numpy's least squares."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import numpy as np
import pytest

from rmpeer.run import costmodel
from rmpeer.run.costmodel import (calibration_logs, calibration_stretches, fit, fitness_figures, layout_shape,
                                  nonneg_least_squares, parse_progress, projection, rig_stretch, tier_layouts)

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = [ROOT / "docs/evidence/h200x2-20261130T003650Z", ROOT / "docs/evidence/h200x2-20261130T005408Z"]
BENCH = json.loads((EVIDENCE[0] / "bench.json").read_text())
LOGS = [text for folder in EVIDENCE for text in calibration_logs(folder)]
# The bandwidth rig's stretches: the two boosted 2 x H200 recordings that have them (the
# earlier ones predate the bandwidth note) and today's 1 x H200 drift recordings (the same
# kind of machine): two rig sizes, so that its per-session and per-measure costs part.
RECORDINGS = [ROOT / "fixtures/transcripts/h200x2-20261130T151653Z.jsonl.gz",
              ROOT / "docs/evidence/h200x2-20261130T1629Z-profile/recordings/h200x2-20261130T162924Z.jsonl.gz",
              ROOT / "docs/evidence/h200x1-20261205T0424Z-drift-busy/drift/recordings"]
STRETCHES = calibration_stretches(RECORDINGS)
MiB = 1 << 20


def test_the_calibration_logs_are_the_plain_runs():
    totals = sorted(float(re.search(r"CERTIFIED \(.*\) in ([\d.]+) s", t).group(1)) for t in LOGS)
    assert totals == [4.4, 13.7, 14.7, 15.8]      # certify-quick, timed-1, timed-2, certify (no recordings)


def test_least_squares_agrees_with_numpy_when_nothing_is_negative():
    rng = np.random.default_rng(7)
    x = rng.uniform(1, 10, size=(12, 3))
    y = x @ np.array([0.5, 2.0, 0.25]) + rng.normal(0, 0.01, 12)
    ours = nonneg_least_squares(x.tolist(), y.tolist())
    assert np.allclose(ours, np.linalg.lstsq(x, y, rcond=None)[0], rtol=1e-9, atol=1e-12)


def test_least_squares_keeps_costs_non_negative_and_optimal():
    """Where the free fit goes negative: the result satisfies the optimality (KKT) conditions
    of the constrained problem, checked here from numpy's gradient."""
    x = np.array([[1, 1.0], [2, 1.9], [3, 3.2], [4, 3.9]])
    y = np.array([1.0, 1.8, 3.5, 3.7])
    assert min(np.linalg.lstsq(x, y, rcond=None)[0]) < 0
    c = np.array(nonneg_least_squares(x.tolist(), y.tolist()))
    grad = x.T @ (x @ c - y)
    assert (c >= 0).all() and all(abs(g) < 1e-9 if v > 0 else g >= -1e-9 for v, g in zip(c, grad))


def _log_counts(text: str) -> dict:
    """{layout: passed + failed checks} as the progress lines count them."""
    out: dict = {}
    for m in re.finditer(r"^\s+[\d.]+s\s+(\S+)\s+(\S+)\s+(\d+) passed", text, re.M):
        out.setdefault(m.group(1), []).append((m.group(2), int(m.group(3))))
    return out


def test_layout_shapes_count_the_checks_certify_ran():
    counts = _log_counts(next(t for t in LOGS if "sixteen" in t))
    run = parse_progress(next(t for t in LOGS if "sixteen" in t))
    for name, cards in run["layouts"].items():
        if name == "one-per-card":         # also holds the host and detection checks
            continue
        shape = layout_shape(cards, 16 * MiB if name == "sixteen" else 64 * MiB)
        logged = dict(counts[name])
        assert shape["items"] == sum(logged.values()), name
        assert shape["windows"] == logged["read"] == logged["write"] == logged["map"], name
        assert shape["pairs"] == logged.get("pair", 0), name


def test_fitness_figures_are_what_bench_measured_per_size():
    per_size = [sum(1 for r in BENCH["results"] if r["bytes"] == size) for size in {r["bytes"] for r in BENCH["results"]}]
    assert per_size == [fitness_figures(2)] * len(per_size) == [7] * len(per_size)


def test_setup_model_reproduces_the_bench_setup_table():
    c = costmodel.fit_setup(BENCH)
    for row in BENCH["setup"]:
        if row["sessions"] < 4:
            continue
        cards_used = min(row["sessions"], 2)
        predicted = (c["setup_per_session_s"] * row["sessions"] + c["setup_per_pair_s"] * row["pairs"]
                     + c["setup_per_window_s"] * row["windows"] + c["setup_per_card_pair_s"] * (cards_used > 1)) * 1e3
        assert predicted == pytest.approx(row["ms"], rel=0.25), row       # within 25% from 4 sessions up


def test_per_check_costs_match_numpy_on_the_same_residuals():
    """The per-item, per-byte and per-layout costs: numpy's lstsq on rows built here from the
    logs' own test counts, after the setup and copy time bench's figures give."""
    c = fit(BENCH, LOGS, STRETCHES)
    rows, y = [], []
    for text in LOGS:
        run, counts = parse_progress(text), _log_counts(text)
        for name, seconds in list(run["times"].items())[1:]:
            if name == "fitness":
                continue
            logged = dict(counts[name])
            extent = (16 if name == "sixteen" else 64) * MiB
            cards = run["layouts"][name]
            same = sum(cards.count(k) ** 2 for k in set(cards))
            copy = 2 * extent * (same / (c["same_card_gbps"] * 1e9) + (logged["read"] - same) / (c["cross_card_gbps"] * 1e9))
            setup = (c["setup_per_session_s"] * len(cards) + c["setup_per_pair_s"] * logged.get("pair", 0)
                     + c["setup_per_window_s"] * logged["read"]
                     + c["setup_per_card_pair_s"] * (1 if logged.get("pair") else 0))
            rows.append([sum(logged.values()), 2 * logged["read"] * extent, 1.0])
            y.append(seconds - setup - copy)
    expected = np.linalg.lstsq(np.array(rows), np.array(y), rcond=None)[0]
    assert (expected > 0).all()
    assert [c["per_item_s"], c["per_byte_s"], c["per_layout_s"]] == pytest.approx(expected.tolist(), rel=1e-6)


def test_the_model_reproduces_the_measured_two_card_runs():
    """Quick within 15%, full within 10% of the median of the logged totals."""
    model = projection(BENCH, LOGS, STRETCHES)
    measured = {"quick": [4.4], "full": [13.7, 14.7, 15.8]}
    for tier, tol in (("quick", 0.15), ("full", 0.10)):
        got = model["reproduces"][tier]
        assert got["measured_median_s"] == statistics.median(measured[tier])
        assert got["predicted_s"] == pytest.approx(statistics.median(measured[tier]), rel=tol), tier


def test_projection_gives_four_and_eight_cards_and_quick_on_eight_fits_the_budget():
    model = projection(BENCH, LOGS, STRETCHES)
    p = model["projections"]
    assert set(p) == {"4", "8"} and all(p[n]["quick"] < p[n]["full"] for n in p)
    assert p["4"]["quick"] < p["8"]["quick"] < costmodel.QUICK_BUDGET_S and model["quick_8_within_budget"]
    assert model["kind"].startswith("projection")


def test_the_quick_tier_on_eight_cards_runs_these_layouts():
    # interleaved at its quick_extent on 3 cards or more (matrices/layouts.yaml: 0x1000000)
    assert [(len(cards), ext) for cards, ext in tier_layouts(8, "quick")] == [(8, 64 * MiB), (16, 16 * MiB)]
    assert [(len(cards), ext) for cards, ext in tier_layouts(2, "quick")] == [(2, 64 * MiB), (4, 64 * MiB)]
    assert "four-per-card" not in [len(c) for c, _ in tier_layouts(8, "full")]    # 32 sessions: left out


def test_without_certify_logs_there_is_no_projection():
    model = projection(BENCH, [], STRETCHES)
    assert model["projections"] is None and "no certify progress log" in model["reason"]
    assert costmodel.render_projection(model).startswith("cost model: not fitted")


def _layouts_off(model_coefficients) -> list:
    """Layouts whose predicted time misses the median of the logged times by more than 20%
    and more than 0.4 s (the small layouts vary by 0.3 s from run to run)."""
    runs = [parse_progress(t) for t in LOGS if "sixteen" in t]
    off = []
    for name, cards in runs[0]["layouts"].items():
        if name == "one-per-card":        # carries the run's start-up
            continue
        measured = statistics.median(r["times"][name] for r in runs)
        shape = costmodel.layout_shape(cards, (16 if name == "sixteen" else 64) * MiB)
        predicted = costmodel.layout_seconds(shape, model_coefficients)
        if abs(predicted - measured) > max(0.2 * measured, 0.4):
            off.append((name, round(measured, 2), round(predicted, 2)))
    return off


def test_the_model_reproduces_each_layouts_time():
    assert _layouts_off(fit(BENCH, LOGS, STRETCHES)) == []


def test_mutation_a_model_without_the_per_item_cost_misses_the_big_layouts(monkeypatch):
    """The 2-card totals alone cannot tell the per-item from the per-byte cost; the layouts'
    own times can (four-per-card and sixteen move the same bytes in 275 and 1091 checks)."""
    real = costmodel.layout_shape
    monkeypatch.setattr(costmodel, "layout_shape", lambda cards, extent: {**real(cards, extent), "items": 0})
    assert [name for name, *_ in _layouts_off(fit(BENCH, LOGS, STRETCHES))] == ["four-per-card", "sixteen"]


# -- the fitness checks: the rig and its figures -----------------------------------------------

def _notes(path) -> list:
    import gzip

    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.startswith('{"note"') or line.startswith('{"header"')]


def test_the_rig_stretch_is_the_recorded_clock_of_its_three_segments():
    """From the 1 x H200 quick recording's notes, read here by hand: setup:bandwidth at
    69462974261 ns, the bandwidth note at 69505005968, teardown:bandwidth at 69539179315 and
    the next note (test_nvlinks_active) at 69557553716."""
    path = ROOT / "docs/evidence/h200x1-20261205T0424Z-drift-busy/drift/recordings/quick.jsonl.gz"
    got = rig_stretch(_notes(path))
    assert got["cards"] == 1 and got["figures"] == [("same-card", 256 * MiB, 0.0)]
    assert got["seconds"] == pytest.approx(((69505005968 - 69462974261) + (69557553716 - 69539179315)) / 1e9, abs=1e-12)


def test_a_recording_without_the_rig_has_no_stretch():
    passive = next((ROOT / "fixtures/transcripts/passive").glob("*.jsonl.gz"))
    assert rig_stretch(_notes(passive)) is None
    assert rig_stretch(_notes(ROOT / "fixtures/transcripts/h200x2-20261130T003650Z.jsonl.gz")) is None   # before the note


def test_the_calibration_stretches_are_the_plain_boosted_runs():
    folder = ROOT / "docs/evidence/h200x1-20261205T0424Z-drift-busy"
    assert len(calibration_stretches([folder])) == 2          # drift's full and quick; busy/ left out
    assert calibration_stretches([ROOT / "fixtures/transcripts/degraded"]) == []     # --no-boost
    assert [s["cards"] for s in STRETCHES] == [2, 2, 1, 1]


def _copies_by_hand(cards_ops: list, cross=397.02, same=561.73) -> tuple:
    """(seconds, measures) of 256 MiB figures at the rates bench measured (GB/s; by default
    those of the 2 x H200 bench of 2026-11-30 15:18): 6 measures each (a first and 5 steady),
    11 when the spread was over 2%; a measure of engines copying at once lasts one engine's
    chain of 4 copies."""
    n, seconds, measures = 256 * MiB, 0.0, 0
    for op, spread in cards_ops:
        k = 11 if spread > 0.02 else 6
        rate = (same if op == "same-card" else cross) * 1e9
        seconds += k * (4 if op in ("bidirectional", "all") else 1) * n / rate
        measures += k
    return seconds, measures


def test_a_figures_copies_and_measures_worked_by_hand():
    c = {"cross_card_gbps": 397.02, "same_card_gbps": 561.73}
    ops = ["read", "write", "read", "write", "same-card", "same-card", "bidirectional"]
    assert costmodel.figures_work(ops, c) == pytest.approx(_copies_by_hand([(op, 0.0) for op in ops]))
    assert costmodel.figures_work(["all"], c, spreads=[0.05]) == pytest.approx(_copies_by_hand([("all", 0.05)]))


def test_the_rigs_figures_are_the_ones_certify_measures():
    # every ordered pair read and written, each card within itself, each pair both ways at
    # once, all cards at once above 2; quick on more than 2 cards: ring neighbours only
    assert sorted(costmodel.tier_figures(2)) == sorted(["read", "write"] * 2 + ["same-card"] * 2 + ["bidirectional"])
    full8, quick8 = costmodel.tier_figures(8, "full"), costmodel.tier_figures(8, "quick")
    assert (len(full8), full8.count("bidirectional"), full8.count("all")) == (56 * 2 + 8 + 28 + 1, 28, 1)
    assert (len(quick8), quick8.count("read"), quick8.count("bidirectional")) == (16 * 2 + 8 + 8 + 1, 16, 8)
    shape = costmodel.rig_shape(8)     # two sessions per card
    assert (shape["sessions"], shape["windows"], shape["card_pairs"]) == (16, 256, 28)


def test_the_rig_costs_match_numpy_on_the_recorded_stretches():
    c = fit(BENCH, LOGS, STRETCHES)
    rows, y = [], []
    for s in STRETCHES:
        copies, measures = _copies_by_hand([(op, spread) for op, _, spread in s["figures"]],
                                           c["cross_card_gbps"], c["same_card_gbps"])
        shape = layout_shape(tuple(k for k in range(s["cards"]) for _ in range(2)), 256 * MiB)
        setup = (c["setup_per_session_s"] * shape["sessions"] + c["setup_per_pair_s"] * shape["pairs"]
                 + c["setup_per_window_s"] * shape["windows"] + c["setup_per_card_pair_s"] * shape["card_pairs"])
        rows.append([2 * s["cards"], measures])
        y.append(s["seconds"] - setup - copies)
    expected = np.linalg.lstsq(np.array(rows, dtype=float), np.array(y), rcond=None)[0]
    assert (expected > 0).all()
    assert [c["rig_per_session_s"], c["per_measure_s"]] == pytest.approx(expected.tolist(), rel=1e-6)


def _stretches_off(rig_seconds) -> list:
    """The cards of each recorded rig stretch that rig_seconds(cards, tier, c) misses by more
    than 30%."""
    c = fit(BENCH, LOGS, STRETCHES)
    return [s["cards"] for s in STRETCHES if abs(rig_seconds(s["cards"], "full", c) - s["seconds"]) > 0.3 * s["seconds"]]


def test_the_model_reproduces_each_recorded_rig_stretch():
    """Within 30% of each recorded stretch, on one card and on two."""
    assert _stretches_off(costmodel.rig_seconds) == []


def test_mutation_a_rig_priced_per_figure_misses_the_one_card_stretches():
    """The first model priced every figure alike (the fitness group's time over its figure
    count): the 1-card rig then costs a seventh of the 2-card one, where the recordings show
    about a third (its engines and RM setup do not shrink with the figures)."""
    per_figure = statistics.median(s["seconds"] / len(s["figures"]) for s in STRETCHES if s["cards"] == 2)
    assert _stretches_off(lambda cards, tier, c: per_figure * len(costmodel.tier_figures(cards, tier))) == [1, 1]


def test_without_a_recorded_rig_there_is_no_projection():
    model = projection(BENCH, LOGS, [])
    assert model["projections"] is None and "bandwidth rig" in model["reason"]


def test_the_fitness_part_of_a_run_is_the_logged_fitness_group_on_the_fitted_host():
    """A run of no layout on the fitted host's 2 cards: the fixed part plus the fitness
    checks, which the model prices at the median of the logs' fitness group times."""
    c = fit(BENCH, LOGS, STRETCHES)
    fitness = statistics.median(parse_progress(t)["times"]["fitness"] for t in LOGS)
    assert costmodel.predict(c, 2, [], "full") == pytest.approx(c["per_run_s"] + fitness, rel=1e-9)


def test_files_that_are_no_recording_give_no_stretch_and_never_stop_the_fit(tmp_path):
    """bench reads the recordings in its --output: a link, a garbled file, notes of another
    shape and a recording whose clock runs backwards are each passed over."""
    import gzip

    good = ROOT / "docs/evidence/h200x1-20261205T0424Z-drift-busy/drift/recordings/quick.jsonl.gz"
    (tmp_path / "link.jsonl.gz").symlink_to(good)
    (tmp_path / "garbled.jsonl.gz").write_bytes(b"\x1f\x8b not gzip at all")
    (tmp_path / "text.jsonl.gz").write_text('{"note": "segment"}\n')
    notes = _notes(good)
    shapes = [n | {"t_ns": str(n["t_ns"])} if "t_ns" in n else n for n in notes]     # clock as text
    backwards = [n | {"t_ns": -n["t_ns"]} if "t_ns" in n else n for n in notes]
    for name, lines in (("shape", shapes), ("backwards", backwards)):
        with gzip.open(tmp_path / f"{name}.jsonl.gz", "wt") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in lines)
    assert calibration_stretches([tmp_path]) == []
    (tmp_path / "real.jsonl.gz").write_bytes(good.read_bytes())
    assert [s["cards"] for s in calibration_stretches([tmp_path])] == [1]


# -- a host of one card: the cross-card parts from a bench of two -----------------------------

ONE_CARD = ROOT / "docs/evidence/h100x1-20261205T1457Z-refit1"    # full at 64 and at 16 MiB, x3 each


def test_a_one_card_bench_has_no_cross_card_rate_and_the_fit_says_why():
    bench = json.loads((ONE_CARD / "bench.json").read_text())
    assert costmodel.copy_rates(bench)["cross_card_gbps"] is None
    model = projection(bench, calibration_logs(ONE_CARD), calibration_stretches([ONE_CARD]))
    assert model["projections"] is None and "cross-card" in model["reason"]
    with pytest.raises(ValueError, match="2 cards or more"):
        costmodel.cross_card_parts(bench)


def test_the_cross_card_parts_are_the_two_card_fits_own():
    parts = costmodel.cross_card_parts(BENCH)
    fitted = fit(BENCH, LOGS, STRETCHES)
    assert set(parts) == set(costmodel.CROSS_CARD) and parts == {k: fitted[k] for k in costmodel.CROSS_CARD}


def test_a_one_card_fit_reproduces_each_extent_apart():
    """Runs at another extent are reproduced at their own extent, each against the median of
    the totals its logs print."""
    bench = json.loads((ONE_CARD / "bench.json").read_text())
    logs = calibration_logs(ONE_CARD)
    model = projection(bench, logs, calibration_stretches([ONE_CARD]), cross=costmodel.cross_card_parts(BENCH))
    totals = {"full": [], "full at 16 MiB": []}
    for text in logs:
        extent = int(re.search(r"; extent (\d+) MiB", text).group(1))
        totals["full" if extent == 64 else f"full at {extent} MiB"].append(
            float(re.search(r"CERTIFIED \(.*\) in ([\d.]+) s", text).group(1)))
    assert {k: (v["measured_median_s"], v["runs"]) for k, v in model["reproduces"].items()} == {
        k: (statistics.median(v), len(v)) for k, v in totals.items()}
    assert model["cross_card_from"].startswith("a bench of 2 cards or more") and model["projections"]["8"]["full"] > 0
