"""`rmpeer diff A B`: what changed in RM's behaviour between two runs.

A and B are transcripts (`rmpeer certify --record`) or certificates (certificate.json,
replay-certificate.json, gzip or not): the same host on two drivers, or two hosts on one.
The aspects compared, each from whatever the two files hold:

- RM statuses: every call's outcome, grouped by its step label (not its sequence number,
  so runs of different length still align);
- struct sizes: request and params structs (observed in a transcript; from drivers.yaml's
  entry for a certificate's ABI);
- reply fields: the host facts RM gave (cards, caps, P2P matrix, copy engines, classes, and
  whatever later recordings add), compared recursively, volatile fields left out;
- test outcomes (certificates), the target label taken out of the test id;
- bandwidth per pair, outside a tolerance.
An aspect one of the files cannot show is reported as not comparable, never as equal.
Exit 0: same behaviour; 1: behaviour differs; 2: usage error (unreadable file, bad option).
Reading the files is diff_load.py; the table, JSON and Allure results are diff_report.py.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .diff_load import MISSING, Side, load
from .errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError

# Facts that differ between any two runs, or that name a machine rather than describe RM.
VOLATILE = {"created", "t_ns", "hostname", "seed", "duration", "duration_s", "duration_ns"}
IDENTITY = {"uuid", "pci", "gpu_id", "minor", "driver_version", "flavour", "version_source",
            "abi_release", "abi_forced", "abi_note"}


@dataclass
class Aspect:
    name: str
    source: str = ""
    differences: list = field(default_factory=list)   # (key, a, b)
    info: list = field(default_factory=list)
    not_comparable: str = ""

    @property
    def differs(self) -> bool:
        return bool(self.differences)


# ---- comparing ----------------------------------------------------------------------------

def _counts(outcomes) -> str:
    if not outcomes:
        return "not called"
    return ", ".join(f"{name} x{n}" for name, n in Counter(outcomes).most_common())


def compare_calls(a: Side, b: Side) -> list[Aspect]:
    statuses, counts = Aspect("RM statuses"), Aspect("RM call counts")
    for aspect in (statuses, counts):
        aspect.source = "every call's outcome, grouped by its step label"
        if a.calls is None or b.calls is None:
            aspect.not_comparable = _why_not(a, b, "calls")
    if statuses.not_comparable:
        return [statuses, counts]
    for label in sorted(set(a.calls) | set(b.calls)):
        sa, sb = a.calls.get(label, []), b.calls.get(label, [])
        if sa == sb:
            continue
        if set(sa) != set(sb):
            statuses.differences.append((label, _counts(sa), _counts(sb)))
        elif Counter(sa) != Counter(sb):
            counts.differences.append((label, _counts(sa), _counts(sb)))
        else:
            statuses.differences.append((label, "order: " + " ".join(sa[:6]), "order: " + " ".join(sb[:6])))
    return [statuses, counts]


def compare_structs(a: Side, b: Side) -> Aspect:
    aspect = Aspect("struct sizes", source=f"A: {a.sources.get('struct sizes')}; B: {b.sources.get('struct sizes')}")
    if a.structs is None or b.structs is None:
        aspect.not_comparable = _why_not(a, b, "struct sizes")
        return aspect
    for name in sorted(set(a.structs) & set(b.structs)):
        if a.structs[name] != b.structs[name]:
            aspect.differences.append((name, f"{a.structs[name]} bytes", f"{b.structs[name]} bytes"))
    for label, only in (("A", set(a.structs) - set(b.structs)), ("B", set(b.structs) - set(a.structs))):
        if only:
            aspect.info.append(f"used only in {label}: {', '.join(sorted(only))}")
    return aspect


def diff_tree(a, b, path: str = "") -> list[tuple]:
    """Every leaf where two JSON-like trees differ: (path, value in a, value in b)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in list(a) + [k for k in b if k not in a]:
            if key in VOLATILE or key in IDENTITY:
                continue
            out += diff_tree(a.get(key, MISSING), b.get(key, MISSING), f"{path}.{key}" if path else str(key))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if all(not isinstance(x, (dict, list)) for x in a + b):
            if a == b:
                return []
            only_a, only_b = sorted(set(a) - set(b), key=str), sorted(set(b) - set(a), key=str)
            if not only_a and not only_b:
                return [(path, "same items, other order" if sorted(a, key=str) == sorted(b, key=str)
                         else f"{len(a)} items", f"{len(b)} items")]
            return [(path, _items(a, only_a), _items(b, only_b))]
        out = [(f"{path} (count)", len(a), len(b))] if len(a) != len(b) else []
        for i in range(max(len(a), len(b))):
            out += diff_tree(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, f"{path}[{i}]")
        return out
    if a is MISSING or b is MISSING or a != b:
        return [(path, a, b)]
    return []


def _items(values, only) -> str:
    return f"{len(values)} items" + (f", only here: {', '.join(map(str, only))}" if only else "")


def _why_not(a: Side, b: Side, aspect: str) -> str:
    """Why an aspect cannot be compared, naming the file(s) that lack it."""
    reasons = [(name, s.why_not[aspect]) for name, s in (("A", a), ("B", b)) if aspect in s.why_not]
    if len(reasons) == 2 and reasons[0][1] == reasons[1][1]:
        return f"A and B: {reasons[0][1]}"
    return "; ".join(f"{name}: {why}" for name, why in reasons)


