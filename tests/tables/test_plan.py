"""The seed's peer plan, as a pure function: order, handles, ranges, flags and refusals,
for every layout of the matrix on 1, 2 and 8 cards and for generated layouts.

The expected plan is NOT taken from rmpeer.tables.plan: `seed_plan` below transcribes the seed's
ppPeers (/work/shared/spec/PlanHostPeers.seed.txt) step by step, its nat-eliminate folds
included, and window(t) comes from layouts.yaml's own text (docs/peer-setup.md)."""

import copy
import itertools
import random

import pytest
import yaml

from rmpeer.tables.load import MATRICES
from rmpeer.errors import PlanError
from rmpeer.tables.layouts import LayoutMatrix
from rmpeer.tables.plan import MAX_SESSIONS, linear_windows, pair_handle, plan_peers

pytestmark = pytest.mark.offline
MATRIX = LayoutMatrix()
VA = yaml.safe_load((MATRICES / "layouts.yaml").read_text())["va"]   # the file, not the loader
PAGE = VA["page_size"]
EXTENT = 4 * PAGE

# The seed's handles: ppPairHandle a b = 0xB2000000 + a*16 + b; ppWindowHandle s t =
# phSessionHandle s (0xB3000000 + t), PlanHost's per-session handle: base + s * 0x10000.
SEED_PAIR_BASE, SEED_WINDOW_BASE, SEED_SESSION_STRIDE = 0xB2000000, 0xB3000000, 0x10000
SEED_PEER_FLAG = ("P2P_ENABLE", "NOSLI")   # ppPeerFlag: NVOS46_FLAGS_P2P_ENABLE = NOSLI


