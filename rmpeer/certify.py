"""`rmpeer certify`: the hardware checks against this host (or a recording), a verdict, a
card x card table, and a certificate.

certify only builds the RunSpec (rmpeer.spec: every option checked before anything is
written or opened on a GPU, exit 2 or 3), opens the target once, runs the suites in this
process with the spec handed to the plugin as an object, judges the RunResult (rmpeer.judge)
and calls the renderers (rmpeer.render). A run that does not finish is never CERTIFIED:
SIGINT, SIGTERM, a pytest internal error or no hardware check run give INCOMPLETE (exit 5)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import signal
import sys
import time
import uuid
from collections import Counter

from . import __version__
from .hostrun import HostRun
from .judge import EXIT_CODES, judge
from .render.certificate import write_certificate
from .render.table import render_fitness, render_table, use_colour
from .result import DEGRADE, FAIL, UNFINISHED, Finding
from .spec import from_certify_args

REASONS_SHOWN = 20
PYTEST_UNFINISHED = {2: "the run was interrupted", 3: "pytest stopped on an internal error",
                     4: "pytest refused its arguments", 5: "no check was collected"}


def matrices_digest() -> str:
    from .resources import matrices_dir

    h = hashlib.sha256()
    for path in sorted(matrices_dir().glob("*.yaml")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return "sha256:" + h.hexdigest()


class Progress:
    """One line per layout and check: counts and elapsed time; colour only on a terminal
    (and never with NO_COLOR)."""

    def __init__(self, stream):
        self.stream, self.start, self.group, self.counts = stream, time.monotonic(), None, Counter()
        self.colour = use_colour(stream)

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.failed or report.skipped):
            return
        from .pytest_plugin.plugin import CHECK

        props = dict(report.user_properties)
        check = props.get(CHECK) or {}
        where = "fitness" if check.get("area") == "fitness" else check.get("layout") or "host"
        group = (where, check.get("check", "?"))
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


class Signals:
    """SIGINT and SIGTERM end the run where it stands (as a KeyboardInterrupt, which pytest
    turns into an interrupted session); the signal's name is kept for the verdict's reason."""

    def __init__(self):
        self.seen = None
        self.previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        first = self.seen is None
        self.seen = self.seen or signal.Signals(signum).name
        if first:
            raise KeyboardInterrupt(self.seen)

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def _run_pytest(spec, host, collector, stream) -> int:
    import os

    import pytest

    from .pytest_plugin.plugin import GivenRun
    from .pytest_plugin.results import COLLECTOR
    from .resources import pytest_args, suites_dir

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"   # the user's other plugins stay out
    collector.__name__ = COLLECTOR    # reporting.py's pair matrix still finds it so (until it renders the result)
    allure_dir = spec.output / "allure-results"
    args = [str(suites_dir()), "-m", "hardware", *pytest_args(), "-p", "no:cacheprovider", "-p", "no:terminal",
            "-p", "no:warnings", "-p", "allure_pytest.plugin", "--alluredir", str(allure_dir), "--clean-alluredir"]
    given = GivenRun([spec], {spec.target: host})
    return int(pytest.main(args, plugins=[given, collector, Progress(stream)]))


def _target(spec) -> dict:
    if not spec.is_replay:
        return {"kind": "live", "label": spec.target.label}
    h = spec.header
    return {"kind": "replay", "label": spec.target.label, "transcript": spec.target.path,
            "recorded_host": h.get("hostname"), "recorded_at": h.get("created"), "recorded_label": h.get("label"),
            "test": "request regression (replay)",
            "note": "a replay of a recording: this is NOT a certificate of the machine it ran on"}


def certify(args) -> int:
    started = time.time()
    spec = from_certify_args(args)
    out_stream = sys.stderr if args.json else sys.stdout
    say = lambda text="": print(text, file=out_stream, flush=True)   # noqa: E731
    target = _target(spec)
    replay_of = (f"REPLAY of {target['recorded_label']} recorded on {target['recorded_host']} at "
                 f"{target['recorded_at']} ({spec.target.path})") if spec.is_replay else ""
    if spec.is_replay:
        say("a request regression (replay): rmpeer's RM calls checked against a recording of a real host; "
            "this machine is not tested")
    if spec.tier == "passive":
        return _passive(spec, args, say, replay_of, started, target)
    from .pytest_plugin.results import Collector

    host, collector, stopped, code = HostRun(spec), Collector(), None, None
    signals = Signals().__enter__()
    try:
        try:
            host.open()
            spec = host.spec       # with the facts of the run's one RM open
            facts = spec.facts
            say(f"rmpeer {__version__}: certifying {replay_of or 'this host'}: driver {facts.driver_version} "
                f"({facts.flavour}), ABI {facts.abi_release}{' (forced)' if facts.abi_forced else ''}, "
                f"{len(facts.cards)} card(s): {', '.join(c.name for c in facts.cards)}")
            say(f"layouts: {', '.join(f'{c.layout.name} {list(c.layout.cards)}' for c in spec.cases)}; "
                f"extent {spec.cases[0].extent >> 20} MiB")
            for line in spec.left_out:
                say(f"  {line}")
            spec.output.mkdir(parents=True, exist_ok=True)
            code = _run_pytest(spec, host, collector, out_stream)
        except KeyboardInterrupt:
            stopped = signals.seen or "SIGINT"
        finally:
            stopped = stopped or signals.seen      # pytest caught it and said "interrupted"
            if stopped or code == 2:
                host.abandon()     # the RM client freed: every object and any boost go with it
            else:
                host.close()
    except KeyboardInterrupt:        # a signal while closing: the client is freed by the exit
        stopped = stopped or signals.seen or "SIGINT"
    finally:
        signals.__exit__()
    result = _result(spec, host, collector, target, started, stopped, code)
    return _report(result, spec, args, say, replay_of, started)


def _passive(spec, args, say, replay_of, started, target) -> int:
    """--tier passive: no traffic, no peer setup. The tiers module (rmpeer.passive) reads the
    host and returns its RunResult (checks and findings); certify judges and renders it the
    same way as a full run's."""
    try:
        from . import passive
    except ImportError:
        from .errors import ConfigError

        raise ConfigError("--tier passive: not available in this build yet (use --tier quick)") from None
    result = passive.run(spec)
    result.version, result.matrices, result.target, result.tier = __version__, matrices_digest(), target, "passive"
    result.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    result.duration_s = round(time.time() - started, 1)
    result.verdict, result.reasons = judge(result)
    spec.output.mkdir(parents=True, exist_ok=True)
    return _report(result, spec, args, say, replay_of, started)


