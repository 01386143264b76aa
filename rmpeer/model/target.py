"""What a run checks, as frozen values: a target (this host's GPUs, or a recording of a real
host) and its cases (target x layout x extent). rmpeer.run.targets finds them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    kind: str              # live | replay
    label: str             # e.g. h200x2, or replay:h200x2
    cards: int
    path: str | None = None  # the transcript, for a replay

    @property
    def is_replay(self) -> bool:
        return self.kind == "replay"


@dataclass(frozen=True)
class Case:
    target: Target
    layout: object         # tables.layouts.Layout
    extent: int

    @property
    def id(self) -> str:
        return f"{self.target.label}/{self.layout.name}"
