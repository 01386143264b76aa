"""From the checks' results to a verdict: the card x card table, the reasons (one per root
cause, however many tests it took down), and the certificate's compact test list."""

from __future__ import annotations

from collections import defaultdict

MESSAGE_CHARS = 300      # a test's message in the certificate and in a reason
REASON_TESTS = 3         # tests named per reason; the rest are counted
REASONS_SHOWN = 20

CERTIFIED, NOT_CERTIFIED, DEGRADED = "CERTIFIED", "NOT CERTIFIED", "DEGRADED"


def short(text: str, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def test_name(nodeid: str) -> str:
    return nodeid.split("::")[-1].split("[")[0]


def pair_table(tests: list) -> dict:
    """(card s, card t) -> counts of setup/read/write outcomes and the steady GB/s seen."""
    table = defaultdict(lambda: {"setup": [0, 0], "read": [0, 0], "write": [0, 0], "gbps": []})
    kinds = {"test_map": "setup", "test_reservation": "setup", "test_read": "read", "test_write": "write"}
    for test in tests:
        p = test["params"]
        name = test_name(test["nodeid"])
        if name not in kinds or "s" not in p or test["outcome"] == "skipped":
            continue
        cell = table[(p["cards"][p["s"]], p["cards"][p["t"]])]
        counts = cell[kinds[name]]
        counts[1] += 1
        counts[0] += test["outcome"] == "passed"
        bw = test.get("properties", {}).get("bandwidth")
        if bw and bw.get("steady_gbps"):
            cell["gbps"].append(bw["steady_gbps"])
    return table


def _cell(c: dict) -> str:
    parts = []
    for key, tag in (("setup", "S"), ("read", "R"), ("write", "W")):
        passed, total = c[key]
        parts.append(f"{tag}:-" if not total else f"{tag}:ok" if passed == total else f"{tag}:FAIL {total - passed}/{total}")
    gbps = sorted(c["gbps"])
    return " ".join(parts) + (f" {gbps[len(gbps) // 2]:.0f} GB/s" if gbps else "")


def render_table(table: dict) -> str:
    """card x card: setup (pairs, reservations, maps), read and write verdicts, median GB/s."""
    if not table:
        return "(no per-pair results)"
    cards = sorted({c for key in table for c in key})
    cells = {(a, b): _cell(table[(a, b)]) if (a, b) in table else "-" for a in cards for b in cards}
    width = max(len(v) for v in cells.values()) + 3
    lines = ["session on \\ window of".ljust(24) + "".join(f"card {b}".ljust(width) for b in cards)]
    lines += [f"card {a}".ljust(24) + "".join(cells[(a, b)].ljust(width) for b in cards) for a in cards]
    lines.append("S setup (pair, reservation, map), R read, W write through the windows: ok when every check "
                 "passed; GB/s: median steady copy rate at the checks' extent (fitness figures below)")
    return "\n".join(lines)


def render_fitness(fitness: dict) -> str:
    """Clocks per card and phase, and the bandwidth figures (GB/s) of the run."""
    lines = ["clocks (P-state through RM; MHz graphics/memory through NVML):"]
    for phase, cards in fitness.get("clocks", {}).items():
        lines.append(f"  {phase:<14}" + "  ".join(
            f"card {c}: {r.get('graphics_mhz')}/{r.get('memory_mhz')} MHz {r.get('pstate')}" for c, r in cards.items()))
    boost = fitness.get("boost", {})
    lines.append(f"  boost: {'asked' if boost.get('asked') else 'not asked (--no-boost)'}")
    figures = fitness.get("bandwidth") or []
    if figures:
        lines.append(f"bandwidth at {figures[0]['bytes'] >> 20} MiB (median steady GB/s; first copy apart):")
        for f in figures:
            pair = "all cards" if f["op"] == "all" else f"{f['src_card']}->{f['dst_card']}"
            lines.append(f"  {f['op']:<14} {pair:<10} {f['gbps']:7.1f}   (first {f['first_gbps']:.1f}, "
                         f"spread {f['spread']:.1%})")
    links = fitness.get("links", {})
    for card, h in links.items():
        lines.append(f"  card {card}: " + (f"{h.get('active')} active NVLinks" if h.get("supported")
                                           else f"no NVLink ({h.get('reason')})"))
    return "\n".join(lines)


def grouped_reasons(tests: list) -> list[str]:
    """One reason per distinct failure, naming a few of the tests it took down."""
    groups: dict[str, list] = {}
    for t in tests:
        if t["outcome"] in ("failed", "error"):
            first = (t.get("message") or t["outcome"]).strip().splitlines() or [t["outcome"]]
            groups.setdefault(short(first[0], 200), []).append(test_name(t["nodeid"]) + _pair_of(t))
    reasons = []
    for message, names in groups.items():
        shown = ", ".join(names[:REASON_TESTS]) + (f" and {len(names) - REASON_TESTS} more" if len(names) > REASON_TESTS else "")
        reasons.append(f"{message} ({len(names)} test{'s' if len(names) > 1 else ''}: {shown})")
    return reasons


def _pair_of(t) -> str:
    p = t.get("params", {})
    where = f"{p['layout']}" if "layout" in p else ""
    if "s" in p:
        where += f"/s{p['s']}->t{p['t']}"
    return f"[{where}]" if where else ""


def verdict(tests: list, topology_problems: list, fitness_problems: list) -> tuple[str, list]:
    """CERTIFIED, NOT CERTIFIED (a conformance check failed), or DEGRADED (correct, but
    below the host's floors or with link errors or Xids); and the reasons."""
    hardware = [t for t in tests if "target" in t.get("params", {})]
    reasons = grouped_reasons(tests)
    if not [t for t in hardware if t["outcome"] != "skipped"]:
        reasons.append("no hardware test ran")
    reasons += [f"host does not match the expected topology: {p}" for p in topology_problems]
    if reasons:
        return NOT_CERTIFIED, reasons
    if fitness_problems:
        return DEGRADED, list(fitness_problems)
    return CERTIFIED, []


def compact_tests(tests: list) -> list:
    """The certificate's test list: id, outcome, bounded message, measurements (parameters
    are in the id; a failed test keeps them whole)."""
    out = []
    for t in tests:
        entry = {"nodeid": t["nodeid"], "outcome": t["outcome"]}
        if t["outcome"] in ("failed", "error"):
            entry.update(params=t.get("params", {}), message=short(t.get("message", "")))
        elif t.get("message") and t["outcome"] == "skipped":
            entry["message"] = short(t["message"], 120)
        bw = (t.get("properties") or {}).get("bandwidth")
        if bw:
            entry["gbps"] = bw.get("steady_gbps")
        out.append(entry)
    return out
