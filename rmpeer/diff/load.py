"""Reading `rmpeer diff`'s A and B into what each tells, one loader per kind of input:

- a recording (`certify --record`): every call, attributed to the layout whose segment it
  ran in; the host note; the fitness note (clocks, links, boost) where the recording has one;
- a certificate, format "rmpeer-result/1" (`RunResult.to_dict()`), read through
  `RunResult.from_dict`;
- a certificate of the earlier format (a dict with `host` and `tests`, as the certificates
  in docs/evidence/ are).

Each file becomes a Side (rmpeer.diff.side); a field is None where the file cannot tell it (the reason in
`why_not`), so that `diff` says "not comparable" rather than "same" or "differs".
"""

from __future__ import annotations

import gzip
import re
import statistics
import zlib
from pathlib import Path

from rmpeer.abi import DriverMatrix
from rmpeer.diff.side import EARLIER_METHODS, Side, step_family
from rmpeer.errors import ConfigError
from rmpeer.machine.signing import verify
from rmpeer.model.result import RunResult
from rmpeer.model.steps import MANIFEST_FORMAT, manifest
from rmpeer.paths import transcripts_dir
from rmpeer.safewrite import json_input, read_found
from rmpeer.shim.records import END_NOTE, read_transcript, read_unpacked
from rmpeer.tables.layouts import LayoutMatrix

OUTCOME_OPS = {"ioctl", "open", "close", "mmap", "munmap", "mem.wait", "mem.compare"}
# Segment kinds whose key names the layout they ran in ("setup:one-per-card",
# "test:test_cross_card_rw:test_read:one-per-card/s0->t1", "fresh:test_x:interleaved").
LAYOUT_SEGMENTS = {"setup", "traffic", "traffic-close", "teardown", "test", "fresh"}

PYTEST_IDS = "pytest node ids"


def _text(path: Path) -> str:
    return read_unpacked(path).decode("utf-8")


def load(path_text: str) -> Side:
    path = Path(path_text)
    if not path.is_file():
        if path.exists():      # a FIFO would block the read, a device would never end it
            raise ConfigError(f"{path_text}: not a regular file (give a recording *.jsonl[.gz] or a certificate "
                              f"*.json[.gz])")
        raise ConfigError(f"{path_text}: no such file (give a recording *.jsonl[.gz] or a certificate *.json[.gz])")
    try:
        text = _text(path)
        if not text.strip():
            raise ValueError("the file is empty")
        first = text.lstrip().split("\n", 1)[0]
        head = json_input(first) if first.startswith("{") and first.rstrip().endswith("}") else None
        if isinstance(head, dict) and "header" in head:
            return _recording(path)
        doc = json_input(text)
        if isinstance(doc, dict) and "format" in doc:
            return _result(path, doc)
        if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list) or not isinstance(doc.get("host"), dict):
            raise ConfigError(f"{path_text}: not an rmpeer recording or certificate (no header line; no 'host' "
                              f"and 'tests' in the JSON)")
        return _legacy_certificate(path, doc)
    except (OSError, EOFError, ValueError, zlib.error, gzip.BadGzipFile, UnicodeDecodeError, TypeError,
            KeyError, AttributeError, IndexError) as exc:
        raise ConfigError(f"{path_text}: not a readable rmpeer recording or certificate ({_short(exc)})") from None


def _short(exc) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


def outcome(rec) -> str:
    """What RM (or the copy engine) answered to one call, as a word."""
    if rec.op == "mem.wait":
        return "arrived" if rec.result else "did not arrive"   # the timeout, or the error notifier first
    if rec.op == "mem.compare":
        return "differs" if rec.extra.get("mismatch") else "equal"
    if rec.status_name:
        return rec.status_name
    if rec.status:
        return f"status {rec.status:#x}"
    return f"errno {rec.errno}" if rec.errno else "ok"


def segment_layout(key: str, layouts) -> str | None:
    """The layout a segment ran in, where its key names one of the run's layouts."""
    kind, _, rest = str(key).partition(":")
    if kind not in LAYOUT_SEGMENTS or not rest:
        return None
    name = rest.rsplit(":", 1)[-1].split("/", 1)[0]
    return name if name in layouts else None


