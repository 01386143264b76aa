"""`rmpeer certify`: the hardware checks against this host (or a recording), a verdict, a
card x card table, and a certificate.

Everything the user gave is checked before anything is written or opened on a GPU (exit 2
or 3); then the suites run in this process, one line of progress per layout and step."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from . import __version__
from .errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError, NoDeviceError
from .hostrun import RunOptions
from .verdict import CERTIFIED, compact_tests, pair_table, render_fitness, render_table, short, verdict

QUICK_LAYOUTS = ("one-per-card", "interleaved")


def matrices_digest() -> str:
    from .resources import matrices_dir

    h = hashlib.sha256()
    for path in sorted(matrices_dir().glob("*.yaml")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return "sha256:" + h.hexdigest()


class Plan:
    """What certify will do, resolved and checked before anything is written."""

    def __init__(self, args):
        from .layouts import LayoutMatrix, parse_size
        from .targets import cases_for, live_target, replay_target
        from .topology import TopologyMatrix

        self.out = Path(args.output).resolve()
        self.replay = str(Path(args.replay).resolve()) if args.replay else None
        if self.replay:
            refused = [flag for flag, given in (("--rm-abi", args.rm_abi), ("--extent", args.extent),
                                                ("--record", args.record), ("--no-boost", args.no_boost))
                       if given not in (None, False)]
            if refused:
                raise ConfigError(f"{', '.join(refused)}: a replay repeats the recorded run exactly "
                                  f"(its ABI, extent, boost and calls); these options cannot apply to it")
        if args.expect_topology is not None and not args.expect_topology.strip():
            raise ConfigError("--expect-topology needs the name of an entry of matrices/topologies.yaml")
        self.layouts = LayoutMatrix()
        self.topologies = TopologyMatrix()
        self.topology = self.topologies.get(args.expect_topology) if args.expect_topology else None
        extent = parse_size(args.extent) if args.extent else None
        if extent is not None:
            self.layouts.check_extent(extent)
        if self.replay:
            self.target = replay_target(self.replay)
        else:
            self.target = live_target()
            if self.target is None:
                raise NoDeviceError("no NVIDIA device: /dev/nvidiactl does not exist on this machine (no GPU, "
                                    "or the nvidia kernel module is not loaded). To see a certification of a "
                                    "recorded host: rmpeer certify --replay TRANSCRIPT")
        wanted = list(args.layout or [])
        if args.quick and not wanted:
            wanted = [name for name in QUICK_LAYOUTS if self.layouts.resolve(name, self.target.cards)]
        self.cases, self.left_out = cases_for(self.target, wanted, extent, self.layouts)
        if not self.cases:
            raise ConfigError("no layout to check: " + ("; ".join(self.left_out) or "none selected"))
        self.options = RunOptions(layouts=wanted, topology=args.expect_topology, abi=args.rm_abi, extent=extent,
                                  record=str(Path(args.record).resolve()) if args.record else None,
                                  pattern_seed=int.from_bytes(os.urandom(2), "little"), boost=not args.no_boost)
        self.facts = self._host_facts()

    def _host_facts(self):
        """The host opened once, briefly: driver, ABI, cards (errors here are the user's to fix)."""
        if self.replay:
            from .rm.host import HostFacts
            from .shim.replay import recorded_note

            return HostFacts.from_dict(recorded_note(self.replay, "host")["facts"])
        from .runtime import Runtime
        from .shim.live import LiveShim

        with Runtime(LiveShim(), forced_abi=self.options.abi) as runtime:
            return runtime.facts


class Progress:
    """One line per layout and step: counts and elapsed time; colour only on a terminal."""

    def __init__(self, stream):
        self.stream, self.start, self.group, self.counts = stream, time.monotonic(), None, Counter()
        self.colour = stream.isatty()

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.failed or report.skipped):
            return
        from .verdict import test_name

        params = dict(report.user_properties).get("rmpeer_params", {})
        where = "fitness" if params.get("fitness") else params.get("layout", "host")
        group = (where, test_name(report.nodeid).removeprefix("test_"))
        if group != self.group:
            self.flush()
            self.group = group
        self.counts["failed" if report.failed else report.outcome] += 1

    def flush(self):
        if self.group is None:
            return
        counts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        bad = self.counts["failed"] and self.colour
        line = f"  {time.monotonic() - self.start:6.1f}s  {self.group[0]:<16} {self.group[1]:<36} {counts}"
        print(f"\033[31m{line}\033[0m" if bad else line, file=self.stream, flush=True)
        self.group, self.counts = None, Counter()

    def pytest_sessionfinish(self):
        self.flush()


class _GivenOptions:
    """The run's options, for the plugin to find by name (pluggy registers an object under
    its __name__)."""

    def __init__(self, name, options):
        self.__name__, self.options = name, options


