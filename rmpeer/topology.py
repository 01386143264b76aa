"""matrices/topologies.yaml: known hosts, and whether the live host matches one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .abi.matrix import MATRICES, load_yaml, require
from .errors import ConfigError, MatrixError

STEPS = ("pair", "reserve", "map_same", "map_peer")


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    cards: int
    model: str
    links: dict = field(default_factory=dict)
    p2p: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)

    def expected(self, step: str) -> str:
        return self.expect.get(step, "NV_OK")

    def mismatches(self, host) -> list[str]:
        """Why `host` (HostFacts) is not this topology; empty when it is."""
        out = []
        if len(host.cards) != self.cards:
            out.append(f"{len(host.cards)} card(s), expected {self.cards}")
        if self.model != "any":
            for c in host.cards:
                if c.name != self.model:
                    out.append(f"card {c.index} is {c.name!r}, expected {self.model!r}")
        for (a, b), caps in sorted(host.p2p.items()):
            if a == b:
                continue
            for cap, want in self.p2p.items():
                have = cap in caps.get("caps", [])
                if have != bool(want):
                    out.append(f"cards {a}->{b}: P2P {cap} is {have}, expected {bool(want)}")
        return out


class TopologyMatrix:
    def __init__(self, path: Path | None = None, nvstatus_names=None):
        self.path = Path(path or MATRICES / "topologies.yaml")
        data = load_yaml(self.path)
        entries = require(self.path, "file", data, "topologies", dict)
        self.topologies = {name: self._check(name, spec, nvstatus_names) for name, spec in entries.items()}

    def _check(self, name, spec, nvstatus_names):
        where = f"topology {name}"
        cards = require(self.path, where, spec, "cards", int)
        if cards < 1:
            raise MatrixError(self.path, f"{where}.cards", f"must be at least 1, found {cards}")
        model = require(self.path, where, spec, "model", str)
        expect = require(self.path, where, spec, "expect", dict, optional=True) or {}
        for step in expect:
            status = require(self.path, f"{where}.expect", expect, step, str)
            if step not in STEPS:
                raise MatrixError(self.path, f"{where}.expect", f"unknown step {step!r} (known: {', '.join(STEPS)})")
            if nvstatus_names is not None and status not in nvstatus_names:
                raise MatrixError(self.path, f"{where}.expect.{step}", f"{status!r} is not a status in nvstatus.yaml")
        p2p = require(self.path, where, spec, "p2p", dict, optional=True) or {}
        links = require(self.path, where, spec, "links", dict, optional=True) or {}
        return Topology(name, str(spec.get("description", "")), cards, model, links, p2p, expect)

    def get(self, name: str) -> Topology:
        if name not in self.topologies:
            raise ConfigError(f"unknown topology {name!r}; {self.path.name} has: {', '.join(self.topologies)}")
        return self.topologies[name]

    def match(self, host) -> Topology | None:
        return next((t for t in self.topologies.values() if not t.mismatches(host)), None)
