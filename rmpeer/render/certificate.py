"""certificate.json: the RunResult itself (RunResult.to_dict()), compact, written whatever
the verdict, INCOMPLETE included, with one more key, "signature" (rmpeer.machine.signing; RunResult.load
leaves it out)."""

from __future__ import annotations

import json
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.machine.signing import signed_text
from rmpeer.safewrite import write_file


def certificate_text(result) -> str:
    return json.dumps(result.to_dict(), separators=(",", ":"), default=str)


def write_certificate(result, path: Path) -> Path:
    """Signed (rmpeer.machine.signing: HMAC-SHA256 with this host's key) and written safely
    (rmpeer.safewrite: never through a link, never over a device node)."""
    try:
        write_file(path, signed_text(result.to_dict()), what="the certificate")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the certificate ({exc.strerror})") from None
    return path
