"""Bandwidth against the floors (rmpeer.judge.floors): which floor a figure is judged by, the
siblings rule, and what the certificate keeps of the floors. The floors are topologies.yaml's
h200x2-nv18 entry (355 GB/s one way, 650 GB/s both ways) and the 12-of-18-links derivation
of tests/judge/test_derived.py (236.8 GB/s); the 15% of the siblings rule is README's."""

from types import SimpleNamespace

import pytest

from rmpeer.judge.derived import CALIBRATED, DERIVED, Floor
from rmpeer.judge.floors import FAIL, OUTLIER, HostFloors, floor_for, judge_bandwidth, judged_topology

pytestmark = pytest.mark.offline
SIZE = 256 << 20
BOTH = Floor(650, CALIBRATED, "650 GB/s (calibrated: topologies.yaml h200x2-nv18)")
FULL = Floor(355, CALIBRATED, "355 GB/s (calibrated: topologies.yaml h200x2-nv18)")
TWELVE = Floor(236.8, DERIVED, "12 links x 26.562 GB/s x 0.743 = 236.8 GB/s (derived)")


def figure(op, src, dst, gbps):
    return {"op": op, "src_card": src, "dst_card": dst, "bytes": SIZE, "gbps": gbps}


def test_both_directions_of_a_pair_are_judged_by_its_floor_whichever_card_is_named_first():
    floors = HostFloors("derived", bidirectional={(0, 1): BOTH})
    assert floor_for(floors, figure("bidirectional", 1, 0, 600.0)) == BOTH
    assert [x["level"] for x in judge_bandwidth(floors, [figure("bidirectional", 1, 0, 600.0)])] == [FAIL]


def test_one_direction_is_judged_by_its_own_floor():
    """Card 1 has 12 of its 18 links: 0->1 and 1->0 may have floors of their own."""
    floors = HostFloors("derived", cross_card={(0, 1): TWELVE, (1, 0): FULL})
    assert floor_for(floors, figure("read", 0, 1, 300.0)) == TWELVE
    assert [(x["pair"], x["level"]) for x in judge_bandwidth(floors, [figure("read", 0, 1, 300.0),
                                                                      figure("read", 1, 0, 300.0)])] == [
        ("1->0", FAIL)]


def test_a_pair_is_an_outlier_only_more_than_15_percent_below_its_siblings():
    siblings = [figure("read", 0, 1, 100.0), figure("read", 0, 2, 100.0), figure("read", 0, 3, 100.0)]
    assert judge_bandwidth(None, siblings + [figure("read", 1, 0, 85.0)]) == []         # 15% below: not more
    got = judge_bandwidth(None, siblings + [figure("read", 1, 0, 84.9)])
    assert [(x["pair"], x["level"], x["median"]) for x in got] == [("1->0", OUTLIER, 100.0)]


def test_the_certificate_keeps_what_could_not_be_derived():
    why = "card 1: RM reports no PCE of its copy engine"
    assert HostFloors("derived", cross_card={(0, 1): TWELVE}, missing=(why,)).as_dict()["missing"] == [why]


def test_floors_no_entry_calibrates_are_matched_by_derived():
    """judged_topology: matched_by "derived" where no entry calibrates the host."""
    spec = SimpleNamespace(topology=None, topology_matched_by=None)
    topology, findings = judged_topology(spec, (HostFloors("derived", cross_card={(0, 1): TWELVE}), []), [])
    assert (topology["name"], topology["matched_by"], findings) == (None, "derived", [])
    assert topology["floors"]["cross_card_gbps"] == 236.8
