"""Mutants of rmpeer/judge/drift.py (issue 47, item 9; docs/mutation.md): a figure's key, what a
run leaves in its history (the committed certificate of a live 1 x H200 full run,
docs/evidence/h200x1-20261204T2035Z-machinery, its values copied here by hand), the runs
compared, each drift and grown count written out whole, and the trend. Medians, thresholds
and drops are worked out here by hand (docs/history.md has the defaults: 5%, 10 runs, 3 at
least), never taken from the judge's answer."""

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from rmpeer.judge import drift as d
from rmpeer.model.result import DEGRADE, INFO, Finding, RunResult

pytestmark = pytest.mark.offline
CERT = (Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261204T2035Z-machinery" / "report"
        / "full" / "certificate.json")
KEY = "read 0->1 (256 MiB)"


def test_the_defaults_are_those_docs_history_md_states():
    assert (d.DRIFT_MARGIN, d.DRIFT_RUNS, d.MIN_RUNS, d.CHECK) == (0.05, 10, 3, "drift")


def test_a_figures_key_each_part():
    assert d.figure_key({"op": "write", "src_card": 1, "dst_card": 0, "bytes": 1 << 20}) == "write 1->0 (1 MiB)"
    assert d.figure_key({"op": "all", "src_card": 0, "dst_card": 1, "bytes": 3 << 30}) == "all all (3072 MiB)"
    assert d.figure_key({"op": "read", "src_card": 0, "dst_card": 1, "bytes": 0}) == "read 0->1"
    assert d.figure_key({"op": "read", "src_card": 0, "dst_card": 1, "bytes": "256"}) == "read 0->1"
    assert d.figure_key({"op": "read", "src_card": 0, "dst_card": 1}) == "read 0->1"
    assert d.figure_key({}) == "None None->None"


def test_what_a_run_of_the_committed_certificate_leaves_in_its_history():
    run = RunResult.from_dict(json.loads(CERT.read_text()))
    assert d.entry_of(run) == {
        "started": "2026-12-04T20:35:19Z", "certificate_id": "90365367-c5b1-4a3a-b197-703c25292c3f", "tier": "full",
        "verdict": "CERTIFIED", "driver": "580.159.04", "cards": ["GPU-bf26f334-70fc-e8cf-f182-fdad2a532d1b"],
        "boot": "8f45f646-2d7b-4f11-841c-b27420075cb6", "figures": {"same-card 0->0 (256 MiB)": 560.29},
        "boosted_mhz": {"0": 1980}, "active_links": {"0": 0}, "ecc_corrected": {"0": 0}, "remapped_rows": {"0": 0}}


def _run(**fields):
    base = dict(host=None, clocks=None, fingerprint=None, bandwidth=None, links=None, started="s", certificate_id="i",
                tier="quick", verdict="DEGRADED")
    return SimpleNamespace(**{**base, **fields})


def test_what_a_run_leaves_of_odd_values_and_of_nothing():
    assert d.entry_of(_run()) == {
        "started": "s", "certificate_id": "i", "tier": "quick", "verdict": "DEGRADED", "driver": None, "cards": [],
        "boot": None, "figures": {}, "boosted_mhz": {}, "active_links": {}, "ecc_corrected": {}, "remapped_rows": {}}
    cards = [{"index": 0, "uuid": "GPU-a", "health": {"ecc": {"sbe": 7}, "remapped_rows": {"rows": 2}}},
             {"index": 1, "uuid": "GPU-b", "health": {"ecc": {"sbe": True}, "remapped_rows": {"rows": "3"}}},
             {"index": 2, "health": None},
             {"index": 3, "health": {"ecc": None, "remapped_rows": {"rows": 0}}}]
    figures = [{"op": "read", "src_card": 0, "dst_card": 1, "bytes": 1 << 20, "gbps": 300},
               {"op": "write", "src_card": 0, "dst_card": 1, "bytes": 1 << 20, "gbps": True},
               {"op": "write", "src_card": 1, "dst_card": 0, "bytes": 1 << 20, "gbps": None},
               {"op": "same-card", "src_card": 1, "dst_card": 1, "bytes": 1 << 20, "gbps": 512.5}]
    got = d.entry_of(_run(host={"driver_version": "580", "cards": cards}, fingerprint={"boot": "b"}, bandwidth=figures,
                          clocks={"boosted": {0: {"graphics_mhz": 1980}, 1: "unread", "2": {}}},
                          links={0: {"active": 18}, "1": None, 2: {"active": 0}}))
    assert got["driver"] == "580" and got["cards"] == ["GPU-a", "GPU-b", None, None] and got["boot"] == "b"
    assert got["figures"] == {"read 0->1 (1 MiB)": 300, "same-card 1->1 (1 MiB)": 512.5}
    assert got["boosted_mhz"] == {"0": 1980, "2": None} and got["active_links"] == {"0": 18, "2": 0}
    assert got["ecc_corrected"] == {"0": 7} and got["remapped_rows"] == {"0": 2, "3": 0}
    assert d.entry_of(_run(host={"cards": None}, clocks={"boosted": None}))["cards"] == []


