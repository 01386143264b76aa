"""How much of a certify run is machinery: the time per check spent outside the check's own
work (issue 46). It replays a recording with `rmpeer certify --replay`, each run in a new
interpreter, and splits the pytest session's wall time in two:

    work        the test bodies (the copies, the byte checks, the asserts), and the run's
                building and tearing down done outside them: each layout's RM setup, its
                traffic, its teardown, the staging buffers, the fitness readings, the host's
                open and close
    machinery   the rest: collection, pytest's run-test protocol, fixtures, hooks, the
                outputs written per check (Allure, JUnit), the recording's bookkeeping

and divides the machinery by the checks the certificate counts. It also prints the checks
per tier that the plan makes on 1, 2, 4 and 8 cards, and the cost model's projection for 4
and 8 cards from a 2 x H200 evidence folder, with its per-check cost as fitted there and
with the machinery measured here taken off.

    python tools/overhead.py [--recording NAME] [--tier TIER] [--runs N] [--json OUT]
           [--bench docs/evidence/projection-20261205/bench.json]
           [--baseline EARLIER.json | --saved-ms MS]

A replay does work a live run does not (the recorded replies decoded, the read-back blocks
rebuilt) and none of the waits: its work is not a live run's, but its machinery is the same
code. Measured, never asserted (a benchmark, not a test)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_RECORDING = "h200x1-20261130T003119Z"
DEFAULT_BENCH = "docs/evidence/projection-20261205/bench.json"
CHECKOUT = Path(__file__).resolve().parent.parent


# -- the child: one certify run, timed ---------------------------------------------------------

class _Clock:
    """Time inside the outermost timed call only (a build inside a body is counted once), and
    only while the pytest session runs (`inside()`): certify opens the host before its session
    and closes it after, so counting those as the session's work made the machinery read low
    (a quick run's came out negative)."""

    def __init__(self, inside=lambda: True):
        self.depth, self.work, self.started, self.inside = 0, 0.0, 0.0, inside

    def wrap(self, fn):
        clock = self

        def timed(*args, **kwargs):
            if clock.depth == 0:
                clock.started = time.perf_counter()
            clock.depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                clock.depth -= 1
                if clock.depth == 0 and clock.inside():
                    clock.work += time.perf_counter() - clock.started
        timed.__wrapped__ = fn
        return timed


# Where a run's wall time goes outside the pytest session, each part timed on its own (they may
# nest: "nvidia-smi" is read inside "host open" and "host close"). (name, module, attribute):
# the attribute is patched where the run looks it up, so a name imported into another module
# is patched there.
PHASES = (
    ("host open", "rmpeer.run.hostrun", "HostRun.open"),
    ("  RM discovery", "rmpeer.rm.open", "Runtime.open"),
    ("  waiting for NVML's start in this process (begun before RM's open)", "rmpeer.machine.nvml", "Nvml.started"),
    ("  waiting for nvidia-smi (where NVML did not start in this process)", "rmpeer.run.fitness", "SmiQuery.finish"),
    ("  GPU processes", "rmpeer.run.hostrun", "snapshot_runtime"),
    ("  Xid watch", "rmpeer.machine.xids", "XidWatcher.start"),
    ("  boost", "rmpeer.rm.perf", "Boost.start"),
    ("  staging buffers", "rmpeer.traffic.peer", "create_staging"),
    ("clock readings (NVML and RM: idle, boosted, after the traffic, released)", "rmpeer.run.fitness",
     "Fitness.read_clocks"),
    # inside the checks: the fitness checks' bandwidth rig, with its calls counted, so that a
    # plain run prices the rig's build and each measure (the cost model fits them to recorded
    # runs, which write every call and so are slower)
    ("  bandwidth rig: built (its RM setup, engines and scratch)", "rmpeer.traffic.bandwidth", "Rig.__init__"),
    ("  bandwidth rig: one engine's copies measured", "rmpeer.traffic.bandwidth", "Rig.one"),
    ("  bandwidth rig: engines copying together, measured", "rmpeer.traffic.bandwidth", "Rig.together"),
    ("  bandwidth rig: closed", "rmpeer.traffic.bandwidth", "Rig.close"),
    ("host close", "rmpeer.run.hostrun", "HostRun.close"),
    ("judge and history", "rmpeer.run.execute", "_history"),
    ("judge and history", "rmpeer.run.assemble", "judged"),
    ("certificate and files", "rmpeer.cli.certify", "write_files"),
    ("report results (Allure)", "rmpeer.cli.certify", "_verdict_results"),
)


# inside "before the host's open": pytest and numpy, which this tool imports before certify
# starts; a plain run imports them in the host's open while NVML starts, so the wait shown
# there is what a plain run fills with them
IMPORTED_FIRST = ("  of it, this tool's own imports before the run (pytest, numpy: a plain run makes them "
                  "while NVML starts, in the host's open)")

# the parts timed inside the checks (listed under them, each with its count of calls)
DURING = tuple(name for name, module, _a in PHASES if module == "rmpeer.traffic.bandwidth")


def calls_of(t: dict) -> dict:
    """How many times each part inside the checks ran (a rig's build, each measure)."""
    return {name: v[1] for name, v in (t.get("phases") or {}).items() if name in DURING}


def _time_phases(phases: dict) -> None:
    """Each PHASES attribute wrapped to add its seconds, its calls and its first start to
    phases[name]."""
    import importlib

    for name, module, attribute in PHASES:
        try:
            owner = importlib.import_module(module)
        except ImportError:     # an earlier tree (an A/B run) without this module: not timed
            continue
        *path, leaf = attribute.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        fn = getattr(owner, leaf, None)
        if fn is None:          # an earlier tree (an A/B run) without this part: not timed
            continue

        def timed(*args, _fn=fn, _name=name, **kwargs):
            started = time.perf_counter()
            try:
                return _fn(*args, **kwargs)
            finally:
                spent = phases.setdefault(_name, [0.0, 0, started])    # seconds, calls, first start
                spent[0] += time.perf_counter() - started
                spent[1] += 1
        timed.__wrapped__ = fn
        setattr(owner, leaf, timed)


def _child(out: Path, argv: list) -> None:
    marks = {"process": time.perf_counter()}   # before the imports a certify run makes too
    import pytest

    try:    # an earlier wheel (before --rm-pairs-per-item) has no items of pairs
        from rmpeer.pytest_plugin import pairs
        from rmpeer.pytest_plugin.plugin import PAIRS
    except ImportError:
        pairs, PAIRS = None, None
    from rmpeer.run import hostrun
    from rmpeer.run.fitness import Fitness
    from rmpeer.traffic.peer import PeerTraffic

    # what this tool imported before the run (pytest, numpy: a plain run loads them in the host's
    # open, while NVML starts, and so waits that much less there)
    marks["tool_imports"] = time.perf_counter()
    clock, phases = _Clock(inside=lambda: "session_start" in marks and "session_end" not in marks), {}
    _time_phases(phases)
    from rmpeer.traffic import bandwidth

    def one_timed_on_the_gpu(self, s, src, dst, n, _one=bandwidth.Rig.one):
        """The copies' own GPU time beside Rig.one's wall: the host's part is the rest."""
        gbps = _one(self, s, src, dst, n)
        marks["rig_one_gpu_s"] = marks.get("rig_one_gpu_s", 0.0) + (n / gbps / 1e9 if gbps else 0.0)
        marks["rig_cards"] = len(set(self.cards))
        return gbps
    bandwidth.Rig.one = one_timed_on_the_gpu
    # an item of pairs (certify's --rm-pairs-per-item) runs a body per pair: each is work, the
    # loop around them machinery
    if pairs is not None:
        pairs.call = clock.wrap(pairs.call)
    for cls, names in ((hostrun.LayoutRun, ("__init__", "close")), (PeerTraffic, ("create", "close")),
                       (hostrun.HostRun, ("open", "close", "abandon", "staging_buffers")),
                       (Fitness, ("start", "read_clocks", "read_links", "links_now", "bandwidth", "xids", "close"))):
        for name in names:
            setattr(cls, name, clock.wrap(getattr(cls, name)))

    class Probe:
        @pytest.hookimpl(tryfirst=True)
        def pytest_sessionstart(self):
            marks["session_start"] = time.perf_counter()

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_setup(self, item):
            marks.setdefault("first_check", time.perf_counter())

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self):
            marks["session_end"] = time.perf_counter()

        @pytest.hookimpl(hookwrapper=True)
        def pytest_pyfunc_call(self, pyfuncitem):
            if PAIRS is not None and PAIRS in pyfuncitem.stash:   # its pairs' bodies are timed one by one (pairs.call)
                yield
                return
            clock.depth += 1                     # the body is work; a build inside it counts once
            if clock.depth == 1:
                clock.started = time.perf_counter()
            try:
                yield
            finally:
                clock.depth -= 1
                if clock.depth == 0:
                    clock.work += time.perf_counter() - clock.started

    real_main = pytest.main

    def main(args=None, plugins=None):
        return real_main(args, [*(plugins or []), Probe()])
    pytest.main = main

    real_exit = os._exit
    profile = None
    if os.environ.get("RMPEER_OVERHEAD_PROFILE"):
        import cProfile

        profile = cProfile.Profile()

    def _exit(code):
        marks["exit"] = time.perf_counter()
        if profile is not None:
            profile.disable()
            profile.dump_stats(os.environ["RMPEER_OVERHEAD_PROFILE"])
        out.write_text(json.dumps({"code": code, "work_s": clock.work, "phases": phases, **marks}))
        real_exit(code)
    os._exit = _exit
    sys.argv = ["rmpeer", *argv]
    from rmpeer.cli import entry
    if profile is not None:
        profile.enable()
    entry()


