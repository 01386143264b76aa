"""Mutants of rmpeer/judge/nvlink.py (issue 47, item 9; docs/mutation.md): every sentence of
check_active and compare_counters written out whole, on link_health readings made by hand in
rm.nvlink's shape (a card, supported, active, links of index, state, active, connected,
counters). The counters judged are those nvidia-smi reports as NVLink errors (the module's
note, seen on 2 x H200); the sentences are written here, never taken from the judge's answer."""

import pytest

from rmpeer.judge.nvlink import JUDGED_COUNTERS, check_active, compare_counters

pytestmark = pytest.mark.offline


def link(index, state="ACTIVE", active=True, connected=True, **counters):
    return {"index": index, "state": state, "active": active, "connected": connected, "counters": counters}


def reading(links, card=2, supported=True):
    return {"card": card, "supported": supported, "active": sum(1 for x in links if x["active"]), "links": links}


def test_the_counters_judged_are_nvidia_smis_nvlink_errors():
    assert JUDGED_COUNTERS == ("crc", "replay_tx", "replay_rx", "recovery")


def test_every_enabled_link_up_is_no_problem_whatever_is_expected():
    up = reading([link(0), link(1, "SLEEP")])
    assert check_active(up, 18) == [] and check_active(up, None) == [] and check_active(up, 0) == []


def test_each_link_down_is_named_after_the_count():
    health = reading([link(0), link(1, "FAIL", False), link(4, "DOWN", False, connected=False)], card=3)
    want = ["card 3: 1 of 3 enabled NVLinks active",
            "card 3: link 1 is FAIL (up: ACTIVE or SLEEP, connected)",
            "card 3: link 4 is DOWN, not connected (up: ACTIVE or SLEEP, connected)"]
    assert check_active(health, 18) == want and check_active(health, None) == want


def test_no_link_enabled_is_named_only_where_nvlinks_are_expected():
    none = reading([], card=1)
    assert check_active(none, 18) == ["card 1: RM enables no NVLink on this card (18 expected)"]
    assert check_active(none, None) == [] and check_active(none, 0) == []


def test_a_card_rm_reads_no_nvlink_of_is_not_judged_here():
    assert check_active({"card": 0, "supported": False, "links": [link(0, "DOWN", False)], "active": 0}, 18) == []
    assert check_active({"card": 0, "links": [link(0, "DOWN", False)], "active": 0}, 18) == []


def test_each_grown_error_counter_and_no_other():
    before = reading([link(0, crc=0, replay_tx=1, replay_rx=2, recovery=3, lane_crc=5, ecc=1),
                      link(1, crc=7)], card=1)
    after = reading([link(0, crc=5, replay_tx=1, replay_rx=3, recovery=4, lane_crc=40, ecc=9),
                     link(1, crc=7)], card=1)
    assert compare_counters(before, after) == ["card 1 link 0: crc 0 -> 5", "card 1 link 0: replay_rx 2 -> 3",
                                               "card 1 link 0: recovery 3 -> 4"]
    assert compare_counters(after, before) == []           # counters that fell: no error grew
    assert compare_counters(before, before) == []


def test_a_counter_without_a_start_is_not_compared():
    before = reading([link(0, replay_tx=0), link(1)], card=0)
    before["links"][1]["counters"] = None
    after = reading([link(0, crc=5, replay_tx=2), link(1, crc=9)], card=0)
    assert compare_counters(before, after) == ["card 0 link 0: replay_tx 0 -> 2"]
    after["links"][0]["counters"] = None
    assert compare_counters(before, after) == []


def test_a_link_that_went_down_or_is_no_longer_enabled():
    before = reading([link(0), link(1), link(2, "DOWN", False), link(5), link(3)], card=4)
    after = reading([link(0, "FAIL", False), link(2, "DOWN", False), link(1), link(9, "DOWN", False)], card=4)
    assert compare_counters(before, after) == ["card 4 link 0: went from ACTIVE to FAIL",
                                               "card 4 link 3: no longer enabled", "card 4 link 5: no longer enabled"]


def test_the_card_is_the_after_readings_else_the_befores():
    before, after = reading([link(0, crc=1)], card=6), reading([link(0, crc=2)], card=7)
    assert compare_counters(before, after) == ["card 7 link 0: crc 1 -> 2"]
    del after["card"]
    assert compare_counters(before, after) == ["card 6 link 0: crc 1 -> 2"]
    assert compare_counters({"links": [link(0)]}, {}) == ["card None link 0: no longer enabled"]
    assert compare_counters({}, {"links": [link(0)]}) == []


def test_a_new_link_or_a_counter_not_judged_does_not_end_the_comparison():
    """A link enabled since the first reading, listed first, and a counter that is not judged,
    listed before crc: the links and counters after them are still compared."""
    before = reading([link(0, lane_crc=1, crc=0)], card=5)
    after = reading([link(7, crc=9), link(0, lane_crc=30, crc=2)], card=5)
    assert compare_counters(before, after) == ["card 5 link 0: crc 0 -> 2"]
