"""What a run of some of the host's cards answers for (rmpeer.judge.scope), on the hand-made
8-card board of tests/board_host.py: the whole host's view a topology entry judges, the
processes --require-idle counts, the Xids that are the run's, the passive baseline's cards."""

import itertools

import pytest

from board_host import HOST, subset_facts

pytestmark = pytest.mark.offline
SUBSETS = [s for k in range(1, 9) for s in itertools.combinations(range(8), k)]


def test_every_subset_of_an_8_card_board_is_judged_by_the_boards_entry():
    """2 cards of an NVSwitch board are not a 2-card NVLink host: the board's entry (its pair
    floors, its links) applies, never h200x2-nv18's."""
    from rmpeer.judge.scope import host_view
    from rmpeer.tables.topology import TopologyMatrix

    matrix = TopologyMatrix()
    for subset in SUBSETS:
        view = host_view(subset_facts(subset))
        assert [c.index for c in view.cards] == list(range(8))
        assert sorted({a for a, _ in view.p2p}) == list(subset)      # host numbers, the chosen pairs only
        assert matrix.match(view).name == "hgx-h200x8-nvswitch", subset


def test_a_subset_run_without_the_whole_host_view_would_match_the_wrong_entry():
    """The view is what makes the difference (the check above can fail): the chosen cards
    alone look like a 2-card host."""
    from rmpeer.tables.topology import TopologyMatrix

    facts = subset_facts((3, 6))
    assert TopologyMatrix().match(facts).name != "hgx-h200x8-nvswitch"


def test_require_idle_counts_only_the_chosen_cards_processes():
    from rmpeer.judge.scope import count_for_idle

    facts = subset_facts((1,))
    other_job = {"pid": 10, "cards": [], "minors": [HOST[0].minor], "driver": True}   # /dev/nvidia2 only
    ours = {"pid": 11, "cards": [0], "minors": [HOST[1].minor], "driver": True}
    ctl_only = {"pid": 12, "cards": [], "minors": [], "driver": True}                 # nvidiactl reaches all
    assert count_for_idle([other_job, ours, ctl_only], facts.selection) == [ours, ctl_only]
    whole = subset_facts(tuple(range(8)))
    assert count_for_idle([other_job], whole.selection) == [other_job]


def test_another_jobs_cards_xids_are_not_this_runs():
    """An Xid on a card the run did not take is left out of its judgement; one on a taken
    card, or on no card the host has, stays."""
    from rmpeer.judge.scope import other_cards_xids_dropped

    facts = subset_facts((1,))      # host card 1 at 0000:1b:00.0 taken; card 0 at 0000:3b:00.0 not
    xids = {"readable": True, "xids": [{"xid": 79, "pci": "0000:3b:00", "text": "fallen off the bus"},
                                       {"xid": 31, "pci": "0000:1b:00", "text": "mmu fault"},
                                       {"xid": 48, "pci": "0000:ff:00", "text": "dbe"}]}
    assert [x["xid"] for x in other_cards_xids_dropped(xids, facts)["xids"]] == [31, 48]


def test_a_subset_gets_the_boards_floors_not_a_missing_floors_finding():
    """floors_for on the whole host's view: 2 cards of a board whose entry states floors get
    those floors. (hgx-h200x8-nvswitch states none yet: the finding names that entry, not a
    2-card host.)"""
    from rmpeer.judge.floors import floors_for
    from rmpeer.judge.scope import host_view
    from rmpeer.tables.topology import TopologyMatrix

    _, source, missing = floors_for(host_view(subset_facts((2, 5))), TopologyMatrix())
    assert source == "match:hgx-h200x8-nvswitch"
    assert missing is None or "hgx-h200x8-nvswitch" in missing.found


def test_the_passive_baseline_of_a_run_of_some_cards():
    """The last run's cards this run vouches for are those at the buses it took; the state it
    leaves keeps the others as the last run saw them (another job's card is not missed)."""
    from rmpeer.judge.scope import last_cards_here, some_cards, state_cards

    facts = subset_facts((1, 3))
    last = [{"index": c.index, "pci": c.pci, "uuid": c.uuid} for c in HOST]
    assert some_cards(facts) and not some_cards(subset_facts(tuple(range(8))))
    assert [c["index"] for c in last_cards_here(facts, last)] == [1, 3]
    kept = state_cards(facts, last)
    assert sorted(c["index"] for c in kept) == list(range(8))
    assert {c["index"]: c["uuid"] for c in kept} == {c.index: c.uuid for c in HOST}
    whole = subset_facts(tuple(range(8)))
    assert last_cards_here(whole, last) == last
    assert [c["index"] for c in state_cards(whole, [])] == list(range(8))
