"""`--json`: one JSON object on one line per run, for a JSON Lines log a fleet appends to.

The line says what a scheduler acts on (node, tier, verdict and the exit code it means) and
where the full result is (the certificate), without a reader having to open it."""

from __future__ import annotations

import json

from rmpeer.errors import EXIT_UNCHECKED
from rmpeer.judge.cards import compact
from rmpeer.judge.unchecked import refused
from rmpeer.judge.verdict import EXIT_CODES
from rmpeer.model.result import INCOMPLETE, RunResult


def exit_code(verdict: str) -> tuple[int, str]:
    """(code, name) of a verdict: the documented exit code (rmpeer.judge.verdict, from errors.py) and
    a name a log reader filters on without parsing prose; an unknown verdict is INCOMPLETE."""
    known = verdict if verdict in EXIT_CODES else INCOMPLETE
    return EXIT_CODES[known], known.replace(" ", "_")


def json_record(result: RunResult, certificate_path) -> dict:
    code, name = (EXIT_UNCHECKED, "UNCHECKED") if refused(result) else exit_code(result.verdict)
    return {
        "node": result.node, "tier": result.tier, "verdict": result.verdict, "reasons": list(result.reasons),
        "duration_s": round(float(result.duration_s), 3), "started": result.started,
        "valid_until": result.valid_until, "certificate": str(certificate_path) if certificate_path else None,
        "certificate_id": result.certificate_id, "target": result.target.get("kind", "live"),
        "recorded_host": result.target.get("recorded_host") if result.is_replay else None,
        "exit_code": code, "exit": name, "counts": result.counts, "version": result.version,
        **_per_card(result),
        "not_checked": list(result.not_checked),
    }


def _per_card(result) -> dict:
    return compact(result)


def json_line(result: RunResult, certificate_path) -> str:
    """One line (no newline inside: json escapes those in strings), without the trailing newline."""
    return json.dumps(json_record(result, certificate_path), separators=(",", ":"), ensure_ascii=False,
                      default=str)
