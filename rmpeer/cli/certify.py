"""`rmpeer certify`: the hardware checks against this host (or a recording), a verdict, a
card x card table, and a certificate.

The command line's arguments become a RunSpec at the top (rmpeer.cli.certify_options builds
the CertifyRequest, rmpeer.run.spec.from_request checks it: exit 2 or 3 before anything is
written or opened on a GPU). Then every tier goes the same way: rmpeer.run.execute.run
(the run, the assembler, the judge once), and the renderers here, each from the RunResult
and the spec's outputs. A run that does not finish is never CERTIFIED: SIGINT, SIGTERM, a
pytest internal error or no hardware check run give INCOMPLETE (exit 5)."""

from __future__ import annotations

import sys
import time
from collections import Counter

from rmpeer import __version__
from rmpeer.errors import RmpeerError
from rmpeer.machine import interrupts
from rmpeer.machine.crash import at
from rmpeer.machine.deadline import writer
from rmpeer.machine.lines import Say, said_on_stderr
from rmpeer.machine.lock import HostLock
from rmpeer.machine.selection import certify_line
from rmpeer.model.result import INCOMPLETE, PARTIAL, RunOutcome
from rmpeer.paths import pytest_args, suites_dir
from rmpeer.render.jsonline import json_line
from rmpeer.render.table import render_fitness, render_table, use_colour
from rmpeer.render.text import escaped
from rmpeer.render.verdict import LINE_CHARS, unchecked_phrase, verdict_text, warning_lines
from rmpeer.run import assemble
from rmpeer.run.execute import run
from rmpeer.run.outputs import write_files
from rmpeer.run.spec import from_request

REASONS_SHOWN = 20
VERDICT_MIN = 80      # the verdict's own words keep at least this much of the line


class Lines:
    """One line per layout and check: counts and elapsed time; colour only on a terminal
    (and never with NO_COLOR)."""

    def __init__(self, say: Say):
        self.say, self.start, self.group, self.counts = say, time.monotonic(), None, Counter()
        self.colour = use_colour(say.stream)

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
        self.say(f"\033[31m{line}\033[0m" if bad else line)
        self.group, self.counts = None, Counter()

    def pytest_sessionfinish(self):
        self.flush()


# pytest's own plugins a certify run leaves out. Each one that wraps every test's phases, or
# every fixture's, costs each check its time (issue 46, `tools/overhead.py`):
# - logging and capture: suites log nothing, and what a check prints is sent nowhere once for
#   the whole session (_run_pytest), where pytest's capture switches at every phase of every check;
# - unraisableexception and threadexception: a stop signal's error in a finalizer is
#   rmpeer.machine.interrupts' to handle, never pytest's warning with a traceback;
# - faulthandler: rmpeer's own deadline stops a run that hangs;
# - assertion: every check says why it failed in its own message (tests/system/
#   test_architecture.py), so nothing needs pytest's assert rewriting, which a run repeats
#   wherever pytest may not keep it (PYTHONDONTWRITEBYTECODE, a read-only install);
# - setuponly, setupplan, tmpdir, unittest: a hook on every fixture or every report, for
#   options and fixtures the suites never use;
# - and those a run never uses: the terminal (rmpeer prints its own lines), the cache,
#   warnings, legacy paths, JUnit (certify writes its own from the RunResult), doctest,
#   pastebin, stepwise, subtests, and debugging (--pdb: its set-up imports pdb, about 2 ms of
#   every start).
QUIET_PLUGINS = [arg for name in ("cacheprovider", "capture", "terminal", "warnings", "unraisableexception",
                                  "threadexception", "logging", "faulthandler", "assertion", "setuponly",
                                  "setupplan", "tmpdir", "unittest", "legacypath", "junitxml", "doctest",
                                  "pastebin", "stepwise", "subtests", "debugging") for arg in ("-p", f"no:{name}")]


def _run_pytest(spec, host, collector, say) -> int:
    import contextlib
    import os

    import pytest

    from rmpeer.pytest_plugin.plugin import GivenRun

    # the report's results are written from the RunResult once the run has ended
    # (reporting.write_results; its folder made fresh by _certify): allure-pytest is not
    # loaded, and costs nothing per check
    # reporting.py titles allure-pytest's results: certify draws its own (render/allure.py)
    # each check of pairs runs once per layout, each pair logged as its own check
    # (rmpeer.pytest_plugin.pairs): pytest's machinery costs once per layout, not once per pair
    argv = [str(suites_dir()), "-m", "hardware", "--rm-pairs-per-item", *pytest_args(without=("reporting",)),
            *QUIET_PLUGINS]
    given = GivenRun([spec], {spec.target: host})
    # the user's other plugins stay out of this run, and only of it: a caller in the same
    # process (fleet node, a test) keeps its own environment for what it starts later
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        # what a check prints (the detection checks print what they found, for `pytest -rP`)
        # goes nowhere: certify's stdout holds its own lines or its JSON line alone. Switched
        # once, around the session, where pytest's capture switches at every phase of every
        # check; certify's lines keep the stream they were given (rmpeer.machine.lines.Say)
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            return int(pytest.main(argv, plugins=[given, collector, Lines(say)]))
    finally:
        if before is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = before


