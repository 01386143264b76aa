"""`rmpeer calibrate`: a topologies.yaml entry from runs of a host the user knows to be good.

It runs the full tier N times (or reads N certificates, `--from`), checks that every run may
be calibrated from (CERTIFIED, clocks boosted, one kind of host on one driver, figures that
agree within the warning band), and prints the entry: floors at 0.9 x the slowest median of
each kind, every figure used stated. `--write DIR` puts it into a copy of the matrices (for
RMPEER_MATRICES), replacing the floors of the entry that already matches the host.

The calibration itself (`calibrate`) is a pure function of certificates (dicts).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rmpeer.errors import ConfigError, EXIT_OK, quoted

MARGIN = 0.9              # a floor is this fraction of the slowest healthy median
DEFAULT_RUNS = 5
DEFAULT_BAND = 0.05
RATE_OPS = {"cross_card_gbps": ("read", "write"), "same_card_gbps": ("same-card",),
            "bidirectional_gbps": ("bidirectional",)}
EXPECT_PEERS = {"pair": "NV_OK", "reserve": "NV_OK", "map_same": "NV_OK", "map_peer": "NV_OK"}
P2P_CAPS = ("READS_SUPPORTED", "WRITES_SUPPORTED", "NVLINK_SUPPORTED")


class Refused(ConfigError):
    """A run calibrate will not learn from (exit 2, one line)."""


class RunFailed(ConfigError):
    """A certify run that wrote no certificate: calibrate exits with that run's own code (3 no
    GPU access, 6 busy, 7 not idle, 2 its options), never one that would read as a verdict."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code if code in (2, 3, 5, 6, 7) else 5


# An entry name is a YAML key written bare into topologies.yaml: a newline or a colon in it
# would write another entry (or a broken file).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def add_parser(sub) -> None:
    c = sub.add_parser("calibrate", help="turn runs of a known-good host into a topologies.yaml entry "
                                         "(floors at 0.9 x the slowest median)")
    c.add_argument("--runs", type=int, default=DEFAULT_RUNS, metavar="N",
                   help=f"full-tier runs to make on this host (default {DEFAULT_RUNS})")
    c.add_argument("--from", dest="certificates", nargs="+", metavar="CERT",
                   help="calibrate from these certificates (of one host) instead of running")
    c.add_argument("--write", metavar="DIR", help="add the entry to a copy of the matrices in DIR (for RMPEER_MATRICES)")
    c.add_argument("--name", help="the entry's name (default: the entry the host matches, else one made of the host)")
    c.add_argument("--warn-band", type=float, default=DEFAULT_BAND, metavar="FRACTION",
                   help=f"the entry's warning band above each floor, and the most its runs may spread (default {DEFAULT_BAND})")
    c.add_argument("--same-machine", action="store_true",
                   help="refuse runs of different machines (card UUIDs) even when they are one kind of host")
    c.add_argument("--output", default="reports/calibrate", help="where the runs' certificates go (default: reports/calibrate)")


@dataclass(frozen=True)
class Calibration:
    name: str
    entry: dict           # the topologies.yaml entry
    text: str             # the entry as YAML, with comments stating every figure used
    replaces: str | None  # the existing entry whose floors it replaces


# -- the pure part ----------------------------------------------------------------------------

def _host_kind(cert: dict) -> dict:
    host = cert.get("host") or {}
    p2p = {k: sorted(v.get("caps", [])) for k, v in sorted((host.get("p2p") or {}).items())}
    links = {str(k): (v or {}).get("active") for k, v in sorted((cert.get("links") or {}).items())}
    return {"cards": [c.get("name") for c in host.get("cards", [])], "p2p": p2p, "active NVLinks": links}


def _refuse_run(i: int, path: str, cert: dict) -> None:
    where = f"run {i + 1} ({path})"
    verdict = cert.get("verdict")
    if verdict != "CERTIFIED":
        first = (cert.get("reasons") or ["no reason given"])[0]
        raise Refused(f"calibrate: {where} is {verdict}, not CERTIFIED ({first}): calibrate only from a known-good host")
    boost = cert.get("boost") or {}
    refused = [c for c, r in (boost.get("results") or {}).items() if not (r.get("raise") or {}).get("ok")]
    if not boost.get("asked") or refused:
        why = "--no-boost" if not boost.get("asked") else f"RM refused the boost on card {refused[0]}"
        raise Refused(f"calibrate: {where} ran with its clocks not boosted ({why}): floors come from boosted runs")
    if not [f for f in cert.get("bandwidth") or [] if f.get("op") in ("same-card", "read", "write", "bidirectional")]:
        raise Refused(f"calibrate: {where} measured no bandwidth (tier {cert.get('tier')}): calibrate from quick or full runs")


