"""Byte-exact reads and writes through every window, moved by each session's own copy
engine: for every ordered pair (s, t), same card and cross card."""

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


@pytest.mark.rm_pairs("all")
def test_read(traffic, peers, s, t, request):
    check = traffic.read(s, t)
    _record_bandwidth(request, check)
    assert check.ok, _verdict(check, peers)
    assert all(check.spots.values()), check.spots


@pytest.mark.rm_pairs("all")
def test_write(traffic, peers, s, t, request):
    check = traffic.write(s, t)
    _record_bandwidth(request, check)
    assert check.ok, _verdict(check, peers)
    assert all(check.spots.values()), check.spots