# ---- what each side's rmpeer makes ---------------------------------------------------------
# The step families each rmpeer made, by when it made its recording: for every number of
# cards and family, the creation time of the earliest committed recording of a host of that
# many cards that holds it (FAMILIES_FILE, generated from the committed recordings by
# first_seen(); tests/diff/test_diff_versions.py checks it is current). A recording made
# before that time, of a host of as many cards, was made by an rmpeer that did not make the
# family yet. A family no recording of that many cards holds (alloc:p2p on one card) is the
# host's to make or not: never taken for rmpeer's. rmpeer's version was 0.1.0 throughout, so
# a recording's time tells its rmpeer apart, not its version.

FAMILIES_FILE = "step-families.json"


def first_seen(paths) -> dict:
    """{cards: {family: the earliest `created` of the recordings (paths) of hosts of that many
    cards holding a call of it}}, cards as text (JSON keys)."""
    seen: dict = {}
    for path in paths:
        header, lines = read_transcript(Path(path))
        created, cards = str(header.get("created") or ""), str(header.get("cards"))
        mine = seen.setdefault(cards, {})
        for line in lines:
            if isinstance(line, dict) or line.op not in OUTCOME_OPS:
                continue
            family = step_family(line.label if line.op == "ioctl" else f"{line.label} [{line.op}]")
            if created and (family not in mine or created < mine[family]):
                mine[family] = created
    return {cards: dict(sorted(families.items())) for cards, families in sorted(seen.items())}


def family_table() -> dict:
    """The committed table of first_seen (empty when it is missing or unreadable: then no
    family is taken for one a side's rmpeer did not make, and a difference is never hidden)."""
    try:
        doc = json_input(read_found(transcripts_dir() / FAMILIES_FILE, limit=1 << 20))
        table = doc.get("families") if isinstance(doc, dict) else None
        if not isinstance(table, dict):
            return {}
        return {str(c): {str(k): str(v) for k, v in fams.items()} for c, fams in table.items() if isinstance(fams, dict)}
    except (OSError, ValueError, ConfigError):
        return {}


MANIFEST_PARTS = {"families": dict, "checks": dict, "fields": list, "figures": dict}


def manifest_of(path: Path, doc) -> dict | None:
    """A file's manifest of what its rmpeer makes (rmpeer.model.steps), checked whole: None
    when the file has none (made before rmpeer wrote one); a malformed one is the file's fault,
    one line and exit 2, before anything is compared. An empty one is none: a run whose rmpeer
    could not read its own manifest (rmpeer.model.steps.manifest) says nothing of what it makes."""
    if doc is None or doc == {}:
        return None
    bad = (f"{path}: its manifest (what its rmpeer makes) is malformed: " if isinstance(doc, dict) else
           f"{path}: its manifest (what its rmpeer makes) is not an object")
    if not isinstance(doc, dict):
        raise ConfigError(bad)
    if doc.get("format") != MANIFEST_FORMAT:
        raise ConfigError(f"{bad}format {str(doc.get('format'))[:40]!r}, not {MANIFEST_FORMAT!r}")
    for part, kind in MANIFEST_PARTS.items():
        value = doc.get(part)
        if not isinstance(value, kind) or not all(isinstance(x, str) for x in value):
            raise ConfigError(f"{bad}{part} is not {'an object' if kind is dict else 'a list'} of names")
    if not all(isinstance(m, str) for m in doc["figures"].values()):
        raise ConfigError(f"{bad}figures does not name how each is timed")
    return {**{part: sorted(doc[part]) for part in MANIFEST_PARTS}, "figures": dict(sorted(doc["figures"].items()))}