def _same_host(certs: list, paths: list, same_machine: bool) -> None:
    first = certs[0].get("host") or {}
    for i, cert in enumerate(certs[1:], 1):
        host = cert.get("host") or {}
        if host.get("driver_version") != first.get("driver_version"):
            raise Refused(f"calibrate: runs of different drivers: {paths[0]} {first.get('driver_version')}, "
                          f"{paths[i]} {host.get('driver_version')}")
        a, b = _host_kind(certs[0]), _host_kind(cert)
        for key in a:
            if a[key] != b[key]:
                raise Refused(f"calibrate: runs of different hosts: {key} {a[key]} in {paths[0]}, {b[key]} in {paths[i]}")
        uuids = lambda h: [c.get("uuid") for c in h.get("cards", [])]
        if same_machine and uuids(host) != uuids(first):
            raise Refused(f"calibrate: runs of different machines (--same-machine): cards {uuids(first)} in "
                          f"{paths[0]}, {uuids(host)} in {paths[i]}")


def figures_by_key(certs: list, size: int) -> dict:
    """(op, src, dst) -> [gbps per run], at the floors' size; every run must have each figure."""
    table: dict = {}
    for i, cert in enumerate(certs):
        for f in cert.get("bandwidth") or []:
            if f.get("bytes") == size and f.get("op") in ("same-card", "read", "write", "bidirectional"):
                gbps = f.get("gbps")
                if isinstance(gbps, int) and not isinstance(gbps, bool) and abs(gbps) >= 1 << 1023:
                    gbps = math.inf      # an integer past any float: no rate, and no spread to compute
                if isinstance(gbps, bool) or not isinstance(gbps, (int, float)) or not 0 < gbps < math.inf:
                    raise Refused(f"calibrate: run {i + 1}: its {f['op']} {f.get('src_card')}->{f.get('dst_card')} "
                                  f"figure is {quoted(gbps)} GB/s, not a measured rate: no run rmpeer made")
                table.setdefault((f["op"], f["src_card"], f["dst_card"]), {})[i] = gbps
    return {k: [v[i] for i in range(len(certs))] for k, v in sorted(table.items()) if len(v) == len(certs)}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def calibrate(certs: list, paths: list, *, warn_band: float = DEFAULT_BAND, name: str | None = None,
              matched: str | None = None, same_machine: bool = False, size: int = 256 << 20) -> Calibration:
    """The entry N certificates of one good host give, or Refused (one line) naming the run."""
    if not certs:
        raise Refused("calibrate: no run to calibrate from")
    if not 0 < warn_band < 1:
        raise Refused(f"calibrate: --warn-band must be a fraction between 0 and 1, found {warn_band}")
    if name is not None and not NAME.fullmatch(name):
        raise Refused(f"calibrate: --name {name[:80]!r}: give a name of letters, digits, '.', '_' and '-' "
                      "(it becomes a key of topologies.yaml)")
    for i, cert in enumerate(certs):
        _refuse_run(i, paths[i], cert)
    _same_host(certs, paths, same_machine)
    figures = figures_by_key(certs, size)
    for (op, a, b), values in figures.items():
        spread = (max(values) - min(values)) / max(values)
        if spread > warn_band:
            raise Refused(f"calibrate: the runs' {op} {a}->{b} figures spread {spread:.1%} "
                          f"({', '.join(f'{v:g}' for v in values)} GB/s), more than the warning band {warn_band:.0%}")
    floors, used = {}, []
    for rate, ops in RATE_OPS.items():
        mine = {k: v for k, v in figures.items() if k[0] in ops}
        if not mine:
            continue
        (op, a, b), slowest = min(((k, min(v)) for k, v in mine.items()), key=lambda kv: kv[1])
        floors[rate] = math.floor(MARGIN * slowest)
        used.append(f"{rate}: {MARGIN} x {slowest:g} (slowest median: {op} {a}->{b}) = {floors[rate]}")
    if not floors:
        raise Refused(f"calibrate: no figure at {size >> 20} MiB is in every run")
    host = certs[0]["host"]
    models = sorted({c["name"] for c in host["cards"]})
    n = len(host["cards"])
    entry_name = name or matched or f"{_slug(models[0] if len(models) == 1 else 'mixed')}x{n}-calibrated"
    entry = _entry(certs[0], n, models, floors, warn_band)
    text = _text(entry_name, entry, certs, paths, figures, used)
    return Calibration(entry_name, entry, text, matched)


