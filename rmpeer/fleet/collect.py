"""`rmpeer fleet collect DIR`: a sweep's node table, its merged outputs, and (with --drain) the
drains and resumes it calls for.

- Outputs under DIR: summary.jsonl (one line per node), junit.xml (one <testsuite> per node,
  rmpeer.render.junit), report.html (`rmpeer report` over every node's Allure results, where
  the Allure CLI is installed).
- --drain: a NOT CERTIFIED node is drained with its `rmpeer: <check>: <detail>` reason; a
  DEGRADED one too, unless --degraded keep, but a node DEGRADED by bandwidth floors alone is
  first run once more (one dip does not drain a node). A node that now passes is resumed only
  if its drain reason starts with `rmpeer:` (a human's drain stays). A node that gave no
  verdict (tool error, no result) is neither drained nor resumed.
Exit: 0 every node passed, 1 a node failed or is degraded, 5 a node gave no verdict."""

from __future__ import annotations

import calendar
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rmpeer.errors import EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError, quoted
from rmpeer.fleet import slurmctl
from rmpeer.fleet.checks import load_sweep
from rmpeer.fleet.outcome import (
    DEGRADED_STATE, ERROR, FAIL_STATE, PASS, STATUS, NodeOutcome, found_json, load_node, read_status, reason_line)
from rmpeer.fleet.sweep import SWEEP, rmpeer_command
from rmpeer.machine.lines import Say, said_on_stderr
from rmpeer.machine.writable import writable
from rmpeer.machine.signing import BAD, NO_KEY, OTHER_KEY, UNSIGNED, VERIFIED
from rmpeer.model.result import TIERS
from rmpeer.model.selection import collect_cell
from rmpeer.render.jsonline import json_line
from rmpeer.render.text import escaped
from rmpeer.report.allure_html import allure_command
from rmpeer.run.outputs import write_junit as render_junit
from rmpeer.safewrite import write_file


def gather(shared: Path) -> tuple[list[NodeOutcome], dict]:
    """Every node sweep.json names and every folder present (rmpeer.fleet.checks.load_sweep):
    a node named but without a folder, or with an empty one, is an error."""
    record = {}
    # whatever is at the name, read as a file: a FIFO or a folder planted there would
    # otherwise pass for no record at all, and no run id or tier would be checked
    if os.path.lexists(shared / SWEEP):
        try:
            record = found_json(shared / SWEEP, limit=SWEEP_LIMIT)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{shared / SWEEP}: unreadable ({getattr(exc, 'msg', None) or exc})") from None
        if not isinstance(record, dict) or not isinstance(record.get("nodes", []), list) \
                or not all(isinstance(n, str) for n in record.get("nodes", [])):
            raise ConfigError(f"{shared / SWEEP}: not a sweep record (no list of node names)")
        # each name is read as <shared>/<name>/ (label reads its status.json): '../x' or '' would
        # read another folder's, and a name no Slurm node has is no record of a sweep's
        odd = next((n for n in record.get("nodes", []) if not n or "/" in n or n.startswith(".")
                    or not n.isprintable()), None)
        if odd is not None:
            raise ConfigError(f"{shared / SWEEP}: not a sweep record (it names {quoted(odd)}, no node's folder name)")
        # what --drain's re-run puts on its command line: a list there was an internal error
        if record.get("tier", TIERS[-1]) not in TIERS or not all(
                isinstance(record.get(k) or "", str) for k in ("run_id", "submitted")):
            raise ConfigError(f"{shared / SWEEP}: not a sweep record (its tier, run id or time is not what fleet "
                              f"sweep writes)")
    found = {o.node: o for o in load_sweep(shared)}
    run_id = record.get("run_id")
    if run_id:      # a folder left by an earlier sweep into the same folder is not this sweep's result
        for node, o in found.items():
            status = read_status(shared / node)
            theirs = status.get("run_id")
            if o.state != ERROR and theirs != run_id and not _later(status.get("at"), record.get("submitted")):
                found[node] = NodeOutcome(node, ERROR, o.verdict, o.reasons, reason_line(
                    "tool", f"status.json is of another run (run id {theirs or 'none'}, this sweep's {run_id}): "
                            "not this sweep's result"), duration_s=o.duration_s)
    asked = record.get("tier")
    if asked in TIERS:      # a certificate of a shallower tier than the sweep asked is no pass of it
        for node, o in found.items():
            tier = o.result.tier if o.result is not None else None
            # a stand-in recording (fleet node under RMPEER_STAND_IN) replays its own tier, whole;
            # status.json's word alone is no stand-in: the certificate must be a replay's too
            stand_in = tier is not None and o.result.is_replay and bool(read_status(shared / node).get("stand_in"))
            if o.state != ERROR and tier is not None and not stand_in and (
                    tier not in TIERS or TIERS.index(tier) < TIERS.index(asked)):
                found[node] = NodeOutcome(node, ERROR, o.verdict, o.reasons, reason_line(
                    "tool", f"its certificate is of the {tier} tier, this sweep asked {asked}: not this "
                            "sweep's result"), duration_s=o.duration_s)
    for node in record.get("nodes", []):
        if node not in found:
            found[node] = NodeOutcome(node, ERROR, line=reason_line("tool", "no result: the node did not run "
                                                                             "or did not finish"))
    return [found[n] for n in sorted(found)], record


