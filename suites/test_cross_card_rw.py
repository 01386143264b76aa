"""Byte-exact reads and writes through every window, moved by each session's own copy
engine: for every ordered pair (s, t), same card and cross card. Where the host's topology
entry says RM refuses the map, the refusal is what is checked, and no byte moves."""

import pytest

from rmpeer.run.hostrun import pair_finding

pytestmark = pytest.mark.hardware


def _refused_as_expected(layout, s, t) -> bool:
    """True where the topology expects this window's map to be refused (and it was)."""
    topology = layout.host.topology
    peer = layout.plan.cards[s] != layout.plan.cards[t]
    want = topology.expected("map_peer" if peer else "map_same") if topology else "NV_OK"
    if want == "NV_OK":
        return False
    step = layout.setup.report.map(s, t)
    found = step.status_name if step else "nothing (no reservation)"
    assert step is not None and step.status_name == want, (
        f"map s{s}->t{t}: expected {want} (the topology {topology.name}), found {found}")
    layout.refused(s, t, want)
    return True


@pytest.mark.rm_check("read", area="read/write")
@pytest.mark.rm_pairs("all")
def test_read(layout_run, s, t):
    if _refused_as_expected(layout_run, s, t):
        return
    pair = layout_run.transfer("read", s, t)
    assert pair.ok, pair_finding(pair).text


@pytest.mark.rm_check("write", area="read/write")
@pytest.mark.rm_pairs("all")
def test_write(layout_run, s, t):
    if _refused_as_expected(layout_run, s, t):
        return
    pair = layout_run.transfer("write", s, t)
    assert pair.ok, pair_finding(pair).text