def _entry(cert: dict, n: int, models: list, floors: dict, warn_band: float) -> dict:
    host = cert["host"]
    pairs = [v.get("caps", []) for k, v in (host.get("p2p") or {}).items() if k.split("->")[0] != k.split("->")[1]]
    p2p = {cap: pairs[0].count(cap) > 0 for cap in P2P_CAPS if pairs and all((cap in p) == (cap in pairs[0]) for p in pairs)}
    active = {(v or {}).get("active") for v in (cert.get("links") or {}).values() if (v or {}).get("supported")}
    entry = {"description": f"{n} x {' + '.join(models)}, calibrated by rmpeer calibrate (driver {host.get('driver_version')})",
             "cards": n, "model": models[0] if len(models) == 1 else "any"}
    if n > 1 and p2p.get("NVLINK_SUPPORTED") and len(active) == 1:
        entry["links"] = {"kind": "nvlink", "count": active.pop()}
    elif n > 1 and p2p:
        entry["links"] = {"kind": "pcie", "count": 0}
    if p2p and n > 1:
        entry["p2p"] = p2p
    peers = n > 1 and p2p.get("READS_SUPPORTED") and p2p.get("WRITES_SUPPORTED")
    entry["expect"] = EXPECT_PEERS if peers else {k: v for k, v in EXPECT_PEERS.items() if k != "map_peer"}
    entry["floors"] = {**floors, "warn_band": warn_band, "size": "256MiB"}
    return entry


def _flow(mapping: dict) -> str:
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if not isinstance(v, str) or re.fullmatch(r"[A-Za-z0-9_.]+", v) else json.dumps(v)
    return "{" + ", ".join(f"{k}: {value(v)}" for k, v in mapping.items()) + "}"


def _comment(line: str) -> str:
    """A comment line of the entry: a certificate's text (its node name, a path) holds no line
    break that would end the comment and write YAML."""
    return "".join(c if c.isprintable() else "?" for c in line)


def _text(name, entry, certs, paths, figures, used) -> str:
    lines = [f"  # rmpeer calibrate: {len(certs)} CERTIFIED run(s), clocks boosted; floors {MARGIN} x the slowest "
             f"median of each kind, warning band {entry['floors']['warn_band']:g}"]
    for i, (cert, path) in enumerate(zip(certs, paths)):
        target = cert.get("target") or {}
        lines.append(_comment(f"  #   run {i + 1}: {path} (node {cert.get('node')}, {cert.get('started')}, "
                              f"tier {cert.get('tier')}" + (f", replay of {target.get('transcript')}"
                                                            if target.get("kind") == "replay" else "") + ")"))
    lines.append("  # figures used (GB/s at 256 MiB, one per run):")
    for (op, a, b), values in figures.items():
        lines.append(_comment(f"  #   {op} {a}->{b}: {' '.join(f'{v:g}' for v in values)}"))
    lines += [_comment(f"  #   {u}") for u in used]
    if len(certs) == 1:
        lines.append("  # one run only: its spread is not measured")
    lines.append(f"  {name}:")
    for key, value in entry.items():
        lines.append(f"    {key}: {_flow(value) if isinstance(value, dict) else json.dumps(value)}")
    return "\n".join(lines) + "\n"


# -- writing a copy of the matrices -----------------------------------------------------------