def figure_methods(made: dict | None, gated, created: str | None = None) -> dict:
    """How a file's figures were timed: its manifest's figures. A recording with none says in
    its header whether its rmpeer had the gate (run.gated): today's methods
    (rmpeer.model.steps.manifest), the engines at once "ungated" where it had not, and a
    method as it was before a later change where the recording was made before it
    (rmpeer.diff.side.EARLIER_METHODS). A certificate with none does not say: {}
    (its figures are compared as they are)."""
    if made is not None:
        return dict(made["figures"])
    if gated is None:
        return {}
    today = dict(manifest().get("figures") or {})
    out = {op: ("ungated" if m == "gated" and not gated else m) for op, m in today.items()}
    for op, method, earlier, since in EARLIER_METHODS:
        if out.get(op) == method and created and str(created) < since:
            out[op] = earlier
    return out


def unmade_families(created, cards, calls) -> set:
    """The step families a recording's rmpeer did not make yet: those that first came in a
    recording of a host of as many cards made after it (and that it did not call)."""
    if not created:
        return set()
    made = {step_family(label) for _, label, _ in calls}
    table = family_table().get(str(cards), {})
    return {f for f, first in table.items() if first > str(created) and f not in made}


# ---- a recording ------------------------------------------------------------------------

def _recording(path: Path) -> Side:
    header, lines = read_transcript(path)
    notes = [line for line in lines if isinstance(line, dict)]
    if not any(n.get("note") == END_NOTE for n in notes):
        raise ConfigError(f"{path}: truncated: the recording has no end line (it was cut short), so its "
                          f"calls cannot stand for a run")
    driver = next((n for n in notes if n.get("note") == "driver"), {})
    host = next((n for n in notes if n.get("note") == "host"), None)
    side = Side(str(path), "transcript")
    run = header.get("run") or {}
    side.layouts = [entry[0] for entry in run.get("layouts", [])]
    side.context = {"label": header.get("label"), "created": header.get("created"),
                    "driver": driver.get("version"), "abi": driver.get("abi"), "cards": header.get("cards"),
                    "layouts": side.layouts, "boost": run.get("boost"), "tier": run.get("tier"),
                    "rmpeer": header.get("version")}
    side.calls, side.structs, layout = [], {}, None
    for line in lines:
        if isinstance(line, dict):
            if line.get("note") == "segment":
                layout = segment_layout(line.get("key"), side.layouts)
            continue
        if line.op in OUTCOME_OPS:
            key = line.label if line.op == "ioctl" else f"{line.label} [{line.op}]"
            side.calls.append((layout, key, outcome(line)))
        if line.op == "ioctl" and line.struct:
            side.structs[line.struct] = len(line.request) // 2
        if line.op == "ioctl" and line.payload:
            side.structs[line.payload.struct] = len(line.payload.request) // 2
    side.sources["calls"] = "every call the recording holds"
    side.sources["struct sizes"] = "the requests recorded"
    side.manifest = manifest_of(path, header.get("manifest"))
    side.figure_methods = figure_methods(side.manifest, bool(run.get("gated")), header.get("created"))
    side.unmade = unmade_families(header.get("created"), header.get("cards"), side.calls)
    side.recorded_families = {f for fams in family_table().values() for f in fams} or None
    if host is not None:
        side.facts = host["facts"]
    else:
        side.why_not["reply fields"] = "the recording holds no host note (cut short?)"
    fitness = next((n.get("summary") for n in notes if n.get("note") == "fitness"), None)
    _fitness(side, fitness, "the recording has no fitness note (made before clocks and links were recorded, "
                            "or cut short)")
    verdicts = [n for n in notes if "nodeid" in n and "outcome" in n]   # should a recording note them
    if verdicts:
        side.tests = {_test_id(n): (_test_layout(n, side.layouts), n["outcome"]) for n in verdicts}
        side.sources["tests"] = PYTEST_IDS
    else:
        side.why_not["test outcomes"] = "a recording records calls, not test outcomes (diff the certificates)"
    for note in (n for n in notes if n.get("note") == "bandwidth"):
        rows = next((v for v in note.values() if isinstance(v, list) and v and isinstance(v[0], dict)), [])
        side.bandwidth, side.bandwidth_ops = _bandwidth(rows), _ops(rows)
        side.sources["bandwidth"] = "the recording's bandwidth note"
    if side.bandwidth is None:
        side.why_not["bandwidth"] = "a recording's copy records carry no GB/s, and it has no bandwidth note"
    return side


