"""`rmpeer diff`'s words: the terminal table and the JSON document, as text and values
(rmpeer.diff.write writes --json and --alluredir)."""

from __future__ import annotations

import json
import os
import sys

from rmpeer.diff.side import CLOCK_PHASES, MISSING, UNBOOSTED_PHASES, VOLATILE, percent
from rmpeer.render.text import escaped

CELL = 46   # widest value cell in the table; JSON holds the whole value
KEY = 64    # widest key cell (cut at the front: a test id's end names the case)


def _colour(text: str, code: str) -> str:
    tty = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return f"\033[{code}m{text}\033[0m" if tty else text


def show(value) -> str:
    """A value for a person: absent, a number, a word, or compact JSON."""
    if value is MISSING:
        return "absent"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), default=str)


def _cut(text: str, width: int = CELL, *, front: bool = False) -> str:
    if len(text) <= width:
        return text
    return "..." + text[3 - width:] if front else text[: width - 3] + "..."


def describe(side) -> str:
    c = side.context
    bits = [f"{side.kind} of {c.get('label') or '?'}"]
    if c.get("created"):
        bits.append(f"made {c['created']}")
    bits.append(f"driver {c.get('driver') or '?'}, ABI {c.get('abi') or '?'}, {c.get('cards')} card(s)")
    if c.get("signature"):
        bits.append(f"signature: {c['signature']}")
    return escaped(f"{side.path} ({'; '.join(bits)})")


def coverage_line(cover) -> str:
    if cover.common is None:
        return "compared: everything both files hold (one does not say which layouts it ran)"
    line = f"compared: layouts {', '.join(sorted(cover.common)) or 'none in common'}"
    for label, only in (("A", cover.only_a), ("B", cover.only_b)):
        if only:
            line += f"; only in {label} (left out): {', '.join(only)}"
    return line


def tolerance_line(tolerance) -> str:

    return f"tolerance: ±{percent(tolerance)} on bandwidth per pair and on boosted and after-traffic clock MHz"


def left_out(aspects) -> dict:
    """Volatile rule -> how many fields it left out, over all aspects."""
    total: dict = {}
    for x in aspects:
        for rule, n in x.left_out.items():
            total[rule] = total.get(rule, 0) + n
    return total


def left_out_line(aspects) -> str:
    rules = left_out(aspects)
    if not rules:
        return "left out as volatile: nothing"
    return "left out as volatile: " + ", ".join(f"{rule} ({n})" for rule, n in rules.items())


def render_table(a, b, aspects, cover, tolerance, *, limit: int = 25) -> str:
    """The terminal table. Every word taken from a file (a layout's name, a phase, a struct,
    a selection's source) is escaped before any colour is added: a file may be another user's."""
    lines = [f"A: {describe(a)}", f"B: {describe(b)}", escaped(coverage_line(cover)), tolerance_line(tolerance),
             escaped(left_out_line(aspects)), ""]
    for aspect in aspects:
        name, info = escaped(aspect.name), escaped("; ".join(aspect.info))
        if aspect.not_comparable:
            lines.append(f"{name}: not comparable: {escaped(aspect.not_comparable)}")
        elif not aspect.differs:
            lines.append(f"{name}: same" + (f" ({info})" if info else ""))
        else:
            lines.append(_colour(f"{name}: {len(aspect.differences)} differ", "31") + (f" ({info})" if info else ""))
            lines += _rows(("", "A", "B"), [(escaped(str(k)), escaped(show(va)), escaped(show(vb)))
                                            for k, va, vb in aspect.differences], limit)
    differing = [escaped(x.name) for x in aspects if x.differs]
    lines.append("")
    lines.append(_colour(f"BEHAVIOUR DIFFERS: {', '.join(differing)}", "31") if differing
                 else _colour("SAME BEHAVIOUR", "32") + (" (not comparable: "
                 + ", ".join(escaped(x.name) for x in aspects if x.not_comparable) + ")"
                 if any(x.not_comparable for x in aspects) else ""))
    return "\n".join(lines)


def _jsonable(value):
    return None if value is MISSING else value


def to_json(a, b, aspects, cover, tolerance) -> dict:

    why = {name: text for name, text, _ in VOLATILE}
    why.update({f"{phase} clock MHz": text for phase, text in {**CLOCK_PHASES, **UNBOOSTED_PHASES}.items()})
    return {
        "tool": "rmpeer diff", "tolerance": tolerance, "tolerance_text": f"±{percent(tolerance)}",
        "tolerance_applies_to": ["bandwidth per pair", "boosted and after-traffic clock MHz"],
        "a": {"path": a.path, "kind": a.kind, **a.context}, "b": {"path": b.path, "kind": b.kind, **b.context},
        "coverage": {"layouts_compared": None if cover.common is None else sorted(cover.common),
                     "only_in_a": cover.only_a, "only_in_b": cover.only_b},
        "left_out": {rule: {"fields": n, "why": why.get(rule, "")} for rule, n in left_out(aspects).items()},
        "same": not any(x.differs for x in aspects),
        "aspects": [{"name": x.name, "source": x.source, "comparable": not x.not_comparable,
                     "why_not": x.not_comparable or None, "differs": x.differs, "info": x.info,
                     "not_comparable_fields": x.absent, "left_out": dict(x.left_out),
                     "differences": [{"key": str(k), "a": _jsonable(va), "b": _jsonable(vb),
                                      "a_missing": va is MISSING, "b_missing": vb is MISSING}
                                     for k, va, vb in x.differences]}
                    for x in aspects],
    }


# ---- two sets of hosts (rmpeer.diff.sets) ------------------------------------------------------

