"""What one node's folder of a sweep says: the node's status line (written by
`rmpeer fleet node` whatever happened) and its certificate, read back as a RunResult.

A node is one of four states, and only a verdict moves a node: `pass` (CERTIFIED), `degraded`,
`fail` (NOT CERTIFIED) and `error` (the tool could not give a verdict: exit 2, 3, 5, 6, 7, a
missing folder, an unreadable certificate). An `error` never drains nor resumes a node."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.errors import EXIT_DEGRADED, EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError
from rmpeer.judge.cards import host_subject
from rmpeer.machine.signing import BAD, read_certificate, verify
from rmpeer.model.result import CERTIFIED, DEGRADE, DEGRADED, FAIL, NOT_CERTIFIED, RunResult, short
from rmpeer.model.spec import CERTIFICATE, REPLAY_CERTIFICATE
from rmpeer.render.text import escaped
from rmpeer.safewrite import json_input, read_found

STATUS = "status.json"
CERTIFICATES = (CERTIFICATE, REPLAY_CERTIFICATE)
PASS, DEGRADED_STATE, FAIL_STATE, ERROR = "pass", "degraded", "fail", "error"
STATE_OF_VERDICT = {CERTIFIED: PASS, DEGRADED: DEGRADED_STATE, NOT_CERTIFIED: FAIL_STATE}
EXIT_OF_STATE = {PASS: EXIT_OK, DEGRADED_STATE: EXIT_DEGRADED, FAIL_STATE: EXIT_NOT_CERTIFIED}
REASON_PREFIX = "rmpeer:"
REASON_LIMIT = 200      # a drain reason stays readable in `sinfo -R`


@dataclass
class NodeOutcome:
    node: str
    state: str                       # pass | degraded | fail | error
    verdict: str = ""                # the certificate's, where there is one
    reasons: list = field(default_factory=list)
    line: str = ""                   # "rmpeer: <check>: <detail>", the drain reason
    floors_only: bool = False        # DEGRADED by bandwidth floors and nothing else
    exit_code: int | None = None
    duration_s: float | None = None
    certificate: Path | None = None
    result: RunResult | None = None  # None for the old format or no certificate
    replay_of: str = ""              # a stand-in: the recording it replayed
    trust: str = ""                  # how far its signature could be checked here, in words (rmpeer.machine.signing)
    signature: str = ""              # the same as rmpeer.machine.signing's status (VERIFIED, UNSIGNED, ...)
    status_node: str = ""            # the node status.json names

    def summary(self) -> dict:
        return {"node": self.node, "state": self.state, "verdict": self.verdict, "exit": self.exit_code,
                "reason": self.line, "reasons": self.reasons, "duration_s": self.duration_s,
                "certificate": str(self.certificate) if self.certificate else None, "replay_of": self.replay_of,
                "signature": self.trust or None}


def certificate_in(folder: Path) -> Path | None:
    """The node's certificate; one planted as a link (or a FIFO) is found, and refused where it
    is read. lexists, not is_file: a folder this user may not enter is no traceback."""
    return next((folder / n for n in CERTIFICATES if os.path.lexists(folder / n)), None)


def reason_line(check: str, detail: str) -> str:
    # a certificate's words go into Slurm's drain reason (shown raw by `sinfo -R`) and the
    # hooks' logs: a line break is a space (one line), an escape or a bell is shown as its
    # escape, never sent; then cut between words
    return short(escaped(" ".join(f"{REASON_PREFIX} {check}: {detail}".split())), REASON_LIMIT)


def from_result(node: str, result: RunResult, path: Path | None = None) -> NodeOutcome:
    state = STATE_OF_VERDICT.get(result.verdict, ERROR)
    bad = [f for f in result.findings if f.severity in (FAIL, DEGRADE)]
    first = next((f for f in bad if f.severity == FAIL), bad[0] if bad else None)
    same = [f for f in bad if first is not None and first.cause and f.cause == first.cause]
    if len(same) > 1:     # one fault, one reason: its cause, counted, and the first card it names
        line = reason_line(first.check, f"{len(same)} checks: {first.cause} (first: "
                                        f"{host_subject(result, first.subject)})")
    elif first:
        line = reason_line(first.check, f"{host_subject(result, first.subject)}: expected {first.expected}, "
                                        f"found {first.found}")
    else:
        line = reason_line(result.verdict.lower(), (result.reasons or ["no reason given"])[0])
    floors = bool(bad) and all(f.severity == DEGRADE and f.check == "bandwidth-floor" for f in bad)
    return NodeOutcome(node, state, result.verdict, list(result.reasons), line if state != PASS else "",
                       floors and state == DEGRADED_STATE, EXIT_OF_STATE.get(state), result.duration_s, path,
                       result, result.target.get("transcript", "") if result.is_replay else "")


def load_certificate(node: str, path: Path) -> NodeOutcome:
    try:    # a folder others may write: never read through a link planted at its name
        data = read_certificate(path, follow=False)
    except (OSError, ValueError) as exc:
        why = "refused: it is a symbolic link" if getattr(exc, "errno", None) == errno.ELOOP else exc
        return NodeOutcome(node, ERROR, line=reason_line("certificate", f"unreadable {path}: {why}"), certificate=path)
    trust = verify(data)
    if trust.status == BAD:      # signed with a key this machine holds, and changed since
        return NodeOutcome(node, ERROR, line=reason_line("certificate", f"{path}: {trust.line}"), certificate=path,
                           trust=trust.line, signature=trust.status)
    try:
        out = from_result(node, RunResult.from_dict(data), path)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:   # an older or foreign file: never a pass
        return NodeOutcome(node, ERROR, line=reason_line("certificate", f"{path}: {exc}"), certificate=path)
    out.trust, out.signature = trust.line, trust.status
    return out


def load_node(folder: Path) -> NodeOutcome:
    """A node's folder: its status (the exit code of its run) and its certificate. Fails closed:
    no status and no certificate, an exit code that says the run gave no verdict, or an exit
    code that contradicts the certificate, is an `error`, never a pass."""
    node = folder.name
    status = read_status(folder)
    cert = certificate_in(folder)
    code = status.get("exit")
    if cert is None or (status and code not in (EXIT_OK, EXIT_NOT_CERTIFIED, EXIT_DEGRADED)):
        why = status.get("line") or ("no result: the node did not run, or did not finish" if not status
                                      else f"exit {code}")
        line = why if why.startswith(REASON_PREFIX) else reason_line("tool", why)
        return NodeOutcome(node, ERROR, line=line, exit_code=code,
                           duration_s=status.get("duration_s"), replay_of=status.get("stand_in", ""))
    out = load_certificate(node, cert)
    out.status_node = str(status.get("node") or "")
    if status and out.state != ERROR and code != out.exit_code:
        return NodeOutcome(node, ERROR, out.verdict, out.reasons,
                           reason_line("tool", f"exit {code} does not match the certificate's {out.verdict}"),
                           exit_code=code, certificate=cert)
    return out


def read_status(folder: Path) -> dict:
    """A node's status.json as a dict; one that is cut, not JSON or not an object says so as
    its line (the node is then an error), never raises."""
    path = folder / STATUS
    try:    # a folder of another user's this one may not enter: that node unreadable, never a traceback
        status = found_json(path, limit=STATUS_LIMIT)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, ConfigError) as exc:
        return {"exit": None, "line": reason_line("tool", f"unreadable {path}: {getattr(exc, 'msg', None) or exc}")}
    if not isinstance(status, dict):
        return {"exit": None, "line": reason_line("tool", f"unreadable {path}: not a JSON object")}
    wrong = [k for k, kinds in STATUS_KINDS.items() if k in status and not isinstance(status[k], kinds)
             or k in ("exit", "duration_s") and isinstance(status.get(k), bool)]
    if wrong:      # fleet node writes none of these: the node is an error, its words never shown
        return {"exit": None, "line": reason_line("tool", f"unreadable {path}: its {wrong[0]} is not what "
                                                          "rmpeer fleet node writes")}
    return status


# What fleet node writes into status.json, and of what kind (rmpeer.fleet.node); a bound on
# what a planted one makes this process read.
_TEXT = (str, type(None))
STATUS_KINDS = {"exit": (int, type(None)), "duration_s": (int, float, type(None)), "line": _TEXT, "node": _TEXT,
                "stand_in": _TEXT, "run_id": _TEXT, "at": _TEXT, "tier": _TEXT, "verdict": _TEXT,
                "certificate_id": _TEXT}
STATUS_LIMIT = 1 << 20


def found_json(path: Path, *, limit: int):
    """JSON of a file in a folder others may write (rmpeer.safewrite.read_found: no link, a
    regular file, bounded), nested within Python's reach."""
    return json_input(read_found(path, limit=limit))
