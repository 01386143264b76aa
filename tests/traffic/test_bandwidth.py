"""Both directions at once is timed on each card's own clock.

Two cards' timers are not one clock: on a real 2 x H200 host they stood about a millisecond
apart after a CUDA context had run (docs/evidence/README.md, "The timing bug"). Engines that
start together behind the gate each copy the same bytes; the figure must be the bytes over
the longest engine's own span, whatever the offset between the cards' timers."""

import pytest

from rmpeer.traffic import bandwidth
from rmpeer.ce.engine import CopyResult

pytestmark = pytest.mark.offline
MIB = 1 << 20


class FakeEngine:
    """An engine whose card's timer reads `offset_ns` ahead of the host's, copying at `gbps`."""

    def __init__(self, offset_ns: int, gbps: float):
        self.offset_ns, self.gbps, self.slots, self.queued, self.gated = offset_ns, gbps, {}, 0, None

    def start_copy(self, src, dst, n, *, slots=(0, 1), gate=None):
        if gate is not None:
            self.gated = gate
        start = self.offset_ns + int(self.queued * n / self.gbps)
        self.queued += 1
        self.slots[slots[0]] = start
        self.end = self.offset_ns + int(self.queued * n / self.gbps)
        return self.queued

    def open_gate(self, slot, value):
        assert self.gated == (slot, value)

    def wait_copy(self, payload, n, *, label, timeout_s):
        return CopyResult(n, 0, 0, 0, self.end)

    def timestamp(self, slot):
        return self.slots[slot]


def rig(engines, gated=True):
    r = bandwidth.Rig.__new__(bandwidth.Rig)
    r.engines, r.gated, r.gate_value, r.last_host_gbps = engines, gated, 0, 0.0
    r.channel = {"timeout_s": 5.0}
    return r


@pytest.mark.parametrize("offset_ns", [0, 1_000_000, -1_000_000, 37_000])
def test_the_figure_ignores_the_offset_between_the_cards_timers(offset_ns):
    n = 256 * MIB
    r = rig([FakeEngine(0, 395.0), FakeEngine(offset_ns, 390.0)])
    got = r.together([(0, 0, 0), (1, 0, 0)], n)
    chain_bytes = n * bandwidth.CHAIN
    expected = 2 * chain_bytes / max(chain_bytes / 395.0, chain_bytes / 390.0)   # the slower engine's span
    assert got == pytest.approx(expected, rel=1e-6)


def test_a_span_across_two_cards_clocks_would_be_wrong():
    """The rule's mutation: the old reading (first start on any card to last end on any
    card) gives a figure off by the timers' offset; the test above would catch it."""
    n = 256 * MIB
    engines = [FakeEngine(0, 395.0), FakeEngine(1_000_000, 395.0)]
    mixed = rig(engines, gated=False).together([(0, 0, 0), (1, 0, 0)], n)
    assert mixed < 0.75 * 790.0


def test_every_engine_is_armed_behind_the_same_gate():
    engines = [FakeEngine(0, 395.0), FakeEngine(0, 395.0)]
    r = rig(engines)
    r.together([(0, 0, 0), (1, 0, 0)], 64 * MIB)
    assert engines[0].gated == engines[1].gated == (bandwidth.GATE_SLOT, 1)
