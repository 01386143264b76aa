"""The spine of every run: a target opened once, each layout's peer setup built once and
shared by every check of it, traffic through its windows, everything torn down.

The pytest plugin, `rmpeer certify` (through the plugin) and `rmpeer bench` all use these
two classes; nothing else builds RM objects of a layout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .layouts import LayoutMatrix
from .targets import Case, Target


@dataclass
class RunOptions:
    """What a run was asked for (command-line options of certify, bench or pytest)."""

    layouts: list = field(default_factory=list)
    topology: str | None = None
    abi: str | None = None
    extent: int | None = None
    record: str | None = None
    pattern_seed: int = 0
    boost: bool = True


class LayoutRun:
    """One layout's sessions, pairs and windows on the target (the setup runs at once), and
    its traffic, created on first use."""

    def __init__(self, host: "HostRun", case: Case):
        from .rm.peers import PeerSetup

        self.host, self.case = host, case
        runtime = host.runtime
        self.plan = host.layouts.plan(case.layout.cards, case.extent, host_cards=len(runtime.host.cards))
        runtime.shim.segment(f"setup:{case.layout.name}")
        self.setup = PeerSetup(runtime.rm, runtime.host, self.plan, host.layouts.va)
        self._traffic = None
        self.refused_frees: list = []
        try:
            self.setup.create_sessions()
            self.setup.run()
        except BaseException:
            _quietly(self.setup.teardown)   # nothing of a failed setup stays allocated
            raise

    @property
    def traffic(self):
        """Each session's copy engine, its buffer seeded with its own pattern."""
        if self._traffic is None:
            from .traffic import PeerTraffic

            self.host.runtime.shim.segment(f"traffic:{self.case.layout.name}")
            traffic = PeerTraffic(self.setup, self.host.staging_buffers(), pattern_seed=self.host.pattern_seed)
            try:
                traffic.create()
            except BaseException:
                _quietly(traffic.close)   # its RM objects go with the setup's teardown
                raise
            self._traffic = traffic
        return self._traffic

    def close(self) -> list:
        """Tear the layout down, newest object first; the frees RM refused."""
        shim = self.host.runtime.shim
        if self._traffic is not None:   # its own stretch: a replay of a run without traffic skips it
            shim.segment(f"traffic-close:{self.case.layout.name}")
            self._traffic.close()
        shim.segment(f"teardown:{self.case.layout.name}")
        self.refused_frees = self.setup.teardown()
        return self.refused_frees


