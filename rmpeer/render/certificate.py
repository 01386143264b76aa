"""certificate.json: the RunResult itself (RunResult.to_dict()), compact, written whatever
the verdict, INCOMPLETE included."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError


def certificate_text(result) -> str:
    return json.dumps(result.to_dict(), separators=(",", ":"), default=str)


def write_certificate(result, path: Path) -> Path:
    try:
        path.write_text(certificate_text(result))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the certificate ({exc.strerror})") from None
    return path
