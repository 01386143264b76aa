"""`rmpeer certify`: the hardware checks against this host (or a recording), a verdict, a
card x card table, and a certificate.

certify only builds the RunSpec (rmpeer.spec: every option checked before anything is
written or opened on a GPU, exit 2 or 3), opens the target once, runs the suites in this
process with the spec handed to the plugin as an object, judges the RunResult (rmpeer.judge)
and calls the renderers (rmpeer.render). A run that does not finish is never CERTIFIED:
SIGINT, SIGTERM, a pytest internal error or no hardware check run give INCOMPLETE (exit 5)."""

from __future__ import annotations

import dataclasses
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
from .result import FAIL, PARTIAL, UNFINISHED, Finding
from .resources import matrices_digest
from .spec import from_certify_args, tier_of

REASONS_SHOWN = 20
PYTEST_UNFINISHED = {2: "the run was interrupted", 3: "pytest stopped on an internal error",
                     4: "pytest refused its arguments", 5: "no check was collected"}


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
    from .resources import pytest_args, suites_dir

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"   # the user's other plugins stay out
    allure_dir = _allure_dir(spec)
    args = [str(suites_dir()), "-m", "hardware", *pytest_args(), "-p", "no:cacheprovider", "-p", "no:terminal",
            "-p", "no:warnings", "-p", "allure_pytest.plugin", "--alluredir", str(allure_dir), "--clean-alluredir"]
    given = GivenRun([spec], {spec.target: host})
    return int(pytest.main(args, plugins=[given, collector, Progress(stream)]))


def _allure_dir(spec):
    return spec.output / "allure-results"


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
    from .staleness import parse_valid_for

    valid_for = parse_valid_for(getattr(args, "valid_for", None))     # an option: checked first
    spec = from_certify_args(args)
    if spec.is_replay:
        return _certify(spec, args, started, valid_for)
    from .hostlock import HostLock

    with HostLock(wait_s=spec.policies.wait_s):    # one run per host: BusyError (exit 6) after --wait
        return _certify(spec, args, started, valid_for)


def _tier_line(earned: str, asked: str) -> str:
    """What the certificate will claim, when it is less than the tier asked (spec.covered_tier)."""
    if earned == asked:
        return ""
    if earned == PARTIAL:
        return (f"tier: {PARTIAL}, not {asked}: the layouts run cover neither the quick nor the full tier, "
                f"so this certificate satisfies no --if-stale tier")
    return f"tier: {earned}, not {asked}: the layouts run are the {earned} tier's, not every layout of {asked}"


def _certify(spec, args, started, valid_for) -> int:
    out_stream = sys.stderr if args.json else sys.stdout
    say = lambda text="": print(text, file=out_stream, flush=True)   # noqa: E731
    target = _target(spec)
    replay_of = (f"REPLAY of {target['recorded_label']} recorded on {target['recorded_host']} at "
                 f"{target['recorded_at']} ({spec.target.path})") if spec.is_replay else ""
    if spec.is_replay:
        say("a request regression (replay): rmpeer's RM calls checked against a recording of a real host; "
            "this machine is not tested")
    if spec.tier == "passive":
        return _passive(spec, args, say, replay_of, started, target, valid_for)
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
            from .selection import certify_line
            if certify_line(facts):
                say(certify_line(facts))
            say(f"layouts: {', '.join(f'{c.layout.name} {list(c.layout.cards)}' for c in spec.cases)}; "
                f"extent {spec.cases[0].extent >> 20} MiB")
            for line in spec.left_out:
                say(f"  {line}")
            tier_line = _tier_line(spec.tier, tier_of(args))
            if tier_line:
                say(tier_line)
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
    _stamp(result, spec, host, started, valid_for, args)
    if collector.tests and _allure_dir(spec).is_dir():   # pytest ran: the card x card matrix, from the result
        from .pytest_plugin.reporting import write_pair_matrix

        write_pair_matrix(result, _allure_dir(spec), spec.target)
    if not spec.is_replay and not stopped:
        from .passive import remember_kmsg_position

        remember_kmsg_position(spec.target)   # the next passive run reports only later Xids
    return _report(result, spec, args, say, replay_of, started)


def _stamp(result, spec, host, started, valid_for, args) -> None:
    """What a scheduler's next run checks the certificate against: the node, how long it
    holds, the platform's fingerprint, and why this run was made."""
    from .result import node_name
    from .staleness import valid_until

    result.node = node_name()
    result.valid_until = valid_until(started, valid_for)
    result.ran_because = list(getattr(args, "ran_because", None) or [])
    facts = spec.facts if spec.facts is not None else getattr(host, "spec", spec).facts
    if facts is None:
        return
    links = host.fitness.links_before if host.fitness is not None else None
    if spec.is_replay:
        from .fingerprint import recorded_fingerprint

        result.fingerprint = recorded_fingerprint(facts, links=links, header=spec.header, matrices=result.matrices)
    else:
        from .fingerprint import platform_fingerprint

        result.fingerprint = platform_fingerprint(facts, links=links, matrices=result.matrices)


def _passive(spec, args, say, replay_of, started, target, valid_for) -> int:
    """--tier passive: RM facts only (no video memory, no engine, no peer setup): rmpeer.passive
    reads the host and returns its RunResult; certify judges and renders it the same way as a
    full run's."""
    from .passive import run_passive
    from .result import node_name

    result = run_passive(spec.target, topology_name=spec.topology_name, record=spec.record, abi=spec.abi,
                         node=node_name(), valid_for=valid_for, select=spec.chooser())
    result.target = target
    result.ran_because = list(getattr(args, "ran_because", None) or [])
    result.certificate_id = str(uuid.uuid4())
    if spec.policies.require_idle and not spec.is_replay:
        from .sharedhost import require_idle

        from .selection import count_for_idle

        require_idle(count_for_idle(((result.gpu_processes.get("now") or {}).get("processes")) or [],
                                    result.host.get("selection")))
    result.verdict, result.reasons = judge(result)
    spec.output.mkdir(parents=True, exist_ok=True)
    return _report(result, spec, args, say, replay_of, started)


def _result(spec, host, collector, target, started, stopped, code):
    result = host.fill_result()
    result.version, result.matrices = __version__, matrices_digest()
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
    if spec.facts is not None:
        # never a silent pass: without floors the bandwidth is measured but cannot be judged
        from .floors import floors_for
        from .topology import TopologyMatrix

        _, _, missing = floors_for(spec.facts, TopologyMatrix(), expected=spec.topology_name,
                                   no_floors=spec.policies.no_floors)
        if missing is not None:
            result.findings.append(missing)
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
    from .card_verdicts import by_card, verdict_text

    result.by_card = by_card(result)     # beside the host's verdict: each card's and each pair's
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
    say(f"\n{replay_of + ': ' if spec.is_replay else ''}{verdict_text(result)} ({summary}) in "
        f"{time.time() - started:.1f} s; {written}")
    for r in result.reasons[:REASONS_SHOWN]:
        say(f"  - {r}")
    if len(result.reasons) > REASONS_SHOWN:
        say(f"  ... and {len(result.reasons) - REASONS_SHOWN} more reasons in the certificate")
    if args.json:
        from .render.jsonline import json_line

        print(json_line(result, path if path.exists() else None), flush=True)
    if getattr(args, "junit", None):
        from .render.junit import write_junit

        write_junit([result], args.junit)
    if getattr(args, "prometheus", None):
        from .render.prometheus import write_textfile

        write_textfile(result, args.prometheus)
    return EXIT_CODES[result.verdict]