def _result(spec, host, collector, target, started, stopped, code):
    result = host.fill_result()
    result.node, result.version, result.matrices = platform.node(), __version__, matrices_digest()
    result.target, result.tier = target, spec.tier
    result.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    result.certificate_id = str(uuid.uuid4())
    result.host = result.host or (spec.facts.as_dict() if spec.facts else {})
    if spec.topology is not None:
        floors = spec.topology.floors
        result.topology = {"name": spec.topology.name, "matched_by": spec.topology_matched_by,
                           "floors": dataclasses.asdict(floors) if floors is not None else None}
    result.checks = collector.checks()
    result.findings += [Finding("topology", "host", f"the topology {spec.topology_name}", problem, FAIL)
                        for problem in spec.topology_problems()]
    if (spec.topology is None or spec.topology.floors is None) and not spec.policies.no_floors:
        # never a silent pass: without floors the bandwidth was measured but not judged
        found = ("no entry of matrices/topologies.yaml matches this host" if spec.topology is None
                 else f"the entry {spec.topology.name} has no floors")
        result.findings.append(Finding("bandwidth-floor", "host", "floors for this host's bandwidth "
                                       "(a topology entry with floors, or --no-floors)", found, DEGRADE))
    if stopped:
        result.findings.append(Finding("run", "host", "the run to finish", f"it was stopped by {stopped}",
                                       UNFINISHED))
    elif code in PYTEST_UNFINISHED or collector.internal_error:
        result.findings.append(Finding("run", "host", "the run to finish",
                                       PYTEST_UNFINISHED.get(code, "pytest stopped on an internal error"),
                                       UNFINISHED))
    result.duration_s = round(time.time() - started, 1)
    result.verdict, result.reasons = judge(result)
    return result


def _report(result, spec, args, say, replay_of, started) -> int:
    say("\n" + render_table(result))
    fitness = render_fitness(result)
    if fitness:
        say("\n" + fitness)
    path = spec.output / ("replay-certificate.json" if spec.is_replay else "certificate.json")
    if spec.output.is_dir():
        write_certificate(result, path)
    counts = result.counts
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no check ran"
    written = f"written to {path}" if path.exists() else "no certificate written"
    say(f"\n{replay_of + ': ' if spec.is_replay else ''}{result.verdict} ({summary}) in "
        f"{time.time() - started:.1f} s; {written}")
    for r in result.reasons[:REASONS_SHOWN]:
        say(f"  - {r}")
    if len(result.reasons) > REASONS_SHOWN:
        say(f"  ... and {len(result.reasons) - REASONS_SHOWN} more reasons in the certificate")
    if args.json:
        print(json.dumps({"verdict": result.verdict, "counts": counts, "reasons": result.reasons,
                          "certificate": str(path) if path.exists() else None,
                          "subject": result.target.get("kind")}, indent=1))
    return EXIT_CODES[result.verdict]