def _fitness(side: Side, fitness, why: str) -> None:
    """Clocks, boost and links from a fitness summary ({boost, clocks, links, ...})."""
    fitness = fitness if isinstance(fitness, dict) else {}
    for name, aspect in (("clocks", "clocks"), ("links", "links"), ("boost", "clocks")):
        value = fitness.get(name)
        if isinstance(value, dict) and value:
            setattr(side, name, value)
        elif name != "boost":
            side.why_not[aspect] = why


# ---- a certificate: RunResult.to_dict() -------------------------------------------------

def _result(path: Path, doc: dict) -> Side:
    result = RunResult.from_dict(doc)     # a wrong format is a ValueError: one line, exit 2
    if not result.host and not result.checks and not result.layouts:
        # nothing a run writes: not a certificate to compare (every real one holds its host)
        raise ConfigError(f"{path}: not an rmpeer certificate (it records no host, no layout and no check)")
    host = result.host or {}
    side = Side(str(path), "certificate")
    side.layouts = [x.name for x in result.layouts]
    side.context = {"label": result.target.get("label"), "created": result.started,
                    "driver": host.get("driver_version"), "abi": host.get("abi_release"),
                    "cards": len(host.get("cards") or []), "tier": result.tier, "layouts": side.layouts,
                    "subject": result.target.get("kind"), "rmpeer": result.version, "node": result.node}

    side.context["signature"] = verify(doc).line      # read whatever it says, and say how far it is vouched for
    side.facts = host
    side.calls = [(x.name, s.get("label"), s.get("status")) for x in result.layouts for s in x.statuses
                  if isinstance(s, dict)]
    side.sources["calls"] = "the setup statuses each layout recorded"
    if not side.calls:
        side.calls, side.why_not["calls"] = None, "the certificate records no RM statuses"
    _fitness(side, {"clocks": result.clocks, "links": result.links, "boost": result.boost},
             "the certificate records no clocks and no links")
    side.verdict = result.verdict
    side.tests = {c.id: (c.layout, c.outcome) for c in result.checks}
    side.checks_of = {c.id: c.check for c in result.checks}
    side.manifest = manifest_of(path, doc.get("manifest"))
    side.figure_methods = figure_methods(side.manifest, None)
    side.sources["tests"] = "check ids"
    side.structs = _abi_struct_sizes(host.get("abi_release"))
    _structs_source(side, host)
    if result.bandwidth:
        side.bandwidth, side.sources["bandwidth"] = _bandwidth(result.bandwidth), "the certificate's bandwidth list"
        side.bandwidth_ops = _ops(result.bandwidth)
    else:
        side.why_not["bandwidth"] = "the certificate records no bandwidth"
    return side


# ---- a certificate of the earlier format ------------------------------------------------

def _legacy_certificate(path: Path, doc: dict) -> Side:
    host = doc["host"]
    side = Side(str(path), "certificate")
    subject = doc.get("subject") or {}
    target = doc.get("target") or _target(doc["tests"])
    known = _layout_names()
    tests = [t for t in doc["tests"] if isinstance(t, dict) and "nodeid" in t]
    side.tests = {}
    for t in tests:
        side.tests[_test_id(t, target)] = (_test_layout(t, known, target), t.get("outcome"))
    side.layouts = sorted({layout for layout, _ in side.tests.values() if layout})
    side.sources["tests"] = PYTEST_IDS
    side.context = {"label": subject.get("recorded_label") or target, "created": doc.get("created"),
                    "driver": host.get("driver_version"), "abi": host.get("abi_release"),
                    "cards": len(host.get("cards") or []), "subject": subject.get("kind"),
                    "layouts": side.layouts, "signature": "unsigned (the earlier format): nothing vouches for its content"}
    fitness = doc.get("fitness") if isinstance(doc.get("fitness"), dict) else {}
    side.facts = host
    _fitness(side, fitness, "the certificate records no clocks and no links (made before they were recorded)")
    side.why_not["calls"] = "this certificate holds test results, not RM calls (diff the recordings)"
    side.verdict = doc.get("verdict")
    side.structs = _abi_struct_sizes(host.get("abi_release"))
    _structs_source(side, host)
    rows = fitness.get("bandwidth") or doc.get("bench")
    if isinstance(rows, list) and rows:
        side.bandwidth, side.sources["bandwidth"] = _bandwidth(rows), "the certificate's bandwidth list"
        side.bandwidth_ops = _ops(rows)
    else:
        rows = [dict(t["properties"]["bandwidth"], layout=(t.get("params") or {}).get("layout"))
                for t in tests if isinstance((t.get("properties") or {}).get("bandwidth"), dict)]
        side.bandwidth, side.sources["bandwidth"] = _bandwidth(rows), "the read/write tests' steady GB/s"
        if not rows:
            side.bandwidth, side.why_not["bandwidth"] = None, "the certificate records no bandwidth"
    return side


