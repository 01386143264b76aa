"""`rmpeer certify`: the hardware checks against this host (or a recording), a verdict, a
card x card table, and a certificate.

certify only builds the RunSpec (rmpeer.run.spec: every option checked before anything is
written or opened on a GPU, exit 2 or 3), opens the target once, runs the suites in this
process with the spec handed to the plugin as an object, judges the RunResult (rmpeer.judge.verdict)
and calls the renderers (rmpeer.render). A run that does not finish is never CERTIFIED:
SIGINT, SIGTERM, a pytest internal error or no hardware check run give INCOMPLETE (exit 5)."""

from __future__ import annotations

import sys
import time
import uuid
from collections import Counter

from rmpeer import __version__
from rmpeer.machine import interrupts
from rmpeer.machine.crash import at
from rmpeer.run.hostrun import HostRun
from rmpeer.judge.verdict import EXIT_CODES, judge
from rmpeer.render.certificate import write_certificate
from rmpeer.render.table import render_fitness, render_table, use_colour
from rmpeer.errors import ReplayMismatch, RmpeerError
from rmpeer.rm.errors import RmError
from rmpeer.model.result import FAIL, INCOMPLETE, INFO, PARTIAL, UNFINISHED, Finding
from rmpeer.paths import matrices_digest
from rmpeer.run.spec import from_certify_args, tier_of

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
        from rmpeer.pytest_plugin.plugin import CHECK

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


def _run_pytest(spec, host, collector, stream) -> int:
    import os

    import pytest

    from rmpeer.pytest_plugin.plugin import GivenRun
    from rmpeer.paths import pytest_args, suites_dir

    allure_dir = _allure_dir(spec)
    args = [str(suites_dir()), "-m", "hardware", *pytest_args(), "-p", "no:cacheprovider", "-p", "no:terminal",
            "-p", "no:warnings", "-p", "allure_pytest.plugin", "--alluredir", str(allure_dir), "--clean-alluredir"]
    given = GivenRun([spec], {spec.target: host})
    # the user's other plugins stay out of this run, and only of it: a caller in the same
    # process (fleet node, a test) keeps its own environment for what it starts later
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        return int(pytest.main(args, plugins=[given, collector, Progress(stream)]))
    finally:
        if before is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = before


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
    from rmpeer.run.freshness import parse_valid_for

    valid_for = parse_valid_for(getattr(args, "valid_for", None))     # an option: checked first
    from rmpeer.machine.deadline import parse_deadline

    args.deadline_s = parse_deadline(getattr(args, "deadline", None), tier_of(args),
                                     replay=bool(getattr(args, "replay", None)))
    spec = from_certify_args(args)
    if spec.is_replay:
        return _certify(spec, args, started, valid_for)
    from rmpeer.machine.lock import HostLock

    with HostLock(wait_s=spec.policies.wait_s) as lock:    # one run per host: BusyError (exit 6) after --wait
        if lock.note:      # a lock of this user's own, or RMPEER_LOCK's: said, never silent
            print(f"rmpeer: {lock.note}", file=sys.stderr if args.json else sys.stdout, flush=True)
        return _certify(spec, args, started, valid_for)


def _run_suites(host, args, say, collector, out_stream) -> int:
    spec = host.spec       # with the facts of the run's one RM open
    facts = spec.facts
    replay_of = _replay_of(spec)
    say(f"rmpeer {__version__}: certifying {replay_of or 'this host'}: driver {facts.driver_version} "
        f"({facts.flavour}), ABI {facts.abi_release}{' (forced)' if facts.abi_forced else ''}, "
        f"{len(facts.cards)} card(s): {', '.join(c.name for c in facts.cards)}")
    from rmpeer.machine.selection import certify_line

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
    at("running the checks")
    return _run_pytest(spec, host, collector, out_stream)


def _close(host, *, abandon: bool) -> None:
    """The run's end: an interrupted run frees the RM client at once (every object and any
    boost go with it); a finished one closes in order. A failed close is kept for the judge
    (host.close_problems), never raised past the verdict."""
    if abandon:
        host.abandon()
        return
    try:
        host.close()
    except RmpeerError as exc:
        host.close_problems.append(f"{host.target.label}: {exc}")


