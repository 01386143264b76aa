"""Bandwidth judged against a topology's floors and against the host's own other pairs.

A pure function of figures [{src_card, dst_card, op, bytes, gbps}] (op: read, write,
bidirectional, same-card, all), so a recording judges exactly as the live run did.
"""

from __future__ import annotations

from statistics import median

# A pair this far below the median of its siblings (same op, same size) is flagged even
# where no floor exists: one slow link or a card stuck at low clocks shows up this way.
OUTLIER_BELOW = 0.15
FAIL, WARN, OUTLIER = "FAIL", "WARN", "OUTLIER"


def floor_for(floors, figure: dict) -> float | None:
    """The floor that applies to a figure: same card, both directions, or one cross-card direction."""
    if floors is None or figure["bytes"] < floors.size:
        return None
    if figure["op"] == "same-card" or figure["src_card"] == figure["dst_card"]:
        return floors.same_card_gbps
    if figure["op"] == "bidirectional":
        return floors.bidirectional_gbps
    if figure["op"] in ("read", "write"):
        return floors.cross_card_gbps
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
    floors = getattr(topology, "floors", None)
    name = getattr(topology, "name", "?")
    findings = []
    for f in figures:
        floor = floor_for(floors, f)
        if floor is None:
            continue
        if f["gbps"] < floor:
            findings.append(_finding(FAIL, f, f"{f['gbps']:.1f} GB/s is below the floor of {floor:g} GB/s "
                                              f"({name})", floor=floor))
        elif f["gbps"] < floor * (1 + floors.warn_band):
            findings.append(_finding(WARN, f, f"{f['gbps']:.1f} GB/s is within {floors.warn_band:.0%} of the "
                                              f"floor of {floor:g} GB/s ({name})", floor=floor))
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
    from .result import DEGRADE, INFO, Finding

    if expected is not None:
        topology, source = matrix.get(expected), f"expected:{expected}"
    else:
        from .selection import host_view   # some of a host's cards: the whole host's entry

        topology = matrix.match(host_view(facts))          # two matching entries: MatrixError
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