# -- the parent ---------------------------------------------------------------------------------

def profile_text(stats_path: Path, top: int = 20) -> str:
    """The top functions of a profiled run by cumulative and by own time (pstats' text)."""
    import io
    import pstats

    out = io.StringIO()
    for order in ("cumulative", "tottime"):
        out.write(f"== top {top} by {order} time ==\n")
        stats = pstats.Stats(str(stats_path), stream=out).strip_dirs()
        stats.sort_stats(order).print_stats(top)
    return out.getvalue()


def one_run(recording: str | None, tier: str | None, profile: Path | None = None) -> dict:
    env = dict(os.environ, **({"RMPEER_OVERHEAD_PROFILE": str(profile)} if profile else {}))
    with tempfile.TemporaryDirectory(prefix="rmpeer-overhead-") as tmp:
        times, output = Path(tmp) / "times.json", Path(tmp) / "out"
        # None: this host, live (its GPUs, clocks boosted as certify does)
        argv = ["certify", *(["--replay", recording] if recording else []), "--output", str(output), "--json"]
        if tier:
            argv += ["--tier", tier]
        started = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, "--child", str(times), "--", *argv],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - started
        if not times.exists():
            raise SystemExit(f"overhead: the run left no times (exit {done.returncode}): "
                             f"{(done.stderr.strip().splitlines() or [''])[-1]}")
        t = json.loads(times.read_text())
        line = json.loads(done.stdout.strip().splitlines()[-1])
    counts = line["counts"]
    checks = sum(counts.values())
    session = t["session_end"] - t["session_start"]
    machinery = session - t["work_s"]
    rig = rig_prices(t)
    return {"verdict": line["verdict"], "checks": checks, "counts": counts, "wall_s": round(wall, 3), "rig": rig,
            "start_s": round(t["session_start"] - t["process"], 3), "session_s": round(session, 3),
            "work_s": round(t["work_s"], 3), "machinery_s": round(machinery, 3),
            "machinery_per_check_ms": round(1e3 * machinery / max(checks, 1), 3), "phases": phases_of(t, wall),
            "calls": calls_of(t)}