SWEEP_LIMIT = 16 << 20      # sweep.json names the nodes: a few KiB for thousands
STAMP = "%Y-%m-%dT%H:%M:%SZ"     # status.json's "at" and sweep.json's "submitted" (UTC)


def _later(at, submitted) -> bool:
    """A run that ended after the sweep was submitted (an admin's check of a mended node, by
    hand): a later word on the node than the sweep's, so it stands. Unreadable times: no."""
    try:
        return calendar.timegm(time.strptime(at, STAMP)) >= calendar.timegm(time.strptime(submitted, STAMP))
    except (TypeError, ValueError):
        return False


def rerun(outcome: NodeOutcome, shared: Path, tier: str, *, rmpeer: str | None = None, time_min: int = 30,
          run_id: str = "") -> NodeOutcome:
    """The one second chance of a node DEGRADED by floors alone (under the sweep's run id)."""
    cmd = [*(rmpeer.split() if rmpeer else rmpeer_command()), "fleet", "node", "--tier", tier,
           "--shared", str(shared), *(["--run-id", run_id] if run_id else [])]
    print(f"{escaped(outcome.node)}: DEGRADED by bandwidth floors alone: running it once more", file=sys.stderr)
    before = _status_stamp(shared / outcome.node)
    code = slurmctl.run_on(outcome.node, cmd, time_limit_min=time_min, timeout=time_min * 60 + 120)
    if _status_stamp(shared / outcome.node) == before:     # no new status.json: the re-run did not run
        return NodeOutcome(outcome.node, ERROR, outcome.verdict, outcome.reasons,
                           reason_line("tool", f"the re-run did not run (srun exit {code}, no new status.json): "
                                               "the node keeps its state"), duration_s=outcome.duration_s)
    again = load_node(shared / outcome.node)
    again.reasons = again.reasons or outcome.reasons
    return again