def _structs_source(side: Side, host: dict) -> None:
    side.sources["struct sizes"] = f"drivers.yaml entry {host.get('abi_release')}"
    if side.structs is None:
        side.why_not["struct sizes"] = f"its ABI {host.get('abi_release')!r} is not an entry of matrices/drivers.yaml"


def _layout_names() -> set:
    return set(LayoutMatrix().entries)


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


def _test_id(test: dict, target: str | None = None) -> str:
    """The test id without its target ('h200x2/', 'replay:h200x2/'), so two hosts align."""
    nodeid = test["nodeid"]
    target = (test.get("params") or {}).get("target") or target
    if target:
        for prefix in (f"replay:{target}", target):
            nodeid = nodeid.replace(f"[{prefix}/", "[").replace(f"[{prefix}]", "[]")
    return re.sub(r"\[replay:[^/\]]*/", "[", nodeid).removeprefix("suites/")


def _test_layout(test: dict, layouts, target: str | None = None) -> str | None:
    """The layout a test ran in: its `layout` parameter, else the first part of its id's
    parameters where that is a layout name ('[one-per-card/s0->t1]') or a card list."""
    named = (test.get("params") or {}).get("layout")
    if named:
        return named
    m = re.search(r"\[([^\]]*)\]$", _test_id(test, target))
    first = m.group(1).split("/", 1)[0] if m else ""
    return first if first and (first in layouts or first.startswith("cards-")) else None


def _abi_struct_sizes(release) -> dict | None:
    matrix = DriverMatrix()
    if release not in matrix.by_version:
        return None
    return {name: spec["size"] for name, spec in matrix.merged(release)["structs"].items()}


BANDWIDTH_KINDS = {"src_card": int, "dst_card": int, "src": int, "dst": int, "s": int, "t": int, "op": str,
                   "layout": str, "bytes": int, "gbps": (int, float), "steady_gbps": (int, float)}


def _bandwidth(rows) -> dict:
    """{pair key: median GB/s} from rows such as {src_card, dst_card, op, bytes, gbps} or
    {layout, op, s, t, bytes, steady_gbps}. A row of another shape (a field of the wrong
    kind: "gbps": "fast", "dst_card": null) is refused (ValueError), never left out: a figure
    left out would read as "not comparable" where the file is simply not one rmpeer wrote."""
    samples: dict = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"bandwidth[{i}] is {type(row).__name__}, not a mapping")
        for key, kind in BANDWIDTH_KINDS.items():
            value = row.get(key, 0)
            if value is None and key in ("gbps", "steady_gbps"):
                continue           # a window whose map was refused as expected moved nothing
            if key in row and (not isinstance(value, kind) or isinstance(value, bool)):
                raise ValueError(f"bandwidth[{i}]'s {key} is {str(value)[:20]!r}, not of the kind rmpeer writes")
        gbps = row.get("gbps", row.get("steady_gbps"))
        if gbps is None:
            continue
        samples.setdefault(_key(row), []).append(float(gbps))
    return {k: statistics.median(v) for k, v in sorted(samples.items())}


