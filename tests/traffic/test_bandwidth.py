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


# -- which pairs a tier measures (docs/tiers.md) ------------------------------------------------

class CountingRig:
    """A rig of `cards` cards, two sessions each (bandwidth.rig_layout), that records which
    sessions' engines copied between which windows, at a constant figure."""

    def __init__(self, cards: int):
        self.cards = [c for c in range(cards) for _ in range(2)]
        self.scratch = [("scratch", s) for s in range(len(self.cards))]
        self.copies, self.last_host_gbps = [], 0.0

    def session_on(self, card, k=0):
        return 2 * card + k

    def window(self, t):
        return ("window", t)

    def one(self, s, src, dst, n):
        self.copies.append((s, src, dst))
        return 100.0

    def together(self, jobs, n):
        self.copies.append(tuple(jobs))
        return 100.0


def ring(n):
    """Each card and the next, written out for the numbers of cards the test takes."""
    return {n: {frozenset(p) for p in pairs} for n, pairs in {
        3: [(0, 1), (1, 2), (2, 0)], 4: [(0, 1), (1, 2), (2, 3), (3, 0)],
        8: [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 0)]}.items()}[n]


@pytest.mark.parametrize("cards", [3, 4, 8])
def test_the_quick_tier_measures_each_card_with_its_ring_neighbours(cards):
    figures = bandwidth.measure(CountingRig(cards), MIB, pairs=bandwidth.tier_pairs(cards, "quick"))
    between = {frozenset((f.src_card, f.dst_card)) for f in figures if f.op in ("read", "write", "bidirectional")}
    assert between == ring(cards)
    ops = [f.op for f in figures]
    # per ring pair: a read and a write each way, and both directions at once; every card within
    # itself; every card at once
    assert (ops.count("read"), ops.count("write"), ops.count("bidirectional")) == (2 * cards, 2 * cards, cards)
    assert ops.count("same-card") == cards and ops.count("all") == 1


@pytest.mark.parametrize("cards", [1, 2, 3, 8])
def test_the_full_tier_and_two_cards_measure_every_pair(cards):
    assert bandwidth.tier_pairs(cards, "full") is None
    figures = bandwidth.measure(CountingRig(cards), MIB, pairs=bandwidth.tier_pairs(cards, "full"))
    between = {(f.src_card, f.dst_card, f.op) for f in figures if f.op in ("read", "write")}
    assert between == {(a, b, op) for a in range(cards) for b in range(cards) if a != b for op in ("read", "write")}
    if cards <= 2:      # on two cards the ring is every pair: quick measures what full does
        assert bandwidth.tier_pairs(cards, "quick") is None


@pytest.mark.parametrize("cards", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("tier", ["quick", "full"])
def test_the_figures_the_suites_expect_are_the_ones_measured(cards, tier):
    """suites/test_fitness.py takes a check per figures_of; each must find its figure."""
    pairs = bandwidth.tier_pairs(cards, tier)
    measured = {(f.src_card, f.dst_card, f.op) for f in bandwidth.measure(CountingRig(cards), MIB, pairs=pairs)}
    assert set(bandwidth.figures_of(cards, pairs=pairs)) == measured
