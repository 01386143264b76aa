"""Byte-exact reads and writes through every window, moved by each session's own copy
engine: for every ordered pair (s, t), same card and cross card. Where the host's topology
entry says RM refuses the map, the refusal is what is checked, and no byte moves."""

import pytest

pytestmark = pytest.mark.hardware


def _verdict(check, peers):
    cards = peers.plan.cards
    what = f"{check.op} s{check.s} (card {cards[check.s]}) <-> t{check.t} (card {cards[check.t]})"
    if check.mismatch:
        m = check.mismatch
        return (f"{what}: {m['differing_bytes']} bytes differ, first at {m['offset']:#x} "
                f"(found {m['found']}): {m['explanation']}")
    return what


def _record_bandwidth(request, check):
    request.node.user_properties.append(("bandwidth", {
        "op": check.op, "s": check.s, "t": check.t, "bytes": check.length,
        "first_gbps": round(check.first_gbps, 2), "steady_gbps": round(check.steady_gbps, 2)}))


def _refused_as_expected(peers, topology, s, t) -> bool:
    """True where the topology expects this window's map to be refused (and it was)."""
    peer = peers.plan.cards[s] != peers.plan.cards[t]
    want = topology.expected("map_peer" if peer else "map_same") if topology else "NV_OK"
    if want == "NV_OK":
        return False
    step = peers.report.map(s, t)
    assert step is not None and step.status_name == want, (
        f"the topology {topology.name} expects {want} for this map, RM answered "
        f"{step.status_name if step else 'nothing (no reservation)'}")
    return True


@pytest.mark.rm_pairs("all")
def test_read(traffic, peers, topology, s, t, request):
    if _refused_as_expected(peers, topology, s, t):
        return
    check = traffic.read(s, t)
    _record_bandwidth(request, check)
    assert check.ok, _verdict(check, peers)
    assert all(check.spots.values()), check.spots


@pytest.mark.rm_pairs("all")
def test_write(traffic, peers, topology, s, t, request):
    if _refused_as_expected(peers, topology, s, t):
        return
    check = traffic.write(s, t)
    _record_bandwidth(request, check)
    assert check.ok, _verdict(check, peers)
    assert all(check.spots.values()), check.spots