def _status_stamp(folder: Path):
    """What tells one status.json from the next (a re-run rewrites it: a new inode, a new time)."""
    try:
        st = (folder / STATUS).stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def table(outcomes: list[NodeOutcome]) -> str:
    """One row per node. Every word from a node's folder (its name, its certificate's verdict,
    its status line) is escaped: a line break in a folder's name must not forge a row."""
    e = escaped
    width = max([4] + [len(e(o.node)) for o in outcomes])

    rows = [f"{'node':<{width}}  {'result':<8}  {'verdict':<13}  {'cards':<8}  {'time':>6}  reason"]
    for o in outcomes:
        took = f"{o.duration_s:.1f}s" if o.duration_s is not None else "-"
        stand = f" (REPLAY of {e(Path(o.replay_of).name)})" if o.replay_of else ""
        rows.append(f"{e(o.node):<{width}}  {o.state:<8}  {e(o.verdict or '-'):<13}  {e(collect_cell(o.result)):<8}  "
                    f"{took:>6}  {e(o.line or '')}{stand}")
    counts = {s: sum(o.state == s for o in outcomes) for s in (PASS, DEGRADED_STATE, FAIL_STATE, ERROR)}
    rows.append(f"{len(outcomes)} node(s): " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(rows)


def signatures(outcomes: list[NodeOutcome]) -> str:
    """One line: how far each certificate's signature could be checked on this machine."""
    kinds = {VERIFIED: "verified with this machine's key", OTHER_KEY: "signed by their nodes' own keys",
             NO_KEY: "signed by their nodes' own keys", UNSIGNED: "unsigned", BAD: "do not verify"}
    groups: dict = {}
    for o in outcomes:
        if o.signature:
            groups.setdefault(kinds[o.signature], []).append(o.node)
    if not groups:
        return "signatures: no certificate to check"
    parts = [f"{len(n)} {k} ({', '.join(map(escaped, n))})" for k, n in groups.items()]
    return ("signatures: " + "; ".join(parts) + ". A node's key stays on the node: its signature is checked there "
            "(certify --if-stale); here each certificate is checked for its node name, its verdict against its "
            "own findings, and GPU UUIDs under one node only")


def write_summary(outcomes: list[NodeOutcome], path: Path) -> None:
    lines = []
    for o in outcomes:
        line = o.summary()
        if o.result is not None:
            run = json_line(o.result, str(o.certificate))     # certify --json's line for this node
            line = {**(json.loads(run) if isinstance(run, str) else dict(run)), **line}
        lines.append(json.dumps(line, default=str) + "\n")
    write_file(path, "".join(lines), what="summary.jsonl")


def write_junit(outcomes: list[NodeOutcome], path: Path) -> str:
    results = [o.result for o in outcomes if o.result is not None]
    if not results:
        return "junit.xml not written: no node's certificate is a RunResult (an older rmpeer wrote them)"
    render_junit(results, path)
    return f"wrote {path}"


def write_report(outcomes: list[NodeOutcome], path: Path) -> str:
    # a link planted at a node's allure-results would put another folder's results into the
    # merged report, under that node's name: never followed (rmpeer report refuses it too)
    dirs = [str(d) for d in (o.certificate.parent / "allure-results" for o in outcomes if o.certificate)
            if d.is_dir() and not d.is_symlink()]
    if not dirs:
        return "report.html not written: no node left Allure results"
    try:
        allure_command()
    except Exception as exc:   # noqa: BLE001 - no Allure CLI: the report is optional
        return f"report.html not written: {exc}"
    done = subprocess.run([sys.executable, "-m", "rmpeer", "report", "--results", *dirs, "--output", str(path),
                           "--title", f"rmpeer fleet: {len(dirs)} node(s)"], capture_output=True, text=True,
                          timeout=600)
    return f"wrote {path}" if done.returncode == 0 else f"report.html not written: {done.stderr.strip()[-300:]}"


def act(outcomes: list[NodeOutcome], degraded: str) -> list[str]:
    """The drains and resumes; what was done, one line each."""
    done = []
    for o in outcomes:
        info = slurmctl.node_info(o.node)
        if not info:
            done.append(f"{o.node}: not a Slurm node here; nothing done")
            continue
        if o.state == FAIL_STATE or (o.state == DEGRADED_STATE and degraded == "drain"):
            err = slurmctl.drain(o.node, o.line)
            done.append(f"{o.node}: drained: {o.line}" + (f" (scontrol: {err})" if err else ""))
        elif o.state == PASS and slurmctl.is_drained(info):
            if slurmctl.ours(info):
                err = slurmctl.resume(o.node)
                done.append(f"{o.node}: resumed (was: {info['Reason']})" + (f" (scontrol: {err})" if err else ""))
            else:
                done.append(f"{o.node}: passes, but stays drained: its reason is not rmpeer's ({info['Reason']})")
    return done


def collect(folder: str, *, drain: bool = False, degraded: str = "drain", time_min: int = 30,
            rmpeer: str | None = None, report: bool = True) -> int:
    shared = Path(folder).resolve()
    if not shared.is_dir():
        raise ConfigError(f"{shared}: no such folder (the --shared folder of a sweep)")
    # the files it writes, before anything is read or done: a folder this user may only read,
    # or a link planted at one of them, is exit 2 in one line, never found out half-way
    for name in ("summary.jsonl", "junit.xml", *(["report.html"] if report else [])):
        writable("fleet collect DIR", shared / name, folder=False)
    outcomes, record = gather(shared)
    if not outcomes:
        raise ConfigError(f"{shared}: no node's result in it (each node writes <dir>/<node>/status.json)")
    if drain:
        if not shutil.which("srun"):
            raise ConfigError("--drain needs Slurm's client commands (srun, scontrol) on this machine")
        tier = record.get("tier", "full")
        outcomes = [rerun(o, shared, tier, rmpeer=rmpeer, time_min=time_min, run_id=record.get("run_id") or "")
                    if o.state == DEGRADED_STATE and o.floors_only else o
                    for o in outcomes]
    say = Say(sys.stdout)      # a reader gone or a full disk: the files and --drain's actions still happen
    say(table(outcomes))
    say(signatures(outcomes))
    write_summary(outcomes, shared / "summary.jsonl")
    notes = [f"wrote {shared / 'summary.jsonl'}", write_junit(outcomes, shared / "junit.xml")]
    if report:
        notes.append(write_report(outcomes, shared / "report.html"))
    if drain:
        notes += act(outcomes, degraded)
    for n in notes:
        say(escaped(n))
    states = {o.state for o in outcomes}
    code = EXIT_NOT_CERTIFIED if states & {FAIL_STATE, DEGRADED_STATE} else \
        EXIT_INCOMPLETE if ERROR in states else EXIT_OK
    if say.lost is not None:
        said_on_stderr(f"rmpeer: fleet collect: the node table could not be written to stdout ({say.why()}); "
                       f"the answer stands (exit {code}): {shared / 'summary.jsonl'} holds every node")
    return code
