"""Copy-engine bandwidth between the cards of a host: every ordered card pair read and
write, same-card copies, both directions at once and all cards at once.

A rig is a layout of two sessions on every card (blocked: 0,0,1,1,...) at the measured
size, built through the same peer setup as every check; each session's own engine copies
between its scratch buffer and the windows. No byte is checked here (the conformance
checks do that); figures are the median of repeated steady copies, the first kept apart.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

from rmpeer.tables.layouts import Layout
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "bw:scratch", "free:bw")

REPEATS = 5              # steady copies per figure, after one first copy
MORE_REPEATS = 5         # added once when the spread of the first ones exceeds STABLE_SPREAD
STABLE_SPREAD = 0.02
CHAIN = 4                # copies queued back to back per engine when engines copy at once
FIRST_SLOT = 2           # the semaphore slot that keeps the first chained copy's start time
GATE_SLOT = 3            # the semaphore slot each engine waits on before copies at once start


@dataclass
class Figure:
    """One measured figure, in the form of bench.json's results."""

    src_card: int
    dst_card: int
    op: str              # read | write | same-card | bidirectional | all
    bytes: int
    gbps: float
    first_gbps: float
    spread: float        # (max - min) / median of the steady copies
    cuda_gbps: float | None = None
    host_gbps: float | None = None   # copies at once: timed by the host, Python included

    def as_dict(self) -> dict:
        d = asdict(self)
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in d.items() if v is not None}


OPS = ("read", "write", "same-card", "bidirectional", "all")
# How each figure is timed, named in the manifest (tools/manifest.py) so that `rmpeer diff`
# never compares one figure measured two ways: "own-clock", one engine's copy timed by its
# card's own timestamps; "gated", the engines armed behind a gate and opened together, each
# span on its own card's clock (Rig.together). A recording made before the gate (its header's
# run has no `gated`) timed the engines at once "ungated": from the first start on any card to
# the last end on any card (two cards' clocks, about a millisecond apart).
METHODS = {"read": "own-clock", "write": "own-clock", "same-card": "own-clock", "bidirectional": "gated",
           "all": "gated"}


def tier_pairs(cards: int, tier: str) -> frozenset | None:
    """The card pairs a tier measures between cards (docs/tiers.md), None for every pair. The
    quick tier, on more than 2 cards, measures each card with its two neighbours of a ring
    (0-1, 1-2, ..., n-1 - 0): 2n ordered pairs where every pair would be n(n-1), 16 of 56 on
    8 cards, so that a prolog's run stays inside its budget. Every card is still measured
    reading and writing both ways, within itself, and all at once; the full tier measures
    every pair."""
    if tier != "quick" or cards <= 2:
        return None
    return frozenset(frozenset((a, (a + 1) % cards)) for a in range(cards))


def _measured(a: int, b: int, pairs) -> bool:
    return pairs is None or frozenset((a, b)) in pairs


def figures_of(cards: int, ops=OPS, pairs=None) -> list:
    """(src_card, dst_card, op) of every figure `measure` makes on a host of `cards` cards
    (`pairs`: tier_pairs, None for every pair)."""
    out = [(a, b, op) for a in range(cards) for b in range(cards) if a != b and _measured(a, b, pairs)
           for op in ("read", "write") if op in ops]
    out += [(a, a, "same-card") for a in range(cards)] if "same-card" in ops else []
    out += ([(a, b, "bidirectional") for a in range(cards) for b in range(cards) if a < b and _measured(a, b, pairs)]
            if "bidirectional" in ops else [])
    out += [(-1, -1, "all")] if cards > 2 and "all" in ops else []
    return out


def rig_layout(cards: int) -> Layout:
    return Layout("bandwidth", tuple(c for c in range(cards) for _ in range(2)),
                  "two sessions per card, for bandwidth between and within cards")


