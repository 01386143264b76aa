"""Tests that kill the mutants of rmpeer/render/table.py (docs/mutation.md): RunResults built by
hand, each cell, table, fitness line and floor written out here from the module's docstrings
(S/R/W ok or failed/total, the median steady GB/s, the floor of a figure by its kind and pair),
never taken from pair_cells, render_table or render_fitness."""

import pytest

from rmpeer.model.result import CheckResult, LayoutResult, PairResult, RunResult
from rmpeer.render.table import figure_floor, pair_cells, render_fitness, render_table, use_colour

pytestmark = pytest.mark.offline

MiB = 1 << 20


def setup(outcome, layout="one", s=0, t=1, area="setup"):
    return CheckResult(f"{area}/{layout}/s{s}->t{t}", "pair", area, f"s{s}->t{t}", outcome, layout=layout, s=s, t=t)


def pair(op, ok, layout="one", s=0, t=1, gbps=None):
    return PairResult(layout, s, t, s, t, op, ok, 64 * MiB, None, gbps)


def test_the_cells_count_setup_checks_reads_and_writes_per_pair_of_cards():
    result = RunResult(
        layouts=[LayoutResult("one", [0, 1], 64 * MiB), LayoutResult("two", [1, 3], 32 * MiB)],
        checks=[setup("passed"), setup("failed"), setup("error"), setup("skipped"),     # (0, 1): 1 of 3
                setup("passed", area="read/write"),                                     # not a setup check
                setup("passed", s=None), setup("passed", layout="gone"),                # no cell
                setup("passed", s=2), setup("passed", t=2),                             # past the layout's cards
                setup("passed", layout="two", s=1, t=0)],                               # cards 3 -> 1
        pairs=[pair("read", True, gbps=40.0), pair("read", False), pair("read", None, gbps=99.0),
               pair("write", True, gbps=0.0), pair("copy", True, gbps=7.0),
               pair("write", True, layout="two", s=1, t=0, gbps=30.5), pair("write", False, layout="two", s=1, t=0),
               pair("read", True, layout="gone"), pair("read", True, s=2), pair("read", True, t=2),
               pair("read", 1, layout="two", s=0, t=0, gbps=12.0)])
    assert pair_cells(result) == {
        (0, 1): {"setup": [1, 3], "read": [1, 2], "write": [1, 1], "gbps": [40.0]},
        (3, 1): {"setup": [1, 1], "read": [0, 0], "write": [1, 2], "gbps": [30.5]},
        (1, 1): {"setup": [0, 0], "read": [1, 1], "write": [0, 0], "gbps": [12.0]}}


def test_no_layout_no_cells():
    assert pair_cells(RunResult(checks=[setup("passed")], pairs=[pair("read", True)])) == {}
    assert render_table(RunResult(checks=[setup("passed")], pairs=[pair("read", True)])) == "(no per-pair results)"


def test_the_table_written_out():
    result = RunResult(
        layouts=[LayoutResult("one", [0, 1], 64 * MiB), LayoutResult("bandwidth", [0, 1], 1024 * MiB)],
        checks=[setup("passed")],
        pairs=[pair("read", True, gbps=g) for g in (40.0, 10.0, 30.0, 20.0)]       # median: the upper, 30
        + [pair("write", True), pair("write", False), pair("read", False, s=1, t=0)])
    # (0, 1): "S:ok R:ok W:FAIL 1/2 30 GB/s" (28 characters: each column 31 wide); (1, 0): "S:- R:FAIL 1/1 W:-"
    assert render_table(result).split("\n") == [
        "session on \\ window of  " + "card 0" + " " * 25 + "card 1" + " " * 25,
        "card 0" + " " * 18 + "-" + " " * 30 + "S:ok R:ok W:FAIL 1/2 30 GB/s" + " " * 3,
        "card 1" + " " * 18 + "S:- R:FAIL 1/1 W:-" + " " * 13 + "-" + " " * 30,
        "S setup (pair, reservation, map), R read, W write through the windows: ok when every check passed, else "
        "failed/total; GB/s: median steady copy rate at 64 MiB (the fitness figures below are at their own size)"]


@pytest.mark.parametrize("gbps, shown", [([7.4], " 7 GB/s"), ([7.6, 1.0], " 8 GB/s"), ([3.0, 1.0, 2.0], " 2 GB/s"),
                                         ([], "")])