def write_entry(cal: Calibration, folder: Path, host_facts) -> Path:
    """DIR/topologies.yaml with the entry (a copy of the matrices first, unless DIR holds one):
    an entry the host already matches is replaced, so that one entry matches it."""
    from rmpeer.paths import matrices_dir
    from rmpeer.safewrite import write_file
    from rmpeer.tables.topology import TopologyMatrix

    import shutil

    folder = Path(folder)
    if not (folder / "topologies.yaml").is_file():
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"--write {folder}: not empty and holds no topologies.yaml (a copy of the matrices)")
        shutil.copytree(matrices_dir(), folder, dirs_exist_ok=True)
    path = folder / "topologies.yaml"
    old = TopologyMatrix(path)
    gone = {cal.name} | {t.name for t in old.topologies.values() if not t.mismatches(host_facts)}
    kept, lead, skipping = [], [], False
    for line in path.read_text().splitlines(keepends=True):
        if re.match(r"^  #", line):          # comments right above an entry belong to it
            lead.append(line)
            continue
        header = re.match(r"^  ([^\s#][^:]*):\s*$", line)
        if header:
            skipping = header.group(1) in gone
        elif line.strip() and not line.startswith("  "):
            skipping = False
        if not skipping:
            kept += lead + [line]
        lead = []
    text = "".join(kept + lead).rstrip("\n") + "\n\n" + cal.text
    # the copy must load, and one entry match the host, before it replaces the one there: a
    # refused entry (exit 2) leaves the folder's matrices as they were
    import os
    import tempfile

    fd, trial = tempfile.mkstemp(dir=path.parent, prefix=".topologies-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        TopologyMatrix(Path(trial)).match(host_facts)
    finally:
        os.unlink(trial)
    write_file(path, text, what="calibrate: --write")     # renamed into place: a link is never followed
    return path


def checked_write(folder: str) -> None:
    """--write DIR, before anything runs: DIR and DIR/topologies.yaml may be a folder of
    another user's, and a link planted at either would have root rewrite what it points to."""
    from rmpeer.safewrite import folder_problem, target_problem

    folder, topologies = Path(folder), Path(folder) / "topologies.yaml"
    for path, problem in ((folder, folder_problem(folder)),
                          (topologies, target_problem(topologies) if folder.is_dir() else None)):
        if problem:
            raise ConfigError(f"calibrate: --write {path}: refused: {problem}")


# -- the command ------------------------------------------------------------------------------

def _run_certifies(args) -> list:
    out = Path(args.output)
    paths = []
    for i in range(args.runs):
        folder = out / f"run-{i + 1}"
        # --no-floors: floors derived for an unknown host must not refuse the runs that calibrate it
        cmd = [sys.executable, "-m", "rmpeer", "certify", "--tier", "full", "--no-floors", "--output", str(folder)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        tail = (done.stdout.strip().splitlines() or [""])[-1]
        print(f"rmpeer calibrate: run {i + 1}/{args.runs}: exit {done.returncode}: {tail[:160]}", file=sys.stderr)
        cert = folder / "certificate.json"
        if not cert.is_file():
            raise RunFailed(f"calibrate: run {i + 1} wrote no certificate (exit {done.returncode}): "
                            f"{(done.stderr.strip().splitlines() or [''])[-1][:200]}", done.returncode)
        paths.append(str(cert))
    return paths


def _load(path: str) -> dict:
    """A certificate's JSON object, read from a regular file of at most signing.CERT_LIMIT bytes
    (gzip or not): a FIFO, /dev/zero or /dev/stdin is refused, never read without end."""
    from rmpeer.machine.signing import CERT_LIMIT

    import gzip
    import io
    import os
    import stat
    import zlib

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError("not a regular file")
            raw = f.read(CERT_LIMIT + 1)
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.GzipFile(fileobj=io.BytesIO(raw)).read(CERT_LIMIT + 1)
        if len(raw) > CERT_LIMIT:
            raise ValueError(f"more than a certificate's {CERT_LIMIT >> 20} MiB")
        doc = json.loads(raw)
    except RecursionError:      # JSON nested past Python's reach: no file rmpeer writes
        raise ConfigError(f"calibrate: {path} is not a readable certificate: nested deeper than any "
                          "file rmpeer writes") from None
    except (OSError, ValueError, EOFError, zlib.error) as exc:     # zlib.error: a cut or corrupt gzip stream
        raise ConfigError(f"calibrate: {path} is not a readable certificate: "
                          f"{getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"calibrate: {path} is not a readable certificate: not a JSON object")
    from rmpeer.model.result import RunResult

    try:        # every field of the kind rmpeer writes (a host that is text, links that are a list: exit 2)
        RunResult.from_dict(doc)
        if not all(isinstance(f, dict) for f in doc.get("bandwidth") or []):
            raise TypeError("its bandwidth holds a figure that is not a mapping")
        _shape(doc)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ConfigError(f"calibrate: {path} is not a certificate rmpeer wrote: {exc}") from None
    _trusted(path, doc)
    return doc


def _shape(doc: dict) -> None:
    """The fields calibrate reads that RunResult.from_dict leaves as they are, of the kinds
    certify writes them (a signed certificate of another shape: exit 2, never a traceback)."""
    def mappings(value, what):
        if not isinstance(value, dict) or not all(isinstance(v, dict) or v is None for v in value.values()):
            raise TypeError(f"its {what} is not a mapping of mappings")
    boost = doc.get("boost") or {}
    mappings(boost.get("results") or {}, "boost results")
    if not all(isinstance((r or {}).get("raise") or {}, dict) for r in (boost.get("results") or {}).values()):
        raise TypeError("its boost results hold a raise that is not a mapping")
    p2p = (doc.get("host") or {}).get("p2p") or {}
    mappings(p2p, "host's p2p")
    if not all(isinstance((v or {}).get("caps", []), list) for v in p2p.values()):
        raise TypeError("its host's p2p holds caps that are not a list")
    mappings(doc.get("links") or {}, "links")
    for f in doc.get("bandwidth") or []:
        if f.get("op") in ("same-card", "read", "write", "bidirectional") and not all(
                isinstance(f.get(k), (int, str)) and not isinstance(f.get(k), bool) for k in ("src_card", "dst_card")):
            raise TypeError(f"its {f['op']} figure names no card as rmpeer does (src_card, dst_card)")


def _trusted(path: str, doc: dict) -> None:
    """Floors are made only of runs this host vouches for (issue 47, row 2): a certificate
    whose signature does not verify with this host's key (changed after it was signed, or
    signed elsewhere) is refused, naming the key it would need; and one whose verdict is not
    what its own findings and checks give (rmpeer.judge.verdict, pure), as fleet collect
    re-judges every certificate it reads."""
    from rmpeer.judge.verdict import unfollowed
    from rmpeer.machine.signing import verify
    from rmpeer.model.result import RunResult

    trust = verify(doc)
    if not trust.verified:
        raise Refused(f"calibrate: {path}: {trust.line}; calibrate makes floors only of runs this host signed "
                      "(rmpeer certify here)")
    problem = unfollowed(RunResult.from_dict(doc))
    if problem:
        raise Refused(f"calibrate: {path}: {problem}")


def _distinct(certs: list, paths: list) -> None:
    """One run counts once: the same certificate given twice would fake an agreeing spread."""
    seen = {}
    for cert, path in zip(certs, paths):
        key = cert.get("certificate_id") or str(Path(path).resolve())
        if key in seen:
            raise Refused(f"calibrate: {path} is the same run as {seen[key]} (certificate {key}): "
                          "give each run once")
        seen[key] = path


def run(args) -> int:
    from rmpeer.model.host import HostFacts
    from rmpeer.tables.topology import TopologyMatrix

    if args.runs < 1:
        raise ConfigError(f"calibrate: --runs must be 1 or more, found {args.runs}")
    if args.write:
        checked_write(args.write)
    paths = list(args.certificates) if args.certificates else _run_certifies(args)
    certs = [_load(p) for p in paths]
    _distinct(certs, paths)
    if not certs[0].get("host", {}).get("cards"):
        raise Refused(f"calibrate: {paths[0]} names no card")
    facts = HostFacts.from_dict(certs[0]["host"])
    matrix = TopologyMatrix(Path(args.write) / "topologies.yaml") if args.write and (Path(args.write) / "topologies.yaml").is_file() else TopologyMatrix()
    matched = matrix.match(facts)
    cal = calibrate(certs, paths, warn_band=args.warn_band, name=args.name,
                    matched=matched.name if matched else None, same_machine=args.same_machine)
    print(cal.text, end="")
    if args.write:
        try:
            path = write_entry(cal, Path(args.write), facts)
        except OSError as exc:
            raise ConfigError(f"calibrate: --write {args.write}: {exc.strerror or exc}") from None
        from rmpeer.render.text import escaped      # --write's path is input

        print(escaped(f"rmpeer calibrate: entry {cal.name} written to {path}"
                      + (f" (in place of the entry {cal.replaces})" if cal.replaces else "")
                      + f"; certify under it with RMPEER_MATRICES={Path(args.write).resolve()}"))
    return EXIT_OK
