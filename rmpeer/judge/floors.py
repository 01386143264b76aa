"""Bandwidth judged against a topology's floors and against the host's own other pairs.

A pure function of figures [{src_card, dst_card, op, bytes, gbps}] (op: read, write,
bidirectional, same-card, all), so a recording judges exactly as the live run did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from rmpeer.abi import DriverMatrix
from rmpeer.errors import RmpeerError
from rmpeer.judge.derived import CALIBRATED, Floor, derive_floors, load_efficiencies
from rmpeer.judge.scope import host_view
from rmpeer.model.result import DEGRADE, INFO, UNFINISHED, Finding

# A pair this far below the median of its siblings (same op, same size) is flagged even
# where no floor exists: one slow link or a card stuck at low clocks shows up this way.
OUTLIER_BELOW = 0.15
FAIL, WARN, OUTLIER = "FAIL", "WARN", "OUTLIER"
ANY = "any"     # the key of a floor that holds for every card or pair (a topology's)
KIND_RATES = (("same_card", "same_card_gbps"), ("cross_card", "cross_card_gbps"), ("bidirectional", "bidirectional_gbps"))


@dataclass(frozen=True)
class HostFloors:
    """The floors one host is judged by, each with its provenance: per card (same card), per
    ordered pair (one direction), per pair (both directions); ANY where one holds for all."""

    name: str                                   # the topology entry, or "derived"
    same_card: dict = field(default_factory=dict)
    cross_card: dict = field(default_factory=dict)
    bidirectional: dict = field(default_factory=dict)
    warn_band: float = 0.05
    size: int = 256 << 20
    missing: tuple = ()                         # what could not be derived, and why

    @classmethod
    def calibrated(cls, floors, name: str = "?") -> "HostFloors":
        """A topology entry's Floors: one calibrated floor per kind, for every card and pair."""
        kinds = {kind: {ANY: Floor(getattr(floors, rate), CALIBRATED,
                                   f"{getattr(floors, rate):g} GB/s (calibrated: topologies.yaml {name})")}
                 for kind, rate in KIND_RATES if getattr(floors, rate) is not None}
        return cls(name, **kinds, warn_band=floors.warn_band, size=floors.size)

    def as_dict(self) -> dict:
        """What the certificate keeps: the lowest floor of each kind (as topologies.yaml states
        them) and every floor with its basis and formula."""
        out = {"name": self.name, "warn_band": self.warn_band, "size": self.size}
        each = []
        for kind, rate in KIND_RATES:
            table = getattr(self, kind)
            out[rate] = min((f.gbps for f in table.values()), default=None)
            each += [{"kind": kind, "where": _where(key), **f.as_dict()} for key, f in sorted(table.items(), key=str)]
        basis = {f["basis"] for f in each}
        out["basis"] = " + ".join(sorted(basis)) or "none"
        out["floors"], out["missing"] = each, list(self.missing)
        return out


def _where(key) -> str:
    if key == ANY:
        return "all"
    return f"card {key}" if isinstance(key, int) else f"{key[0]}->{key[1]}"


def floor_for(floors, figure: dict):
    """The floor (derived.Floor) that applies to a figure: same card, both directions, or one
    cross-card direction; None where none applies. `floors`: HostFloors, or a topology's Floors."""
    if floors is None or figure["bytes"] < floors.size:
        return None
    if not isinstance(floors, HostFloors):
        floors = HostFloors.calibrated(floors)
    a, b = figure["src_card"], figure["dst_card"]
    if figure["op"] == "same-card" or a == b:
        return floors.same_card.get(a, floors.same_card.get(ANY))
    if figure["op"] == "bidirectional":
        return floors.bidirectional.get((min(a, b), max(a, b)), floors.bidirectional.get(ANY))
    if figure["op"] in ("read", "write"):
        return floors.cross_card.get((a, b), floors.cross_card.get(ANY))
    return None


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def _finding(level, figure, message, **extra) -> dict:
    pair = f"{figure['src_card']}->{figure['dst_card']}"
    return {"level": level, "pair": pair, "op": figure["op"], "bytes": figure["bytes"],
            "gbps": figure["gbps"], **extra,
            "message": f"{level} {pair} {figure['op']} at {_size(figure['bytes'])}: {message}"}


