"""`rmpeer fleet node`: one node's run, as the hooks call it (prolog, HealthCheckProgram, the
sweep's task, node-problem-detector, the Kubernetes Job).

It runs `rmpeer certify` for a tier into a folder, and answers with the exit code of
rmpeer/errors.py and, for NOT CERTIFIED or DEGRADED, one line on stdout:
`rmpeer: <check>: <detail>`, the reason a hook drains with. Whatever happens it writes
status.json in the folder (node, exit, tier, line), so a collector can tell a node that gave
no verdict from one that never ran.

Stand-in hosts: with RMPEER_STAND_IN set to a recording (or to a folder holding
<node>.jsonl.gz), the node certifies that recording instead of its GPUs
(`certify --replay`); certify then says REPLAY everywhere, and the certificate's subject is
the replay. A recording decides its own layouts, so the tier does not apply to it."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

from ..errors import EXIT_CONFIG, EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK
from ..result import node_name
from .outcome import STATUS, certificate_in, load_certificate, reason_line

STAND_IN = "RMPEER_STAND_IN"
def stand_in(node: str) -> str | None:
    given = os.environ.get(STAND_IN, "").strip()
    if not given:
        return None
    path = Path(given)
    return str(path / f"{node}.jsonl.gz") if path.is_dir() else given


def certify_args(tier: str, output: Path, if_stale: str | None, replay: str | None,
                 require_idle: bool = False, cards: tuple = ()) -> list:
    """The certify command line of one node's run. A stand-in recording replays instead of the
    GPUs, whole: it decides its own layouts, and a passive replay of it would read only its
    RM facts, never the faults it was recorded to show."""
    args = ["certify", "--output", str(output)]
    if replay:
        return args + ["--replay", replay]
    return (args + ["--tier", tier] + (["--if-stale", if_stale] if if_stale else [])
            + (["--require-idle"] if require_idle else []) + list(cards))


class _Tee(io.StringIO):
    """stderr as it was, and kept: certify's own one-line error becomes the status line."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def write(self, text):
        self.stream.write(text)
        return super().write(text)

    def flush(self):
        self.stream.flush()


def run_certify(args: list) -> tuple[int, str]:
    """certify in this process (no second interpreter start in a prolog's budget): its exit
    code, and its last `rmpeer: ...` error line. Its report goes to stderr; any crash is an
    INCOMPLETE run (a tool error), never a verdict."""
    from ..cli import main

    err = _Tee(sys.stderr)
    try:
        with contextlib.redirect_stdout(sys.stderr), contextlib.redirect_stderr(err):
            code = int(main(args) or 0)
    except SystemExit as exc:       # argparse: a usage error
        code = exc.code if isinstance(exc.code, int) else EXIT_CONFIG
    except BaseException as exc:    # noqa: BLE001 - whatever broke, the node is not judged by it
        print(f"rmpeer: certify stopped: {exc}", file=err)
        code = EXIT_INCOMPLETE
    said = [ln.strip() for ln in err.getvalue().splitlines() if ln.strip()]
    return code, next((ln for ln in reversed(said) if ln.startswith(("rmpeer: ", "rmpeer certify: "))), "")


def run_node(tier: str, output: Path, if_stale: str | None = None, require_idle: bool = False,
             cards: tuple = ()) -> tuple[int, str]:
    node = node_name()
    output.mkdir(parents=True, exist_ok=True)
    (output / STATUS).unlink(missing_ok=True)
    replay = stand_in(node)
    args = certify_args(tier, output, if_stale, replay, require_idle, cards)
    started, wall = time.monotonic(), time.time()
    line = ""
    code, said = run_certify(args)
    cert = certificate_in(output)
    if cert and cert.stat().st_mtime < wall - 1:
        cert = None     # an earlier run's: this run wrote none
    if code in (EXIT_NOT_CERTIFIED, EXIT_DEGRADED) and cert:
        line = load_certificate(node, cert).line
    elif code in (EXIT_NOT_CERTIFIED, EXIT_DEGRADED):
        code, line = EXIT_INCOMPLETE, reason_line("tool", f"exit {code} but no certificate in {output}")
    elif code != EXIT_OK:
        line = reason_line("tool", f"certify exit {code}: " + (said.split(": ", 1)[-1] if said else "no verdict"))
    status = {"node": node, "tier": tier, "exit": code, "line": line, "stand_in": replay or "",
              "duration_s": round(time.monotonic() - started, 2),
              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with contextlib.suppress(OSError):
        tmp = output / (STATUS + ".tmp")
        tmp.write_text(json.dumps(status) + "\n")
        tmp.replace(output / STATUS)
    return code, line


def main_node(args) -> int:
    output = Path(args.output) if args.output else Path(args.shared) / node_name()
    from ..selection import passed_on

    code, line = run_node(args.tier, output, args.if_stale, args.require_idle, passed_on(args))
    if line:
        print(line, flush=True)
    return code
