"""Card x card pictures as plain SVG text: what RM says each pair can do (the P2P capability
table) and what the pairs did (median GB/s with pass/fail marks).

Plain SVG, no plotting library: the pictures are attached to Allure results and embedded in a
report that must open offline, and a certification host should not need matplotlib. Every
cell carries data-testid (and data-* values) so that tests read the picture, not pixels."""

from __future__ import annotations

import math
import statistics
from html import escape

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"
CELL_W, CELL_H = 170, 64          # one pair
HEAD_W, HEAD_H = 190, 46          # the row (card s) and column (card t) headings
MARGIN, TITLE_H, LEGEND_H = 12, 30, 44

# Link colours: green for NVLink, teal for C2C, amber for PCIe, grey for no P2P at all.
LINK_FILL = {"NVLink": "#2e9e5b", "C2C": "#1f8a8a", "PCIe": "#e0a030", "none": "#b9bec6"}
# The bandwidth scale runs light (slowest pair) -> dark (fastest pair).
SCALE_LOW, SCALE_HIGH = (0xde, 0xeb, 0xf7), (0x08, 0x30, 0x6b)
NO_DATA_FILL, FAIL_STROKE = "#eeeeee", "#d62728"
TICK, CROSS, ARROW = "\u2713", "\u2717", "\u2192"
STEPS = ("setup", "read", "write")


def _text(x, y, s, *, size=12, weight="normal", fill="#222", anchor="middle") -> str:
    return (f'<text x="{x}" y="{y}" font-family="{FONT}" font-size="{size}" font-weight="{weight}" '
            f'fill="{fill}" text-anchor="{anchor}">{escape(str(s))}</text>')


def _svg(width, height, testid, title, body: list[str]) -> str:
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" data-testid="{testid}">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        _text(MARGIN, 20, title, size=15, weight="bold", anchor="start"),
        *body, "</svg>", ""])


def _grid(cards: list, labels: dict, cell, title: str, testid: str, legend: list[str], corner: str) -> str:
    """The shared frame: column headings (card t), row headings (card s), one cell per pair."""
    n = len(cards)
    # Wide enough for the grid, the title and the legend (about 0.6 em a character).
    width = round(max(MARGIN * 2 + HEAD_W + n * CELL_W, MARGIN * 2 + 9.5 * len(title),
                      MARGIN * 2 + 6.8 * max(map(len, legend), default=0)))
    height = TITLE_H + HEAD_H + n * CELL_H + LEGEND_H + MARGIN
    top, left = TITLE_H + HEAD_H, MARGIN + HEAD_W
    body = [_text(MARGIN + HEAD_W / 2, TITLE_H + 28, corner, size=12, fill="#555")]
    for i, c in enumerate(cards):
        name, sub = labels[c]
        x = left + i * CELL_W + CELL_W / 2
        body.append(f'<g data-testid="{testid}-col-{c}">' + _text(x, TITLE_H + 20, name, weight="bold")
                    + _text(x, TITLE_H + 36, sub, size=10, fill="#555") + "</g>")
        y = top + i * CELL_H + CELL_H / 2
        body.append(f'<g data-testid="{testid}-row-{c}">' + _text(MARGIN + 4, y - 2, name, weight="bold", anchor="start")
                    + _text(MARGIN + 4, y + 14, sub, size=10, fill="#555", anchor="start") + "</g>")
    for i, s in enumerate(cards):
        for j, t in enumerate(cards):
            body.append(cell(s, t, left + j * CELL_W, top + i * CELL_H))
    for k, line in enumerate(legend):
        body.append(_text(MARGIN, top + n * CELL_H + 18 + 16 * k, line, size=11, fill="#444", anchor="start"))
    return _svg(width, height, testid, title, body)


def _empty(testid: str, title: str, why: str) -> str:
    width = round(MARGIN * 2 + max(9.5 * len(title), 7.5 * len(why)))
    return _svg(width, 70, testid, title, [f'<g data-testid="{testid}-empty">'
                                         + _text(MARGIN, 50, why, size=13, fill="#444", anchor="start") + "</g>"])