class Rig:
    """Engines and scratch buffers on a bandwidth layout at `size` bytes. `layout(layout,
    extent)` builds the layout's peer setup and returns (setup, release); the run provides
    it (the rig needs no more of the run than that, the shim and the number of cards)."""

    def __init__(self, layout, shim, cards: int, size: int):
        from rmpeer.traffic.peer import build_engine, channel_layout

        self.size = size
        setup, self._release = layout(rig_layout(cards), size)
        self.setup = setup
        shim.segment(f"bandwidth:rig:{size >> 20}MiB")
        self.channel = channel_layout()
        self.engines, self.scratch = [], []
        for session in setup.sessions:
            engine = build_engine(setup, session, self.channel)
            mem = engine.mem
            self.engines.append(engine)
            self.scratch.append(mem.map_gpu(mem.video(size, label=f"bw:s{session.index}:scratch"), sysmem=False,
                                            label=f"bw:s{session.index}:scratch").gpu_va)
        self.cards = setup.plan.cards
        self.last_host_gbps = 0.0
        # Copies at once start behind a gate that opens once every engine is armed (so the
        # figure is the engines', not Python's launch skew). A replay does what its
        # recording did: recordings made before the gate have no `gated` in their header.
        replay = shim.mode == "replay"
        self.gated = shim.header.get("run", {}).get("gated", False) if replay else True
        self.gate_value = 0

    def session_on(self, card: int, k: int = 0) -> int:
        return [s for s, c in enumerate(self.cards) if c == card][k]

    def window(self, t: int) -> int:
        return self.setup.plan.window(t)

    def _timeout(self, n: int) -> float:
        return self.channel["timeout_s"] + n / 50e9      # 50 GB/s: far below any healthy engine

    def one(self, s: int, src: int, dst: int, n: int) -> float:
        """GB/s of one copy by session s's engine, timed by the GPU's own timestamps."""
        return self.engines[s].copy(src, dst, n, label=f"bw:s{s}", timeout_s=self._timeout(n)).gbps

    def together(self, jobs: list, n: int) -> float:
        """Total GB/s of several engines copying at once. Each engine gets CHAIN copies of n
        bytes queued back to back, so that the few microseconds Python needs to reach the
        next engine are a small share of the time. Gated (every engine armed, then the gates
        opened together): each engine's span is read on its own card's timer, first start to
        last end, and the longest one is the time of the whole, since all started at once.
        Two cards' timers are not one clock: after a CUDA context had run on the host they
        were measured apart by about a millisecond (docs/evidence/h200x2-20261130T1523Z), so
        no span mixes two cards' timestamps. (Recordings made before the gate keep the old
        reading: first start on any card to last end on any card.) The host-timed figure,
        Python included, is kept as host_gbps."""
        start = time.perf_counter_ns()
        last = {}
        if self.gated:
            self.gate_value = self.gate_value % 0xFFFFFFFF + 1
        for i in range(CHAIN):
            for s, src, dst in jobs:   # the first copy's start goes to slot FIRST_SLOT: kept
                gate = (GATE_SLOT, self.gate_value) if self.gated and i == 0 else None
                last[s] = self.engines[s].start_copy(src, dst, n, slots=(FIRST_SLOT, 1) if i == 0 else (0, 1),
                                                     gate=gate)
        if self.gated:   # every engine is armed: open the gates back to back (two uncached stores)
            for s in last:
                self.engines[s].open_gate(GATE_SLOT, self.gate_value)
        total = n * CHAIN * len(jobs)
        done = [self.engines[s].wait_copy(p, n, label=f"bw:s{s}:together", timeout_s=self._timeout(total))
                for s, p in last.items()]
        self.last_host_gbps = total / (time.perf_counter_ns() - start)
        ends = dict(zip(last, (r.gpu_end for r in done)))
        starts = {s: self.engines[s].timestamp(FIRST_SLOT) for s in last}
        if self.gated:
            span = max(ends[s] - starts[s] for s in last)     # each on its own card's clock
        else:
            span = max(ends.values()) - min(starts.values())
        return total / span if span > 0 else self.last_host_gbps

    def close(self) -> None:
        for engine in self.engines:
            engine.mem.release_cpu_maps()
        self._release()


def steady(measure) -> tuple[float, float, float]:
    """(first, median of steady repeats, spread): repeats until the median is stable."""
    first = measure()
    runs = [measure() for _ in range(REPEATS)]
    median = statistics.median(runs)
    if (max(runs) - min(runs)) / median > STABLE_SPREAD:
        runs += [measure() for _ in range(MORE_REPEATS)]
        median = statistics.median(runs)
    return first, median, (max(runs) - min(runs)) / median


def measure(rig: Rig, n: int, ops=OPS, pairs=None) -> list[Figure]:
    """Every figure of `ops` at n bytes (n <= rig.size), between the cards of `pairs`
    (tier_pairs; None: every pair)."""
    cards = sorted(set(rig.cards))
    figures = []

    def add(src, dst, op, fn):
        first, median, spread = steady(fn)
        figure = Figure(src, dst, op, n, median, first, spread)
        if op in ("bidirectional", "all"):
            figure.host_gbps = rig.last_host_gbps
        figures.append(figure)

    for a in cards:
        s = rig.session_on(a)
        for b in cards:
            t = rig.session_on(b)
            if a == b:
                if "same-card" in ops:   # s reads its neighbour's window on the same card
                    u = rig.session_on(a, 1)
                    add(a, a, "same-card", lambda: rig.one(s, rig.window(u), rig.scratch[s], n))
                continue
            if not _measured(a, b, pairs):
                continue
            if "read" in ops:            # a's engine reads b's buffer: data flows b -> a
                add(b, a, "read", lambda: rig.one(s, rig.window(t), rig.scratch[s], n))
            if "write" in ops:           # a's engine writes into b's buffer: a -> b
                add(a, b, "write", lambda: rig.one(s, rig.scratch[s], rig.window(t), n))
    if len(cards) > 1 and "bidirectional" in ops:
        for a in cards:            # both cards' engines push into each other's buffer at once
            for b in cards:
                if a < b and _measured(a, b, pairs):
                    s, t = rig.session_on(a), rig.session_on(b)
                    add(a, b, "bidirectional", lambda: rig.together(
                        [(s, rig.scratch[s], rig.window(t)), (t, rig.scratch[t], rig.window(s))], n))
    if len(cards) > 2 and "all" in ops:   # every card pushes into the next one, all at once
        jobs = [(rig.session_on(a), rig.scratch[rig.session_on(a)],
                 rig.window(rig.session_on(cards[(i + 1) % len(cards)]))) for i, a in enumerate(cards)]
        add(-1, -1, "all", lambda: rig.together(jobs, n))
    return figures