def phases_of(t: dict, wall: float) -> dict:
    """Seconds by part of the run of `wall` seconds, in the order they happen: the interpreter's
    own start and exit, what precedes the host's open (the imports, the spec, the lock), each PHASES part, pytest from its session's
    start to the first check, the session (as above), and what follows it to the exit."""
    phases = t.get("phases") or {}
    spent = {name: round(v[0], 4 if name in DURING else 3) for name, v in phases.items()}
    opened = phases.get("host open", [0, 0, t["session_start"]])[2]
    after = ("host close", "judge and history", "certificate and files", "report results (Allure)")
    out = {"python's start and exit (the interpreter, outside rmpeer)": round(wall - (t["exit"] - t["process"]), 3),
           "before the host's open (imports, spec, lock)": round(opened - t["process"], 3)}
    if "tool_imports" in t:
        out[IMPORTED_FIRST] = round(t["tool_imports"] - t["process"], 3)
    out.update({name: spent.get(name, 0.0) for name, _m, _a in PHASES
                if name not in after and name not in DURING and (name in spent or not name.startswith(" "))})
    out["pytest: session start to the first check"] = round(t.get("first_check", t["session_start"]) - t["session_start"], 3)
    out["pytest: the checks (the session's work and machinery above)"] = round(
        t["session_end"] - t.get("first_check", t["session_start"]), 3)
    out.update({name: spent[name] for name in DURING if name in spent})
    out.update({name: spent.get(name, 0.0) for name in after})
    out["the rest after the session (the table, the JSON line)"] = round(
        t["exit"] - t["session_end"] - sum(spent.get(name, 0.0) for name in after), 3)
    return out


