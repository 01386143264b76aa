"""matrices/topologies.yaml: known hosts, and whether the live host matches one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.tables.load import MATRICES, load_yaml, positive_finite, refuse_unknown, require
from rmpeer.errors import ConfigError, MatrixError, quoted
from rmpeer.tables.layouts import parse_size
from rmpeer.tables.lines import entry_keys, key_line, with_line

STEPS = ("pair", "reserve", "map_same", "map_peer")
LINK_KINDS = ("nvlink", "nvswitch", "pcie")
FLOOR_RATES = ("cross_card_gbps", "same_card_gbps", "bidirectional_gbps")
FILE_KEYS = ("schema", "topologies")
ENTRY_KEYS = ("description", "cards", "model", "links", "p2p", "expect", "floors")
LINK_KEYS = ("kind", "count")
FLOOR_KEYS = (*FLOOR_RATES, "warn_band", "size")
# p2p names the capabilities RM reports: drivers.yaml's constants of this prefix, without it
P2P_CAP_PREFIX = "NV0000_CTRL_SYSTEM_GET_P2P_CAPS_"


def p2p_cap_names(drivers_yaml: Path) -> set[str]:
    """Every P2P capability name any release of drivers.yaml defines (the names HostFacts
    reports: rmpeer.rm.host._p2p_cap_names)."""
    data = load_yaml(drivers_yaml)
    names = set()
    # the shape is checked here too: this can be read before rmpeer.abi's loader checks it all
    releases = require(drivers_yaml, "file", data, "releases", list)
    for i, release in enumerate(releases):
        constants = require(drivers_yaml, f"releases[{i}]", release, "constants", dict, optional=True)
        for name, value in (constants or {}).items():
            if name.startswith(P2P_CAP_PREFIX) and name.endswith("_SUPPORTED") and isinstance(value, int):
                names.add(name[len(P2P_CAP_PREFIX):])
    return names


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
    def __init__(self, path: Path | None = None, nvstatus_names=None, max_links=None):
        """nvstatus_names, max_links: nvstatus.yaml's names and the most NVLinks a card reports
        (NV2080_CTRL_NVLINK_MAX_LINKS of drivers.yaml), where the caller has them (rmpeer.run.spec):
        an expected status or link count is checked against them."""
        self.max_links = max_links
        self.path = Path(path or MATRICES / "topologies.yaml")
        data = load_yaml(self.path)
        try:
            refuse_unknown(self.path, "file", data, FILE_KEYS)
        except MatrixError as exc:
            raise with_line(exc, [exc.entry.removeprefix("file.")]) from None
        entries = require(self.path, "file", data, "topologies", dict)
        drivers = self.path.parent / "drivers.yaml"
        self.p2p_caps = p2p_cap_names(drivers if drivers.is_file() else MATRICES / "drivers.yaml")
        self.topologies = {}
        for name, spec in entries.items():
            try:
                self.topologies[name] = self._check(name, spec, nvstatus_names)
            except MatrixError as exc:
                raise with_line(exc, entry_keys(exc.entry, "topology", name, "topologies")) from None

    def line(self, name: str) -> int | None:
        """The line where entry `name` starts (for messages about the entry as a whole)."""
        return key_line(self.path, ["topologies", name])

    def _check(self, name, spec, nvstatus_names):
        where = f"topology {name}"
        if not isinstance(spec, dict):
            raise MatrixError(self.path, where, f"must be a mapping, found {type(spec).__name__}")
        refuse_unknown(self.path, where, spec, ENTRY_KEYS)
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
        for cap, want in p2p.items():
            if cap not in self.p2p_caps:
                import difflib

                close = difflib.get_close_matches(str(cap), sorted(self.p2p_caps), n=1)
                raise MatrixError(self.path, f"{where}.p2p.{cap}", f"{cap!r} is not a P2P capability RM reports "
                                  f"(the {P2P_CAP_PREFIX}* names of drivers.yaml, without the prefix)"
                                  + (f"; did you mean {close[0]!r}?" if close else ""))
            if not isinstance(want, bool):
                raise MatrixError(self.path, f"{where}.p2p.{cap}", f"must be true or false, found {want!r}")
        links = self._links(where, spec)
        floors = self._floors(where, spec)
        return Topology(name, str(spec.get("description", "")), cards, model, links, p2p, expect, floors)

    def _links(self, where, spec) -> dict:
        links = require(self.path, where, spec, "links", dict, optional=True) or {}
        if links:
            refuse_unknown(self.path, f"{where}.links", links, LINK_KEYS)
            kind = require(self.path, f"{where}.links", links, "kind", str)
            if kind not in LINK_KINDS:
                raise MatrixError(self.path, f"{where}.links.kind", f"{kind!r} is not one of {', '.join(LINK_KINDS)}")
            count = require(self.path, f"{where}.links", links, "count", int)
            if count < 0:
                raise MatrixError(self.path, f"{where}.links.count", f"must be 0 or more, found {count}")
            if self.max_links is not None and count > self.max_links:   # no card shows more: DEGRADED each run
                raise MatrixError(self.path, f"{where}.links.count", f"{quoted(count)} is more NVLinks than a card "
                                  f"reports (at most {self.max_links}: NV2080_CTRL_NVLINK_MAX_LINKS of drivers.yaml)")
        return links

    def _floors(self, where, spec) -> Floors | None:
        floors = require(self.path, where, spec, "floors", dict, optional=True)
        if floors is None:
            return None
        at = f"{where}.floors"
        unknown = [key for key in floors if key not in FLOOR_KEYS]
        if unknown:
            raise MatrixError(self.path, f"{at}.{unknown[0]}", f"unknown keys {sorted(unknown)} (known: "
                                                               f"{', '.join(FLOOR_KEYS)})")
        rates = {}
        for key in FLOOR_RATES:
            value = require(self.path, at, floors, key, (int, float), optional=True)
            if value is not None and not positive_finite(value):     # .nan judged nothing, .inf failed every host
                raise MatrixError(self.path, f"{at}.{key}", f"must be a finite GB/s figure above 0, "
                                                            f"found {quoted(value)}")
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
        """The one entry `host` matches, or None. Two entries matching one host is the matrix's
        fault (which floors apply would depend on their order): a MatrixError naming both."""
        matching = [t for t in self.topologies.values() if not t.mismatches(host)]
        if len(matching) > 1:
            a, b = matching[:2]
            raise MatrixError(self.path, f"line {self.line(b.name)}: topology {b.name}",
                              f"matches this host as well as topology {a.name} (line {self.line(a.name)}): "
                              f"make the entries exclusive (cards, model or p2p)")
        return matching[0] if matching else None