def seed_window(t, extent=EXTENT):
    """window(t) = window_base + t * round_up(extent, page_size) (layouts.yaml, va:)."""
    return VA["window_base"] + t * (-(-extent // PAGE) * PAGE)


def nat_eliminate(base, step, n):
    """The seed's fold over 0..n-1: step(n-1, step(n-2, ... step(0, base)))."""
    result = base
    for i in range(n):
        result = step(i, result)
    return result


def seed_plan(cards, extent=EXTENT):
    """ppPeers, transcribed: the list of steps it emits, in order. A pair is
    ("p2p", a, b, handle); a window is ("window", s, t, handle, offset, limit, peer_flag)."""
    n = len(cards)

    def pairs_of_b(b, after):      # the inner fold: a from b-1 down to 0, same card skipped
        return nat_eliminate(after, lambda a, later: later if cards[a] == cards[b] else
                             [("p2p", a, b, SEED_PAIR_BASE + a * 16 + b)] + later, b)

    pairs = nat_eliminate(lambda after: after,
                          lambda b, earlier: (lambda after: earlier(pairs_of_b(b, after))), n)

    def window(k, later):
        s, t = k // n, k % n
        return [("window", s, t, SEED_WINDOW_BASE + t + s * SEED_SESSION_STRIDE, seed_window(t, extent),
                 seed_window(t, extent) + extent - 1, cards[s] != cards[t])] + later

    return pairs(nat_eliminate([], window, n * n))


def as_steps(plan):
    return ([("p2p", p.a, p.b, p.handle) for p in plan.pairs]
            + [("window", w.s, w.t, w.handle, w.offset, w.limit, SEED_PEER_FLAG in w.flags) for w in plan.maps])


def matrix_layouts():
    for cards in (1, 2, 4, 8):
        for layout in MATRIX.fitting(cards):
            yield pytest.param(layout.cards, id=f"{cards}cards/{layout.name}")


def generated_layouts():
    rng = random.Random(20261129)
    for n in (1, 2, 3, 5, 9, 16):
        for _ in range(3):
            yield pytest.param(tuple(rng.randrange(4) for _ in range(n)), id=f"random{n}-{_}")


def unique(params):
    """Each card tuple once (the matrix yields the same tuple for several card counts)."""
    seen = set()
    return [p for p in params if not (p.values[0] in seen or seen.add(p.values[0]))]


ALL = unique(list(matrix_layouts()) + list(generated_layouts()))


def plan_for(cards, extent=EXTENT):
    return plan_peers(cards, extent, MATRIX.va.window_fn(extent), page_size=PAGE)


@pytest.mark.parametrize("cards", ALL)
def test_the_plan_is_the_seeds_step_for_step(cards):
    assert as_steps(plan_for(cards)) == seed_plan(cards)


def test_the_seed_transcription_reads_as_docs_peer_setup_says():
    """The transcription itself, on the layout 0,1,0 worked by hand from docs/peer-setup.md:
    pairs b = 1 (a = 0), b = 2 (a = 1; a = 0 shares card 0); windows k = 8 .. 0."""
    steps = seed_plan((0, 1, 0))
    assert [s[:3] for s in steps[:2]] == [("p2p", 0, 1), ("p2p", 1, 2)]
    assert [s[1:3] for s in steps[2:]] == [(2, 2), (2, 1), (2, 0), (1, 2), (1, 1), (1, 0), (0, 2), (0, 1), (0, 0)]
    assert steps[1][3] == 0xB2000012 and steps[2][3] == 0xB3020002
    assert [s[6] for s in steps[2:]] == [False, True, False, True, False, True, False, True, False]


@pytest.mark.parametrize("cards", ALL)
def test_pairs_join_every_cross_card_couple_once_in_seed_order(cards):
    plan = plan_for(cards)
    n = len(cards)
    expected = [(a, b) for b in range(n) for a in range(b - 1, -1, -1) if cards[a] != cards[b]]
    assert [(p.a, p.b) for p in plan.pairs] == expected
    assert all(p.handle == 0xB2000000 + p.a * 16 + p.b for p in plan.pairs)
    assert len({p.handle for p in plan.pairs}) == len(plan.pairs)
    assert all(p.label == "alloc:p2p" for p in plan.pairs)


@pytest.mark.parametrize("cards", ALL)
def test_windows_cover_every_ordered_pair_k_descending(cards):
    plan = plan_for(cards)
    n = len(cards)
    assert [(w.s, w.t) for w in plan.maps] == [divmod(k, n) for k in range(n * n - 1, -1, -1)]
    assert plan.ops == plan.pairs + plan.maps, "all pairs come before any window"


@pytest.mark.parametrize("cards", ALL)
def test_window_ranges_handles_and_flags(cards):
    plan = plan_for(cards)
    for w in plan.maps:
        assert w.offset == seed_window(w.t)
        assert w.limit == seed_window(w.t) + EXTENT - 1
        assert w.handle == SEED_WINDOW_BASE + w.t + w.s * SEED_SESSION_STRIDE
        flags = dict(w.flags)
        assert flags["DMA_OFFSET_FIXED"] == "TRUE" and flags["PAGE_SIZE"] == "HUGE"
        assert ("P2P_ENABLE" in flags) == (cards[w.s] != cards[w.t]), "the P2P flag exactly across cards"
        assert flags.get("P2P_ENABLE", "NOSLI") == "NOSLI"
        assert w.map_label == ("dma-map-window" if w.same_card else "dma-map-peer")
        assert w.reserve_label == "alloc:window"
    handles = [w.handle for w in plan.maps] + [p.handle for p in plan.pairs]
    handles += [h for s in plan.sessions for h in (s.device, s.subdevice, s.vaspace, s.buffer)]
    assert len(handles) == len(set(handles)), "every handle of the plan is unique"


@pytest.mark.parametrize("cards", ALL)
def test_the_same_window_address_in_every_session(cards):
    plan = plan_for(cards)
    by_peer = {}
    for w in plan.maps:
        by_peer.setdefault(w.t, set()).add(w.offset)
    assert all(len(v) == 1 for v in by_peer.values())
    assert {t: offsets.pop() for t, offsets in by_peer.items()} == {t: seed_window(t) for t in range(len(cards))}
    spans = sorted((seed_window(t), seed_window(t) + EXTENT) for t in range(len(cards)))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_pair_handles_stop_being_unique_past_sixteen_sessions():
    """Why the plan refuses a 17th session: a*16+b encodes (a, b) only while b < 16; from
    b = 16 on it aliases other pairs' codes, and from 18 sessions real pairs collide."""
    assert pair_handle(0, 16) == pair_handle(1, 0)
    codes = {}
    first = None
    for b in range(32):
        for a in range(b):
            other = codes.setdefault(pair_handle(a, b), (a, b))
            if other != (a, b) and first is None:
                first = (other, (a, b))
    assert first == ((1, 2), (0, 18))
    plan_for(tuple(i % 2 for i in range(MAX_SESSIONS)))
    with pytest.raises(PlanError, match="beyond 16 sessions"):
        plan_for(tuple(i % 2 for i in range(MAX_SESSIONS + 1)))


@pytest.mark.parametrize("extent", [0, PAGE - 1, PAGE + 4096, -PAGE])
def test_refuses_an_extent_that_is_not_whole_pages(extent):
    with pytest.raises(PlanError, match="page size"):
        plan_peers((0, 1), extent, linear_windows(0x4000000000, 2 * PAGE), page_size=PAGE)


def test_refuses_overlapping_windows():
    with pytest.raises(PlanError, match="overlap"):
        plan_peers((0, 1, 0), 2 * PAGE, linear_windows(0x4000000000, PAGE), page_size=PAGE)


def test_refuses_a_misaligned_window():
    with pytest.raises(PlanError, match="window\\(0\\)"):
        plan_peers((0,), PAGE, lambda t: 0x4000001000, page_size=PAGE)


def test_refuses_a_card_the_host_lacks():
    with pytest.raises(PlanError, match="needs card 2, but this host has 2 card"):
        plan_peers((0, 1, 2), PAGE, linear_windows(0x4000000000, PAGE), page_size=PAGE, host_cards=2)


def test_refuses_windows_beyond_64_bits_or_the_address_space():
    top = (1 << 64) - 2 * PAGE                      # window(1) would end at 2^64 + PAGE
    with pytest.raises(PlanError, match="window\\(1\\) = .* ends beyond 64-bit addresses"):
        plan_peers((0, 1), 2 * PAGE, linear_windows(top - 2 * PAGE, 2 * PAGE + PAGE), page_size=PAGE)
    plan_peers((0, 1), PAGE, linear_windows(top, PAGE), page_size=PAGE)          # ends exactly at 2^64
    va_end = 0x4000000000 + 2 * PAGE
    plan_peers((0, 1), PAGE, linear_windows(0x4000000000, PAGE), page_size=PAGE, va_end=va_end)
    with pytest.raises(PlanError, match="window\\(1\\) .* ends beyond the address space"):
        plan_peers((0, 1), 2 * PAGE, linear_windows(0x4000000000, 2 * PAGE), page_size=PAGE, va_end=va_end)


def test_refuses_an_empty_layout():
    with pytest.raises(PlanError):
        plan_peers((), PAGE, linear_windows(0x4000000000, PAGE), page_size=PAGE)


@pytest.mark.parametrize("cards", [c for n in (1, 2, 3, 4) for c in itertools.product(range(3), repeat=n)],
                         ids=lambda c: "".join(map(str, c)))
def test_exhaustive_small_layouts_have_consistent_counts(cards):
    plan = plan_for(cards)
    n = len(cards)
    cross = sum(1 for a in range(n) for b in range(n) if cards[a] != cards[b])
    assert len(plan.pairs) == cross // 2
    assert sum(w.peer for w in plan.maps) == cross
    assert len(plan.maps) == n * n


def test_the_plan_is_pure():
    """No state outlives a call: plans of different layouts and extents, made in one order and
    in the reverse order, each equal the seed's and each other's, and a plan is unchanged by
    the calls made after it."""
    import rmpeer.tables.plan as module

    inputs = [((0, 1, 0, 1), EXTENT), ((1, 0, 0), 2 * PAGE), ((0,), PAGE), ((2, 0, 1, 1, 0), EXTENT),
              ((0, 1, 0, 1), 2 * PAGE)]
    globals_before = {k: repr(v) for k, v in vars(module).items() if not k.startswith("__")}
    forward = [plan_for(cards, extent) for cards, extent in inputs]
    kept = copy.deepcopy(forward)
    backward = [plan_for(cards, extent) for cards, extent in reversed(inputs)][::-1]
    assert forward == kept, "a plan changed after later calls"
    assert forward == backward, "a plan depends on the calls made before it"
    for (cards, extent), plan in zip(inputs, forward):
        assert as_steps(plan) == seed_plan(cards, extent)
    assert forward[0] != forward[-1], "the extent is an input, not remembered"
    assert {k: repr(v) for k, v in vars(module).items() if not k.startswith("__")} == globals_before


def test_handle_ranges_never_meet_for_the_largest_layout():
    """rmpeer.tables.handles: every scheme at its widest (16 sessions, 16 cards, a few hundred copy-
    engine objects a session) stays inside its own range."""
    from rmpeer.tables import handles as h

    n, cards, ce_objects = 16, 16, 0x400
    ranges = {"pairs": (h.PAIR_BASE, h.PAIR_BASE + (n - 1) * h.PAIR_STRIDE + n),
              "windows": (h.WINDOW_BASE, h.WINDOW_BASE + (n - 1) * h.SESSION_STRIDE + n),
              "probe devices": (h.PROBE_DEVICE_BASE, h.PROBE_DEVICE_BASE + cards),
              "probe subdevices": (h.PROBE_SUBDEVICE_BASE, h.PROBE_SUBDEVICE_BASE + cards),
              "copy engines": (h.COPY_ENGINE_BASE, h.COPY_ENGINE_BASE + (n - 1) * h.COPY_ENGINE_STRIDE + ce_objects),
              "staging": (h.STAGING_BASE, h.STAGING_BASE + cards * h.STAGING_STRIDE),
              "spare": (h.SPARE_BASE, h.SPARE_BASE + 16)}
    ranges.update({k: (b, b + (n - 1) * h.SESSION_STRIDE + 1) for k, b in h.SESSION_BASES.items()})
    spans = sorted((lo, hi, name) for name, (lo, hi) in ranges.items())
    for (lo1, hi1, a), (lo2, _, b) in zip(spans, spans[1:]):
        assert hi1 <= lo2, f"{a} [{lo1:#x}, {hi1:#x}) meets {b} at {lo2:#x}"


@pytest.mark.parametrize("old,new", [
    ("for a in range(b - 1, -1, -1)", "for a in range(b)"),                       # pairs a ascending
    ("for k in range(n * n - 1, -1, -1):", "for k in range(n * n):"),             # windows k ascending
    ("flags = DIRECT_DMA_FLAGS + (() if same else PEER_FLAGS)", "flags = DIRECT_DMA_FLAGS + PEER_FLAGS"),
    ("return session_handle(session, WINDOW_HANDLE_BASE + peer)", "return session_handle(peer, WINDOW_HANDLE_BASE + session)"),
    ("windows[t], windows[t] + extent - 1", "windows[s], windows[s] + extent - 1"),
])
def test_the_seed_comparison_fails_for_a_broken_plan(old, new):
    """Mutation: rmpeer.tables.plan rebuilt with one rule of the seed broken differs from the seed's
    transcription on a layout that exercises every rule."""
    from source_mutation import mutated

    broken = mutated("rmpeer.tables.plan", old, new)
    cards = (0, 1, 1, 0, 2)
    plan = broken.plan_peers(cards, EXTENT, MATRIX.va.window_fn(EXTENT), page_size=PAGE)
    assert as_steps(plan) != seed_plan(cards)