def _replay_of(spec) -> str:
    if not spec.is_replay:
        return ""
    t = _target(spec)
    return (f"REPLAY of {t['recorded_label']} recorded on {t['recorded_host']} at {t['recorded_at']} "
            f"({spec.target.path})")


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
    say = _sayer(out_stream)
    target = _target(spec)
    replay_of = _replay_of(spec)
    if spec.is_replay:
        say("a request regression (replay): rmpeer's RM calls checked against a recording of a real host; "
            "this machine is not tested")
    if spec.tier == "passive":
        watchdog = _watchdog(lambda: spec, args, target, started, out_stream, replay_of)
        with watchdog.until_error():
            with interrupts.during_run():
                try:
                    result = _passive(spec, args, started, target, valid_for)
                except KeyboardInterrupt:
                    result = None
            if result is None or interrupts.seen():   # cut short before its verdict: nothing certifies
                raise KeyboardInterrupt(interrupts.seen() or "SIGINT")
        return _report(result, spec, args, say, replay_of, started, watchdog)
    from rmpeer.pytest_plugin.results import Collector

    host, collector, stopped, code, refused = HostRun(spec), Collector(), None, None, None
    watchdog = _watchdog(lambda: host.spec, args, target, started, out_stream, replay_of, collector.checks)
    with watchdog.until_error():
        with interrupts.during_run():      # the first SIGINT, SIGTERM or SIGHUP ends the run where it stands
            try:
                try:
                    at("opening the host")
                    try:
                        host.open()
                    except (RmError, ReplayMismatch) as exc:   # RM (or the recording) refused the open: judged
                        refused = exc
                    if refused is None:
                        code = _run_suites(host, args, say, collector, out_stream)
                except KeyboardInterrupt:
                    stopped = interrupts.seen() or "SIGINT"
                finally:
                    stopped = stopped or interrupts.seen()      # pytest caught it and said "interrupted"
                    at("closing the host")
                    _close(host, abandon=bool(stopped) or code == 2)
            except KeyboardInterrupt:        # a signal while closing: the client is freed by the exit
                stopped = stopped or interrupts.seen() or "SIGINT"
                _close(host, abandon=True)
        at("judging")
        spec = host.spec
        result = _result(spec, host, collector, target, started, stopped, code)
        if refused is not None:
            result.findings.append(Finding("open", "host", "RM to accept the run's first calls",
                                           str(refused).splitlines()[0], FAIL))
            result.verdict, result.reasons = judge(result)
        _stamp(result, spec, host, started, valid_for, args)
        if collector.tests and _allure_dir(spec).is_dir():   # pytest ran: the card x card matrix, from the result
            from rmpeer.pytest_plugin.reporting import write_pair_matrix

            write_pair_matrix(result, _allure_dir(spec), spec.target)
        if not spec.is_replay and not stopped:
            from rmpeer.run.passive import remember_kmsg_position

            remember_kmsg_position(spec.target)   # the next passive run reports only later Xids
    return _report(result, spec, args, say, replay_of, started, watchdog)


def _watchdog(spec_now, args, target, started, out_stream, replay_of, checks_now=list):
    """The run's deadline (rmpeer.machine.deadline): at it, the INCOMPLETE outputs and exit 5. Its
    lines go to copies of the terminal's descriptors taken now: at the deadline pytest may
    be capturing the standard ones."""
    from rmpeer.machine.deadline import Watchdog, writer

    say, json_out = writer(out_stream), writer(sys.stdout)

    def on_deadline(seconds):
        from rmpeer.model.result import RunResult, node_name

        spec = spec_now()
        result = RunResult(node=node_name(), tier=spec.tier, target=target, version=__version__,
                           matrices=matrices_digest(), certificate_id=str(uuid.uuid4()),
                           started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                           host=spec.facts.as_dict() if spec.facts else {})
        try:
            result.checks = checks_now()     # the checks that ended before the deadline
        except Exception:   # noqa: BLE001 - read while the run stands still; never worth more than the exit
            result.checks = []
        result.findings.append(Finding("deadline", "host", f"the run to end within {seconds:g} s (--deadline)",
                                       "it was still running at its deadline: ended there, the RM client freed "
                                       "by the process's exit", UNFINISHED))
        result.verdict, result.reasons = judge(result)
        result.duration_s = round(time.time() - started, 1)
        path = _write_files(result, spec, args)
        say(f"\n{replay_of + ': ' if spec.is_replay else ''}{result.verdict} (the deadline of {seconds:g} s "
            f"passed) in {time.time() - started:.1f} s; " + (f"written to {path}" if path else "no certificate written"))
        for r in result.reasons:
            say(f"  - {r}")
        if args.json:
            from rmpeer.render.jsonline import json_line

            json_out(json_line(result, path))
    return Watchdog(args.deadline_s, on_deadline).start()