def certify(request) -> int:
    """certify of a CertifyRequest (rmpeer.model.spec): its exit code (certified's)."""
    return certified(request).code


def certified(request) -> RunOutcome:
    """certify of a CertifyRequest (rmpeer.model.spec): the spec, the lock, the run, the
    outputs; the exit code, the judged RunResult and where its certificate was written."""
    started = time.time()
    spec = from_request(request)
    if spec.is_replay:
        return _certify(spec, started)

    with HostLock(wait_s=spec.policies.wait_s) as lock:    # one run per host: BusyError (exit 6) after --wait
        if lock.note:      # a lock of this user's own, or RMPEER_LOCK's: said, never silent
            print(f"rmpeer: {escaped(lock.note)}", file=sys.stderr if spec.outputs.json else sys.stdout, flush=True)
        return _certify(spec, started)


def _load_suites() -> None:
    """pytest and rmpeer's plugin, which _suites imports: loaded by the host's open while the
    idle clocks' nvidia-smi runs (about 0.1 s it otherwise waits out, where numpy's import does
    not fill it: a host whose numpy has its bytecode)."""
    import pytest  # noqa: F401

    import rmpeer.pytest_plugin.plugin  # noqa: F401
    import rmpeer.pytest_plugin.results  # noqa: F401


def _suites(say):
    """The quick and full tiers' checks: pytest in this process, on the open HostRun."""
    def suites(host, progress):
        from rmpeer.pytest_plugin.results import Collector

        spec, collector = host.spec, Collector()       # with the facts of the run's one RM open
        progress.checks = collector.checks
        facts = spec.facts
        replay_of = _replay_of(spec)
        say(f"rmpeer {__version__}: certifying {replay_of or 'this host'}: driver {facts.driver_version} "
            f"({facts.flavour}), ABI {facts.abi_release}{' (forced)' if facts.abi_forced else ''}, "
            f"{len(facts.cards)} card(s): {', '.join(c.name for c in facts.cards)}")

        if certify_line(facts):
            say(certify_line(facts))
        say(f"layouts: {', '.join(f'{c.layout.name} {list(c.layout.cards)}' for c in spec.cases)}; "
            f"extent {spec.cases[0].extent >> 20} MiB")
        for line in spec.left_out:
            say(f"  {line}")
        tier_line = _tier_line(spec.tier, spec.outputs.tier_asked)
        if tier_line:
            say(tier_line)
        code = _run_pytest(spec, host, collector, say)
        return code, collector.checks, lambda: collector.internal_error
    return suites


def _replay_short(spec) -> str:
    """'REPLAY of h200x2 recorded on vm at ...': the verdict line's, without the file's path
    (the "certifying" line names it)."""
    t = assemble.target_of(spec)
    return escaped(f"REPLAY of {t['recorded_label']} recorded on {t['recorded_host']} at {t['recorded_at']}")


def _replay_of(spec) -> str:
    """_replay_short and the recording's path; "" for a live run. The recording's name and
    header are input (a file name may hold a screen clear): escaped."""
    if not spec.is_replay:
        return ""
    return f"{_replay_short(spec)} ({escaped(spec.target.path)})"


def _tier_line(earned: str, asked: str) -> str:
    """What the certificate will claim, when it is less than the tier asked (LayoutMatrix.covered_tier)."""
    if earned == asked:
        return ""
    if earned == PARTIAL:
        return (f"tier: {PARTIAL}, not {asked}: the layouts run cover neither the quick nor the full tier, "
                f"so this certificate satisfies no --if-stale tier")
    return f"tier: {earned}, not {asked}: the layouts run are the {earned} tier's, not every layout of {asked}"


def _certify(spec, started) -> RunOutcome:
    out_stream = sys.stderr if spec.outputs.json else sys.stdout
    at_deadline = _deadline_lines(started, out_stream)
    say = Say(out_stream)
    if spec.is_replay:
        say("a request regression (replay): rmpeer's RM calls checked against a recording of a real host; "
            "this machine is not tested")
    if spec.tier != "passive":
        from rmpeer.safewrite import empty_folder, make_folder

        # the report's folder, fresh before anything runs: a run whose open RM refused (no
        # check ran) still has its verdict drawn there, never beside an earlier run's checks
        empty_folder(make_folder(spec.allure_dir, what="--output"))
    result = run(spec, suites=_suites(say), started=started, at_deadline=at_deadline, load=_load_suites)
    code, result, written = _report(result, spec, say, started)
    return RunOutcome(code, result, str(written) if written is not None else None)


