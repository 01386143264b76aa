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
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError

# Facts that differ between any two runs, or that name a machine rather than describe RM.
VOLATILE = {"created", "t_ns", "hostname", "seed", "duration", "duration_s", "duration_ns"}
IDENTITY = {"uuid", "pci", "gpu_id", "minor", "driver_version", "flavour", "version_source",
            "abi_release", "abi_forced", "abi_note"}
OUTCOME_OPS = {"ioctl", "open", "close", "mmap", "munmap", "mem.wait", "mem.compare"}
MISSING = object()


@dataclass
class Side:
    """What one file tells; None where it cannot tell it, with the reason in `why_not`."""

    path: str
    kind: str                                   # transcript | certificate
    context: dict = field(default_factory=dict)
    calls: dict | None = None                   # label -> outcomes in call order
    structs: dict | None = None                 # struct -> size in bytes
    facts: dict | None = None
    tests: dict | None = None                   # test id without target -> outcome
    verdict: str | None = None
    bandwidth: dict | None = None               # pair key -> GB/s
    sources: dict = field(default_factory=dict)
    why_not: dict = field(default_factory=dict)


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


# ---- reading A and B --------------------------------------------------------------------

def _text(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def load(path_text: str) -> Side:
    path = Path(path_text)
    if not path.is_file():
        raise ConfigError(f"{path_text}: no such file (give a transcript *.jsonl[.gz] or a certificate *.json[.gz])")
    try:
        text = _text(path)
        if not text.strip():
            raise ValueError("the file is empty")
        first = text.lstrip().split("\n", 1)[0]
        head = json.loads(first) if first.startswith("{") and first.rstrip().endswith("}") else None
        if isinstance(head, dict) and "header" in head:
            return _transcript(path)
        doc = json.loads(text)
        if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list) or not isinstance(doc.get("host"), dict):
            raise ConfigError(f"{path_text}: not an rmpeer transcript or certificate (no header line; no 'host' "
                              f"and 'tests' in the JSON)")
        return _certificate(path, doc)
    except (OSError, EOFError, ValueError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError, TypeError,
            KeyError, AttributeError, IndexError) as exc:
        raise ConfigError(f"{path_text}: not a readable rmpeer transcript or certificate ({_short(exc)})") from None


def _short(exc) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


def outcome(rec) -> str:
    """What RM (or the copy engine) answered to one call, as a word."""
    if rec.op == "mem.wait":
        return "arrived" if rec.result else "timed out"
    if rec.op == "mem.compare":
        return "differs" if rec.extra.get("mismatch") else "equal"
    if rec.status_name:
        return rec.status_name
    if rec.status:
        return f"status {rec.status:#x}"
    return f"errno {rec.errno}" if rec.errno else "ok"


def _transcript(path: Path) -> Side:
    from .shim.records import read_transcript

    header, lines = read_transcript(path)
    notes = [line for line in lines if isinstance(line, dict)]
    records = [line for line in lines if not isinstance(line, dict)]
    driver = next((n for n in notes if n.get("note") == "driver"), {})
    host = next((n for n in notes if n.get("note") == "host"), None)
    side = Side(str(path), "transcript")
    side.context = {"label": header.get("label"), "created": header.get("created"),
                    "driver": driver.get("version"), "abi": driver.get("abi"), "cards": header.get("cards"),
                    "layouts": [name for name, _ in header.get("run", {}).get("layouts", [])]}
    side.calls = {}
    for rec in records:
        if rec.op in OUTCOME_OPS:
            key = rec.label if rec.op == "ioctl" else f"{rec.label} [{rec.op}]"
            side.calls.setdefault(key, []).append(outcome(rec))
    side.structs = {}
    for rec in records:
        if rec.op == "ioctl" and rec.struct:
            side.structs[rec.struct] = len(rec.request) // 2
        if rec.op == "ioctl" and rec.payload:
            side.structs[rec.payload.struct] = len(rec.payload.request) // 2
    side.sources["struct sizes"] = "the requests recorded"
    if host is not None:
        side.facts = host["facts"]
    else:
        side.why_not["reply fields"] = "the transcript holds no host note (cut short?)"
    verdicts = [n for n in notes if "nodeid" in n and "outcome" in n]   # should a recording note them
    if verdicts:
        side.tests = {_test_id(n): n["outcome"] for n in verdicts}
    else:
        side.why_not["test outcomes"] = "a transcript records calls, not test outcomes (diff the certificates)"
    for note in (n for n in notes if n.get("note") == "bandwidth"):
        rows = next((v for v in note.values() if isinstance(v, list) and v and isinstance(v[0], dict)), [])
        side.bandwidth = _bandwidth(rows)
        side.sources["bandwidth"] = "the transcript's bandwidth note"
    if side.bandwidth is None:
        side.why_not["bandwidth"] = "a transcript's copy records carry no GB/s, and it has no bandwidth note"
    return side


