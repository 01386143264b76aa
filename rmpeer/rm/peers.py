"""Executes a PeerPlan through RM: sessions, then every pair, then every window."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rmpeer.rm.objects import Pair, Session, Window


@dataclass
class SetupReport:
    pairs: list = field(default_factory=list)      # StepResult per PairOp
    reserves: list = field(default_factory=list)   # StepResult per WindowOp
    maps: list = field(default_factory=list)       # StepResult per WindowOp
    setup_ns: int = 0

    @property
    def steps(self) -> list:
        return self.pairs + self.reserves + self.maps

    def pair(self, a: int, b: int):
        return next(p for p in self.pairs if (p.s, p.t) == (a, b))

    def reserve(self, s: int, t: int):
        return next(r for r in self.reserves if (r.s, r.t) == (s, t))

    def map(self, s: int, t: int):
        return next((m for m in self.maps if (m.s, m.t) == (s, t)), None)


class PeerSetup:
    """The sessions of one layout on this host, joined and windowed as the plan says."""

    def __init__(self, rm, host, plan, va):
        self.rm, self.host, self.plan, self.va = rm, host, plan, va
        self.mark = len(rm.objects)
        self.sessions = [Session(rm, sp, host.cards[sp.card], va, plan.extent) for sp in plan.sessions]
        self.report = SetupReport()

    def create_sessions(self) -> None:
        for s in self.sessions:
            s.create()

    def run(self) -> SetupReport:
        """Every step is attempted and kept, so a suite can assert each status; a map is
        attempted only where its reservation exists."""
        start = time.perf_counter_ns()
        for op in self.plan.pairs:
            self.report.pairs.append(Pair(self.rm, op, self.sessions).create())
        for op in self.plan.maps:
            window = Window(self.rm, op, self.sessions)
            reserved = window.reserve()
            self.report.reserves.append(reserved)
            if reserved.status == 0:
                self.report.maps.append(window.map())
        self.report.setup_ns = time.perf_counter_ns() - start
        return self.report

    def allocated(self) -> list:
        """(parent, handle, label) of every object of this setup RM still holds (after the
        teardown: what it failed to free)."""
        return self.rm.objects[self.mark:]

    def teardown(self) -> list:
        """Free everything this setup allocated, newest first; the refused frees."""
        return self.rm.free_since(self.mark)