def _hosts(names: list, limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _kinds(hosts: list) -> str:
    counts: dict = {}
    for h in hosts:
        counts[h.kind] = counts.get(h.kind, 0) + 1
    return ", ".join(f"{kind} ({n})" for kind, n in sorted(counts.items()))


def _rows(header: tuple, rows: list, limit: int) -> list:
    """A table's lines under `header`: each column as wide as its widest cell (at most KEY for
    the first, cut at its front; CELL for the others), `limit` rows (0: all) and how many more."""
    shown = rows if limit <= 0 else rows[:limit]
    widths = [min(KEY if i == 0 else CELL, max(len(r[i]) for r in shown + [header])) for i in range(len(header))]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row in shown:
        lines.append("  " + "  ".join(_cut(c, w, front=(i == 0)).ljust(w)
                                      for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    if len(rows) > len(shown):
        lines.append(f"  ... and {len(rows) - len(shown)} more (--limit 0 shows all; --json writes all)")
    return lines


def _gbps(value) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_set_table(given_a: str, given_b: str, a: list, b: list, found, unreadable: list, tolerance,
                     *, limit: int = 25) -> str:
    """The terminal table of a set diff (rmpeer.diff.sets.SetDiff `found`): what each set
    holds, how its hosts were matched, then one row per change with the hosts it is on, and
    the bandwidth per kind of pair. Every word from a file is escaped."""
    matched = len(found.pairs)
    by_node = sum(p.by == "node" for p in found.pairs)
    lines = [escaped(f"A: {len(a)} host(s) in {given_a}: {_kinds(a)}"),
             escaped(f"B: {len(b)} host(s) in {given_b}: {_kinds(b)}"),
             escaped(f"matched: {matched} ({by_node} by node, {matched - by_node} by host kind); only in A: "
                     f"{_hosts([h.name for h in found.only_a]) or 'none'}; only in B: "
                     f"{_hosts([h.name for h in found.only_b]) or 'none'}"),
             tolerance_line(tolerance)]
    for path, why in unreadable:
        lines.append(escaped(f"unreadable (left out): {path}: {why}"))
    lines.append("")
    of = f"of {matched}"
    for title, wanted in (("RM steps whose statuses changed", ("RM statuses", "RM call counts")),
                          ("struct sizes that changed", ("struct sizes",)), ("other differences", None)):
        rows = [c for c in found.changes if (c["aspect"] in wanted if wanted else
                                             c["aspect"] not in ("RM statuses", "RM call counts", "struct sizes"))]
        if not rows:
            lines.append(f"{title}: none")
            continue
        lines.append(_colour(f"{title}: {len(rows)}", "31"))
        lines += _rows(({"RM statuses": "step", "struct sizes": "struct"}.get((wanted or ("",))[0], "what"),
                        "A", "B", "hosts"),
                       [(escaped(c["key"] if wanted else f"{c['aspect']}: {c['key']}"), escaped(c["a"]),
                         escaped(c["b"]), escaped(f"{len(c['hosts'])} {of}: {_hosts(c['hosts'])}"))
                        for c in rows], limit)
    if found.bandwidth:
        lines.append(f"bandwidth per kind of pair (GB/s, each host's median; ±{percent(tolerance)}):")
        lines += _rows(("kind of pair", "A median", "A min", "B median", "B min", "moved beyond", "moved most"),
                       [(escaped(r["kind"]), _gbps(r["a"]["median"]), _gbps(r["a"]["min"]), _gbps(r["b"]["median"]),
                         _gbps(r["b"]["min"]), f"{r['beyond']} of {r['compared']}",
                         escaped(", ".join(f"{m['b']} {m['change']:+.1%}" for m in r["moved"]) or "-"))
                        for r in found.bandwidth], limit)
    else:
        lines.append("bandwidth per kind of pair: no host of either set measured any")
    for aspect, hosts in found.not_comparable.items():
        lines.append(escaped(f"not comparable: {aspect} on {len(hosts)} {of} host(s) ({_hosts(hosts)})"))
    lines.append("")
    differing = [p for p in found.pairs if p.differs]
    aspects = sorted({x.name for p in differing for x in p.aspects if x.differs})
    lines.append(_colour(escaped(f"BEHAVIOUR DIFFERS on {len(differing)} of {matched} matched host(s): "
                                 f"{', '.join(aspects)}"), "31") if differing else
                 _colour(f"SAME BEHAVIOUR on all {matched} matched host(s)", "32"))
    return "\n".join(lines)


def set_to_json(given_a: list, given_b: list, a: list, b: list, found, unreadable: list, tolerance) -> dict:
    """The set diff as one JSON document: every pair's own comparison, and the changes counted."""
    def host(h):
        return {"name": h.name, "kind": h.kind, "path": h.side.path, "file": h.side.kind, **h.side.context}

    return {
        "tool": "rmpeer diff (sets)", "tolerance": tolerance, "tolerance_text": f"±{percent(tolerance)}",
        "a": {"given": given_a, "hosts": [host(h) for h in a]}, "b": {"given": given_b, "hosts": [host(h) for h in b]},
        "unreadable": [{"path": p, "why": why} for p, why in unreadable],
        "same": not found.differs,
        "matched": [{"a": p.a.name, "b": p.b.name, "by": p.by, "differs": p.differs,
                     "differing_aspects": [x.name for x in p.aspects if x.differs]} for p in found.pairs],
        "only_in_a": [h.name for h in found.only_a], "only_in_b": [h.name for h in found.only_b],
        "changes": [{**c, "count": len(c["hosts"])} for c in found.changes],
        "bandwidth": found.bandwidth,
        "not_comparable": found.not_comparable,
    }
