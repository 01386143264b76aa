"""Reading `rmpeer diff`'s A and B: a transcript or a certificate, into what it tells.

Each file becomes a Side: the outcome of every call by step label, struct sizes, the host
facts, test outcomes, bandwidth per pair; None where the file cannot tell (with the reason),
so that `diff` can say "not comparable" rather than "same".
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

OUTCOME_OPS = {"ioctl", "open", "close", "mmap", "munmap", "mem.wait", "mem.compare"}


MISSING = object()   # a value one side does not have (rendered "absent")

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
                    "layouts": [entry[0] for entry in header.get("run", {}).get("layouts", [])]}
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
    fitness = next((n.get("summary") for n in notes if n.get("note") == "fitness"), None)
    if host is not None:
        side.facts = {**host["facts"], **_fitness_facts(fitness)}
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
    target = doc.get("target") or _target(doc["tests"])
    side.context = {"label": subject.get("recorded_label") or target, "created": doc.get("created"),
                    "driver": host.get("driver_version"), "abi": host.get("abi_release"),
                    "cards": len(host.get("cards") or []), "subject": subject.get("kind")}
    fitness = doc.get("fitness") if isinstance(doc.get("fitness"), dict) else {}
    side.facts = {**host, **_fitness_facts(fitness)}
    side.why_not["calls"] = "a certificate holds test results, not RM calls (diff the transcripts)"
    side.verdict = doc.get("verdict")
    side.tests = {}
    for t in doc["tests"]:
        if isinstance(t, dict) and "nodeid" in t:
            side.tests[_test_id(t, target)] = t.get("outcome")
    side.structs = _abi_struct_sizes(host.get("abi_release"))
    if side.structs is None:
        side.why_not["struct sizes"] = f"its ABI {host.get('abi_release')!r} is not an entry of matrices/drivers.yaml"
    side.sources["struct sizes"] = f"drivers.yaml entry {host.get('abi_release')}"
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
    """The target a certificate's tests ran against: from their parameters, else from the
    first test id that names one ('...[h200x2/one-per-card/s0->t1]')."""
    named = next(((t.get("params") or {}).get("target") for t in tests
                  if isinstance(t, dict) and (t.get("params") or {}).get("target")), None)
    if named:
        return named
    for t in tests:
        m = re.search(r"\[(replay:[^/\]]+|[a-z0-9]+x\d+)[/\]]", t.get("nodeid", "") if isinstance(t, dict) else "")
        if m:
            return m.group(1)
    return None


def _fitness_facts(fitness) -> dict:
    """What a run read of the clocks and the NVLinks, compared like the host facts."""
    if not isinstance(fitness, dict):
        return {}
    return {k: fitness[k] for k in ("clocks", "links") if fitness.get(k) is not None}


def _test_id(test: dict, target: str | None = None) -> str:
    """The test id without its target ('h200x2/', 'replay:h200x2/'), so two hosts align."""
    nodeid = test["nodeid"]
    target = (test.get("params") or {}).get("target") or target
    if target:
        for prefix in (f"replay:{target}", target):
            nodeid = nodeid.replace(f"[{prefix}/", "[").replace(f"[{prefix}]", "[]")
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
