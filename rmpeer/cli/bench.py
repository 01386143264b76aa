"""`rmpeer bench`: copy-engine GB/s between and within the cards at several sizes, both
directions and all cards at once, the peer setup's cost against the number of sessions,
and CUDA's own peer copy of the same sizes in the same run when torch is there.

Figures are measured, never asserted: bench.json, a table and a picture record them with
the clocks they were taken at."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rmpeer import __version__
from rmpeer.cli.cards import request_of_args
from rmpeer.errors import EXIT_OK, ConfigError, NoDeviceError

if TYPE_CHECKING:   # annotations only: the run's modules load when the command runs (tests/cli/test_parser.py)
    from rmpeer.run.hostrun import HostRun

SETUP_SESSIONS = (1, 2, 4, 8, 16)
SETUP_EXTENT = 2 << 20         # the smallest extent: setup cost without allocation cost
SETUP_REPEATS = 3
CUDA_SCRIPT = Path(__file__).parent.parent / "traffic" / "cuda_copy.py"   # run as a script: no rmpeer import there


def setup_cost(host_run: HostRun, sessions: int) -> dict:
    """Pairs + windows of `sessions` sessions dealt over the cards (the seed's measure),
    the median of a few builds, with the time per NV50_P2P, reservation and map."""
    from rmpeer.model.target import Case
    from rmpeer.tables.layouts import Layout

    cards = host_run.target.cards
    layout = Layout(f"setup-{sessions}", tuple(i % cards for i in range(sessions)))
    runs = []
    for _ in range(SETUP_REPEATS):
        built = host_run.layout(Case(host_run.target, layout, SETUP_EXTENT))
        r = built.setup.report
        per = lambda steps: statistics.median([s.record.duration_ns for s in steps]) / 1e6 if steps else None
        runs.append({"sessions": sessions, "ms": r.setup_ns / 1e6, "pairs": len(r.pairs), "windows": len(r.maps),
                     "per_pair_ms": per(r.pairs), "per_reservation_ms": per(r.reserves), "per_map_ms": per(r.maps)})
        host_run.release_layout()
    best = sorted(runs, key=lambda x: x["ms"])[len(runs) // 2]
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in best.items()}


def cuda_figures(sizes: list, cards: int) -> dict:
    """CUDA's peer copy (torch copy_, CUDA events) in a process of its own, after rmpeer's
    client is closed: a CUDA context raises the clocks for everyone while it lives."""
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    try:
        done = subprocess.run([sys.executable, str(CUDA_SCRIPT), json.dumps({"sizes": sizes, "cards": cards})],
                              capture_output=True, text=True, timeout=300, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"reason": f"CUDA comparison did not run: {exc}"}
    if done.returncode:
        return {"reason": (done.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return json.loads(done.stdout)


def render(bench: dict) -> str:
    lines = [f"rmpeer bench on {bench['host']['label']}: driver {bench['driver']}, boost "
             f"{'on' if bench['boost'] else 'off'}",
             f"{'op':<14}{'pair':<10}{'size':>8}{'GB/s':>9}{'first':>9}{'CUDA':>9}{'ratio':>7}"]
    for r in bench["results"]:
        pair = "all" if r["op"] == "all" else f"{r['src_card']}->{r['dst_card']}"
        cuda = r.get("cuda_gbps")
        lines.append(f"{r['op']:<14}{pair:<10}{r['bytes'] >> 20:>6}Mi{r['gbps']:9.1f}{r['first_gbps']:9.1f}"
                     + (f"{cuda:9.1f}{r['gbps'] / cuda:7.2f}" if cuda else f"{'-':>9}{'-':>7}"))
    lines.append("setup (pairs + windows, 2 MiB buffers):")
    for s in bench["setup"]:
        lines.append(f"  {s['sessions']:>2} sessions: {s['ms']:8.1f} ms  ({s['pairs']} NV50_P2P at "
                     f"{s['per_pair_ms'] or 0:.2f} ms, {s['windows']} windows: reserve {s['per_reservation_ms']:.2f} "
                     f"+ map {s['per_map_ms']:.2f} ms)")
    for phase, cards in bench["clocks"].items():
        lines.append(f"clocks {phase:<14}" + "  ".join(
            f"card {c}: {r.get('graphics_mhz')}/{r.get('memory_mhz')} MHz {r.get('pstate')}" for c, r in cards.items()))
    return "\n".join(lines)


def bench(args) -> int:
    from rmpeer.machine.writable import check_inside, writable
    from rmpeer.render.bench_svg import bench_svg
    from rmpeer.run.costmodel import calibration_logs, calibration_stretches, projection, render_projection
    from rmpeer.run.hostrun import HostRun
    from rmpeer.run.spec import live_spec
    from rmpeer.safewrite import write_file
    from rmpeer.tables.layouts import LayoutMatrix, parse_size
    from rmpeer.traffic.bandwidth import Rig, measure

    sizes = sorted({parse_size(s) for s in args.sizes.split(",") if s.strip()}) if args.sizes else []
    if not sizes:
        raise ConfigError("--sizes: give one or more sizes such as 64MiB,256MiB,1GiB")
    matrix = LayoutMatrix()
    for n in sizes:     # every option checked before looking for a device (exit 2 before 3)
        try:
            matrix.check_extent(n)
        except ConfigError as exc:
            raise ConfigError(f"--sizes: {exc}") from None
    out = writable("--output", args.output, folder=True)
    check_inside("--output", out, files=("bench.json", "bench.svg"))   # a link there: exit 2 before the run
    try:
        spec = live_spec(layouts=["one-per-card"], extent=max(sizes), boost=not args.no_boost, record=args.record,
                         output=out, cards=request_of_args(args))
    except NoDeviceError:
        raise NoDeviceError("no NVIDIA device: /dev/nvidiactl does not exist on this machine; rmpeer bench "
                            "measures a live host only") from None
    target = spec.target
    out.mkdir(parents=True, exist_ok=True)
    host_run = HostRun(spec, with_staging=False).open()   # no byte is checked here
    started = time.time()
    try:
        rig = Rig(host_run.layout_factory, host_run.shim, target.cards, max(sizes))
        try:
            results = [f.as_dict() for n in sizes for f in measure(rig, n)]
            host_run.fitness.read_clocks("after-traffic")
        finally:
            rig.close()
        setup = [setup_cost(host_run, n) for n in SETUP_SESSIONS if n <= 16]
    finally:
        host_run.close()
    whole = not host_run.facts.selection or len(host_run.facts.selection["cards"]) == len(host_run.facts.selection["of"])
    # CUDA opens the cards its own order names: on a selection it could touch the others
    cuda = ({} if args.no_cuda else cuda_figures(sizes, target.cards) if whole
            else {"reason": "CUDA comparison not run: only some of the host's cards were selected"})
    for r in results:
        key = f"{r['src_card']}->{r['dst_card']}:{r['bytes']}"
        if r["op"] in ("read", "write", "same-card") and key in cuda.get("copies", {}):
            r["cuda_gbps"] = round(cuda["copies"][key], 2)
    facts = host_run.facts
    result = {"tool": "rmpeer", "version": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "host": {"label": target.label, "cards": [{"name": c.name, "pci": c.pci, "uuid": c.uuid}
                                                         for c in facts.cards]},
              "driver": f"{facts.driver_version} ({facts.flavour})", "boost": spec.boost,
              "clocks": host_run.fitness.clocks, "results": results, "setup": setup,
              "cuda": {k: v for k, v in cuda.items() if k != "copies"} or None,
              "duration_s": round(time.time() - started, 1)}

    # fitted to this bench and the certify logs and recordings beside it in --output
    # (device-evidence.sh puts them there)
    result["cost_model"] = projection(result, calibration_logs(out), calibration_stretches([out]))

    from rmpeer.render.text import escaped

    write_file(out / "bench.json", json.dumps(result, indent=1, default=str))
    write_file(out / "bench.svg", bench_svg(result))
    print(render(result))
    print(render_projection(result["cost_model"]))
    print(f"\nwritten to {escaped(out / 'bench.json')} and {escaped(out / 'bench.svg')}")   # --output is input
    return EXIT_OK