def compare_facts(a: Side, b: Side) -> Aspect:
    aspect = Aspect("reply fields", source="the host facts RM answered (volatile and identity fields left out)")
    if a.facts is None or b.facts is None:
        aspect.not_comparable = _why_not(a, b, "reply fields")
        return aspect
    aspect.differences = diff_tree(a.facts, b.facts)
    return aspect


def compare_tests(a: Side, b: Side) -> Aspect:
    aspect = Aspect("test outcomes", source="certificates' tests, target label taken out of the id")
    if a.tests is None or b.tests is None:
        aspect.not_comparable = _why_not(a, b, "test outcomes")
        return aspect
    if a.verdict != b.verdict:
        aspect.differences.append(("verdict", a.verdict, b.verdict))
    for test in sorted(set(a.tests) | set(b.tests)):
        oa, ob = a.tests.get(test, "absent"), b.tests.get(test, "absent")
        if oa != ob:
            aspect.differences.append((test, oa, ob))
    return aspect


def compare_bandwidth(a: Side, b: Side, tolerance: float) -> Aspect:
    aspect = Aspect(f"bandwidth (±{tolerance:.0%})" if tolerance * 100 == int(tolerance * 100)
                    else f"bandwidth (±{tolerance:.1%})",
                    source=f"A: {a.sources.get('bandwidth')}; B: {b.sources.get('bandwidth')}")
    if a.bandwidth is None or b.bandwidth is None:
        aspect.not_comparable = _why_not(a, b, "bandwidth")
        return aspect
    common = sorted(set(a.bandwidth) & set(b.bandwidth))
    for key in common:
        ga, gb = a.bandwidth[key], b.bandwidth[key]
        change = (gb - ga) / ga if ga else float("inf") if gb else 0.0
        if abs(change) > tolerance:
            aspect.differences.append((key, f"{ga:.1f} GB/s", f"{gb:.1f} GB/s ({change:+.1%})"))
    aspect.info.append(f"{len(common)} pairs compared")
    for label, only in (("A", set(a.bandwidth) - set(b.bandwidth)), ("B", set(b.bandwidth) - set(a.bandwidth))):
        if only:
            aspect.info.append(f"{len(only)} pairs measured only in {label}")
    if not common:
        aspect.not_comparable = "no pair was measured in both"
    return aspect


def compare(a: Side, b: Side, tolerance: float = 0.05) -> list[Aspect]:
    return [*compare_calls(a, b), compare_structs(a, b), compare_facts(a, b), compare_tests(a, b),
            compare_bandwidth(a, b, tolerance)]


# ---- the command --------------------------------------------------------------------------

def parse_tolerance(text: str) -> float:
    """'5%' or '5' (percent) -> 0.05."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%?\s*", str(text))
    if not m or float(m.group(1)) >= 1000:
        raise ConfigError(f"--tolerance {text!r}: give a percentage such as 5% or 0.5%")
    return float(m.group(1)) / 100


def add_parser(sub) -> None:
    d = sub.add_parser("diff", help="what changed in RM's behaviour between two runs (transcripts or certificates)",
                       description="Compares two runs (transcripts or certificates): RM statuses per step label, "
                       "calls per step, struct sizes, reply fields of the host facts, test outcomes, and "
                       "bandwidth per pair. An aspect a file cannot show is reported as not comparable.",
                       epilog="exit codes: 0 same behaviour, 1 behaviour differs, 2 usage error "
                       "(unreadable file, bad option)")
    d.add_argument("a", metavar="A", help="a transcript (*.jsonl[.gz]) or a certificate (*.json[.gz])")
    d.add_argument("b", metavar="B", help="the run to compare it with")
    d.add_argument("--tolerance", default="5%", help="bandwidth change allowed per pair (default 5%%)")
    d.add_argument("--json", metavar="FILE", help="also write every difference as JSON")
    d.add_argument("--alluredir", metavar="DIR", help="also write Allure results: one per aspect")
    d.add_argument("--limit", type=int, default=25, help="rows shown per aspect (default 25; 0: all)")


def run(args) -> int:
    from .diff_report import render_table, to_json, write_allure, write_json

    tolerance = parse_tolerance(args.tolerance)
    if args.json and not Path(args.json).resolve().parent.is_dir():
        raise ConfigError(f"--json {args.json}: its folder does not exist")
    if args.alluredir and Path(args.alluredir).exists() and not Path(args.alluredir).is_dir():
        raise ConfigError(f"--alluredir {args.alluredir}: exists and is not a folder")
    a, b = load(args.a), load(args.b)
    aspects = compare(a, b, tolerance)
    print(render_table(a, b, aspects, limit=args.limit))
    if args.json:
        write_json(args.json, to_json(a, b, aspects, tolerance))
    if args.alluredir:
        write_allure(args.alluredir, a, b, aspects, tolerance)
    return EXIT_NOT_CERTIFIED if any(x.differs for x in aspects) else EXIT_OK
