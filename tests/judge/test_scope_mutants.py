"""Mutants of rmpeer/judge/scope.py (issue 47, item 9; docs/mutation.md): a hand-made 3-card
host (RM's order 0, 1, 2 at buses 1b, 2a, 3b) and a run of cards 0 and 2 of it, numbered 0 and
1 by the run; the whole host's view, the processes --require-idle counts, the Xids kept, the
passive baseline's cards and the card an Xid names, each worked out here by hand from that
table, never taken from the function's answer."""

from dataclasses import asdict
from types import SimpleNamespace

import pytest

from rmpeer.judge import scope as s
from rmpeer.model.host import Card, HostFacts
from rmpeer.model.selection import DEFAULT, OPTION, HostCard

pytestmark = pytest.mark.offline
HOST = [HostCard(0, 0, "0000:1b:00.0", "GPU-a", "NVIDIA H200"), HostCard(1, 1, "0000:2a:00.0", "GPU-b", "NVIDIA H200"),
        HostCard(2, 2, "0000:3b:00.0", "GPU-c", "NVIDIA H100")]


def selection(cards, source=OPTION):
    return {"cards": list(cards), "uuids": [HOST[i].uuid for i in cards], "source": source, "how": "asked",
            "of": [asdict(c) for c in HOST]}


def facts(cards=(0, 2), p2p=None, source=OPTION):
    run = [Card(i, HOST[h].minor, 0x100 + h, HOST[h].pci, 0x2335, i, HOST[h].model, HOST[h].uuid)
           for i, h in enumerate(cards)]
    return HostFacts("580.159.04", "open", "rm-api-query", cards=run, p2p=p2p or {}, selection=selection(cards, source))


def test_a_run_of_some_cards_is_seen_as_the_whole_host():
    f = facts(p2p={(0, 1): "p01", (1, 0): "p10", (1, 1): "p11"})
    view = s.host_view(f)
    assert isinstance(view, s.HostView)
    assert view.cards == (Card(0, 0, 0x100, "0000:1b:00.0", 0x2335, 0, "NVIDIA H200", "GPU-a"),
                          s._Unopened(1, "NVIDIA H200"),
                          Card(2, 2, 0x102, "0000:3b:00.0", 0x2335, 1, "NVIDIA H100", "GPU-c"))
    assert view.p2p == {(0, 2): "p01", (2, 0): "p10", (2, 2): "p11"}
    assert (view.cards[1].index, view.cards[1].name) == (1, "NVIDIA H200")


def test_a_run_of_every_card_or_without_a_selection_is_its_own_view():
    whole = facts((0, 1, 2))
    assert s.host_view(whole) is whole
    unselected = HostFacts("580.159.04", "open", "rm-api-query", cards=[])
    assert s.host_view(unselected) is unselected
    bare = SimpleNamespace(cards=[])
    assert s.host_view(bare) is bare


def test_require_idle_counts_the_taken_cards_and_card_less_clients_only():
    procs = [{"pid": 1, "cards": [0], "minors": [0]}, {"pid": 2, "cards": [], "minors": [1]},
             {"pid": 3, "cards": [], "minors": []}, {"pid": 4},
             SimpleNamespace(pid=5, cards=[1], minors=[2]), SimpleNamespace(pid=6, cards=(), minors=(1,)),
             SimpleNamespace(pid=7)]
    assert [p["pid"] if isinstance(p, dict) else p.pid for p in s.count_for_idle(procs, selection((0, 2)))] == [
        1, 3, 4, 5, 7]
    # every card taken, or no selection recorded: every process, as a list
    assert s.count_for_idle(tuple(procs), selection((0, 1, 2))) == procs
    assert s.count_for_idle(tuple(procs), None) == procs and s.count_for_idle(tuple(procs), {}) == procs


def test_the_xids_of_the_cards_not_taken_are_dropped():
    xids = {"readable": True, "xids": [{"xid": 79, "pci": "0000:1b:00"}, {"xid": 31, "pci": "0000:2a:00"},
                                       {"xid": 13, "pci": "0000:99:00"}, {"xid": 48, "pci": "0000:3b:00"}]}
    assert s.other_cards_xids_dropped(xids, facts()) == {
        "readable": True, "xids": [{"xid": 79, "pci": "0000:1b:00"}, {"xid": 13, "pci": "0000:99:00"},
                                   {"xid": 48, "pci": "0000:3b:00"}]}
    assert s.other_cards_xids_dropped(xids, facts((0, 1, 2))) == xids
    assert s.other_cards_xids_dropped(xids, SimpleNamespace()) is xids
    assert s.other_cards_xids_dropped(None, facts()) is None
    empty = {"readable": False, "xids": []}
    assert s.other_cards_xids_dropped(empty, facts()) is empty
    nothing = {"readable": False}
    assert s.other_cards_xids_dropped(nothing, facts()) is nothing