def _certificate(path: Path, doc: dict) -> Side:
    host = doc["host"]
    side = Side(str(path), "certificate")
    subject = doc.get("subject") or {}
    side.context = {"label": subject.get("recorded_label") or _target(doc["tests"]), "created": doc.get("created"),
                    "driver": host.get("driver_version"), "abi": host.get("abi_release"),
                    "cards": len(host.get("cards") or []), "subject": subject.get("kind")}
    side.facts = host
    side.why_not["calls"] = "a certificate holds test results, not RM calls (diff the transcripts)"
    side.verdict = doc.get("verdict")
    side.tests = {}
    for t in doc["tests"]:
        if isinstance(t, dict) and "nodeid" in t:
            side.tests[_test_id(t)] = t.get("outcome")
    side.structs = _abi_struct_sizes(host.get("abi_release"))
    if side.structs is None:
        side.why_not["struct sizes"] = f"its ABI {host.get('abi_release')!r} is not an entry of matrices/drivers.yaml"
    side.sources["struct sizes"] = f"drivers.yaml entry {host.get('abi_release')}"
    fitness = doc.get("fitness") if isinstance(doc.get("fitness"), dict) else {}
    rows = fitness.get("bandwidth") or doc.get("bench")
    if isinstance(rows, list) and rows:
        side.bandwidth, side.sources["bandwidth"] = _bandwidth(rows), "the certificate's bandwidth list"
    else:
        tests = [t for t in doc["tests"] if isinstance(t, dict)]
        rows = [dict(t["properties"]["bandwidth"], layout=(t.get("params") or {}).get("layout"))
                for t in tests if isinstance((t.get("properties") or {}).get("bandwidth"), dict)]
        side.bandwidth, side.sources["bandwidth"] = _bandwidth(rows), "the read/write tests' steady GB/s"
        if not rows:
            side.bandwidth, side.why_not["bandwidth"] = None, "the certificate records no bandwidth"
    return side


def _target(tests) -> str | None:
    return next(((t.get("params") or {}).get("target") for t in tests
                 if isinstance(t, dict) and (t.get("params") or {}).get("target")), None)


def _test_id(test: dict) -> str:
    """The test id without its target ('h200x2/', 'replay:h200x2/'), so two hosts align."""
    nodeid = test["nodeid"]
    target = (test.get("params") or {}).get("target")
    if target:
        nodeid = nodeid.replace(f"[replay:{target}/", "[").replace(f"[{target}/", "[")
    return re.sub(r"\[replay:[^/\]]*/", "[", nodeid).removeprefix("suites/")


def _abi_struct_sizes(release) -> dict | None:
    from .abi import DriverMatrix

    matrix = DriverMatrix()
    if release not in matrix.by_version:
        return None
    return {name: spec["size"] for name, spec in matrix.merged(release)["structs"].items()}


def _bandwidth(rows) -> dict:
    """{pair key: median GB/s} from rows such as {src_card, dst_card, op, bytes, gbps} or
    {layout, op, s, t, bytes, steady_gbps}."""
    samples: dict = {}
    for row in rows:
        if not isinstance(row, dict):
            continue
        gbps = row.get("gbps", row.get("steady_gbps"))
        if not isinstance(gbps, (int, float)):
            continue
        src = next((row[k] for k in ("src_card", "src", "s") if k in row), "?")
        dst = next((row[k] for k in ("dst_card", "dst", "t") if k in row), "?")
        card = "card " if "src_card" in row else "s"
        size = row.get("bytes")
        parts = [row.get("layout"), row.get("op"), f"{card}{src}->{'' if card == 'card ' else 't'}{dst}",
                 f"{size >> 20} MiB" if isinstance(size, int) and size >= 1 << 20 else (f"{size} B" if size else None)]
        samples.setdefault(" ".join(str(p) for p in parts if p is not None), []).append(float(gbps))
    return {k: statistics.median(v) for k, v in sorted(samples.items())}


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
