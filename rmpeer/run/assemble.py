"""The assembler: the one place a RunResult is made and its fields are written.

Every tier hands it what its run saw (a HostRun and the checks pytest ran, a passive
reading, a deadline that passed, a signal after the checks) and it builds the typed result,
stamps it (node, fingerprint, valid_until, why it ran) and asks the judge for the verdict,
once (`judged`). A RunResult is frozen (rmpeer.model.result): each step after the first
(the host's history, the judgement, a late signal) makes a new one with
dataclasses.replace, here. Nothing else constructs a RunResult (the AST rule in
tests/system/test_run_path.py), and nothing can assign to one."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

from rmpeer import __version__
from rmpeer.judge.cards import by_card
from rmpeer.judge.drift import comparable, drift_findings, entry_of
from rmpeer.judge.floors import judged_topology
from rmpeer.judge.freshness import parse_valid_for, valid_until
from rmpeer.judge.health import health_findings
from rmpeer.judge.unchecked import not_checked
from rmpeer.judge.verdict import judge
from rmpeer.model.result import FAIL, INFO, UNFINISHED, Finding, RunResult, node_name
from rmpeer.rm.errors import RmError
from rmpeer.model.steps import manifest
from rmpeer.tables.load import matrices_digest
from rmpeer.run.fingerprint import platform_fingerprint, recorded_fingerprint

PYTEST_UNFINISHED = {2: "the run was interrupted", 3: "pytest stopped on an internal error",
                     4: "pytest refused its arguments", 5: "no check was collected"}


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def target_of(spec) -> dict:
    """The result's target: the live host, or a recording (never a certificate of this machine)."""
    if not spec.is_replay:
        return {"kind": "live", "label": spec.target.label}
    h = spec.header
    return {"kind": "replay", "label": spec.target.label, "transcript": spec.target.path,
            "recorded_host": h.get("hostname"), "recorded_at": h.get("created"), "recorded_label": h.get("label"),
            "test": "request regression (replay)",
            "note": "a replay of a recording: this is NOT a certificate of the machine it ran on"}


def _node(spec) -> str:
    return node_name(spec.target.path if spec.is_replay else None)


def _valid_until(spec, started: float):
    return valid_until(started, spec.outputs.valid_for or parse_valid_for(None))


def _fingerprint(spec, facts, links, matrices: str) -> dict:
    if spec.is_replay:
        return recorded_fingerprint(facts, links=links, header=spec.header, matrices=matrices)

    return platform_fingerprint(facts, links=links, matrices=matrices)


# -- the tiers' results ------------------------------------------------------------------------

def host_result(spec, host, checks: list, *, started: float, stopped: str | None, code: int | None,
                internal_error: bool, refused: Exception | None) -> RunResult:
    """A quick or full run's result: the HostRun's layouts, pairs and findings, the fitness
    readings, the floors it was judged by, the health facts, and why it did not finish."""
    matrices = matrices_digest()
    made = dict(node=_node(spec), tier=spec.tier, target=target_of(spec), version=__version__, manifest=manifest(),
                matrices=matrices, started=_iso(started), certificate_id=str(uuid.uuid4()),
                valid_until=_valid_until(spec, started), ran_because=list(spec.outputs.ran_because),
                left_out=list(spec.left_out), layouts=list(host.layout_results), pairs=list(host.pairs),
                gpu_processes=dict(host.gpu_processes), checks=list(checks),
                host=host.host_facts or (spec.facts.as_dict() if spec.facts else {}))
    findings = list(host.findings)
    if host.fitness is not None:
        summary = host.fitness.summary()
        made.update(clocks=summary["clocks"], boost=summary["boost"], links=summary["links"],
                    bandwidth=summary["bandwidth"], xids=summary["xids"])
        findings += [f for f in host.fitness_findings() if f not in findings]
    if spec.facts is not None:
        # never a silent pass: a host without floors (calibrated or derived) is said to be one
        made["topology"], missing = judged_topology(spec, host.floors, made.get("bandwidth", []))
        findings += [f for f in missing if f not in findings]
    elif spec.topology is not None:
        made["topology"] = {"name": spec.topology.name, "matched_by": spec.topology_matched_by, "floors": None}

    # the health facts' findings first (a fabric not initialised explains the peer checks'
    # RM errors that follow it); what could not be read is INFO (rmpeer.judge.unchecked)
    kind = (spec.topology.links or {}).get("kind") if spec.topology else None
    findings[:0] = health_findings(made["host"], kind)[0]
    findings += [Finding("topology", "host", f"the topology {spec.topology_name}", problem, FAIL)
                 for problem in spec.topology_problems()]
    findings += close_findings(host.close_problems, stopped, code, internal_error, made["checks"])
    if stopped:
        findings.append(Finding("run", "host", "the run to finish", f"it was stopped by {stopped}", UNFINISHED))
    elif code in PYTEST_UNFINISHED or internal_error:
        findings.append(Finding("run", "host", "the run to finish",
                                PYTEST_UNFINISHED.get(code, "pytest stopped on an internal error"), UNFINISHED))
    if refused is not None:    # RM (or the recording) refused the open: judged, never raised
        # no check could run: the verdict is INCOMPLETE, and this is its reason (a FAIL was
        # outranked by "no hardware check ran" and never said)
        said = refused.line() if isinstance(refused, RmError) else str(refused).splitlines()[0]
        findings.append(Finding("open", "host", "RM to accept the run's first calls", said, UNFINISHED))
    made["findings"] = findings
    if spec.facts is not None:
        links = host.fitness.links_before if host.fitness is not None else None
        made["fingerprint"] = _fingerprint(spec, spec.facts, links, matrices)
    return RunResult(**made, duration_s=round(time.time() - started, 1))