def _key(row: dict) -> str:
    """A figure's pair key: its layout, op, pair and size ("read card 0->1 256 MiB")."""
    src = next((row[k] for k in ("src_card", "src", "s") if k in row), "?")
    dst = next((row[k] for k in ("dst_card", "dst", "t") if k in row), "?")
    card = "card " if "src_card" in row else "s"
    size = row.get("bytes")
    parts = [row.get("layout"), row.get("op"), f"{card}{src}->{'' if card == 'card ' else 't'}{dst}",
             f"{size >> 20} MiB" if isinstance(size, int) and size >= 1 << 20 else (f"{size} B" if size else None)]
    return " ".join(str(p) for p in parts if p is not None)


def _ops(rows) -> dict:
    """{pair key: its op} of rows _bandwidth took (checked there)."""
    return {_key(row): str(row.get("op")) for row in rows if isinstance(row, dict) and row.get("op")}


# ---- a set of hosts: folders of certificates or recordings (rmpeer.diff.sets) ---------------

# What a fleet's folders hold beside the runs (rmpeer.fleet, rmpeer.machine): never a run
NOT_A_RUN = {"status.json", "summary.jsonl", "summary.json", "history.json", "state.json", "environment.json",
             "executor.json", "categories.json"}
RUN_SUFFIXES = (".jsonl.gz", ".jsonl", ".json.gz", ".json")
FOLDER_DEPTH = 2        # <dir>/<file> and a fleet's <dir>/<node>/<file>; deeper (allure-results/) is no run


def load_pinned(path: Path) -> Side:
    """load() of a file in a folder others may write: opened once, never through a link and
    never blocking on a FIFO, and read through that open file (its inode is pinned: a file
    swapped in after the check is not the one read)."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        why = "a symbolic link: refused" if path.is_symlink() else (exc.strerror or str(exc))
        raise ConfigError(f"{path}: {why}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path}: not a regular file")
        pinned = f"/proc/self/fd/{fd}"
        try:
            side = load(pinned)
        except ConfigError as exc:
            raise ConfigError(str(exc).replace(pinned, str(path))) from None
        side.path = str(path)
        return side
    finally:
        os.close(fd)


def _runs_in(folder: Path) -> list:
    """The files of `folder` that may be runs, to FOLDER_DEPTH, no link followed, sorted."""
    found = []
    for child in sorted(folder.iterdir()):
        if child.is_symlink():
            if child.name.endswith(RUN_SUFFIXES):
                found.append(child)     # refused where it is read: listed, never followed
            continue
        if child.is_dir():
            found += [f for f in sorted(child.iterdir()) if f.name.endswith(RUN_SUFFIXES)
                      and f.name not in NOT_A_RUN and (f.is_symlink() or not f.is_dir())]
        elif child.name.endswith(RUN_SUFFIXES) and child.name not in NOT_A_RUN:
            found.append(child)
    return found


def host_name(path: Path, side: Side, top: Path | None) -> str:
    """A run's host: a fleet folder's <node>/ (fleet node writes <shared>/<node>/), else the
    node its certificate names, else the recording's name."""
    from rmpeer.model.result import replay_node

    if top is not None and path.parent != top:
        return path.parent.name
    return str(side.context.get("node") or replay_node(str(path)))


def load_set(paths: list) -> tuple[list, list]:
    """(hosts [(name, Side)], unreadable [(path, why)]) of folders and files. A file named
    on the command line that cannot be read is exit 2, as in `rmpeer diff A B`; one found in
    a folder is listed as unreadable and the rest are compared (a planted file never stops
    the set's diff)."""
    hosts, unreadable = [], []
    for given in paths:
        top = Path(given)
        if top.is_dir() and not top.is_symlink():
            try:
                found = _runs_in(top)
            except OSError as exc:
                raise ConfigError(f"{given}: cannot list the folder ({exc.strerror or exc})") from None
            for path in found:
                try:
                    side = load_pinned(path)
                except ConfigError as exc:
                    unreadable.append((str(path), str(exc).removeprefix(f"{path}: ")))
                    continue
                hosts.append((host_name(path, side, top), side))
        else:
            side = load(given)
            hosts.append((host_name(top, side, None), side))
    if not hosts:
        raise ConfigError(f"{' '.join(map(str, paths))}: no recording or certificate to compare"
                          + (f" ({len(unreadable)} unreadable)" if unreadable else ""))
    return hosts, unreadable