class HostRun:
    """A target opened for a whole run: its RM client and host facts, the cards' staging
    buffers, and at most one layout built at a time."""

    def __init__(self, target: Target, options: RunOptions, layouts: LayoutMatrix | None = None, *,
                 with_staging: bool = True):
        self.target, self.options, self.with_staging = target, options, with_staging
        self.layouts = layouts or LayoutMatrix()
        self.runtime = None
        self.staging: dict = {}
        self.current: LayoutRun | None = None
        self.closed_layouts: dict = {}    # layout name -> refused frees at its teardown
        self.proc_gpus: list = []         # the kernel module's own account of the cards
        self.fitness = None
        self.open_error = None            # why open() failed, for every later test of the target
        self.shim = self._shim()

    @property
    def pattern_seed(self) -> int:
        if self.target.is_replay:
            return self.shim.header["run"]["pattern_seed"]
        return self.options.pattern_seed

    @property
    def boost(self) -> bool:
        """Raise the clocks with RM's boost (a replay does what its recording did)."""
        if self.target.is_replay:
            return self.shim.header["run"].get("boost", False)
        return self.options.boost

    @property
    def extent(self) -> int:
        """The staging buffers' size: the largest extent of the run's layouts."""
        if self.target.is_replay:
            return self.shim.header["run"]["extent"]
        return max([c.extent for c in self.cases] + [self.options.extent or self.layouts.default_extent])

    @property
    def cases(self) -> list:
        """The layouts this run checks on a live target (planned once: the plan is pure)."""
        if not hasattr(self, "_cases"):
            from .targets import cases_for

            self._cases, _ = cases_for(self.target, self.options.layouts, self.options.extent, self.layouts)
        return self._cases

    def _shim(self):
        if self.target.is_replay:
            from .shim.replay import ReplayShim

            return ReplayShim(self.target.path)
        from .shim.live import LiveShim

        return LiveShim(self._transcript() if self.options.record else None)

    def _transcript(self):
        from .shim.records import TranscriptWriter, host_header, read_proc_version_text
        cases = self.cases
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        o = self.options
        return TranscriptWriter(Path(o.record) / f"{self.target.label}-{stamp}.jsonl.gz", host_header(
            label=self.target.label, cards=self.target.cards, driver_text=read_proc_version_text(),
            run={"pattern_seed": o.pattern_seed, "extent": self.extent, "forced_abi": o.abi, "boost": o.boost,
                 "gated": True,   # copies at once start behind a gate (rmpeer.bandwidth.Rig)
                 "layouts": [[c.layout.name, list(c.layout.cards), c.extent] for c in cases]}))

    def open(self) -> "HostRun":
        from .runtime import Runtime

        shim = self.shim
        shim.segment("runtime:open")
        forced = shim.header["run"].get("forced_abi") if self.target.is_replay else self.options.abi
        self.runtime = Runtime(shim, forced_abi=forced)
        try:
            self.runtime.open()
            from .rm.host import read_proc_gpus

            self.proc_gpus = shim.observe("host:proc-gpus", read_proc_gpus)
            from .fitness import Fitness

            self.fitness = Fitness(self).start()
            if self.with_staging:
                # each card's staging buffers, made once for the whole run and before any layout,
                # so no layout's teardown frees them (see traffic.Staging)
                from .traffic import create_staging

                self.staging = create_staging(self.runtime.rm, self.runtime.host, self.extent)
        except BaseException:
            _quietly(self.runtime.close)   # nothing stays allocated; freeing the client ends a boost
            self.runtime = None
            raise
        return self

    def staging_buffers(self) -> dict:
        if not self.staging:
            raise RuntimeError("this HostRun was opened without staging buffers (with_staging=False)")
        return self.staging

    @property
    def topology(self):
        """The topology entry this host must be (--expect-topology), or the one it matches, or None."""
        if not hasattr(self, "_topology"):
            from .topology import TopologyMatrix

            matrix = TopologyMatrix()
            name = self.options.topology
            self._topology = matrix.get(name) if name else matrix.match(self.facts)
        return self._topology

    @property
    def facts(self):
        return self.runtime.facts

    def layout(self, case: Case) -> LayoutRun:
        """The case's layout, built once: the layout built before it is torn down first."""
        if self.current is not None and self.current.case == case:
            return self.current
        self.release_layout()
        self.current = LayoutRun(self, case)
        return self.current

    def release_layout(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            self.closed_layouts[current.case.layout.name] = current.close()

    def fresh_setup(self, case: Case, tag: str):
        """A PeerSetup of the case's layout that the caller drives step by step, with no
        other layout alive (a check that needs no pair to exist, or counts memory)."""
        from .rm.peers import PeerSetup

        self.release_layout()
        rt = self.runtime
        plan = self.layouts.plan(case.layout.cards, case.extent, host_cards=len(rt.host.cards))
        rt.shim.segment(f"fresh:{tag}:{case.layout.name}")
        return PeerSetup(rt.rm, rt.host, plan, self.layouts.va)

    def close(self) -> None:
        """Closes everything, each part even when one before it failed; the facts stay."""
        if self.runtime is None:
            return
        try:
            self.release_layout()
        finally:
            self.shim.segment("runtime:close")
            try:
                if self.fitness is not None:
                    self.fitness.close()
                    self.shim.note("fitness", summary=self.fitness.summary())   # for rmpeer diff
            finally:
                for staging in self.staging.values():
                    staging.close(self.shim)
                self.staging = {}
                self.runtime.close()   # frees the client: every object left, and any boost
                self.shim.finish()


def _quietly(clean_up) -> None:
    """Clean up after a failure; a second failure on the way must not hide the first one,
    which is the one to report (a replay that diverged diverges again while freeing)."""
    try:
        clean_up()
    except Exception:
        pass
