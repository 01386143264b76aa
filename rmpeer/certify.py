"""`rmpeer certify`: the suites against this host (or a recording), a verdict, a card x card
table, and reports/certificate.json."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from . import __version__
from .abi.matrix import MATRICES
from .errors import EXIT_NOT_CERTIFIED, EXIT_OK, NoDeviceError

REPO = Path(__file__).resolve().parents[1]


def matrices_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(MATRICES.glob("*.yaml")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return "sha256:" + h.hexdigest()


def preflight(args):
    """Open the host once: driver, ABI, cards, P2P caps (or the recording's). Errors here are
    the user's to fix (exit 2 or 3), before any test runs."""
    from .runtime import Runtime
    from .shim.live import LiveShim
    from .shim.replay import recorded_facts

    if args.replay:
        return recorded_facts(args.replay)
    if not os.path.exists("/dev/nvidiactl"):
        raise NoDeviceError("no NVIDIA device: /dev/nvidiactl does not exist on this machine "
                            "(no GPU, or the nvidia kernel module is not loaded). "
                            "To see a certification of a recorded host: rmpeer certify --replay TRANSCRIPT")
    runtime = Runtime(LiveShim(), forced_abi=args.rm_abi).open()
    runtime.close()
    return runtime.facts


def pytest_command(args, results: Path, allure_dir: Path, marker: str, parallel: bool) -> list:
    cmd = [sys.executable, "-m", "pytest", str(REPO / "suites"), "-m", marker, "-q", "--color=yes",
           "--rm-results", str(results), "--alluredir", str(allure_dir), "-p", "no:cacheprovider",
           "--rootdir", str(REPO)]
    if parallel:
        cmd += ["-n", "auto"]
    for layout in args.layout or []:
        cmd += ["--rm-layout", layout]
    if args.replay:
        cmd += ["--rm-replay", str(args.replay)]
    else:
        cmd += ["--rm-live-only"]
    for opt, value in (("--rm-abi", args.rm_abi), ("--rm-extent", args.extent), ("--rm-record", args.record),
                       ("--rm-topology", args.expect_topology)):
        if value:
            cmd += [opt, str(value)]
    return cmd


def run_suites(args, out: Path) -> dict:
    """Offline suites in parallel (-n: they share nothing), hardware suites in one process
    (one RM client; the copy engines of one host are not shared between workers)."""
    allure_dir = out / "allure-results"
    shutil.rmtree(allure_dir, ignore_errors=True)   # an earlier run's results would read as retries
    merged = {"tests": [], "targets": {}}
    for name, marker, parallel in (("offline", "offline", True), ("hardware", "hardware", False)):
        results = out / f"results-{name}.json"
        results.unlink(missing_ok=True)
        print(f"\n== {name} suites ==", flush=True)
        subprocess.run(pytest_command(args, results, allure_dir, marker, parallel), cwd=REPO)
        if results.exists():
            data = json.loads(results.read_text())
            merged["tests"] += data["tests"]
            merged["targets"].update(data["targets"])
    return merged


def pair_table(tests: list) -> dict:
    """(card s, card t) -> counts of setup/read/write outcomes and the steady GB/s seen."""
    table = defaultdict(lambda: {"setup": [0, 0], "read": [0, 0], "write": [0, 0], "gbps": []})
    kinds = {"test_map": "setup", "test_reservation": "setup", "test_read": "read", "test_write": "write"}
    for test in tests:
        p = test["params"]
        name = test["nodeid"].split("::")[-1].split("[")[0]
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
                 "passed; GB/s: median steady copy rate of that card pair")
    return "\n".join(lines)


def verdict(results: dict, topology_problems: list) -> tuple[bool, list]:
    hardware = [t for t in results["tests"] if "target" in t["params"]]
    ran = [t for t in hardware if t["outcome"] != "skipped"]
    failed = [t for t in results["tests"] if t["outcome"] in ("failed", "error")]
    reasons = [f"{t['nodeid']}: {t.get('message', '').splitlines()[0] if t.get('message') else t['outcome']}"
               for t in failed]
    if not ran:
        reasons.append("no hardware test ran")
    reasons += [f"host does not match the expected topology: {p}" for p in topology_problems]
    return not reasons, reasons


def certify(args) -> int:
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    facts = preflight(args)
    topology_problems = []
    if args.expect_topology:
        from .topology import TopologyMatrix

        topology_problems = TopologyMatrix().get(args.expect_topology).mismatches(facts)
    recorded = {}
    if args.replay:
        from .shim.replay import transcript_summary

        recorded = transcript_summary(args.replay)["header"]
    replay_of = (f"REPLAY of {recorded.get('label')} recorded on {recorded.get('hostname')} at "
                 f"{recorded.get('created')} ({args.replay})") if args.replay else ""
    label = replay_of or "this host"
    print(f"rmpeer {__version__}: certifying {label}: driver {facts.driver_version} ({facts.flavour}), "
          f"ABI {facts.abi_release}{' (forced)' if facts.abi_forced else ''}"
          f"{f' ({facts.abi_note})' if facts.abi_note else ''}, "
          f"{len(facts.cards)} card(s): {', '.join(c.name for c in facts.cards)}", flush=True)
    results = run_suites(args, out)
    ok, reasons = verdict(results, topology_problems)
    table = pair_table(results["tests"])
    print("\n" + render_table(table))
    counts = defaultdict(int)
    for t in results["tests"]:
        counts[t["outcome"]] += 1
    cert = {
        "tool": "rmpeer", "version": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "subject": ({"kind": "replay", "transcript": str(args.replay), "recorded_host": recorded.get("hostname"),
                     "recorded_at": recorded.get("created"), "recorded_label": recorded.get("label"),
                     "note": "a replay of a recording: this is NOT a certificate of the machine it ran on"}
                    if args.replay else {"kind": "live"}),
        "host": facts.as_dict(), "matrices": matrices_digest(), "expect_topology": args.expect_topology,
        "topology_problems": topology_problems, "counts": dict(counts), "duration_s": round(time.time() - started, 1),
        "pairs": {f"{a}->{b}": v for (a, b), v in table.items()},
        "tests": results["tests"], "verdict": "CERTIFIED" if ok else "NOT CERTIFIED", "reasons": reasons,
    }
    name = "replay-certificate.json" if args.replay else "certificate.json"
    (out / name).write_text(json.dumps(cert, indent=1, default=str))
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"\n{replay_of + ': ' if args.replay else ''}{cert['verdict']} ({summary}); written to {out / name}")
    for r in reasons[:10]:
        print(f"  - {r}")
    return EXIT_OK if ok else EXIT_NOT_CERTIFIED
