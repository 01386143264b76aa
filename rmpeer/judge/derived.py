"""Floors derived from what RM reports, for a host no topologies.yaml entry calibrates.

A pure function of facts (the cards, the P2P capability table, each card's NVLink reading,
the class numbers of the driver's ABI) and matrices/efficiencies.yaml: links x rate x
efficiency per pair, PCEs x per-PCE rate x efficiency per card. Every floor carries the
formula that made it and whether its efficiency was measured (derived) or not (provisional).
What RM did not report is named in `missing`, never filled in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.errors import MatrixError, quoted
from rmpeer.tables.lce import pick_lce
from rmpeer.tables.load import MATRICES, load_yaml, positive_finite, refuse_unknown, require

CALIBRATED, DERIVED, PROVISIONAL = "calibrated", "derived", "provisional"
STATUSES = (CALIBRATED, PROVISIONAL)
KINDS = ("nvlink", "nvlink_bidirectional", "same_card", "pcie")
KIND_KEYS = ("efficiency", "status", "measured", "note", "per_pce_gbps")
MEASURED_KEYS = ("median_gbps", "nominal_gbps", "pces", "margin", "what", "host", "evidence")
GENERATION_KEYS = ("copy_classes", *KINDS)
# a calibrated efficiency must be margin x median / nominal to this much (the file's rounding)
AGREE = 0.005
# P2P capabilities (drivers.yaml names, without prefix) that say how a pair is joined
NVLINK_CAP, PCIE_CAPS = "NVLINK_SUPPORTED", ("READS_SUPPORTED", "WRITES_SUPPORTED")
SWITCH, GPU = "SWITCH", "GPU"     # NVLink far ends (NV2080_CTRL_NVLINK_DEVICE_INFO_DEVICE_TYPE_*)


@dataclass(frozen=True)
class Floor:
    """One floor in GB/s, how it was reached and on what it rests."""

    gbps: float
    basis: str          # calibrated (a topologies.yaml entry), derived (measured efficiency), provisional
    formula: str        # "18 links x 26.562 GB/s x 0.743 = 355.2 GB/s (derived; efficiency calibrated on 2 x H200)"

    def as_dict(self) -> dict:
        return {"gbps": self.gbps, "basis": self.basis, "formula": self.formula}


@dataclass(frozen=True)
class Efficiency:
    kind: str
    efficiency: float
    status: str
    measured: dict = field(default_factory=dict)
    note: str = ""
    per_pce_gbps: float | None = None

    @property
    def basis(self) -> str:
        return DERIVED if self.status == CALIBRATED else PROVISIONAL

    @property
    def provenance(self) -> str:
        if self.status == CALIBRATED:
            return f"derived; efficiency calibrated on {self.measured.get('host', '?')}"
        return f"provisional; efficiency {self.efficiency:g} not measured: {self.note}"


@dataclass(frozen=True)
class Generation:
    name: str
    copy_classes: tuple
    kinds: dict


@dataclass(frozen=True)
class Efficiencies:
    path: Path
    lane_gbps: dict
    generations: dict

    def generation_of(self, card, class_numbers: dict) -> Generation | None:
        """The generation of the newest copy class (by the ABI's number) the card lists: a
        card may list an older generation's class beside its own."""
        offered = set(getattr(card, "classes", None) or [])
        listed = [(class_numbers[name], gen) for gen in self.generations.values() for name in gen.copy_classes
                  if class_numbers.get(name) in offered]
        return max(listed, key=lambda ng: ng[0])[1] if listed else None


def load_efficiencies(path: Path | None = None, class_names=None) -> Efficiencies:
    """matrices/efficiencies.yaml, schema-checked: an unknown key, a status other than
    calibrated or provisional, a calibrated efficiency without the measurement it came from or
    that disagrees with it, a provisional one without a note: a MatrixError naming the entry.
    With `class_names` (drivers.yaml's, as the spec checks it), a copy class none of them is."""
    path = Path(path or MATRICES / "efficiencies.yaml")
    data = load_yaml(path)
    refuse_unknown(path, "file", data, ("schema", "pcie_lane_gbps", "generations"))
    lanes = require(path, "file", data, "pcie_lane_gbps", dict)
    for gen, rate in lanes.items():
        if not isinstance(gen, int) or not positive_finite(rate):
            raise MatrixError(path, f"pcie_lane_gbps.{gen}", f"must be a generation number: GB/s above 0, "
                              f"found {quoted(rate)}")
    gens = {}
    for name, spec in require(path, "file", data, "generations", dict).items():
        where = f"generation {name}"
        if not isinstance(spec, dict):
            raise MatrixError(path, where, f"must be a mapping, found {type(spec).__name__}")
        refuse_unknown(path, where, spec, GENERATION_KEYS)
        classes = require(path, where, spec, "copy_classes", list)
        if not classes or not all(isinstance(c, str) for c in classes):
            raise MatrixError(path, f"{where}.copy_classes", "must list copy-engine class names of drivers.yaml")
        unknown = [c for c in classes if class_names is not None and c not in class_names]
        if unknown:     # no card would be of this generation: its floors never derived, DEGRADED
            raise MatrixError(path, f"{where}.copy_classes", f"{quoted(unknown[0])} is not a class of drivers.yaml")
        claimed = next(((c, g.name) for g in gens.values() for c in classes if c in g.copy_classes), None)
        if claimed:     # a card of that class would take whichever generation came first in the file
            raise MatrixError(path, f"{where}.copy_classes", f"{quoted(claimed[0])} is already a class of "
                              f"generation {claimed[1]}: a class belongs to one generation")
        kinds = {kind: _kind(path, f"{where}.{kind}", kind, spec[kind]) for kind in KINDS if kind in spec}
        gens[name] = Generation(name, tuple(classes), kinds)
    return Efficiencies(path, dict(lanes), gens)


def _kind(path, where, kind, spec) -> Efficiency:
    if not isinstance(spec, dict):
        raise MatrixError(path, where, f"must be a mapping, found {type(spec).__name__}")
    refuse_unknown(path, where, spec, KIND_KEYS)
    eff = require(path, where, spec, "efficiency", (int, float))
    if isinstance(eff, bool) or not 0 < eff <= 1:
        raise MatrixError(path, f"{where}.efficiency", f"must be a fraction above 0 and at most 1, found {eff!r}")
    status = require(path, where, spec, "status", str)
    if status not in STATUSES:
        raise MatrixError(path, f"{where}.status", f"{status!r} is not one of {', '.join(STATUSES)}")
    per_pce = spec.get("per_pce_gbps")
    if (kind == "same_card") != (per_pce is not None):
        raise MatrixError(path, where, "per_pce_gbps belongs to same_card, and same_card needs it")
    if per_pce is not None:
        per_pce = _number(path, where, spec, "per_pce_gbps")
    # every type checked before the agreement checks do arithmetic on it
    measured = require(path, where, spec, "measured", dict, optional=True) or {}
    if status == CALIBRATED:
        refuse_unknown(path, f"{where}.measured", measured, MEASURED_KEYS)
        for key in ("host", "evidence"):
            require(path, f"{where}.measured", measured, key, str)
        median, margin = (_number(path, f"{where}.measured", measured, key) for key in ("median_gbps", "margin"))
        if kind == "same_card":
            pces = require(path, f"{where}.measured", measured, "pces", int)
            if not positive_finite(pces):
                raise MatrixError(path, f"{where}.measured.pces", f"must be a count above 0, found {quoted(pces)}")
            _agree(path, f"{where}.per_pce_gbps", per_pce, median / pces, f"median {median} / {pces} PCEs")
            _agree(path, f"{where}.efficiency", eff, margin, f"the margin {margin}")
        else:
            nominal = _number(path, f"{where}.measured", measured, "nominal_gbps")
            _agree(path, f"{where}.efficiency", eff, margin * median / nominal,
                   f"margin {margin} x median {median} / nominal {nominal}")
    elif not spec.get("note"):
        raise MatrixError(path, where, "a provisional efficiency needs a note saying why it was not measured")
    return Efficiency(kind, float(eff), status, dict(measured), str(spec.get("note", "")), per_pce)


def _number(path, where, mapping, key) -> float:
    if key not in mapping:
        raise MatrixError(path, where, f"missing key {key!r}")
    value = mapping[key]
    if not positive_finite(value):
        raise MatrixError(path, f"{where}.{key}", f"must be a finite number above 0, found {quoted(value)}")
    return value


def _agree(path, where, stated, computed, how) -> None:
    if abs(stated - computed) > AGREE * computed:
        raise MatrixError(path, where, f"{stated!r} disagrees with the measurement it came from ({how} = {computed:.4f})")


# -- the derivation ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DerivedFloors:
    same_card: dict = field(default_factory=dict)       # card -> Floor
    cross_card: dict = field(default_factory=dict)      # (src, dst) -> Floor, one direction
    bidirectional: dict = field(default_factory=dict)   # (a, b), a < b -> Floor, both directions in total
    missing: tuple = ()                                 # what could not be derived, and why
    unread: tuple = ()      # of those, what RM did not answer: the floor check could not run there

    @property
    def any(self) -> bool:
        return bool(self.same_card or self.cross_card or self.bidirectional)


def _floor(units: float, unit_text: str, rate: float, eff: Efficiency) -> Floor:
    gbps = round(units * rate * eff.efficiency, 1)
    return Floor(gbps, eff.basis, f"{unit_text} x {rate:.3f} GB/s x {eff.efficiency:g} = {gbps:.1f} GB/s "
                                  f"({eff.provenance})")


def link_rate_gbps(link: dict) -> float | None:
    """One direction of one NVLink: line rate per lane x lanes, in GB/s (None: not reported)."""
    rate, width = link.get("line_rate_mbps"), link.get("sublink_width")
    return rate * width / 8000 if rate and width else None


def pair_nvlinks(a, b, health_a: dict, health_b: dict) -> tuple[int, list]:
    """(links joining cards a and b one way, those links): direct links between them, or
    the links both cards have into the NVSwitch fabric (the fewer of the two)."""
    def connected(health, remote_type):
        return [x for x in health.get("links", []) if x.get("connected") and (x.get("remote") or {}).get("type") == remote_type]

    def direct(health, other):
        gpus = connected(health, GPU)
        named = [x for x in gpus if (x.get("remote") or {}).get("pci") == other.pci]
        return named if named or any((x.get("remote") or {}).get("pci") for x in gpus) else gpus

    d_ab, d_ba = direct(health_a, b), direct(health_b, a)
    s_a, s_b = connected(health_a, SWITCH), connected(health_b, SWITCH)
    direct_n, switch_n = min(len(d_ab), len(d_ba)), min(len(s_a), len(s_b))
    return direct_n + switch_n, (d_ab + d_ba if direct_n else []) + (s_a + s_b if switch_n else [])


def _pcie(card_a, card_b) -> tuple[int, int] | str:
    """(lanes, generation) both cards trained: the narrower width, the lower maximum generation."""
    links = [((getattr(c, "health", None) or {}).get("pcie") or {}) for c in (card_a, card_b)]
    widths = [x.get("width") for x in links]
    gens = [x.get("max_gen") or x.get("gen") for x in links]
    if not all(widths) or not all(gens):
        return f"cards {card_a.index} and {card_b.index}: RM's PCIe link width and generation not read"
    return min(widths), min(gens)


def derive_floors(cards: list, p2p: dict, links: dict, eff: Efficiencies, class_numbers: dict) -> DerivedFloors:
    """Floors per card and pair from RM's facts (pure). cards: model.host.Card; p2p: HostFacts.p2p
    ((a, b) -> {caps}); links: card index -> rm.nvlink.link_health; class_numbers: the ABI's
    {class name: number}."""
    same, cross, both, missing, unread = {}, {}, {}, [], []
    gens = {c.index: eff.generation_of(c, class_numbers) for c in cards}
    for c in cards:
        gen = gens[c.index]
        if gen is None:
            missing.append(f"card {c.index} ({c.name}): its copy-engine class is none of efficiencies.yaml's")
            continue
        kind = gen.kinds.get("same_card")
        lce = pick_lce(c) if c.ce_caps else None
        refused = c.unread.get(f"ce_pces[{lce}]")
        if kind is not None and refused:       # 0 PCEs read from no answer is no fact
            unread.append(f"card {c.index}: RM did not answer for its copy engine's PCEs ({refused})")
            continue
        pces = bin(c.ce_pces.get(lce, 0)).count("1") if c.ce_caps else 0
        if kind is None or not pces:
            missing.append(f"card {c.index}: " + ("no same_card efficiency for " + gen.name if kind is None
                                                  else "RM reports no PCE of its copy engine"))
            continue
        same[c.index] = _floor(pces, f"{pces} PCEs", kind.per_pce_gbps, kind)
    by_index = {c.index: c for c in cards}
    for (a, b), caps in sorted(p2p.items()):
        if a == b or a not in by_index or b not in by_index or gens.get(a) is None:
            continue
        names, gen = caps.get("caps", []), gens[a]
        if NVLINK_CAP in names:
            n, used = pair_nvlinks(by_index[a], by_index[b], links.get(a, {}), links.get(b, {}))
            rates = [r for r in map(link_rate_gbps, used)]
            if not n or None in rates:
                missing.append(f"cards {a}->{b}: P2P over NVLink, but RM reports "
                               + ("no connected link between them" if not n else "no line rate or lane count"))
                continue
            rate = min(rates)
            if "nvlink" in gen.kinds:
                cross[(a, b)] = _floor(n, f"{n} links", rate, gen.kinds["nvlink"])
            if a < b and "nvlink_bidirectional" in gen.kinds:
                both[(a, b)] = _floor(2 * n, f"2 x {n} links", rate, gen.kinds["nvlink_bidirectional"])
        elif any(cap in names for cap in PCIE_CAPS):
            link = _pcie(by_index[a], by_index[b])
            if isinstance(link, str) or "pcie" not in gen.kinds or link[1] not in eff.lane_gbps:
                missing.append(f"cards {a}->{b}: P2P over PCIe, but " + (link if isinstance(link, str) else
                               f"no PCIe efficiency or lane rate for generation {link[1]}"))
                continue
            lanes, pcie_gen = link
            cross[(a, b)] = _floor(lanes, f"{lanes} lanes (PCIe gen {pcie_gen})", eff.lane_gbps[pcie_gen],
                                   gen.kinds["pcie"])
            if a < b:      # PCIe is full duplex: both directions at once, each at the one-way rate
                both[(a, b)] = _floor(2 * lanes, f"2 x {lanes} lanes (PCIe gen {pcie_gen})",
                                      eff.lane_gbps[pcie_gen], gen.kinds["pcie"])
    return DerivedFloors(same, cross, both, tuple(missing + unread), tuple(unread))