def judge_bandwidth(topology, figures: list[dict]) -> list[dict]:
    """FAIL below a floor, WARN within the warning band above it, OUTLIER > 15% below siblings."""
    floors = topology if isinstance(topology, HostFloors) else getattr(topology, "floors", None)
    name = getattr(topology, "name", "?")
    findings = []
    for f in figures:
        met = floor_for(floors, f)
        if met is None:
            continue
        floor = met.gbps
        why = f"the floor of {floor:g} GB/s ({name})" if met.basis == CALIBRATED else met.formula
        if f["gbps"] < floor:
            findings.append(_finding(FAIL, f, f"{f['gbps']:.1f} GB/s is below {why}", floor=floor, basis=met.basis,
                                     formula=met.formula))
        elif f["gbps"] < floor * (1 + floors.warn_band):
            findings.append(_finding(WARN, f, f"{f['gbps']:.1f} GB/s is within {floors.warn_band:.0%} of {why}",
                                     floor=floor, basis=met.basis, formula=met.formula))
    groups: dict = {}
    for i, f in enumerate(figures):
        groups.setdefault((f["op"], f["bytes"]), []).append(i)
    for members in groups.values():
        for i in members:
            siblings = [figures[j]["gbps"] for j in members if j != i]
            if not siblings:
                continue
            middle = median(siblings)
            f = figures[i]
            if f["gbps"] < middle * (1 - OUTLIER_BELOW):
                findings.append(_finding(OUTLIER, f, f"{f['gbps']:.1f} GB/s is more than {OUTLIER_BELOW:.0%} below "
                                                     f"the median of its {len(siblings)} sibling(s), "
                                                     f"{middle:.1f} GB/s", median=middle))
    return findings


# -- which floors a host is judged against ---------------------------------------------------

FLOOR_CHECK = "bandwidth-floor"
FLOOR_EXPECTED = "floors for this host (a topologies.yaml entry)"


def floors_for(facts, matrix, *, expected: str | None = None, no_floors: bool = False):
    """(floors or None, source, finding or None): the floors a host's bandwidth is judged by.

    source: "expected:<name>" (--expect-topology), "match:<name>" (the one entry the host
    matches), or "none". A host without floors is never a silent pass: the finding is a
    DEGRADE ("no floors for this host") for the run to add, unless `no_floors` (--no-floors)
    was given, which turns it into an INFO that the floors were not judged.

    No "defaults" are derived from what RM reports: the only measured ratio (one direction
    tops out at 396 of 478 GB/s of link rate on 2 x H200 NV18, docs/copy-engine.md) comes
    from one kind of host, and a floor made up for other hosts would be a guess."""
    if expected is not None:
        topology, source = matrix.get(expected), f"expected:{expected}"
    else:
        topology = matrix.match(host_view(facts))   # some of a host's cards: the whole host's entry (two: MatrixError)
        source = f"match:{topology.name}" if topology is not None else "none"
    if topology is not None and topology.floors is not None:
        return topology.floors, source, None
    where = matrix.path.name
    if topology is not None:
        found = f"no floors for this host: topology {topology.name} ({where} line {matrix.line(topology.name)}) states none"
    else:
        found = f"no floors for this host: no entry of {where} matches it ({_host_words(facts)}{_nearest(facts, matrix)})"
    if no_floors:
        return None, source, Finding(FLOOR_CHECK, "host", FLOOR_EXPECTED, f"{found}; not judged (--no-floors)", INFO)
    return None, source, Finding(FLOOR_CHECK, "host", FLOOR_EXPECTED, found, DEGRADE)


def _host_words(facts) -> str:
    models = sorted({c.name for c in facts.cards})
    return f"{len(facts.cards)} x {' + '.join(models) or 'no card'}"


