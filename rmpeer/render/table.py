"""The terminal's card x card table and fitness lines, rendered from a RunResult.

A cell (session's card s, window's card t): S the setup checks of its windows (pair,
reservation, map), R and W the reads and writes through them, and the median steady GB/s."""

from __future__ import annotations

import os

from rmpeer.model.clocks import held_text
from rmpeer.render.health_text import health_lines

SETUP_AREA = "setup"


def pair_cells(result) -> dict:
    """(card s, card t) -> {setup, read, write: [passed, total], gbps: [...]} (the shape the
    heatmap of rmpeer.render.heatmap draws)."""
    cards_of = {layout.name: layout.cards for layout in result.layouts}
    table: dict = {}

    def cell(layout, s, t):
        cards = cards_of.get(layout)
        if cards is None or s is None or s >= len(cards) or t >= len(cards):
            return None
        return table.setdefault((cards[s], cards[t]), {"setup": [0, 0], "read": [0, 0], "write": [0, 0], "gbps": []})

    for c in result.checks:
        if c.area == SETUP_AREA and c.s is not None and c.outcome != "skipped":
            counts = cell(c.layout, c.s, c.t)
            if counts is not None:
                counts["setup"][1] += 1
                counts["setup"][0] += c.outcome == "passed"
    for p in result.pairs:
        if p.op not in ("read", "write") or p.ok is None:
            continue
        counts = cell(p.layout, p.s, p.t)
        if counts is None:
            continue
        counts[p.op][1] += 1
        counts[p.op][0] += bool(p.ok)
        if p.steady_gbps:
            counts["gbps"].append(p.steady_gbps)
    return table


def _cell(c: dict) -> str:
    parts = []
    for key, tag in (("setup", "S"), ("read", "R"), ("write", "W")):
        passed, total = c[key]
        parts.append(f"{tag}:-" if not total else f"{tag}:ok" if passed == total else f"{tag}:FAIL {total - passed}/{total}")
    gbps = sorted(c["gbps"])
    return " ".join(parts) + (f" {gbps[len(gbps) // 2]:.0f} GB/s" if gbps else "")


def render_table(result) -> str:
    """card x card: setup (pairs, reservations, maps), read and write verdicts, median GB/s."""
    table = pair_cells(result)
    if not table:
        return "(no per-pair results)"
    cards = sorted({c for key in table for c in key})
    cells = {(a, b): _cell(table[(a, b)]) if (a, b) in table else "-" for a in cards for b in cards}
    width = max(len(v) for v in cells.values()) + 3
    lines = ["session on \\ window of".ljust(24) + "".join(f"card {b}".ljust(width) for b in cards)]
    lines += [f"card {a}".ljust(24) + "".join(cells[(a, b)].ljust(width) for b in cards) for a in cards]
    extents = sorted({l.extent for l in result.layouts if l.name != "bandwidth"}) or [None]
    size = "/".join(f"{e >> 20} MiB" for e in extents if e) or "the checks' extent"
    lines.append(f"S setup (pair, reservation, map), R read, W write through the windows: ok when every check "
                 f"passed, else failed/total; GB/s: median steady copy rate at {size} (the fitness figures "
                 f"below are at their own size)")
    return "\n".join(lines)


def render_fitness(result) -> str:
    """Clocks per card and phase, the boost (asked, released), and the bandwidth figures."""
    if not result.clocks and not result.bandwidth:
        return ""
    lines = ["clocks (P-state through RM; MHz graphics/memory through NVML):"]
    for phase, cards in result.clocks.items():
        lines.append(f"  {phase:<14}" + "  ".join(
            f"card {c}: {r.get('graphics_mhz')}/{r.get('memory_mhz')} MHz {r.get('pstate')}{held_text(r)}"
            for c, r in cards.items()))
    boost = result.boost or {}
    if not boost.get("asked"):
        lines.append("  boost: not asked (--no-boost)")
    else:
        released = boost.get("released")
        lines.append("  boost: asked; " + ("released at the run's end (RM accepted the clear)" if released
                                           else "NOT released: RM refused the clear" if released is False
                                           else "release not recorded"))
    figures = result.bandwidth or []
    floors = ((result.topology or {}).get("floors") or {})
    if figures:
        lines.append(f"bandwidth at {figures[0]['bytes'] >> 20} MiB (median steady GB/s; first copy apart; "
                     f"its floor, BELOW where it missed it):")
        for f in figures:
            pair = "all cards" if f["op"] == "all" else f"{f['src_card']}->{f['dst_card']}"
            met = figure_floor(floors, f)
            below = met is not None and f["gbps"] < met["gbps"]
            lines.append(f"  {f['op']:<14} {pair:<10} {f['gbps']:7.1f}   (first {f['first_gbps']:.1f}, "
                         f"spread {f['spread']:.1%})"
                         + (f"   {'BELOW ' if below else ''}floor {met['gbps']:g} {met['basis']}" if met
                            else "   no floor"))
    for formula in dict.fromkeys(x["formula"] for x in floors.get("floors", []) if x["basis"] != "calibrated"):
        lines.append(f"  floor: {formula}")
    for card, h in (result.links or {}).items():
        lines.append(f"  card {card}: " + (f"{h.get('active')} active NVLinks" if h.get("supported")
                                           else f"no NVLink ({h.get('reason')})"))
    if result.host:
        lines += ["health (RM):"] + health_lines(result.host)
    return "\n".join(lines)


FLOOR_KINDS = {"same-card": "same_card", "bidirectional": "bidirectional", "read": "cross_card", "write": "cross_card"}


def figure_floor(floors: dict, figure: dict) -> dict | None:
    """The certificate's floor (topology.floors.floors) that judged a figure, if any."""
    kind = FLOOR_KINDS.get(figure["op"])
    if kind is None or figure["bytes"] < floors.get("size", 0):
        return None
    a, b = figure["src_card"], figure["dst_card"]
    where = {"same_card": f"card {a}", "cross_card": f"{a}->{b}", "bidirectional": f"{min(a, b)}->{max(a, b)}"}[kind]
    table = {x["where"]: x for x in floors.get("floors", []) if x["kind"] == kind}
    return table.get(where, table.get("all"))


def use_colour(stream) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org)."""
    return stream is not None and stream.isatty() and not os.environ.get("NO_COLOR")