def _run_pytest(plan: Plan, stream):
    import pytest


    from .pytest_plugin import options as options_plugin
    from .pytest_plugin import results
    from .resources import pytest_args, suites_dir

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"   # the user's other plugins stay out
    collector = results.Collector()
    collector.__name__ = results.COLLECTOR
    progress = Progress(stream)
    allure_dir = plan.out / "allure-results"
    args = [str(suites_dir()), "-m", "hardware", *pytest_args(), "-p", "no:cacheprovider", "-p", "no:terminal",
            "-p", "no:warnings", "-p", "allure_pytest.plugin", "--alluredir", str(allure_dir), "--clean-alluredir"]
    args += ["--rm-replay", plan.replay] if plan.replay else ["--rm-live-only"]
    given = _GivenOptions(options_plugin.RUN_OPTIONS_PLUGIN, plan.options)
    code = pytest.main(args, plugins=[given, collector, progress])
    return collector, int(code)


def _first_line(message: str) -> str:
    """A fitness failure's own sentence, without pytest's restatement of the assertion."""
    line = (message.strip().splitlines() or [""])[0]
    return line.removeprefix("AssertionError: ").split(" assert not ")[0]


def certify(args) -> int:
    started = time.time()
    plan = Plan(args)
    out_stream = sys.stderr if args.json else sys.stdout
    say = lambda text="": print(text, file=out_stream, flush=True)
    recorded = {}
    if plan.replay:
        from .shim.replay import transcript_summary

        recorded = transcript_summary(plan.replay)["header"]
    replay_of = (f"REPLAY of {recorded.get('label')} recorded on {recorded.get('hostname')} at "
                 f"{recorded.get('created')} ({plan.replay})") if plan.replay else ""
    if plan.replay:
        say("a request regression (replay): rmpeer's RM calls checked against a recording of a real host; "
            "this machine is not tested")
    facts = plan.facts
    topology_problems = plan.topology.mismatches(facts) if plan.topology else []
    try:
        plan.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--output {plan.out}: cannot write there ({exc.strerror})") from None
    say(f"rmpeer {__version__}: certifying {replay_of or 'this host'}: driver {facts.driver_version} "
        f"({facts.flavour}), ABI {facts.abi_release}{' (forced)' if facts.abi_forced else ''}, "
        f"{len(facts.cards)} card(s): {', '.join(c.name for c in facts.cards)}")
    say(f"layouts: {', '.join(f'{c.layout.name} {list(c.layout.cards)}' for c in plan.cases)}; "
        f"extent {plan.cases[0].extent >> 20} MiB")
    for line in plan.left_out:
        say(f"  {line}")
    collector, _ = _run_pytest(plan, out_stream)
    tests = list(collector.tests.values())
    unfit = [short(_first_line(t.get("message", ""))) for t in tests
             if t["params"].get("fitness") and t["outcome"] in ("failed", "error")]
    outcome, reasons = verdict([t for t in tests if not t["params"].get("fitness")], topology_problems, unfit)
    table = pair_table(tests)
    say("\n" + render_table(table))
    fitness = next((t.get("fitness") for t in collector.targets.values() if t.get("fitness")), None)
    if fitness:
        say("\n" + render_fitness(fitness))
    counts = Counter(t["outcome"] for t in tests)
    cert = {
        "tool": "rmpeer", "version": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "subject": ({"kind": "replay", "transcript": plan.replay, "recorded_host": recorded.get("hostname"),
                     "recorded_at": recorded.get("created"), "recorded_label": recorded.get("label"),
                     "test": "request regression (replay)",
                     "note": "a replay of a recording: this is NOT a certificate of the machine it ran on"}
                    if plan.replay else {"kind": "live"}),
        "target": plan.target.label, "host": facts.as_dict(), "matrices": matrices_digest(), "expect_topology": args.expect_topology,
        "topology_problems": topology_problems, "left_out": plan.left_out, "counts": dict(counts),
        "duration_s": round(time.time() - started, 1),
        "pairs": {f"{a}->{b}": v for (a, b), v in table.items()},
        "fitness": fitness, "tests": compact_tests(tests), "verdict": outcome, "reasons": reasons,
    }
    name = "replay-certificate.json" if plan.replay else "certificate.json"
    path = plan.out / name
    try:
        path.write_text(json.dumps(cert, separators=(",", ":"), default=str))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the certificate ({exc.strerror})") from None
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    say(f"\n{replay_of + ': ' if plan.replay else ''}{outcome} ({summary}) in {time.time() - started:.1f} s; "
        f"written to {path}")
    for r in reasons[:20]:
        say(f"  - {r}")
    if len(reasons) > 20:
        say(f"  ... and {len(reasons) - 20} more reasons in the certificate")
    if args.json:
        print(json.dumps({"verdict": outcome, "counts": dict(counts), "reasons": reasons,
                          "certificate": str(path), "subject": cert["subject"]["kind"]}, indent=1))
    return EXIT_OK if outcome == CERTIFIED else EXIT_NOT_CERTIFIED
