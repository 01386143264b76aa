"""matrices/topologies.yaml: known hosts, and whether the live host matches one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .abi.matrix import MATRICES, load_yaml, require
from .errors import ConfigError, MatrixError
from .layouts import parse_size

STEPS = ("pair", "reserve", "map_same", "map_peer")
LINK_KINDS = ("nvlink", "nvswitch", "pcie")
FLOOR_RATES = ("cross_card_gbps", "same_card_gbps", "bidirectional_gbps")


@dataclass(frozen=True)
class Floors:
    """The slowest healthy GB/s per kind of copy on a host, and the band above them that warns."""

    cross_card_gbps: float | None = None     # one direction, one pair of cards
    same_card_gbps: float | None = None
    bidirectional_gbps: float | None = None  # both directions of a pair at once, in total
    warn_band: float = 0.05                  # within 5% above a floor: warn
    size: int = 256 << 20                    # judged at this size and larger (fixed cost < 2%)


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    cards: int
    model: str
    links: dict = field(default_factory=dict)
    p2p: dict = field(default_factory=dict)
    expect: dict = field(default_factory=dict)
    floors: Floors | None = None

    @property
    def expected_nvlinks(self) -> int | None:
        """Active NVLinks each card should show; None where the host has none to expect."""
        return self.links.get("count") if self.links.get("kind") in ("nvlink", "nvswitch") else None

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
        links = self._links(where, spec)
        floors = self._floors(where, spec)
        return Topology(name, str(spec.get("description", "")), cards, model, links, p2p, expect, floors)

    def _links(self, where, spec) -> dict:
        links = require(self.path, where, spec, "links", dict, optional=True) or {}
        if links:
            kind = require(self.path, f"{where}.links", links, "kind", str)
            if kind not in LINK_KINDS:
                raise MatrixError(self.path, f"{where}.links.kind", f"{kind!r} is not one of {', '.join(LINK_KINDS)}")
            count = require(self.path, f"{where}.links", links, "count", int)
            if count < 0:
                raise MatrixError(self.path, f"{where}.links.count", f"must be 0 or more, found {count}")
        return links

    def _floors(self, where, spec) -> Floors | None:
        floors = require(self.path, where, spec, "floors", dict, optional=True)
        if floors is None:
            return None
        at = f"{where}.floors"
        unknown = set(floors) - set(FLOOR_RATES) - {"warn_band", "size"}
        if unknown:
            raise MatrixError(self.path, at, f"unknown keys {sorted(unknown)} (known: "
                                             f"{', '.join(FLOOR_RATES)}, warn_band, size)")
        rates = {}
        for key in FLOOR_RATES:
            value = require(self.path, at, floors, key, (int, float), optional=True)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise MatrixError(self.path, f"{at}.{key}", f"must be a GB/s figure above 0, found {value!r}")
            rates[key] = value
        if not any(v is not None for v in rates.values()):
            raise MatrixError(self.path, at, f"states no floor (give one of {', '.join(FLOOR_RATES)})")
        band = require(self.path, at, floors, "warn_band", (int, float), optional=True)
        if band is not None and (isinstance(band, bool) or not 0 <= band < 1):
            raise MatrixError(self.path, f"{at}.warn_band", f"must be a fraction from 0 to below 1, found {band!r}")
        size_text = floors.get("size", "256MiB")
        try:
            size = parse_size(size_text)
        except ConfigError:
            raise MatrixError(self.path, f"{at}.size", f"{size_text!r} is not a size such as 256MiB") from None
        return Floors(**rates, warn_band=0.05 if band is None else band, size=size)

    def get(self, name: str) -> Topology:
        if name not in self.topologies:
            raise ConfigError(f"unknown topology {name!r}; {self.path.name} has: {', '.join(self.topologies)}")
        return self.topologies[name]

    def match(self, host) -> Topology | None:
        return next((t for t in self.topologies.values() if not t.mismatches(host)), None)
