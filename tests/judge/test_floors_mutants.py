"""Mutants of rmpeer/judge/floors.py (issue 47, item 9; docs/mutation.md) that the floors tests of
test_judge_mutants.py leave: the order of the floors a certificate keeps, a same-card figure,
a figure with no floor before one with a floor, the line of a topology without floors, a name
with a colon, a host named "derived" when its entry states no floors, and a host whose entry
states floors of no kind. Expected values are worked out here by hand."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from rmpeer.judge import floors as fl
from rmpeer.judge.derived import CALIBRATED, DERIVED, DerivedFloors, Floor
from rmpeer.judge.floors import ANY, HostFloors
from rmpeer.model.result import DEGRADE, Finding
from rmpeer.tables.topology import Floors

pytestmark = pytest.mark.offline
MIB256 = 256 << 20


def fig(a, b, op, gbps, n=MIB256):
    return {"src_card": a, "dst_card": b, "op": op, "bytes": n, "gbps": gbps}


def test_the_floors_a_certificate_keeps_are_ordered_by_their_text():
    """A table of ANY and cards, and one of pairs: sorted by the text of each (key, floor) item,
    "('any', " < "(0, " < "(1, " (a quote sorts before a digit) and "((0, 10), " < "((0, 2), ",
    which neither a mix of kinds (no order between str and int) nor tuples of numbers sort as."""
    floors = HostFloors("h", same_card={ANY: Floor(700, CALIBRATED, "a"), 1: Floor(650, DERIVED, "s1"),
                                        0: Floor(660, DERIVED, "s0")},
                        cross_card={(0, 2): Floor(300, DERIVED, "c2"), (0, 10): Floor(310, DERIVED, "c10")})
    assert [(f["kind"], f["where"]) for f in floors.as_dict()["floors"]] == [
        ("same_card", "all"), ("same_card", "card 0"), ("same_card", "card 1"),
        ("cross_card", "0->10"), ("cross_card", "0->2")]


def test_a_same_card_figure_takes_its_cards_same_card_floor():
    """op same-card is a copy inside one card, judged by the source card's same-card floor,
    whatever the destination says."""
    floors = HostFloors("h", same_card={0: Floor(650, DERIVED, "s0")}, cross_card={ANY: Floor(355, CALIBRATED, "c")})
    assert fl.floor_for(floors, fig(0, 1, "same-card", 1.0)) == Floor(650, DERIVED, "s0")
    assert fl.floor_for(floors, fig(0, 1, "read", 1.0)) == Floor(355, CALIBRATED, "c")


def test_a_figure_without_a_floor_does_not_end_the_judging():
    floors = HostFloors("h", cross_card={(0, 1): Floor(355.0, CALIBRATED, "c")})
    got = fl.judge_bandwidth(floors, [fig(1, 0, "read", 1.0, 1 << 20), fig(0, 1, "read", 300.0)])
    assert [(x["level"], x["pair"]) for x in got] == [("FAIL", "0->1")]


class _Matrix:
    path = Path("/etc/rmpeer/topologies.yaml")

    def __init__(self, topologies):
        self.topologies = topologies

    def get(self, name):
        return self.topologies[name]

    def match(self, host):
        return None

    def line(self, name):
        return {"u": 12, "h:2": 30}[name]


def _topo(name, floors=None):
    return SimpleNamespace(name=name, floors=floors, mismatches=lambda facts: [])


FACTS = SimpleNamespace(cards=[SimpleNamespace(index=0, name="H200")], p2p={}, abi_release=None)


def test_a_topology_without_floors_is_named_with_its_own_line():
    assert fl.floors_for(FACTS, _Matrix({"u": _topo("u")}), expected="u")[2] == Finding(
        "bandwidth-floor", "host", "floors for this host (a topologies.yaml entry)",
        "no floors for this host: topology u (topologies.yaml line 12) states none", DEGRADE)


def test_a_name_with_a_colon_is_kept_whole(monkeypatch):
    monkeypatch.setattr(fl, "derive_floors", lambda *a: DerivedFloors({}, {}, {}, (), ()))
    host, findings = fl.resolve_floors(FACTS, {}, _Matrix({"h:2": _topo("h:2", Floors(cross_card_gbps=355))}),
                                       expected="h:2", classes={})
    assert host.name == "h:2" and findings == []
    assert host.cross_card == {ANY: Floor(355, CALIBRATED, "355 GB/s (calibrated: topologies.yaml h:2)")}


def test_floors_derived_for_a_named_entry_that_states_none_are_named_derived(monkeypatch):
    derived = DerivedFloors({0: Floor(650, DERIVED, "s0")}, {}, {}, (), ())
    monkeypatch.setattr(fl, "derive_floors", lambda *a: derived)
    host, findings = fl.resolve_floors(FACTS, {}, _Matrix({"u": _topo("u")}), expected="u", classes={})
    assert host == HostFloors("derived", same_card={0: Floor(650, DERIVED, "s0")}) and findings == []


def test_an_entry_that_states_floors_of_no_kind_and_nothing_derived(monkeypatch):
    """A topology's floors with every rate left out: no finding from floors_for (it has floors),
    no floor of any kind: "no floors for this host" and what could not be derived."""
    monkeypatch.setattr(fl, "derive_floors", lambda *a: DerivedFloors({}, {}, {}, ("card 0: no PCE",), ()))
    got = fl.resolve_floors(FACTS, {}, _Matrix({"e": _topo("e", Floors())}), expected="e", classes={})
    assert got == (None, [Finding("bandwidth-floor", "host", "floors for this host (a topologies.yaml entry)",
                                  "no floors for this host; none derived: card 0: no PCE", DEGRADE)])