# -- what RM says: the P2P capability table -------------------------------------------------

def link_kind(caps) -> str:
    """The link RM reports for a pair, from the decoded *_SUPPORTED cap names."""
    caps = set(caps)
    if caps & {"NVLINK_SUPPORTED", "INDIRECT_NVLINK_SUPPORTED"}:
        return "NVLink"
    if "C2C_SUPPORTED" in caps:
        return "C2C"
    if caps & {"PCI_SUPPORTED", "PCI_BAR1_SUPPORTED"}:
        return "PCIe"
    return "none"


def p2p_matrix_svg(facts) -> str:
    """facts: rmpeer.model.host.HostFacts. One cell per (card a, card b): the link and whether RM
    allows peer reads and writes over it; a pair whose query failed shows the NV_ERR_ name."""
    cards = sorted(facts.cards, key=lambda c: c.index)
    title = "P2P capabilities (NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2)"
    if not cards:
        return _empty("p2p-matrix", title, "RM lists no card on this host")
    labels = {c.index: (f"card {c.index}", f"{c.name.replace('NVIDIA ', '')} {c.pci}".strip()) for c in cards}

    def cell(a, b, x, y):
        entry = facts.p2p.get((a, b))
        if entry is not None and not isinstance(entry, dict):
            raise ValueError(f"p2p[({a}, {b})] is {type(entry).__name__}, not a dict of caps")
        caps = (entry or {}).get("caps", [])
        if not isinstance(caps, (list, tuple, set)):
            raise ValueError(f"p2p[({a}, {b})]['caps'] must be a list of cap names, not {caps!r}")
        link = link_kind(caps)
        read, write = "READS_SUPPORTED" in caps, "WRITES_SUPPORTED" in caps
        if entry is None:
            link, line2 = "none", "not queried"
        elif entry.get("error"):
            line2 = f"query failed: {entry['error']}"
        else:
            line2 = {(True, True): "read \u2713  write \u2713", (True, False): "read \u2713  write \u2717",
                     (False, True): "read \u2717  write \u2713", (False, False): "no read, no write"}[read, write]
        fill = LINK_FILL[link] if (read or write) else LINK_FILL["none"]
        tip = f"card {a} {ARROW} card {b}: " + (", ".join(sorted(caps)) or "no caps") + (
            f" (caps word {entry['caps_word']:#x})" if entry and isinstance(entry.get("caps_word"), int) else "")
        return (f'<g data-testid="p2p-cell-{a}-{b}" data-link="{link}" data-read="{str(read).lower()}" '
                f'data-write="{str(write).lower()}"><title>{escape(tip)}</title>'
                f'<rect x="{x + 2}" y="{y + 2}" width="{CELL_W - 4}" height="{CELL_H - 4}" rx="6" fill="{fill}"/>'
                + _text(x + CELL_W / 2, y + 27, link if a != b else f"{link} (same card)", size=14,
                        weight="bold", fill="#ffffff" if link != "none" else "#222")
                + _text(x + CELL_W / 2, y + 46, line2, size=11, fill="#ffffff" if link != "none" else "#222")
                + "</g>")

    legend = ["green NVLink, teal C2C, amber PCIe, grey: no P2P path (or neither reads nor writes allowed)",
              "read / write: RM's READS_SUPPORTED / WRITES_SUPPORTED for the pair; hover a cell for every cap"]
    return _grid([c.index for c in cards], labels, cell, title, "p2p-matrix", legend, f"card a (row) {ARROW} card b")


# -- what the pairs did: median GB/s and pass/fail -----------------------------------------

def _key(key) -> tuple[int, int]:
    """(s, t), or the certificate's "s->t" text."""
    if isinstance(key, str) and "->" in key:
        key = tuple(key.split("->"))
    try:
        s, t = key
        return int(s), int(t)
    except (TypeError, ValueError):
        raise ValueError(f"pair key {key!r} is not (card s, card t)") from None


def _counts(cell: dict, step: str) -> tuple[int, int]:
    passed, total = cell.get(step) or (0, 0)
    if not (isinstance(passed, int) and isinstance(total, int) and 0 <= passed <= total):
        raise ValueError(f"{step} must be [passed, total] with 0 <= passed <= total, not {cell.get(step)!r}")
    return passed, total