def rig_prices(t: dict) -> dict | None:
    """The bandwidth rig's two costs the model fits to recorded runs, from a plain run's
    clocks: per rig session, its build and close less its RM setup as bench's table prices
    it (the 2 x H200 fit's coefficients); per measure, Rig.one's wall less its copies' own
    GPU time. None where no rig ran (passive) or a part was not timed."""
    phases, gpu_s = t.get("phases") or {}, t.get("rig_one_gpu_s")
    built, one, closed = (phases.get(name) for name in (DURING[0], DURING[1], DURING[3]))
    if not (built and one and closed) or gpu_s is None:
        return None
    from rmpeer.run.costmodel import _setup_s, rig_shape

    c = json.loads((CHECKOUT / DEFAULT_BENCH).read_text())["cost_model"]["coefficients"]
    cards = t.get("rig_cards", 1)
    shape = rig_shape(cards)
    return {"cards": cards, "sessions": shape["sessions"], "measures": one[1],
            "per_session_s": max(0.0, (built[0] + closed[0] - _setup_s(shape, c)) / shape["sessions"]),
            "per_measure_s": max(0.0, (one[0] - gpu_s) / one[1])}


def checks_per_tier(card_counts=(1, 2, 4, 8)) -> dict:
    """The plan's check items per tier (the cost model's count: read, write, reservation, map,
    pair and each layout's own checks), and the fitness figures."""
    import inspect

    from rmpeer.run.costmodel import fitness_figures, layout_shape, tier_layouts

    if len(inspect.signature(fitness_figures).parameters) < 2:   # an earlier tree's model: no tier
        fitness_figures = (lambda n, tier, _f=fitness_figures: _f(n))
    out = {}
    for n in card_counts:
        out[str(n)] = {tier: {"layout_checks": sum(layout_shape(c, e)["items"] for c, e in tier_layouts(n, tier)),
                              "fitness_figures": fitness_figures(n, tier)}
                       for tier in ("quick", "full")}
    return out


