"""Bytes moved through the windows by each session's own copy engine, and checked.

Per session: a copy engine, a vidmem scratch of three extents (landing | write
source | pristine copy of its own pattern) and two cached system-memory staging
buffers (upload, read-back). A read of t by s lands in s's memory and is copied
to s's read-back; a write by s is checked in t's buffer by t's own engine.
Every byte is compared on the host; edges and a 2 MiB boundary explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rmpeer.traffic import bytecheck
from rmpeer.traffic import patterns
from rmpeer.tables.channel import load_channel
from rmpeer.ce.classes import pick_generation
from rmpeer.ce.engine import CopyEngine
from rmpeer.tables.lce import pick_lce
from rmpeer.ce.memory import Memory, alloc_system, map_system_to_cpu
from rmpeer.tables.handles import STAGING_BASE, STAGING_STRIDE
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "staging:upload", "staging:readback", "close:staging", "traffic:scratch",
                "traffic:upload", "traffic:readback", "free:traffic")

LANDING, SOURCE, PRISTINE = 0, 1, 2   # thirds of a session's scratch
BANDWIDTH_REPEATS = 1                 # steady-state copies after the first, per transfer


def channel_layout(path=None) -> dict:
    """matrices/channel.yaml's channel, as its loader checked it."""
    return load_channel(path)


def build_engine(setup, session, channel: dict) -> CopyEngine:
    """A session's own copy engine, created (the one builder of traffic and bandwidth)."""
    rm = setup.rm
    gen = pick_generation(session.card.classes, rm.abi)
    return CopyEngine(rm, session, setup.host, setup.va, gen, channel, pick_lce(session.card)).create()


@dataclass
class Check:
    """One transfer's verdict: every byte, the explicit spots, and the bandwidth."""

    op: str                   # read | write
    s: int
    t: int
    ok: bool
    mismatch: dict | None = None
    spots: dict = field(default_factory=dict)      # name -> bool
    first_gbps: float = 0.0                        # the first copy through this mapping
    steady_gbps: float = 0.0                       # median of the repeats
    length: int = 0


class Staging:
    """A card's two buffers of cached system memory (upload, read-back), allocated once per
    run under the card's discovery device and mapped into each session's VA space: pinning
    64 MiB of host memory costs RM tens of milliseconds, so no layout pays it again."""

    def __init__(self, rm, host, card: int, extent: int):
        device = host.probe_handles(card)[0]
        base = STAGING_BASE + card * STAGING_STRIDE
        self.extent = extent
        self.upload, self.readback = (
            map_system_to_cpu(rm, device, alloc_system(rm, device, base + k, extent, cached=True,
                                                       label=f"staging:card{card}:{name}"),
                              label=f"staging:card{card}:{name}:cpu")
            for k, name in ((1, "upload"), (2, "readback")))

    def close(self, shim) -> None:
        for mem in (self.upload, self.readback):
            shim.munmap(mem.cpu)
            shim.close(mem.fd, label=f"close:{mem.cpu.label}")


def create_staging(rm, host, extent: int) -> dict:
    return {card.index: Staging(rm, host, card.index, extent) for card in host.cards}


class SessionTraffic:
    def __init__(self, engine: CopyEngine, extent: int, staging: Staging):
        self.engine, self.extent = engine, extent
        mem, s = engine.mem, engine.session.index
        self.scratch = mem.map_gpu(mem.video(3 * extent, label=f"traffic:s{s}:scratch"), sysmem=False,
                                   label=f"traffic:s{s}:scratch")
        self.upload = mem.map_gpu(Memory(staging.upload.handle, extent, cpu=staging.upload.cpu), sysmem=True,
                                  label=f"traffic:s{s}:upload")
        self.readback = mem.map_gpu(Memory(staging.readback.handle, extent, cpu=staging.readback.cpu),
                                    sysmem=True, label=f"traffic:s{s}:readback")

    def part(self, which: int) -> int:
        return self.scratch.gpu_va + which * self.extent


