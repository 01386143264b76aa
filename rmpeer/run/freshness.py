"""Whether a certificate still holds for this host and this tier: the certificate and this
host's fingerprint read, then weighed by rmpeer.judge.freshness's rules.

`rmpeer certify --if-stale CERT` calls check_fresh before anything else: when the
certificate holds, certify exits 0 at once. This path must stay under half a second, so it
imports no pytest, numpy or cffi and opens no GPU: the fingerprint it compares is read from
/proc and /sys (rmpeer.run.fingerprint).
"""

from __future__ import annotations

from rmpeer.errors import ConfigError
from rmpeer.judge.freshness import why_stale
from rmpeer.machine.selection import stale_reason
from rmpeer.machine.signing import read_certificate, verify
from rmpeer.machine.state import module_hash_cache
from rmpeer.model.result import TIERS, RunResult
from rmpeer.run.fingerprint import platform_fingerprint


def check_fresh(cert_path, tier: str, *, root: str = "/", now=None, node: str | None = None,
                state_path=None, key: bytes | None = None, cards=None) -> tuple[bool, list[str]]:
    """(True, []) when the certificate at cert_path holds for this host and tier; else
    (False, the reasons). A certificate that cannot be read, or whose signature does not
    verify with this host's key (`key`, else rmpeer.machine.signing's), never holds."""
    if tier not in TIERS:
        raise ConfigError(f"--tier {tier!r}: one of {', '.join(TIERS)}")

    try:
        doc = read_certificate(cert_path)
        trust = verify(doc, key)        # what the file says is weighed only beside who signed it
        cert = RunResult.from_dict(doc)
    except OSError as exc:
        return False, [f"the certificate cannot be read: {cert_path}: {exc.strerror or exc}"]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return False, [f"the certificate cannot be read: {cert_path}: {exc}"]

    reasons = [] if trust.verified else [f"not trusted: {trust.line}"]   # only what this host signed holds
    fingerprint = platform_fingerprint(root=root, cache=module_hash_cache(state_path))
    try:     # an unsigned or damaged file may hold JSON of any shape: its fields are compared, never believed
        reasons += why_stale(cert, fingerprint, tier, now, node=node)
        if cards is not None:    # the cards asked for (selection.Request): covered by the certificate's?
            reasons += [r for r in [stale_reason(cert.host, cards, fingerprint.get("cards") or [])] if r]
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        return False, [f"the certificate cannot be read: {cert_path}: a field is not what a certificate "
                       f"holds ({type(exc).__name__}: {exc})"]
    return not reasons, reasons