def close_findings(problems, stopped, code, internal_error: bool, checks) -> list:
    """A failed close is the run's own fault only when nothing came before it: after a signal
    or an internal error it is a cause of INCOMPLETE; after a failed check (whose replay then
    diverges as it tears down) it is recorded beside that failure."""
    if not problems:
        return []
    unfinished = stopped or code in PYTEST_UNFINISHED or internal_error
    failed = any(c.outcome in ("failed", "error") for c in checks)
    severity = UNFINISHED if unfinished else INFO if failed else FAIL
    return [Finding("teardown", "host", "the RM client to close as recorded" if "replay" in p else
                    "the RM client to close", p.splitlines()[0], severity) for p in problems]


def passive_result(spec, seen) -> RunResult:
    """A passive run's result, from what rmpeer.run.passive.observe read and found."""
    return RunResult(node=_node(spec), tier=spec.tier, target=target_of(spec), version=__version__, manifest=manifest(),
                     started=seen.started, valid_until=_valid_until(spec, seen.started_s), matrices=seen.matrices,
                     certificate_id=str(uuid.uuid4()), ran_because=list(spec.outputs.ran_because),
                     host=seen.host, fingerprint=seen.fingerprint, topology=seen.topology, clocks=seen.clocks,
                     links=seen.links, xids=seen.xids, gpu_processes=seen.gpu_processes, checks=list(seen.checks),
                     findings=list(seen.findings), duration_s=seen.duration_s)


def deadline_result(spec, started: float, checks: list, seconds: float, layouts: list = ()) -> RunResult:
    """The run its deadline ended: the checks that ended before it, the layouts built by then,
    and INCOMPLETE."""
    result = RunResult(node=_node(spec), tier=spec.tier, target=target_of(spec), version=__version__,
                       manifest=manifest(), matrices=matrices_digest(), certificate_id=str(uuid.uuid4()), started=_iso(started),
                       host=spec.facts.as_dict() if spec.facts else {}, checks=list(checks), layouts=list(layouts),
                       findings=[Finding("deadline", "host", f"the run to end within {seconds:g} s (--deadline)",
                                         "it was still running at its deadline: ended there, the RM client freed "
                                         "by the process's exit", UNFINISHED)],
                       duration_s=round(time.time() - started, 1))
    return judged(result)


def stopped_after(result: RunResult, name: str) -> RunResult:
    """A signal after the checks: the run did not end as a run must, so nothing certifies. A
    new RunResult (the judged one is frozen, and may be written already), judged once."""
    return judged(replace(result, findings=[*result.findings, Finding(
        "run", "host", "the run to finish", f"it was stopped by {name} after its checks", UNFINISHED)]))


def with_history(result: RunResult, runs: list, note: str | None, policies) -> RunResult:
    """The run against this host's own history (rmpeer.judge.drift): a figure fallen from its
    median, an ECC or remapped-row count grown, each a Finding (INFO, or DEGRADE with
    --drift-fails); a history that could not be used, or a new baseline, said as INFO. A new
    RunResult, before its judgement."""
    entry = entry_of(result)
    _, baseline = comparable(runs, entry)
    said = [Finding("history", "host", "this host's history of its runs", line, INFO)
            for line in (note, baseline) if line]
    drift = drift_findings(runs, entry, margin=policies.drift_margin, window=policies.drift_runs,
                           fails=policies.drift_fails)
    return replace(result, findings=[*result.findings, *said, *drift])


# -- the verdict ---------------------------------------------------------------------------------

def judged(result: RunResult, require_complete: bool = False) -> RunResult:
    """The judged RunResult: the judge's one call (rmpeer.judge.verdict.judge: the verdict, its
    reasons, and --require-complete's refusals of a CERTIFIED run that left a check
    unchecked, as findings), the checks that could not run named beside it
    (rmpeer.judge.unchecked), and each card's and pair's verdict (rmpeer.judge.cards)."""
    verdict, reasons, refusing = judge(result, require_complete)
    out = replace(result, findings=[*result.findings, *refusing], verdict=verdict, reasons=reasons,
                  not_checked=not_checked(result))
    return replace(out, by_card=by_card(out))