class PeerTraffic:
    """Copy engines for every session of a PeerSetup, and the read and write checks."""

    def __init__(self, setup, staging: dict, *, pattern_seed: int, channel: dict | None = None):
        self.setup, self.staging, self.pattern_seed = setup, staging, pattern_seed
        self.channel = channel or channel_layout()
        self.extent = setup.plan.extent
        self.cards = setup.plan.cards
        self.sessions: list[SessionTraffic] = []

    def create(self) -> "PeerTraffic":
        for session in self.setup.sessions:
            engine = build_engine(self.setup, session, self.channel)
            self.sessions.append(SessionTraffic(engine, self.extent, self.staging[session.card.index]))
        for st in self.sessions:
            s = st.engine.session.index
            self._stage(st, self.expected(patterns.KIND_BUFFER, s), st.part(PRISTINE), f"fill:s{s}:pristine")
            self._copy(st, st.part(PRISTINE), self.setup.plan.window(s), f"fill:s{s}:buffer")
            self._stage(st, self.expected(patterns.KIND_WRITE, s), st.part(SOURCE), f"fill:s{s}:source")
        return self

    def expected(self, kind: int, owner: int):
        return patterns.cached(self.pattern_seed, kind, owner, self.extent)

    def _stage(self, st, words, dst_va, label):
        st.upload.cpu.fill(0, words)
        self._copy(st, st.upload.gpu_va, dst_va, label)

    def _copy(self, st, src, dst, label):
        return st.engine.copy(src, dst, self.extent, label=label, timeout_s=self.channel["timeout_s"])

    def _timed(self, st, src, dst, label):
        """The first copy, then BANDWIDTH_REPEATS more: (first GB/s, median steady GB/s)."""
        first = self._copy(st, src, dst, label).gbps
        steady = sorted(self._copy(st, src, dst, f"{label}:repeat").gbps for _ in range(BANDWIDTH_REPEATS))
        return first, steady[len(steady) // 2]

    def _verify(self, st, kind, owner, op, s, t, first, steady) -> Check:
        """Every byte of the read-back against the pattern it must hold; the explicit spots
        read from the same bytes."""
        want = self.expected(kind, owner)
        have = st.readback.cpu.view(0, self.extent)
        mismatch = bytecheck.compare(have, want)
        check = Check(op, s, t, mismatch is None, first_gbps=first, steady_gbps=steady, length=self.extent)
        if mismatch is not None:
            found = patterns.Word.decode(int.from_bytes(bytes(mismatch.actual[:8]).ljust(8, b"\0"), "little"))
            cause, explanation = patterns.diagnose(mismatch.actual, mismatch.offset, pattern_seed=self.pattern_seed,
                                                   kind=kind, owner=owner, cards=self.cards)
            check.mismatch = {"offset": mismatch.offset, "differing_bytes": mismatch.differing,
                              "found": mismatch.actual[:8].hex(), "expected_owner": owner,
                              "found_owner": found.owner if found.kind in patterns.KIND_NAMES else None,
                              "explanation": explanation, "cause": cause}
        raw = want.view("u1")
        for name, at in self.spots().items():
            check.spots[name] = bytes(have[at:at + 16]) == bytes(raw[at:at + 16])
        return check

    def spots(self) -> dict:
        """The window's first and last bytes and a span across the first huge-page (2 MiB) boundary."""
        page = self.setup.va.page_size
        spots = {"first-bytes": 0, "last-bytes": self.extent - 16}
        if self.extent > page:
            spots["across-2MiB-boundary"] = page - 8
        return spots

    def read(self, s: int, t: int, *, via: int | None = None) -> Check:
        """s's engine reads t's buffer through window(t) (or the address `via`) into s's own memory."""
        st = self.sessions[s]
        src = self.setup.plan.window(t) if via is None else via
        first, steady = self._timed(st, src, st.part(LANDING), f"read:s{s}<-t{t}")
        self._copy(st, st.part(LANDING), st.readback.gpu_va, f"read:s{s}<-t{t}:readback")
        return self._verify(st, patterns.KIND_BUFFER, t, "read", s, t, first, steady)

    def write(self, s: int, t: int) -> Check:
        """s's engine writes its source into t's buffer through window(t); t's engine checks it."""
        st, tt = self.sessions[s], self.sessions[t]
        first, steady = self._timed(st, st.part(SOURCE), self.setup.plan.window(t), f"write:s{s}->t{t}")
        self._copy(tt, self.setup.plan.window(t), tt.readback.gpu_va, f"write:s{s}->t{t}:readback")
        check = self._verify(tt, patterns.KIND_WRITE, s, "write", s, t, first, steady)
        self._copy(tt, tt.part(PRISTINE), self.setup.plan.window(t), f"write:s{s}->t{t}:restore")
        return check

    def state(self) -> dict:
        """The copy engines' counters: what a replay restores to serve one test alone."""
        return {str(st.engine.session.index): st.engine.state() for st in self.sessions}

    def restore(self, state: dict) -> None:
        for st in self.sessions:
            st.engine.restore(state[str(st.engine.session.index)])

    def close(self) -> None:
        for st in self.sessions:
            st.engine.mem.release_cpu_maps()
