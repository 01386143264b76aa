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