def test_a_cell_gives_the_median_steady_rate(gbps, shown):
    result = RunResult(layouts=[LayoutResult("one", [0, 1], 64 * MiB)],
                       pairs=[pair("read", True, s=1, t=1, gbps=g) for g in gbps] or [pair("read", True, s=1, t=1)])
    assert render_table(result).split("\n")[1].rstrip() == "card 1" + " " * 18 + "S:- R:ok W:-" + shown


@pytest.mark.parametrize("layouts, size", [
    ([LayoutResult("one", [0, 1], 64 * MiB), LayoutResult("two", [0, 1], 32 * MiB), LayoutResult("three", [0, 1], 64 * MiB)],
     "32 MiB/64 MiB"),
    ([LayoutResult("one", [0, 1], 0)], "the checks' extent"),
    ([LayoutResult("bandwidth", [0, 1], 64 * MiB)], "the checks' extent"),
    ([LayoutResult("one", [0, 1], 2 * MiB - 1)], "1 MiB"),
])
def test_the_table_names_the_extent_of_the_checks(layouts, size):
    result = RunResult(layouts=layouts, pairs=[PairResult(layouts[0].name, 0, 1, 0, 1, "read", True)])
    assert f"median steady copy rate at {size} (the fitness" in render_table(result).split("\n")[-1]


FLOORS = {"size": 64 * MiB, "floors": [
    {"kind": "cross_card", "where": "0->1", "gbps": 300, "basis": "calibrated", "formula": "measured on this host"},
    {"kind": "same_card", "where": "all", "gbps": 1000.0, "basis": "nominal", "formula": "80% of 1250"},
    {"kind": "bidirectional", "where": "0->1", "gbps": 50.5, "basis": "nominal", "formula": "80% of 1250"},
    {"kind": "cross_card", "where": "1->0", "gbps": 10, "basis": "nominal", "formula": "70% of 450"}]}


def figure(op, s, t, gbps, first, spread, size=256 * MiB):
    return {"op": op, "src_card": s, "dst_card": t, "bytes": size, "gbps": gbps, "first_gbps": first, "spread": spread}


def test_the_fitness_lines_written_out():
    reading = {"graphics_mhz": 1980, "memory_mhz": 2619, "pstate": "P0"}
    result = RunResult(
        clocks={"before": {0: {"graphics_mhz": 345, "memory_mhz": 2619, "pstate": "P0"}, 1: reading},
                "after the checks": {0: {}}},
        boost={"asked": True, "released": True},
        bandwidth=[figure("read", 0, 1, 120.5, 80.0, 0.0123), figure("all", None, None, 2000.0, 1500.0, 0.05),
                   figure("same-card", 1, 1, 1100.0, 900.0, 0.0), figure("bidirectional", 1, 0, 50.5, 40.0, 0.1),
                   figure("write", 1, 0, 5.0, 4.0, 0.0, size=32 * MiB), figure("write", 0, 1, 310.0, 200.0, 0.0, size=64 * MiB),
                   figure("read", 2, 0, 9.0, 8.0, 0.0)],
        topology={"floors": FLOORS},
        links={0: {"supported": True, "active": 18}, 1: {"supported": False, "reason": "a PCIe card"}},
        host={"cards": [{"index": 0}]})
    assert render_fitness(result).split("\n") == [
        "clocks (P-state through RM; MHz graphics/memory through NVML):",
        "  before        card 0: 345/2619 MHz P0  card 1: 1980/2619 MHz P0",
        "  after the checks" + "card 0: None/None MHz None",
        "  boost: asked; released at the run's end (RM accepted the clear)",
        "bandwidth at 256 MiB (median steady GB/s; first copy apart; its floor, BELOW where it missed it):",
        "  read           0->1         120.5   (first 80.0, spread 1.2%)   BELOW floor 300 calibrated",
        "  all            all cards   2000.0   (first 1500.0, spread 5.0%)   no floor",
        "  same-card      1->1        1100.0   (first 900.0, spread 0.0%)   floor 1000 nominal",
        "  bidirectional  1->0          50.5   (first 40.0, spread 10.0%)   floor 50.5 nominal",
        "  write          1->0           5.0   (first 4.0, spread 0.0%)   no floor",
        "  write          0->1         310.0   (first 200.0, spread 0.0%)   floor 300 calibrated",
        "  read           2->0           9.0   (first 8.0, spread 0.0%)   no floor",
        "  floor: 80% of 1250",
        "  floor: 70% of 450",
        "  card 0: 18 active NVLinks",
        "  card 1: no NVLink (a PCIe card)",
        "health (RM):",
        "  host health: not in this record",
        "  card 0 health: not in this record"]