def projection(bench_path: Path, saved_ms: float | None, rig: dict | None = None) -> dict:
    """The cost model of a 2 x H200 evidence folder for 4 and 8 cards: as fitted there, and
    with its per-check cost lowered by the machinery saved since a baseline measured here
    (a projection from a measured difference, not a new fit)."""
    import inspect

    from rmpeer.run.costmodel import predict, tier_layouts

    if len(inspect.signature(predict).parameters) < 4:          # an earlier tree's model: no tier
        predict = (lambda c, n, layouts, tier, _p=predict: _p(c, n, layouts))

    c = json.loads(bench_path.read_text())["cost_model"]["coefficients"]
    out = {"from": str(bench_path), "per_item_ms_fitted": round(c["per_item_s"] * 1e3, 3), "fitted": {}}
    lowered = {**c, "per_item_s": max(0.0, c["per_item_s"] - (saved_ms or 0.0) / 1e3)}
    if saved_ms is not None:
        out.update(saved_ms_per_check=round(saved_ms, 3), per_item_ms_lowered=round(lowered["per_item_s"] * 1e3, 3),
                   lowered={})
    # the rig priced by this plain run (rig_prices) where the fit took recorded runs
    repriced = {**lowered, "rig_per_session_s": rig["per_session_s"], "per_measure_s": rig["per_measure_s"]} \
        if rig else None
    if repriced:
        out.update(rig_per_session_ms=round(rig["per_session_s"] * 1e3, 3), per_measure_ms=round(rig["per_measure_s"] * 1e3, 3),
                   rig_per_session_ms_fitted=round(c["rig_per_session_s"] * 1e3, 3),
                   per_measure_ms_fitted=round(c["per_measure_s"] * 1e3, 3), rig_repriced={})
    for n in (4, 8):
        out["fitted"][str(n)] = {tier: round(predict(c, n, tier_layouts(n, tier), tier), 1) for tier in ("quick", "full")}
        if saved_ms is not None:
            out["lowered"][str(n)] = {tier: round(predict(lowered, n, tier_layouts(n, tier), tier), 1)
                                      for tier in ("quick", "full")}
        if repriced:
            out["rig_repriced"][str(n)] = {tier: round(predict(repriced, n, tier_layouts(n, tier), tier), 1)
                                           for tier in ("quick", "full")}
    return out