# -- the runs compared ------------------------------------------------------------------------

def _entry(value=None, driver="580", cards=("GPU-a",), started="2026-11-20T10:00:00Z", boot=None, **more):
    return {"driver": driver, "cards": list(cards), "started": started, "boot": boot,
            "figures": {} if value is None else {KEY: value}, **more}


def test_the_runs_compared_are_those_of_the_same_driver_and_cards():
    now = _entry()
    same, other_driver, other_cards = _entry(1.0), _entry(2.0, driver="575"), _entry(3.0, cards=("GPU-b",))
    assert d.comparable([], now) == ([], "")
    assert d.comparable([other_driver, same, other_cards], now) == ([same], "")
    assert d.comparable([other_cards, other_driver], now) == (
        [], "history: a new baseline (driver 575 -> 580): the earlier runs of this host are not compared")
    assert d.comparable([other_driver, other_cards], now) == (
        [], "history: a new baseline (cards changed): the earlier runs of this host are not compared")


def _history(values, **each):
    return [_entry(v, started=f"2026-11-{20 + i:02d}T10:00:00Z", **each) for i, v in enumerate(values)]


def _drift(expected, found, severity=INFO, cause=""):
    return Finding("drift", KEY, expected, found, severity, cause=cause)


def test_a_drift_written_out_whole():
    # the median of 400, 390, 410 is 400; 5% below it is 380; 360 is 40/400 = 10% below
    want = _drift("at least 380.0 GB/s (within 5% of this host's median of its last 3 runs, 400.0 GB/s, since 2026-11-20)",
                  "360.0 GB/s, 10% below that median", cause="drift: 10% below this host's own median")
    assert d.drift_findings(_history([400.0, 390.0, 410.0]), _entry(360.0)) == [want]
    assert d.drift_findings(_history([400.0, 390.0, 410.0]), _entry(360.0), fails=True) == [
        dataclasses.replace(want, severity=DEGRADE)]


def test_the_margin_given_and_its_bound():
    history = _history([400.0, 400.0, 400.0])
    # 25% below 400 is 300 exactly: 300 is not below it, 299 is (101/400: 25%)
    assert d.drift_findings(history, _entry(300.0), margin=0.25) == []
    assert d.drift_findings(history, _entry(299.0), margin=0.25) == [_drift(
        "at least 300.0 GB/s (within 25% of this host's median of its last 3 runs, 400.0 GB/s, since 2026-11-20)",
        "299.0 GB/s, 25% below that median", cause="drift: 25% below this host's own median")]
    assert d.drift_findings(history, _entry(360.0), margin=0.2) == []
    assert d.drift_findings(history, _entry(340.0), margin=0.1) == [_drift(
        "at least 360.0 GB/s (within 10% of this host's median of its last 3 runs, 400.0 GB/s, since 2026-11-20)",
        "340.0 GB/s, 15% below that median", cause="drift: 15% below this host's own median")]


def test_only_the_last_runs_of_the_window_count_and_since_is_the_first_of_them():
    history = _history([100.0, 100.0, 100.0, 400.0, 400.0])
    assert d.drift_findings(history, _entry(360.0)) == []                  # the median of all five: 100
    # the last three: 100, 400, 400, median 400, since the third run (2026-11-22)
    assert d.drift_findings(history, _entry(360.0), window=3) == [_drift(
        "at least 380.0 GB/s (within 5% of this host's median of its last 3 runs, 400.0 GB/s, since 2026-11-22)",
        "360.0 GB/s, 10% below that median", cause="drift: 10% below this host's own median")]
    ten = _history([100.0] * 2 + [400.0] * 10)
    assert d.drift_findings(ten, _entry(360.0))[0].expected.endswith("last 10 runs, 400.0 GB/s, since 2026-11-22)")


def test_fewer_than_three_runs_or_values_say_nothing():
    assert d.drift_findings(_history([400.0, 400.0]), _entry(100.0)) == []
    # three runs, one without the figure, one with no number for it
    history = _history([400.0, 400.0, 400.0])
    history[0]["figures"] = {}
    assert d.drift_findings(history, _entry(100.0)) == []
    history[0]["figures"] = {KEY: "400"}
    assert d.drift_findings(history, _entry(100.0)) == []
    history[0]["figures"] = None
    assert d.drift_findings(history, _entry(100.0)) == []
    history[0]["figures"] = {KEY: 400}                         # an int is a figure too
    assert len(d.drift_findings(history, _entry(100.0))) == 1