def _nearest(facts, matrix) -> str:
    """The entry that comes closest, and why it is not this host: what a person edits."""
    scored = sorted((len(why), name, why) for name, t in matrix.topologies.items() if (why := t.mismatches(facts)))
    return f"; nearest {scored[0][1]}: {scored[0][2][0]}" if scored else ""


# -- calibrated where measured, derived from RM's facts elsewhere ------------------------------

def class_numbers(facts) -> dict:
    """{class name: number} of the ABI the host's facts were read with ({} where unknown)."""
    try:
        return dict(DriverMatrix().abi(facts.abi_release).classes) if facts.abi_release else {}
    except (RmpeerError, KeyError):
        return {}


def resolve_floors(facts, links: dict, matrix, *, expected: str | None = None, no_floors: bool = False,
                   efficiencies=None, classes: dict | None = None):
    """(HostFloors or None, findings): a topology entry's calibrated floors, and for every kind
    it does not state, floors derived from RM's facts (rmpeer.judge.derived), unless --no-floors.

    Never a silent pass: where nothing could be derived either, a DEGRADE "no floors for this
    host" says what RM did not report; a pair or card left without a floor is a DEGRADE naming
    it. With --no-floors these are INFO: measured, not judged."""
    calibrated, source, absent = floors_for(facts, matrix, expected=expected, no_floors=no_floors)
    name = source.split(":", 1)[1] if ":" in source else "derived"
    base = HostFloors.calibrated(calibrated, name) if calibrated is not None else HostFloors(name)
    if no_floors:
        return (base if calibrated is not None else None), [absent] if absent else []
    derived = derive_floors(facts.cards, facts.p2p, links or {}, efficiencies or load_efficiencies(),
                            class_numbers(facts) if classes is None else classes)
    merged = {kind: getattr(base, kind) or getattr(derived, kind) for kind, _ in KIND_RATES}
    host = HostFloors(name if calibrated is not None else "derived", **merged,
                      warn_band=base.warn_band, size=base.size, missing=derived.missing)
    judged = any(merged.values())
    if not judged:
        why = "; ".join(derived.missing) or "no card or pair to derive one for"
        found = f"{absent.found if absent else 'no floors for this host'}; none derived: {why}"
        # where RM did not answer what a floor needs, the check could not run: never a verdict on the host
        return None, [Finding(FLOOR_CHECK, "host", FLOOR_EXPECTED, found,
                              UNFINISHED if derived.unread else DEGRADE)]
    uncovered = [m for m in derived.missing if not _covered(m, base)]
    return host, [Finding(FLOOR_CHECK, "host", "a floor for every card and pair", f"no floor derived: {m}",
                          UNFINISHED if m in derived.unread else DEGRADE) for m in uncovered]


def _covered(missing: str, calibrated: HostFloors) -> bool:
    """A card or pair that a calibrated floor covers needs none derived."""
    return bool(calibrated.same_card if missing.startswith("card ") else calibrated.cross_card)


def judged_topology(spec, host_floors: tuple, bandwidth: list) -> tuple[dict | None, list]:
    """(the RunResult's topology, the floor findings to add): the entry (named or matched) with
    the floors the run was judged by (host_floors: (HostFloors or None, findings)), each with
    its basis and formula, and the run's figures against them; matched_by "derived" where no
    entry calibrates the host."""
    floors, findings = host_floors
    entry = spec.topology
    if entry is None and floors is None:
        return None, findings
    given = floors.as_dict() if floors is not None else None
    if given is not None:
        given["judged"] = judged_figures(floors, bandwidth or [])
    return ({"name": entry.name if entry is not None else None,
             "matched_by": spec.topology_matched_by if entry is not None else "derived",
             "floors": given}, findings)


def judged_figures(floors: HostFloors, figures: list) -> list:
    """Each figure with the floor it was judged by: its GB/s, basis and formula, and whether it met it."""
    out = []
    for f in figures:
        met = floor_for(floors, f)
        if met is not None:
            out.append({"op": f["op"], "pair": f"{f['src_card']}->{f['dst_card']}", "gbps": f["gbps"],
                        "floor": met.gbps, "basis": met.basis, "formula": met.formula, "met": f["gbps"] >= met.gbps})
    return out
