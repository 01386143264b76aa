"""The seed's peer plan (PlanHostPeers) as a pure function: no ioctl, no ABI bytes
(docs/peer-setup.md explains it).

From a layout (the card of each session), the buffer extent and the window
function, it yields the ordered operations the seed performs: every
NV50_P2P pair, then every session's window of every session, with handles,
reservation ranges and the NVOS46 flags by name. What it cannot express is
refused here, before anything reaches RM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from rmpeer.errors import PlanError

# Handle schemes of the seed. Pair handles are collision-free only while b < 16.
from rmpeer.tables.handles import PAIR_BASE as PAIR_HANDLE_BASE
from rmpeer.tables.handles import PAIR_STRIDE as PAIR_HANDLE_STRIDE
from rmpeer.tables.handles import SESSION_BASES as SESSION_HANDLE_BASES
from rmpeer.tables.handles import SESSION_STRIDE as SESSION_HANDLE_STRIDE
from rmpeer.tables.handles import WINDOW_BASE as WINDOW_HANDLE_BASE
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "alloc:p2p", "alloc:window", "dma-map-window", "dma-map-peer")

MAX_SESSIONS = PAIR_HANDLE_STRIDE
# GPU virtual addresses (NVOS46 dmaOffset, the reservation's offset and limit) are 64-bit.
VA_LIMIT = 1 << 64

# NVOS46 flags by field name: the seed's direct-DMA flags, plus the peer flag.
DIRECT_DMA_FLAGS = (("DMA_OFFSET_FIXED", "TRUE"), ("PAGE_SIZE", "HUGE"))
PEER_FLAGS = (("P2P_ENABLE", "NOSLI"),)

SETUP_LABELS = {"pair": "alloc:p2p", "reserve": "alloc:window",
                "map_same": "dma-map-window", "map_peer": "dma-map-peer"}


def session_handle(session: int, base: int) -> int:
    return base + session * SESSION_HANDLE_STRIDE


def pair_handle(a: int, b: int) -> int:
    return PAIR_HANDLE_BASE + a * PAIR_HANDLE_STRIDE + b


def window_handle(session: int, peer: int) -> int:
    return session_handle(session, WINDOW_HANDLE_BASE + peer)


@dataclass(frozen=True)
class SessionPlan:
    index: int
    card: int
    device: int
    subdevice: int
    vaspace: int
    buffer: int


@dataclass(frozen=True)
class PairOp:
    a: int
    b: int
    handle: int
    label: str = SETUP_LABELS["pair"]


@dataclass(frozen=True)
class WindowOp:
    s: int            # the session whose address space holds the window
    t: int            # the session whose buffer it shows
    handle: int       # the reservation (NV01_MEMORY_VIRTUAL) in s's space
    offset: int       # window(t)
    limit: int        # window(t) + extent - 1
    same_card: bool
    flags: tuple      # NVOS46 flag fields by name

    @property
    def peer(self) -> bool:
        return not self.same_card

    @property
    def map_label(self) -> str:
        return SETUP_LABELS["map_same" if self.same_card else "map_peer"]

    @property
    def reserve_label(self) -> str:
        return SETUP_LABELS["reserve"]


@dataclass(frozen=True)
class PeerPlan:
    cards: tuple
    extent: int
    windows: tuple             # window(t) for each session t
    sessions: tuple            # SessionPlan per session
    pairs: tuple               # PairOp, in the seed's order
    maps: tuple                # WindowOp, in the seed's order

    @property
    def ops(self) -> tuple:
        """Everything in order: all pairs, then all windows."""
        return self.pairs + self.maps

    def window(self, t: int) -> int:
        return self.windows[t]


def linear_windows(base: int, stride: int) -> Callable[[int], int]:
    """window(t) = base + t * stride."""
    return lambda t: base + t * stride


def plan_peers(cards: Sequence[int], extent: int, window: Callable[[int], int], *,
               page_size: int, host_cards: int | None = None, va_end: int = VA_LIMIT) -> PeerPlan:
    """va_end: where the sessions' address space ends (layouts.yaml va: vaspace_base +
    vaspace_size); every window must end at or below it, and never beyond 64 bits."""
    cards = tuple(int(c) for c in cards)
    n = len(cards)
    if n == 0:
        raise PlanError("a layout needs at least one session")
    if n > MAX_SESSIONS:
        raise PlanError(f"{n} sessions: the seed's pair handles (0xB2000000 + a*16 + b) "
                        f"stop being unique beyond {MAX_SESSIONS} sessions")
    shown = ",".join(map(str, cards))
    if any(c < 0 for c in cards):
        raise PlanError(f"layout {shown} names a negative card")
    if host_cards is not None and max(cards) >= host_cards:
        raise PlanError(f"layout {shown} needs card {max(cards)}, but this host has "
                        f"{host_cards} card(s) (0..{host_cards - 1})")
    if page_size <= 0 or extent <= 0 or extent % page_size:
        raise PlanError(f"extent {extent:#x} is not a positive multiple of the page size {page_size:#x}")
    windows = tuple(int(window(t)) for t in range(n))
    _check_windows(windows, extent, page_size, min(va_end, VA_LIMIT))

    sessions = tuple(SessionPlan(s, cards[s], **{k: session_handle(s, base)
                                                 for k, base in SESSION_HANDLE_BASES.items()})
                     for s in range(n))
    pairs = tuple(PairOp(a, b, pair_handle(a, b)) for a, b in p2p_pairs(cards))
    maps = []
    for k in range(n * n - 1, -1, -1):
        s, t = divmod(k, n)
        same = cards[s] == cards[t]
        flags = DIRECT_DMA_FLAGS + (() if same else PEER_FLAGS)
        maps.append(WindowOp(s, t, window_handle(s, t), windows[t], windows[t] + extent - 1, same, flags))
    return PeerPlan(cards, extent, windows, sessions, pairs, tuple(maps))


def p2p_pairs(cards) -> list:
    """The sessions (a, b) that get an NV50_P2P, in the seed's order: b ascending, a from
    b-1 down, on different cards."""
    n = len(cards)
    return [(a, b) for b in range(n) for a in range(b - 1, -1, -1) if cards[a] != cards[b]]


def _check_windows(windows, extent, page_size, va_end):
    for t, w in enumerate(windows):
        if w <= 0 or w % page_size:
            raise PlanError(f"window({t}) = {w:#x} is not a positive multiple of the page size {page_size:#x}")
        if w + extent > va_end:
            space = "64-bit addresses" if va_end == VA_LIMIT else "the address space"
            raise PlanError(f"window({t}) = [{w:#x}, {w + extent:#x}) ends beyond {space} (end {va_end:#x}); "
                            f"use a smaller extent or fewer sessions")
    spans = sorted((w, w + extent, t) for t, w in enumerate(windows))
    for (lo1, hi1, t1), (lo2, _, t2) in zip(spans, spans[1:]):
        if lo2 < hi1:
            raise PlanError(f"windows of sessions {t1} and {t2} overlap: [{lo1:#x}, {hi1:#x}) "
                            f"and [{lo2:#x}, ...) with extent {extent:#x}")