@pytest.mark.parametrize("boost, line", [
    ({}, "  boost: not asked (--no-boost)"),
    ({"asked": False, "released": True}, "  boost: not asked (--no-boost)"),
    ({"asked": True, "released": False}, "  boost: asked; NOT released: RM refused the clear"),
    ({"asked": True}, "  boost: asked; release not recorded"),
    ({"asked": True, "released": None}, "  boost: asked; release not recorded"),
])
def test_the_boost_line(boost, line):
    assert render_fitness(RunResult(clocks={"idle": {}}, boost=boost)).split("\n") == [
        "clocks (P-state through RM; MHz graphics/memory through NVML):", "  idle          ", line]


def test_no_clocks_and_no_figures_no_fitness_lines():
    assert render_fitness(RunResult(boost={"asked": True}, links={0: {"supported": True, "active": 18}},
                                    host={"cards": [{"index": 0}]})) == ""


def test_figures_without_clocks_nor_a_topology():
    result = RunResult(bandwidth=[figure("read", 0, 1, 1.25, 1.0, 0.5, size=3 * MiB)], boost=None, topology=None)
    assert render_fitness(result).split("\n") == [
        "clocks (P-state through RM; MHz graphics/memory through NVML):",
        "  boost: not asked (--no-boost)",
        "bandwidth at 3 MiB (median steady GB/s; first copy apart; its floor, BELOW where it missed it):",
        "  read           0->1           1.2   (first 1.0, spread 50.0%)   no floor"]


def test_the_floor_of_each_kind_of_figure():
    floors = {"floors": [{"kind": "cross_card", "where": "all", "gbps": 1, "basis": "b", "formula": "f"},
                         {"kind": "cross_card", "where": "2->1", "gbps": 2, "basis": "b", "formula": "f"},
                         {"kind": "bidirectional", "where": "1->2", "gbps": 3, "basis": "b", "formula": "f"},
                         {"kind": "same_card", "where": "card 2", "gbps": 4, "basis": "b", "formula": "f"}]}
    assert figure_floor(floors, figure("write", 2, 1, 0, 0, 0, size=1))["gbps"] == 2     # no "size": every size
    assert figure_floor(floors, figure("write", 2, 1, 0, 0, 0, size=0))["gbps"] == 2     # even a figure of 0 bytes
    assert figure_floor(floors, figure("read", 1, 2, 0, 0, 0))["gbps"] == 1              # no 1->2: "all"
    assert figure_floor(floors, figure("bidirectional", 2, 1, 0, 0, 0))["gbps"] == 3
    assert figure_floor(floors, figure("bidirectional", 1, 2, 0, 0, 0))["gbps"] == 3
    assert figure_floor(floors, figure("same-card", 2, 2, 0, 0, 0))["gbps"] == 4
    assert figure_floor(floors, figure("same-card", 1, 1, 0, 0, 0)) is None
    assert figure_floor(floors, figure("all", 2, 1, 0, 0, 0)) is None
    assert figure_floor({}, figure("read", 2, 1, 0, 0, 0)) is None
    assert figure_floor({"size": 2, "floors": floors["floors"]}, figure("read", 2, 1, 0, 0, 0, size=1)) is None
    assert figure_floor({"size": 2, "floors": floors["floors"]}, figure("read", 2, 1, 0, 0, 0, size=2))["gbps"] == 2


class Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("stream, no_color, colour", [
    (Stream(True), None, True), (Stream(True), "", True), (Stream(True), "1", False),
    (Stream(False), None, False), (None, None, False)])
def test_colour_only_on_a_terminal_without_no_color(monkeypatch, stream, no_color, colour):
    monkeypatch.delenv("NO_COLOR", raising=False)
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert use_colour(stream) is colour
