"""One run of one RunSpec, for every tier: RunSpec -> run -> assemble -> judge (once).

The tiers differ only in the steps their spec asks for: passive reads RM's facts
(rmpeer.run.passive.observe: no video memory, no copy, no boost, no pytest); quick and full
open the HostRun, run the suites (a step handed in by the caller, who owns pytest: the run
layer sits below it) and close it. Either way rmpeer.run.assemble builds the RunResult and
asks the judge once. Signal handling is one context manager around the run's steps
(rmpeer.machine.interrupts.during_run), and the deadline another around the run
(rmpeer.machine.deadline: its INCOMPLETE result is assembled here too)."""

from __future__ import annotations

import contextlib
import time

from rmpeer.errors import ReplayMismatch, RmpeerError
from rmpeer.judge.drift import entry_of
from rmpeer.judge.sharedhost import require_idle_of
from rmpeer.machine import interrupts
from rmpeer.machine.crash import at
from rmpeer.machine.deadline import Watchdog
from rmpeer.machine.history import append_run, history_path, load_history
from rmpeer.machine.state import default_state_path
from rmpeer.model.result import INCOMPLETE
from rmpeer.rm.errors import RmError
from rmpeer.run import assemble
from rmpeer.run.passive import observe, remember_kmsg_position
from rmpeer.run.spec import passive_spec

PASSIVE = "passive"
LIVE = "live"              # the history's key of this host (rmpeer.run.passive.state_key's)


class Progress:
    """What a run in progress shows its deadline: the spec as it stands (with the host's facts
    once open) and the checks that have ended."""

    def __init__(self, spec):
        self.spec = spec
        self.checks = list      # a callable: the CheckResults so far
        self.layouts = list     # a callable: the layouts built so far (LayoutResult), for the report


def run(spec, *, suites=None, started: float | None = None, at_deadline=None,
        state_path=None, save: bool = True, allowed_xids=(), load=None):
    """The judged RunResult of `spec`. suites(host, progress) -> (pytest's exit code, checks
    callable, internal_error callable): the quick and full tiers' checks, run on the open
    HostRun. load(): what suites will import, loaded in the host's open while the idle clocks'
    nvidia-smi runs (HostRun.open). at_deadline(result, spec, seconds): the INCOMPLETE result
    of a run that has not ended by the spec's deadline, to write out (on the watchdog's thread,
    which then ends the process: rmpeer.machine.deadline); None: no deadline."""
    started = time.time() if started is None else started
    progress = Progress(spec)
    with _deadline(progress, started, at_deadline):
        if spec.tier == PASSIVE:
            result = _passive(spec, state_path=state_path, save=save, allowed_xids=allowed_xids)
        else:
            result = _host(spec, suites, started, progress, load)
        at("judging")
        history, result = _history(progress.spec, result, state_path)
        result = assemble.judged(result, spec.outputs.require_complete)
        if history is not None:
            _remember(progress.spec, result, history)
        return result


def _history(spec, result, state_path):
    """A live quick or full run that measured figures, against this host's history (its
    findings join the result before it is judged): (the history's path, the result), else
    (None, the result as it was)."""
    if spec.tier == PASSIVE or spec.is_replay or not result.bandwidth:
        return None, result
    path = history_path(state_path or default_state_path())
    runs, note = load_history(path, LIVE)
    return path, assemble.with_history(result, runs, note, spec.policies)


def _remember(spec, result, path) -> None:
    """The run joins its host's history when it measured at the boosted clocks and reached a
    verdict (a --no-boost run, or one cut short, would pull the median down); a history that
    cannot be written is said, never a change of the verdict."""
    import sys

    if not spec.boost or result.verdict == INCOMPLETE:
        return
    problem = append_run(path, LIVE, entry_of(result))
    if problem:
        print(f"rmpeer: history: {problem}", file=sys.stderr, flush=True)


def _deadline(progress, started, at_deadline):
    """The spec's deadline over the run, disarmed when it ends (by its verdict or an error)."""
    if at_deadline is None:
        return contextlib.nullcontext()

    def on_deadline(seconds):
        try:
            checks = progress.checks()     # the checks that ended before the deadline
        except Exception:   # noqa: BLE001 - read while the run stands still; never worth more than the exit
            checks = []
        try:
            layouts = progress.layouts()
        except Exception:   # noqa: BLE001 - as the checks: never worth more than the exit
            layouts = []
        at_deadline(assemble.deadline_result(progress.spec, started, checks, seconds, layouts), progress.spec, seconds)
    return Watchdog(progress.spec.outputs.deadline_s, on_deadline)


def _passive(spec, *, state_path, save, allowed_xids):
    with interrupts.during_run():
        try:
            seen = observe(spec, state_path=state_path, save=save, allowed_xids=allowed_xids)
        except KeyboardInterrupt:
            seen = None
    if seen is None or interrupts.seen():   # cut short before its verdict: nothing certifies
        raise KeyboardInterrupt(interrupts.seen() or "SIGINT")
    if spec.policies.require_idle and not spec.is_replay:
        now = seen.gpu_processes.get("now") or {"reason": "the run stopped before reading them"}
        # passive's reading says why it is unavailable; the rule reads rm.snapshots' `error`
        require_idle_of(now if now.get("available") else {"error": now.get("reason", "not read")},
                        seen.host.get("selection"))
    if spec.output is not None:
        spec.output.mkdir(parents=True, exist_ok=True)
    return assemble.passive_result(spec, seen)


def _host(spec, suites, started, progress, load=None):
    # the quick and full tiers' alone: a passive run never loads the layouts, engines and traffic
    from rmpeer.run.hostrun import HostRun

    host, stopped, code, refused = HostRun(spec), None, None, None
    checks, internal_error = list, (lambda: False)
    progress.spec, progress.layouts = spec, lambda: list(host.layout_results)
    with interrupts.during_run():      # the first SIGINT, SIGTERM or SIGHUP ends the run where it stands
        try:
            try:
                at("opening the host")
                try:
                    host.open(load=load)
                except (RmError, ReplayMismatch) as exc:   # RM (or the recording) refused the open: judged
                    refused = exc
                progress.spec = host.spec
                host.spec.output.mkdir(parents=True, exist_ok=True)   # a refused open's certificate says why
                if refused is None:
                    at("running the checks")
                    code, checks, internal_error = suites(host, progress)
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
    result = assemble.host_result(host.spec, host, checks(), started=started, stopped=stopped, code=code,
                                  internal_error=internal_error(), refused=refused)
    if not spec.is_replay and not stopped:
        remember_kmsg_position(spec.target)   # the next passive run reports only later Xids
    return result


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


def run_passive(target, *, state_path=None, topology_name: str | None = None, allowed_xids=(),
                record: str | None = None, abi: str | None = None, save: bool = True, valid_for=None):
    """The passive tier against `target` (model.target.Target: live, or a recording), by the same
    path as certify's: a judged RunResult with its fingerprint and valid_until (valid_for:
    a timedelta, default 24 h), and the state file updated (save=False: left as it was)."""
    spec = passive_spec(target, topology_name=topology_name, record=record, abi=abi, valid_for=valid_for)
    return run(spec, state_path=state_path, save=save, allowed_xids=allowed_xids)
