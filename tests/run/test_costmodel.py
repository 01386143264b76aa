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
from rmpeer.run.costmodel import (calibration_logs, fit, fitness_figures, layout_shape, nonneg_least_squares,
                              parse_progress, projection, tier_layouts)

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = [ROOT / "docs/evidence/h200x2-20261130T003650Z", ROOT / "docs/evidence/h200x2-20261130T005408Z"]
BENCH = json.loads((EVIDENCE[0] / "bench.json").read_text())
LOGS = [text for folder in EVIDENCE for text in calibration_logs(folder)]
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
    c = fit(BENCH, LOGS)
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
    model = projection(BENCH, LOGS)
    measured = {"quick": [4.4], "full": [13.7, 14.7, 15.8]}
    for tier, tol in (("quick", 0.15), ("full", 0.10)):
        got = model["reproduces"][tier]
        assert got["measured_median_s"] == statistics.median(measured[tier])
        assert got["predicted_s"] == pytest.approx(statistics.median(measured[tier]), rel=tol), tier


def test_projection_gives_four_and_eight_cards_and_quick_on_eight_fits_the_budget():
    model = projection(BENCH, LOGS)
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
    model = projection(BENCH, [])
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
    assert _layouts_off(fit(BENCH, LOGS)) == []


def test_mutation_a_model_without_the_per_item_cost_misses_the_big_layouts(monkeypatch):
    """The 2-card totals alone cannot tell the per-item from the per-byte cost; the layouts'
    own times can (four-per-card and sixteen move the same bytes in 275 and 1091 checks)."""
    real = costmodel.layout_shape
    monkeypatch.setattr(costmodel, "layout_shape", lambda cards, extent: {**real(cards, extent), "items": 0})
    assert [name for name, *_ in _layouts_off(fit(BENCH, LOGS))] == ["four-per-card", "sixteen"]