def _stamp(result, spec, host, started, valid_for, args) -> None:
    """What a scheduler's next run checks the certificate against: the node, how long it
    holds, the platform's fingerprint, and why this run was made."""
    from rmpeer.model.result import node_name
    from rmpeer.run.freshness import valid_until

    result.node = node_name()
    result.valid_until = valid_until(started, valid_for)
    result.ran_because = list(getattr(args, "ran_because", None) or [])
    facts = spec.facts if spec.facts is not None else getattr(host, "spec", spec).facts
    if facts is None:
        return
    links = host.fitness.links_before if host.fitness is not None else None
    if spec.is_replay:
        from rmpeer.run.fingerprint import recorded_fingerprint

        result.fingerprint = recorded_fingerprint(facts, links=links, header=spec.header, matrices=result.matrices)
    else:
        from rmpeer.run.fingerprint import platform_fingerprint

        result.fingerprint = platform_fingerprint(facts, links=links, matrices=result.matrices)


def _passive(spec, args, started, target, valid_for):
    """--tier passive: RM facts only (no video memory, no engine, no peer setup): rmpeer.run.passive
    reads the host and returns its RunResult; certify judges and renders it the same way as a
    full run's."""
    from rmpeer.run.passive import run_passive
    from rmpeer.model.result import node_name

    result = run_passive(spec.target, topology_name=spec.topology_name, record=spec.record, abi=spec.abi,
                         node=node_name(), valid_for=valid_for, select=spec.chooser())
    result.target = target
    result.ran_because = list(getattr(args, "ran_because", None) or [])
    result.certificate_id = str(uuid.uuid4())
    if spec.policies.require_idle and not spec.is_replay:
        from rmpeer.judge.sharedhost import require_idle

        from rmpeer.machine.selection import count_for_idle

        require_idle(count_for_idle(((result.gpu_processes.get("now") or {}).get("processes")) or [],
                                    result.host.get("selection")))
    result.verdict, result.reasons = judge(result)
    spec.output.mkdir(parents=True, exist_ok=True)
    return result


def _result(spec, host, collector, target, started, stopped, code):
    result = host.fill_result()
    result.version, result.matrices = __version__, matrices_digest()
    result.target, result.tier = target, spec.tier
    result.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    result.certificate_id = str(uuid.uuid4())
    result.host = result.host or (spec.facts.as_dict() if spec.facts else {})
    if spec.facts is not None:
        # never a silent pass: a host without floors (calibrated or derived) is said to be one
        from rmpeer.judge.floors import judged_topology

        result.topology, missing = judged_topology(spec, host)
        result.findings += [f for f in missing if f not in result.findings]
    elif spec.topology is not None:
        result.topology = {"name": spec.topology.name, "matched_by": spec.topology_matched_by, "floors": None}
    result.checks = collector.checks()
    _health(result, spec.topology)
    result.findings += [Finding("topology", "host", f"the topology {spec.topology_name}", problem, FAIL)
                        for problem in spec.topology_problems()]
    result.findings += _close_findings(host.close_problems, stopped, code, collector, result.checks)
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


def _close_findings(problems, stopped, code, collector, checks) -> list:
    """A failed close is the run's own fault only when nothing came before it: after a signal
    or an internal error it is a cause of INCOMPLETE; after a failed check (whose replay then
    diverges as it tears down) it is recorded beside that failure."""
    if not problems:
        return []
    unfinished = stopped or code in PYTEST_UNFINISHED or collector.internal_error
    failed = any(c.outcome in ("failed", "error") for c in checks)
    severity = UNFINISHED if unfinished else INFO if failed else FAIL
    return [Finding("teardown", "host", "the RM client to close as recorded" if "replay" in p else
                    "the RM client to close", p.splitlines()[0], severity) for p in problems]


def _sayer(stream):
    def say(text=""):
        try:
            print(text, file=stream, flush=True)
        except (OSError, ValueError):    # a terminal that went away (SIGHUP) must not stop the outputs
            pass
    return say