def test_a_small_median_still_counts_and_a_median_of_nothing_never_does():
    # a median of 0.5 GB/s: 0.1 is 80% below it
    assert d.drift_findings(_history([0.5, 0.5, 0.5]), _entry(0.1)) == [_drift(
        "at least 0.5 GB/s (within 5% of this host's median of its last 3 runs, 0.5 GB/s, since 2026-11-20)",
        "0.1 GB/s, 80% below that median", cause="drift: 80% below this host's own median")]
    assert d.drift_findings(_history([0.0, 0.0, 0.0]), _entry(-1.0)) == []


def test_each_figure_in_the_order_of_its_key_and_a_run_without_a_start():
    history = [_entry(started=None, figures={"b": 100.0, "a": 100.0}) for _ in range(3)]
    got = d.drift_findings(history, _entry(figures={"b": 50.0, "a": 50.0, "c": 1.0}))
    assert [(f.subject, f.expected) for f in got] == [
        (k, "at least 95.0 GB/s (within 5% of this host's median of its last 3 runs, 100.0 GB/s, since )")
        for k in ("a", "b")]


def test_a_reboot_since_some_of_the_runs_is_named():
    said = "360.0 GB/s, 10% below that median (the host rebooted since some of them)"
    history = _history([400.0] * 3, boot="b1")
    assert d.drift_findings(history, _entry(360.0, boot="b2"))[0].found == said
    history[1]["boot"] = "b2"
    assert d.drift_findings(history, _entry(360.0, boot="b2"))[0].found == said
    same = _history([400.0] * 3, boot="b2")
    same[0]["boot"] = None                     # a run that did not record its boot: no reboot known
    assert d.drift_findings(same, _entry(360.0, boot="b2"))[0].found == "360.0 GB/s, 10% below that median"
    assert d.drift_findings(history, _entry(360.0, boot=None))[0].found == "360.0 GB/s, 10% below that median"


def test_counts_grown_since_the_last_run_written_out_whole():
    history = _history([None, None], ecc_corrected={"0": 9}, remapped_rows={"0": 9})
    history[-1].update(ecc_corrected={"1": 3, "0": 1, "2": None}, remapped_rows={"0": 0, "1": 4})
    now = _entry(ecc_corrected={"1": 5, "0": 2, "2": 8, "3": 1}, remapped_rows={"0": 1, "1": 4})
    assert d.drift_findings(history, now) == [
        Finding("drift", "card 0", "corrected ECC errors as at the last run (1, 2026-11-21)", "2: 1 more", INFO,
                cause="drift: corrected ECC errors grew"),
        Finding("drift", "card 1", "corrected ECC errors as at the last run (3, 2026-11-21)", "5: 2 more", INFO,
                cause="drift: corrected ECC errors grew"),
        Finding("drift", "card 0", "remapped rows as at the last run (0, 2026-11-21)", "1: 1 more", INFO,
                cause="drift: remapped rows grew")]
    assert [f.severity for f in d.drift_findings(history, now, fails=True)] == [DEGRADE] * 3
    # one comparable run is enough; a last run without a start or without the counts
    last = _entry(started=None, ecc_corrected={"0": 1})
    assert d.drift_findings([last], _entry(ecc_corrected={"0": 2}))[0].expected == (
        "corrected ECC errors as at the last run (1, )")
    assert d.drift_findings([_entry(ecc_corrected=None)], _entry(ecc_corrected={"0": 2})) == []
    assert d.drift_findings([_entry(ecc_corrected={"0": 2})], _entry()) == []
    # a run of other cards is no last run
    assert d.drift_findings([_entry(cards=("GPU-z",), ecc_corrected={"0": 1})], _entry(ecc_corrected={"0": 2})) == []


def test_the_trend_of_each_figure_over_the_runs():
    runs = [{"figures": {"b": 1.0, "a": 2.0}}, {"figures": None}, {}, {"figures": {"a": 3.0}}]
    assert d.trend_rows(runs) == [("a", [2.0, None, None, 3.0]), ("b", [1.0, None, None, None])]
    assert d.trend_rows([]) == []


def test_a_figure_without_enough_runs_does_not_end_the_comparison():
    # "a" sorts first and has no past value; "b" after it fell 50% below its median of 100
    history = [_entry(figures={"b": 100.0}) for _ in range(3)]
    got = d.drift_findings(history, _entry(figures={"a": 1.0, "b": 50.0}))
    assert [(f.subject, f.found) for f in got] == [("b", "50.0 GB/s, 50% below that median")]