def _deadline_lines(started, out_stream):
    """What a run cut short by its deadline writes (rmpeer.run.execute assembles its
    INCOMPLETE result): its files, the verdict line, the JSON line. The lines go to copies
    of the terminal's descriptors taken now: at the deadline pytest may be capturing the
    standard ones."""
    say, json_out = writer(out_stream), writer(sys.stdout)

    def at_deadline(result, spec, seconds):
        path = write_files(result, spec)
        _verdict_results(result, spec)
        replay_of = _replay_of(spec)
        say(f"\n{replay_of + ': ' if spec.is_replay else ''}{result.verdict} (the deadline of {seconds:g} s "
            f"passed) in {time.time() - started:.1f} s; " + (f"written to {escaped(path)}" if path else "no certificate written"))
        for r in result.reasons:
            say(f"  - {escaped(r)}")
        if spec.outputs.json:
            json_out(json_line(result, path))
    return at_deadline


def _report(result, spec, say, started) -> tuple:
    """The outputs, once the run has ended: a signal noted before them makes them INCOMPLETE;
    one that comes while or after they are written rewrites them INCOMPLETE in
    interrupts.finish (the files then hold the earlier content or the INCOMPLETE one).
    (exit code, the RunResult the outputs were written from, the certificate's path or None)."""
    at("writing the outputs")
    if interrupts.seen() and result.verdict != INCOMPLETE:
        result = assemble.stopped_after(result, interrupts.seen())
    written = write_files(result, spec)
    _verdict_results(result, spec)       # after the certificate: the report's copy never delays it

    def late(name):     # a new RunResult, the stopped one: the files are written again from it
        if result.verdict != INCOMPLETE:
            write_files(assemble.stopped_after(result, name), spec)
    interrupts.after_late_signal(late)
    return _say_verdict(result, spec, say, started, written), result, written


def _verdict_results(result, spec) -> None:
    """The report's results, from the RunResult alone (rmpeer.render.allure): every check, the
    card x card matrix, the verdict and the findings, once the run has ended (its folder made
    fresh by _certify): a report never shows a run's checks without the verdict they led to,
    and a run no check of which ran still shows its verdict."""
    if spec.tier != "passive":
        from rmpeer.pytest_plugin.reporting import write_results

        try:
            write_results(result, spec.allure_dir, spec.target)
        except (OSError, RmpeerError) as exc:
            # the verdict stands in the certificate and the exit code; the report says less
            said_on_stderr(f"rmpeer: the report's verdict result could not be written to {escaped(spec.allure_dir)} "
                           f"({escaped(getattr(exc, 'strerror', None) or exc)}); the verdict stands: {result.verdict}")


def _say_verdict(result, spec, say, started, path) -> int:
    if spec.tier == "passive" and spec.outputs.tier_asked not in (None, "passive"):
        # a passive recording replayed with --tier quick or full (the suites' path, which says
        # the tier it earned, never ran): the certificate claims passive, and says so here too
        say(f"tier: passive, not {spec.outputs.tier_asked}: the recording is of a passive run (RM's facts and "
            "health, no peer setup), so this certificate satisfies only a passive --if-stale")

    say("\n" + render_table(result))
    fitness = render_fitness(result)
    if fitness:
        say("\n" + fitness)
    counts = result.counts
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no check ran"
    written = f"written to {escaped(path)}" if path is not None else "no certificate written"

    # the verdict line: at most LINE_CHARS, whatever the replay's names; where the certificate
    # went and what could not be checked on lines of their own. A reason or a reading's "why
    # not" may quote what a recording or the kernel log holds: escaped
    head = f"{_replay_short(spec)}: " if spec.is_replay else ""
    tail = f" ({summary}) in {time.time() - started:.1f} s"
    say("\n" + head + verdict_text(result, max(VERDICT_MIN, LINE_CHARS - len(head) - len(tail))) + tail)
    say(f"  {written}")
    if result.not_checked:
        say(f"  not checked: {escaped(unchecked_phrase(result.not_checked))}")
    for r in result.reasons[:REASONS_SHOWN]:
        say(f"  - {escaped(r)}")
    if len(result.reasons) > REASONS_SHOWN:
        say(f"  ... and {len(result.reasons) - REASONS_SHOWN} more reasons in the certificate")
    for line in warning_lines(result):
        say(f"  ! {escaped(line)}")
    if say.lost is not None and not spec.outputs.json:
        said_on_stderr(f"rmpeer: the report could not be written to stdout ({say.why()}); the verdict stands: "
                       f"{result.verdict} (exit {result.exit_code})" + (f", certificate {escaped(path)}" if path else ""))
    if spec.outputs.json:
        try:
            print(json_line(result, path), flush=True)
        except OSError as exc:
            # the verdict stands (its certificate is on disk): a full or closed stdout is said
            # on stderr, and never turns a DEGRADED or NOT CERTIFIED run into another code
            print(f"rmpeer: --json: the JSON line could not be written to stdout ({exc.strerror or exc}); "
                  f"the verdict stands: {result.verdict} (exit {result.exit_code})"
                  + (f", certificate {escaped(path)}" if path else ""), file=sys.stderr, flush=True)
    return result.exit_code