def _median(cell: dict) -> float | None:
    values = cell.get("gbps") or []
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values):
        raise ValueError(f"gbps must be finite, non-negative numbers, not {values!r}")
    return statistics.median(values) if values else None


def scale_colour(value: float, low: float, high: float) -> str:
    """Light for the slowest pair, dark for the fastest; one value alone is dark."""
    f = 1.0 if high <= low else (value - low) / (high - low)
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(SCALE_LOW, SCALE_HIGH))


def bandwidth_heatmap_svg(pairs: dict) -> str:
    """pairs: (card s, card t) -> {"gbps": [...], "setup"/"read"/"write": [passed, total]}, as
    rmpeer.render.table.pair_cells returns (or certificate.json's "s->t" keys)."""
    title = "Peer copies: median steady GB/s per card pair"
    table = {_key(k): v for k, v in pairs.items()}
    if not table:
        return _empty("bandwidth-heatmap", title, "no per-pair results (no read/write test ran)")
    medians = {k: _median(v) for k, v in table.items()}
    seen = [m for m in medians.values() if m is not None]
    low, high = (min(seen), max(seen)) if seen else (0.0, 0.0)
    cards = sorted({c for k in table for c in k})
    labels = {c: (f"card {c}", "") for c in cards}

    def cell(s, t, x, y):
        if (s, t) not in table:
            return (f'<g data-testid="bw-cell-{s}-{t}" data-status="none"><rect x="{x + 2}" y="{y + 2}" '
                    f'width="{CELL_W - 4}" height="{CELL_H - 4}" rx="6" fill="{NO_DATA_FILL}"/>'
                    + _text(x + CELL_W / 2, y + 37, "not tested", fill="#777") + "</g>")
        counts = {step: _counts(table[(s, t)], step) for step in STEPS}
        failed = [step for step, (p, n) in counts.items() if p < n]
        marks = "  ".join(f"{step[0].upper()}{CROSS if step in failed else TICK}"
                          + (f" {n - p}/{n}" if step in failed else "") for step, (p, n) in counts.items() if n)
        median = medians[(s, t)]
        fill = NO_DATA_FILL if median is None else scale_colour(median, low, high)
        dark = median is not None and (high <= low or (median - low) / (high - low) > 0.45)
        ink = "#ffffff" if dark else "#222"
        stroke = f' stroke="{FAIL_STROKE}" stroke-width="4"' if failed else ""
        # failed of total, as the terminal's table counts ("R:FAIL 4/5")
        tip = f"card {s} {ARROW} card {t}: " + ", ".join(f"{step} {n - p}/{n} failed" for step, (p, n) in counts.items())
        if median is not None:
            tip += f"; {len(table[(s, t)]['gbps'])} copies, median {median:.1f} GB/s"
        return (f'<g data-testid="bw-cell-{s}-{t}" data-status="{"fail" if failed else "pass"}" '
                f'data-gbps="{"" if median is None else f"{median:.1f}"}" data-fill="{fill}">'
                f"<title>{escape(tip)}</title>"
                f'<rect x="{x + 2}" y="{y + 2}" width="{CELL_W - 4}" height="{CELL_H - 4}" rx="6" fill="{fill}"{stroke}/>'
                + _text(x + CELL_W / 2, y + 28, "no copies" if median is None else f"{median:.1f} GB/s",
                        size=15, weight="bold", fill=ink)
                + _text(x + CELL_W / 2, y + 47, marks or "no checks ran",
                        size=11, fill=FAIL_STROKE if failed and not dark else ink) + "</g>")

    legend = [f"colour: light = slowest pair ({low:.1f} GB/s) \u2192 dark = fastest ({high:.1f} GB/s); "
              "red frame: a check failed",
              "S R W: setup / read / write checks, \u2713 all passed, \u2717 failed/total where one failed"]
    return _grid(cards, labels, cell, title, "bandwidth-heatmap", legend, f"card s (row) {ARROW} card t")
