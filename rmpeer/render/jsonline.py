"""`--json`: one JSON object on one line per run, for a JSON Lines log a fleet appends to.

The line says what a scheduler acts on (node, tier, verdict and the exit code it means) and
where the full result is (the certificate), without a reader having to open it."""

from __future__ import annotations

import json

from rmpeer.model.result import RunResult
from rmpeer.render.verdict import compact


def json_record(result: RunResult, certificate_path) -> dict:
    return {
        "node": result.node, "tier": result.tier, "verdict": result.verdict, "reasons": list(result.reasons),
        "duration_s": round(float(result.duration_s), 3), "started": result.started,
        "valid_until": result.valid_until, "certificate": str(certificate_path) if certificate_path else None,
        "certificate_id": result.certificate_id, "target": result.target.get("kind", "live"),
        "recorded_host": result.target.get("recorded_host") if result.is_replay else None,
        "exit_code": result.exit_code, "exit": result.exit_name, "counts": result.counts, "version": result.version,
        **compact(result),
        "not_checked": list(result.not_checked),
    }


def json_line(result: RunResult, certificate_path) -> str:
    """One line (no newline inside: json escapes those in strings), without the trailing newline.
    ASCII only: a reason may quote what the kernel log or a recording holds, and JSON leaves
    DEL and the 8-bit controls (a CSI is U+009B) raw unless every non-ASCII character is escaped."""
    return json.dumps(json_record(result, certificate_path), separators=(",", ":"), default=str)
