"""`--json`: one JSON object on one line per run, for a JSON Lines log a fleet appends to.

The line says what a scheduler acts on (node, tier, verdict and the exit code it means) and
where the full result is (the certificate), without a reader having to open it."""

from __future__ import annotations

import json

from ..errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK
from ..result import CERTIFIED, DEGRADED, INCOMPLETE, NOT_CERTIFIED, RunResult

# The documented exit code of each verdict (rmpeer/errors.py) and the name a log reader
# filters on, so nobody parses the verdict's prose.
VERDICT_EXIT = {CERTIFIED: (EXIT_OK, "CERTIFIED"), NOT_CERTIFIED: (EXIT_NOT_CERTIFIED, "NOT_CERTIFIED"),
                DEGRADED: (EXIT_DEGRADED, "DEGRADED"), INCOMPLETE: (EXIT_INCOMPLETE, "INCOMPLETE")}


def exit_code(verdict: str) -> tuple[int, str]:
    """(code, name) of a verdict; an unknown verdict is INCOMPLETE: nothing was shown."""
    return VERDICT_EXIT.get(verdict, VERDICT_EXIT[INCOMPLETE])


def json_record(result: RunResult, certificate_path) -> dict:
    code, name = exit_code(result.verdict)
    return {
        "node": result.node, "tier": result.tier, "verdict": result.verdict, "reasons": list(result.reasons),
        "duration_s": round(float(result.duration_s), 3), "started": result.started,
        "valid_until": result.valid_until, "certificate": str(certificate_path) if certificate_path else None,
        "certificate_id": result.certificate_id, "target": result.target.get("kind", "live"),
        "recorded_host": result.target.get("recorded_host") if result.is_replay else None,
        "exit_code": code, "exit": name, "counts": result.counts, "version": result.version,
    }


def json_line(result: RunResult, certificate_path) -> str:
    """One line (no newline inside: json escapes those in strings), without the trailing newline."""
    return json.dumps(json_record(result, certificate_path), separators=(",", ":"), ensure_ascii=False,
                      default=str)