def test_some_cards_is_a_subset_only():
    assert s.some_cards(facts()) is True
    assert s.some_cards(facts((1,))) is True
    assert s.some_cards(facts((0, 1, 2))) is False
    assert s.some_cards(SimpleNamespace(selection={})) is False
    assert s.some_cards(SimpleNamespace(selection=None)) is False
    assert s.some_cards(SimpleNamespace()) is False


LAST = [{"index": 0, "pci": "00000000:1B:00.0", "uuid": "GPU-a"}, {"index": 1, "pci": "0000:2a:00.0", "uuid": "GPU-old"},
        {"index": 2, "pci": "3b:00.0", "uuid": "GPU-c"}, {"index": 9, "uuid": "GPU-nowhere"}]


def test_the_last_runs_cards_this_run_vouches_for():
    # cards 0 and 2 taken: the last run's cards at buses 1b and 3b, whatever the spelling
    assert s.last_cards_here(facts(), LAST) == [LAST[0], LAST[2]]
    assert s.last_cards_here(facts((1,)), LAST) == [LAST[1]]
    assert s.last_cards_here(facts((0, 1, 2)), tuple(LAST)) == LAST


def test_the_cards_the_passive_state_keeps():
    assert s.state_cards(facts((0, 1, 2)), LAST) == [{"index": 0, "pci": "0000:1b:00.0", "uuid": "GPU-a"},
                                                     {"index": 1, "pci": "0000:2a:00.0", "uuid": "GPU-b"},
                                                     {"index": 2, "pci": "0000:3b:00.0", "uuid": "GPU-c"}]
    # a run of cards 0 and 2: the last run's others as they were, then this run's by the host's numbers
    assert s.state_cards(facts(), LAST) == [LAST[1], LAST[3], {"index": 0, "pci": "0000:1b:00.0", "uuid": "GPU-a"},
                                            {"index": 2, "pci": "0000:3b:00.0", "uuid": "GPU-c"}]
    assert s.state_cards(facts((1,)), []) == [{"index": 1, "pci": "0000:2a:00.0", "uuid": "GPU-b"}]


def test_the_card_an_xid_names_by_domain_bus_device():
    cards = [SimpleNamespace(index=4, pci="0000:1B:00.0"), SimpleNamespace(index=5, pci="0000:2a:00.1"),
             SimpleNamespace(index=6, pci="0000:3b:00.0.7")]         # a name with a second dot: cut at the first
    assert s.card_of({"pci": "0000:1b:00"}, cards) == 4
    assert s.card_of({"pci": "0000:2a:00"}, cards) == 5
    assert s.card_of({"pci": "0000:3b:00"}, cards) == 6
    assert s.card_of({"pci": "0000:1b:00.0"}, cards) is None
    assert s.card_of({"pci": "0000:99:00"}, cards) is None and s.card_of({"pci": "0000:1b:00"}, []) is None
    twice = [SimpleNamespace(index=1, pci="0000:1b:00.0"), SimpleNamespace(index=2, pci="0000:1b:00.1")]
    assert s.card_of({"pci": "0000:1b:00"}, twice) == 1                 # the first card at that device


def test_xids_by_card_and_unknown():
    cards = [SimpleNamespace(index=0, pci="0000:1b:00.0"), SimpleNamespace(index=1, pci="0000:2a:00.0")]
    a, b, c, e = ({"xid": n, "pci": p} for n, p in ((79, "0000:2a:00"), (13, "0000:99:00"), (31, "0000:2a:00"),
                                                   (48, "0000:1b:00")))
    assert s.xids_by_card([a, b, c, e], cards) == {1: [a, c], "unknown": [b], 0: [e]}
    assert list(s.xids_by_card([a, b, c, e], cards)) == [1, "unknown", 0]
    assert s.xids_by_card([], cards) == {}


def test_a_default_selection_of_some_cards_is_still_some_cards():
    f = facts((0,), source=DEFAULT)
    assert s.some_cards(f) is True and isinstance(s.host_view(f), s.HostView)