def _mark_stopped(result, name: str) -> None:
    """A signal after the checks: the run did not end as a run must, so nothing certifies."""
    result.findings.append(Finding("run", "host", "the run to finish",
                                   f"it was stopped by {name} after its checks", UNFINISHED))
    result.verdict, result.reasons = judge(result)


def _health(result, topology) -> None:
    """The health facts' findings first (a fabric not initialised explains the peer checks'
    RM errors that follow it) and what could not be checked (rmpeer.judge.health)."""
    from rmpeer.judge.health import health_findings

    found, _ = health_findings(result.host, (topology.links or {}).get("kind") if topology else None)
    result.findings[:0] = found     # what could not be read is an INFO finding: rmpeer.judge.unchecked names it


def _report(result, spec, args, say, replay_of, started, watchdog=None) -> int:
    """The outputs, once the run has ended: a signal noted before them makes them INCOMPLETE;
    one that comes while or after they are written rewrites them INCOMPLETE in
    interrupts.finish (the files then hold the earlier content or the INCOMPLETE one)."""
    at("writing the outputs")
    if watchdog is not None:
        watchdog.disarm()       # the run reached its verdict before its deadline
    _complete(result, getattr(args, "require_complete", False))
    if interrupts.seen() and result.verdict != INCOMPLETE:
        _mark_stopped(result, interrupts.seen())
    written = _write_files(result, spec, args)

    def late(name):
        if result.verdict != INCOMPLETE:
            _mark_stopped(result, name)
            _write_files(result, spec, args)
    interrupts.after_late_signal(late)
    return _say_verdict(result, spec, args, say, replay_of, started, written)


def _complete(result, require: bool) -> None:
    """The checks that could not run, named (rmpeer.judge.unchecked); --require-complete refuses a
    CERTIFIED run that has any."""
    from rmpeer.judge.unchecked import not_checked, refusals

    result.not_checked = not_checked(result)
    if require and refusals(result):
        result.findings += refusals(result)
        result.verdict, result.reasons = judge(result)


def _exit_code(result) -> int:
    from rmpeer.errors import EXIT_UNCHECKED
    from rmpeer.judge.unchecked import refused

    return EXIT_UNCHECKED if result.verdict == INCOMPLETE and refused(result) else EXIT_CODES[result.verdict]


def _certificate_path(spec):
    return spec.output / ("replay-certificate.json" if spec.is_replay else "certificate.json")


def _write_files(result, spec, args):
    from rmpeer.judge.cards import by_card

    result.by_card = by_card(result)     # beside the host's verdict: each card's and each pair's
    path = _certificate_path(spec)
    written = None
    if spec.output.is_dir():
        written = write_certificate(result, path)
    if getattr(args, "junit", None):
        from rmpeer.render.junit import write_junit

        write_junit([result], args.junit)
    if getattr(args, "prometheus", None):
        from rmpeer.render.prometheus import write_textfile

        write_textfile(result, args.prometheus)
    return written


def _say_verdict(result, spec, args, say, replay_of, started, path) -> int:
    from rmpeer.judge.cards import verdict_text

    say("\n" + render_table(result))
    fitness = render_fitness(result)
    if fitness:
        say("\n" + fitness)
    counts = result.counts
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no check ran"
    written = f"written to {path}" if path is not None else "no certificate written"
    from rmpeer.judge.unchecked import phrase

    unchecked = f"; not checked: {phrase(result.not_checked)}" if result.not_checked else ""
    say(f"\n{replay_of + ': ' if spec.is_replay else ''}{verdict_text(result)} ({summary}) in "
        f"{time.time() - started:.1f} s; {written}{unchecked}")
    for r in result.reasons[:REASONS_SHOWN]:
        say(f"  - {r}")
    if len(result.reasons) > REASONS_SHOWN:
        say(f"  ... and {len(result.reasons) - REASONS_SHOWN} more reasons in the certificate")
    if args.json:
        from rmpeer.render.jsonline import json_line

        try:
            print(json_line(result, path), flush=True)
        except OSError as exc:
            # the verdict stands (its certificate is on disk): a full or closed stdout is said
            # on stderr, and never turns a DEGRADED or NOT CERTIFIED run into another code
            print(f"rmpeer: --json: the JSON line could not be written to stdout ({exc.strerror or exc}); "
                  f"the verdict stands: {result.verdict} (exit {_exit_code(result)})"
                  + (f", certificate {path}" if path else ""), file=sys.stderr, flush=True)
    return _exit_code(result)