def main(argv: list) -> int:
    if argv[:1] == ["--child"]:
        _child(Path(argv[1]), argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recording", default=DEFAULT_RECORDING, help=f"a recording to replay (default {DEFAULT_RECORDING})")
    ap.add_argument("--live", action="store_true", help="certify this host (its GPUs), not a recording")
    # the passive tier runs no pytest session: there is no machinery of checks to split off
    ap.add_argument("--tier", default=None, choices=("quick", "full"),
                    help="the tier to replay (default: the recording's own)")
    ap.add_argument("--runs", type=int, default=3, help="runs, each in a new interpreter (the median is kept)")
    ap.add_argument("--bench", type=Path, default=CHECKOUT / DEFAULT_BENCH, help="a bench.json with a cost_model")
    ap.add_argument("--json", type=Path, default=None, help="also write everything as JSON here")
    ap.add_argument("--profile", type=Path, default=None,
                    help="one more run under cProfile (not counted): its top 20 by cumulative and own time, as text here")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="an earlier --json output: the machinery saved since is taken off the model's per-check cost")
    ap.add_argument("--saved-ms", type=float, default=None,
                    help="the machinery saved per check as measured elsewhere (a live A/B: 2.3 on 1 x H200, "
                         "docs/evidence/h200x1-20261204T2035Z-machinery), taken off instead of --baseline's")
    args = ap.parse_args(argv)
    recording = None if args.live else args.recording
    runs = [one_run(recording, args.tier) for _ in range(max(1, args.runs))]
    median = lambda key: statistics.median(r[key] for r in runs)
    summary = {k: median(k) for k in ("wall_s", "start_s", "session_s", "work_s", "machinery_s",
                                      "machinery_per_check_ms")}
    summary["phases"] = {name: statistics.median(r["phases"].get(name, 0.0) for r in runs) for name in runs[0]["phases"]}
    summary["calls"] = {name: statistics.median(r.get("calls", {}).get(name, 0) for r in runs) for name in DURING}
    saved = args.saved_ms
    if args.baseline and saved is None:
        saved = json.loads(args.baseline.read_text())["median"]["machinery_per_check_ms"] - summary["machinery_per_check_ms"]
    rigs = [r["rig"] for r in runs if r.get("rig")]
    rig = {k: statistics.median(r[k] for r in rigs) for k in ("per_session_s", "per_measure_s")} if rigs else None
    summary["rig"] = {**rigs[0], **rig} if rig else None
    result = {"recording": recording or "live", "tier": args.tier, "python": sys.version.split()[0],
              "runs": runs, "median": summary, "checks_per_tier": checks_per_tier(),
              "projection": projection(args.bench, saved, rig if recording is None else None)
              if args.bench.is_file() else None}
    first = runs[0]
    print(f"overhead: {recording or 'live, this host'}{' --tier ' + args.tier if args.tier else ''}: {first['verdict']}, "
          f"{first['checks']} checks, {len(runs)} runs (medians)")
    print(f"  wall {summary['wall_s']:.2f} s = start-up {summary['start_s']:.2f} s + pytest session "
          f"{summary['session_s']:.2f} s + the rest")
    print(f"  session: work {summary['work_s']:.2f} s, machinery {summary['machinery_s']:.2f} s "
          f"= {summary['machinery_per_check_ms']:.2f} ms per check")
    print("  where the wall goes, in order (medians; an indented part is inside the one above it):")
    for name, seconds in summary["phases"].items():
        calls = summary["calls"].get(name)
        print(f"    {name}: {seconds:.3f} s" + (f" ({calls} calls, {1e3 * seconds / calls:.2f} ms each)" if calls else ""))
    print("  checks per tier (the plan's layout checks + fitness figures):")
    for n, tiers in result["checks_per_tier"].items():
        print(f"    {n} card(s): " + ", ".join(f"{tier} {v['layout_checks']} + {v['fitness_figures']}"
                                               for tier, v in tiers.items()))
    if result["projection"]:
        p = result["projection"]
        print(f"  cost model ({p['from']}, {p['per_item_ms_fitted']} ms per check as fitted): "
              + "; ".join(f"{n} cards quick {v['quick']} s, full {v['full']} s" for n, v in p["fitted"].items()))
        if "rig_repriced" in p:
            print(f"  the bandwidth rig as this plain run prices it: {p['rig_per_session_ms']} ms a rig session built "
                  f"and freed (fitted to recordings: {p['rig_per_session_ms_fitted']}), {p['per_measure_ms']} ms the host's "
                  f"part of a measure (fitted: {p['per_measure_ms_fitted']}); with them"
                  + (" and the saving below" if "lowered" in p else "") + ": "
                  + "; ".join(f"{n} cards quick {v['quick']} s, full {v['full']} s" for n, v in p["rig_repriced"].items()))
        if "lowered" in p:
            print(f"  the same with {p['saved_ms_per_check']} ms per check saved (--baseline or --saved-ms) "
                  f"({p['per_item_ms_lowered']} ms per check): "
                  + "; ".join(f"{n} cards quick {v['quick']} s, full {v['full']} s" for n, v in p["lowered"].items()))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.profile:
        with tempfile.TemporaryDirectory(prefix="rmpeer-profile-") as tmp:
            stats = Path(tmp) / "run.pstats"
            one_run(recording, args.tier, stats)
            args.profile.write_text(f"cProfile of `rmpeer certify{' --replay ' + recording if recording else ''}"
                                    f"{' --tier ' + args.tier if args.tier else ''}` (tools/overhead.py --profile)\n\n"
                                    + profile_text(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
