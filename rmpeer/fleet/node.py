"""`rmpeer fleet node`: one node's run, as the hooks call it (prolog, HealthCheckProgram, the
sweep's task, node-problem-detector, the Kubernetes Job).

It runs `rmpeer certify` for a tier into a folder, in this process and as a function
(rmpeer.cli.certify_options.run_argv): it reads the run's RunOutcome (the exit code, the
judged RunResult, the certificate's path, the one-line error), never certify's printed
lines. It answers with the exit code of rmpeer/errors.py and, for NOT CERTIFIED or
DEGRADED, one line on stdout: `rmpeer: <check>: <detail>` (rmpeer.fleet.outcome.from_result
of that RunResult), the reason a hook drains with. Whatever happens it writes status.json in
the folder (node, exit, tier, line, verdict, run_id, certificate_id), so a collector can
tell a node that gave no verdict from one that never ran.

Exit 1 (and 4) only when the RunResult says NOT CERTIFIED (DEGRADED) and the certificate
certify wrote for it is still at its path, holding that RunResult's certificate_id (read
without following a link: a folder others may write); status.json names that id and the
hook's --run-id. A hook drains only when its own run id and that verdict are in status.json
(rmpeer/integrations): a status left by an earlier run, or none, never drains.

Stand-in hosts: with RMPEER_STAND_IN set to a recording (or to a folder holding
<node>.jsonl.gz), the node certifies that recording instead of its GPUs
(`certify --replay`); certify then says REPLAY everywhere, and the certificate's subject is
the replay. A recording decides its own layouts, so the tier does not apply to it."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from pathlib import Path

from rmpeer.errors import (
    EXIT_CONFIG, EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError, RmpeerError)
from rmpeer.fleet.outcome import STATUS, from_result, reason_line
from rmpeer.machine import interrupts
from rmpeer.machine.deadline import owed_at_exit
from rmpeer.machine.signing import read_certificate
from rmpeer.model.result import CERTIFIED, DEGRADED, NOT_CERTIFIED, RunOutcome, node_name
from rmpeer.render.text import escaped     # a folder's name is input: one line, never a control
from rmpeer.safewrite import make_missing, write_file

STAND_IN = "RMPEER_STAND_IN"
VERDICT_OF_EXIT = {EXIT_OK: CERTIFIED, EXIT_NOT_CERTIFIED: NOT_CERTIFIED, EXIT_DEGRADED: DEGRADED}


def stand_in(node: str) -> str | None:
    given = os.environ.get(STAND_IN, "").strip()
    if not given:
        return None
    path = Path(given)
    return str(path / f"{node}.jsonl.gz") if path.is_dir() else given


def certify_args(tier: str, output: Path, if_stale: str | None, replay: str | None,
                 require_idle: bool = False, cards: tuple = (), *, deadline: str | None = None,
                 require_complete: bool = False) -> list:
    """The certify command line of one node's run. A stand-in recording replays instead of the
    GPUs, whole: it decides its own layouts, and a passive replay of it would read only its
    RM facts, never the faults it was recorded to show. The deadline and --require-complete
    hold for a replay too: they bound the run and judge what it could check, not the GPUs."""
    args = (["certify", "--output", str(output)] + (["--deadline", deadline] if deadline is not None else [])
            + (["--require-complete"] if require_complete else []))
    if replay:
        return args + ["--replay", replay]
    return (args + ["--tier", tier] + (["--if-stale", if_stale] if if_stale else [])
            + (["--require-idle"] if require_idle else []) + list(cards))


def _usable_folder(output: Path) -> None:
    """The node's folder, made and proved writable before anything runs: a path that is no
    folder (a plain file, /dev/null) or one this user cannot write is exit 2, one line."""
    import secrets

    try:
        make_missing(output)        # 0755 whatever the hook's umask, the parents too
        if output.is_symlink() or not output.is_dir():
            raise NotADirectoryError(20, "not a folder")
        probe = output / f".rmpeer-probe-{secrets.token_hex(6)}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        probe.unlink()
        status = os.lstat(output / STATUS) if os.path.lexists(output / STATUS) else None
    except OSError as exc:
        raise ConfigError(f"fleet node: the folder {escaped(output)} cannot take this node's results "
                          f"({exc.strerror or exc}): give --output or --shared a folder this user can write") from None
    # an earlier status.json is replaced (a link planted there is removed, never followed);
    # a folder or a device node there is no status file to replace
    if status is not None and not (stat.S_ISREG(status.st_mode) or stat.S_ISLNK(status.st_mode)):
        raise ConfigError(f"fleet node: {escaped(output / STATUS)} is not a file: it cannot hold this "
                          f"node's status; remove it")


def _this_runs_certificate(ran: RunOutcome) -> Path | None:
    """The certificate this run wrote, or None: the file certify named holds this run's
    certificate_id (a folder others may write: a file replaced since, or a link planted at
    its name, is not this run's)."""
    if ran.result is None or ran.certificate is None:
        return None
    try:    # a link planted at its name is refused, a FIFO never blocks
        data = read_certificate(Path(ran.certificate), follow=False)
    except (OSError, ValueError):
        return None
    same = isinstance(data, dict) and data.get("certificate_id") == ran.result.certificate_id
    return Path(ran.certificate) if same and ran.result.certificate_id else None


def run_certify(certify, args: list) -> RunOutcome:
    """certify(args) in this process (no second interpreter start in a prolog's budget): its
    RunOutcome, the judged RunResult and the one-line error it ended on, read as values,
    never from what it printed. Its report goes to stderr; any crash is an INCOMPLETE run
    (a tool error), never a verdict. `certify` is the command line's
    (rmpeer.cli.certify_options.run_argv), passed in by rmpeer.cli.fleet: fleet sits below
    the command line and never imports it."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return certify(args)
    except SystemExit as exc:       # argparse: a usage error (its message went to stderr)
        code = exc.code if isinstance(exc.code, int) else EXIT_CONFIG
        return RunOutcome(code, error=f"rmpeer: certify refused its arguments {' '.join(args)}")
    except KeyboardInterrupt as exc:
        why = f"rmpeer: certify stopped by {exc or 'a signal'}"
    except BaseException as exc:    # noqa: BLE001 - whatever broke, the node is not judged by it
        why = f"rmpeer: certify stopped: {exc}"
    print(why, file=sys.stderr)
    return RunOutcome(EXIT_INCOMPLETE, error=why)


def run_node(tier: str, output: Path, if_stale: str | None = None, require_idle: bool = False,
             run_id: str = "", cards: tuple = (), *, certify, deadline: str | None = None,
             require_complete: bool = False) -> tuple[int, str]:
    node = node_name()
    _usable_folder(output)
    (output / STATUS).unlink(missing_ok=True)
    replay = stand_in(node)
    args = certify_args(tier, output, if_stale, replay, require_idle, cards, deadline=deadline,
                        require_complete=require_complete)
    started = time.monotonic()
    line = ""

    def at_deadline(seconds):   # certify's deadline ends this process: the status says so first
        _write_status(output, {"node": node, "tier": tier, "exit": EXIT_INCOMPLETE, "stand_in": replay or "",
                               "line": reason_line("tool", f"stopped by the deadline of {seconds:g} s"),
                               "verdict": "", "run_id": run_id, "certificate_id": "",
                               "duration_s": round(time.monotonic() - started, 2),
                               "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    with owed_at_exit(at_deadline):
        ran = run_certify(certify, args)
    code, said, result = ran.code, ran.error, ran.result
    mine = _this_runs_certificate(ran)
    verdict, cert_id = (result.verdict, result.certificate_id) if mine else ("", "")
    if interrupts.seen() and code != EXIT_INCOMPLETE:
        code, said = EXIT_INCOMPLETE, f"rmpeer: stopped by {interrupts.seen()}"
    if code in (EXIT_NOT_CERTIFIED, EXIT_DEGRADED) and mine and verdict == VERDICT_OF_EXIT[code]:
        line = from_result(node, result, mine).line
    elif code in (EXIT_NOT_CERTIFIED, EXIT_DEGRADED):
        why = (f"exit {code} but no certificate of this run in {output}" if not mine else
               f"exit {code} but this run's result says {verdict or 'no verdict'}")
        code, line = EXIT_INCOMPLETE, reason_line("tool", why)
    elif code != EXIT_OK:
        line = reason_line("tool", f"certify exit {code}: " + (said.split(": ", 1)[-1] if said else "no verdict"))
    status = {"node": node, "tier": tier, "exit": code, "line": line, "stand_in": replay or "",
              "verdict": verdict if code in VERDICT_OF_EXIT else "", "run_id": run_id,
              "certificate_id": cert_id if code in VERDICT_OF_EXIT else "",
              "duration_s": round(time.monotonic() - started, 2),
              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if not _write_status(output, status) and code in (EXIT_NOT_CERTIFIED, EXIT_DEGRADED):
        code = EXIT_INCOMPLETE      # a verdict no status file carries drains nothing

    def late(name):   # a signal after this: the status says INCOMPLETE, as the exit code will
        _write_status(output, {**status, "exit": EXIT_INCOMPLETE, "verdict": "", "certificate_id": "",
                               "line": reason_line("tool", f"stopped by {name}")})
    interrupts.after_late_signal(late)
    return code, line


def _write_status(output: Path, status: dict) -> bool:
    try:        # rmpeer.safewrite: no link, no device node, no temporary file left
        write_file(output / STATUS, json.dumps(status) + "\n", what="status.json")
    except (OSError, RmpeerError):
        return False
    return True


def main_node(*, tier: str, output: str | None, shared: str | None, certify, if_stale: str | None = None,
              require_idle: bool = False, run_id: str = "", cards: tuple = (), deadline: str | None = None,
              require_complete: bool = False) -> int:
    """`rmpeer fleet node`: its own folder (--output, or <shared>/<node>/), then run_node;
    `cards` are certify's card arguments again (rmpeer.cli.cards.passed_on)."""
    folder = _folder(output, shared)
    code, line = run_node(tier, folder, if_stale, require_idle, run_id, cards, certify=certify, deadline=deadline,
                          require_complete=require_complete)
    if line:
        print(line, flush=True)
    return code


def _folder(output: str | None, shared: str | None) -> Path:
    """The node's folder: --output, else <shared>/<node>/. An empty name would write into the
    working folder, a node name that is not one folder name (a/b, ..) outside <shared>, and
    one starting with '.' where no collector looks: each exit 2, before anything is made."""
    for option, given in (("--output", output), ("--shared", shared)):
        if given is not None and not given.strip():
            raise ConfigError(f"{option} needs a folder (an empty name would write into the current directory)")
    if output is not None:
        return Path(output)
    node = node_name()
    if "/" in node or node in (".", ".."):
        raise ConfigError(f"the node name {node!r} is not a folder name: fleet node writes <shared>/<node>/ (set "
                          f"RMPEER_NODE_NAME, SLURMD_NODENAME or NODE_NAME to the node's name)")
    if node.startswith("."):    # collect and label skip hidden names: its verdict would be lost unsaid
        raise ConfigError(f"the node name {node!r} starts with '.': fleet collect never reads <shared>/{node}/ (set "
                          f"RMPEER_NODE_NAME, SLURMD_NODENAME or NODE_NAME to the node's name)")
    return Path(shared) / node
