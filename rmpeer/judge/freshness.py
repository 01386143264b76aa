"""Whether a certificate still holds for this host and this tier, and why not: the rules
alone, on values already read (the certificate's RunResult, this host's fingerprint, the
clock). rmpeer.run.freshness reads them for `certify --if-stale`; the assembler stamps a new
certificate's valid_until from --valid-for with the same clock arithmetic.

A certificate holds when it is a CERTIFIED certificate of this host (not of a replay), of
the tier asked or a deeper one, not past its valid_until, and of the same platform. Each
reason it does not is one line a person acts on.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from rmpeer.errors import ConfigError
from rmpeer.model.result import CERTIFIED, PARTIAL, TIERS, RunResult, node_name

DEFAULT_VALID_FOR = "24h"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
ISO = "%Y-%m-%dT%H:%M:%SZ"


MAX_VALID_FOR_S = 366 * 86400


# A certificate must hold long enough to be used: a prolog that checks it seconds later must
# not find it stale already (and under a second rounded to a zero timedelta, which callers took
# for "not given": 24 h). Issue 47: a validity under 1 minute is exit 2.
MIN_VALID_FOR_S = 60


def parse_valid_for(text: str | None) -> timedelta:
    """'24h', '90m', '2d', '1h30m' (s, m, h, d, w) -> a timedelta; 0, negative or garbage: exit 2."""
    text = DEFAULT_VALID_FOR if text is None else str(text).strip().lower()
    if not text or _PART.sub("", text) or not _PART.search(text):
        raise ConfigError(f"--valid-for {text!r}: give a duration such as 24h, 90m, 2d or 1h30m "
                          "(a number with a unit: s, m, h, d, w)")
    seconds = sum(float(n) * _UNITS[u] for n, u in _PART.findall(text))
    if seconds > MAX_VALID_FOR_S:
        raise ConfigError(f"--valid-for {text!r}: at most {MAX_VALID_FOR_S // 86400} days (a certificate of a "
                          f"host holds until its platform changes, and never for longer than a year)")
    if seconds < MIN_VALID_FOR_S:
        raise ConfigError(f"--valid-for {text!r}: a certificate must be valid for at least 1 minute (1m)")
    return timedelta(seconds=seconds)


def _when(value) -> datetime:
    """An aware UTC datetime from an ISO 8601 text, an epoch number or a datetime."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(timezone.utc)


def valid_until(started, valid_for: timedelta) -> str:
    """The certificate's valid_until: the run's start plus --valid-for, ISO 8601 UTC."""
    return (_when(started) + valid_for).strftime(ISO)


def _ago(delta: timedelta) -> str:
    s = delta.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            n = s / size
            return f"{n:.0f} {unit}" if n >= 10 or n == int(n) else f"{n:.1f} {unit}"
    return f"{s:.0f} s"


def _short(value) -> str:
    text = str(value)
    return text[:19] + "..." if text.startswith("sha256:") and len(text) > 22 else text


def _cards(old: list, new: list) -> list[str]:
    """Cards by PCI address: replaced (another UUID), gone, new, or with another VBIOS."""
    out = []
    was = {c.get("pci"): (i, c) for i, c in enumerate(old or [])}
    now = {c.get("pci"): (i, c) for i, c in enumerate(new or [])}
    for pci, (i, c) in was.items():
        if pci not in now:
            out.append(f"card {i} ({pci}, {c.get('uuid')}) is gone")
            continue
        n = now[pci][1]
        if n.get("uuid") != c.get("uuid"):
            out.append(f"card {i} replaced (UUID {c.get('uuid')} -> {n.get('uuid')}, at {pci})")
        elif n.get("vbios") != c.get("vbios"):
            out.append(f"card {i} VBIOS changed {c.get('vbios')} -> {n.get('vbios')}")
        elif n.get("model") != c.get("model"):
            out.append(f"card {i} model changed {c.get('model')} -> {n.get('model')}")
    for pci, (i, n) in now.items():
        if pci not in was:
            out.append(f"a card the certificate does not have: card {i} ({pci}, {n.get('uuid')})")
    return out


def unread_value(value) -> bool:
    """A fingerprint value that says it could not be read (rmpeer.run.fingerprint), or a
    recording's "not recorded": it matches nothing, itself included."""
    return isinstance(value, str) and value.startswith(("unreadable", "not recorded"))


def _same(old, new) -> bool:
    return old == new and not unread_value(old) and not unread_value(new)


def _leaves(old, new, path=()) -> list[tuple]:
    """(path, old, new) of every leaf that differs, or could not be read, between two nested values."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += _leaves(old.get(key, "(none)"), new.get(key, "(none)"), (*path, str(key)))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [x for i, (a, b) in enumerate(zip(old, new)) for x in _leaves(a, b, (*path, str(i)))]
    return [] if _same(old, new) else [(path, old, new)]


def _unread_line(name: str, path, old, new) -> str:
    where = f" ({' '.join(path)})" if path else ""
    value = new if unread_value(new) else old
    side = "on this host" if unread_value(new) else "in the certificate"
    return f"{name}{where} could not be read {side} ({_short(value)}): an unread value matches nothing"


# Names in the reasons, per fingerprint key; a key not listed is named by itself.
_NAMES = {"driver": "driver", "driver_flavour": "driver flavour", "kernel": "kernel",
          "kernel_module": "kernel module", "iommu": "IOMMU", "acs": "PCIe ACS", "matrices": "rmpeer's matrices",
          "rmpeer": "rmpeer", "format": "fingerprint format", "boot": "boot id",
          "driver_load": "nvidia module load"}
# Keys whose change has one plain meaning, said as such.
_CHANGED = {"boot": "the host was rebooted since the certificate",
            "driver_load": "the nvidia kernel module was reloaded since the certificate"}


def fingerprint_changes(old: dict, new: dict) -> list[str]:
    """What differs between the certificate's fingerprint and this host's, one line each.
    A key this host's has and the certificate's lacks is a change (the certificate did not
    record it); the NVLinks are compared only when both have them (the fresh path has none)."""
    out = []
    for key in new:
        name = _NAMES.get(key, key)
        if key in ("nvlinks", "health"):
            continue
        if key not in old:
            out.append(f"the certificate records no {name}")
        elif key == "cards":
            if not new["cards"]:
                out.append("this host lists no GPU in /proc/driver/nvidia/gpus")
            out += _cards(old["cards"], new["cards"])
        elif key in _CHANGED and not unread_value(old[key]) and not unread_value(new[key]):
            if old[key] != new[key]:
                out.append(f"{_CHANGED[key]} ({name} {_short(old[key])} -> {_short(new[key])})")
        else:
            for path, a, b in _leaves(old[key], new[key]):
                if unread_value(a) or unread_value(b):
                    out.append(_unread_line(name, path, a, b))
                elif path:
                    out.append(f"{name} changed ({' '.join(path)}): {_short(a)} -> {_short(b)}")
                else:
                    out.append(f"{name} changed {_short(a)} -> {_short(b)}")
    if "nvlinks" in old and "nvlinks" in new:
        out += [f"active NVLinks of {' '.join(path)} changed {a} -> {b}"
                for path, a, b in _leaves(old["nvlinks"], new["nvlinks"])]
    if "health" in old and "health" in new:     # RM's platform facts (rm.health.identity)
        out += [f"RM's {' '.join(path)} changed {a} -> {b}" for path, a, b in _leaves(old["health"], new["health"])]
    return out


def why_stale(certificate: RunResult, fingerprint: dict, tier: str, now=None, *, node: str | None = None) -> list[str]:
    """Every reason the certificate does not hold for this host and `tier`; [] when it holds."""
    if tier not in TIERS:
        raise ConfigError(f"--tier {tier!r}: one of {', '.join(TIERS)}")
    now = _when(now) if now is not None else datetime.now(timezone.utc)
    node = node if node is not None else node_name()
    c = certificate
    out = []
    if c.target.get("kind") != "live":
        out.append(f"the certificate is of a {c.target.get('kind') or 'unknown kind of'} run, not of this host")
    if c.node != node:
        out.append(f"the certificate is of host {c.node or '(unnamed)'}, this is {node}")
    if c.verdict != CERTIFIED:
        out.append(f"verdict was {c.verdict}")
    if c.tier == PARTIAL:
        out.append("the certificate is of chosen layouts (--layout) that stand for no tier")
    elif c.tier not in TIERS:
        out.append(f"the certificate's tier {c.tier!r} is not one of {', '.join(TIERS)}")
    elif TIERS.index(c.tier) < TIERS.index(tier):
        out.append(f"tier {tier} asked, the certificate is {c.tier}")
    if not c.valid_until:
        out.append("the certificate has no valid_until")
    else:
        try:
            until = _when(c.valid_until)
        except (ValueError, TypeError, OverflowError):
            out.append(f"the certificate's valid_until {c.valid_until!r} is not a time")
        else:
            if now >= until:
                out.append(f"expired {_ago(now - until)} ago (valid until {c.valid_until})")
    if not c.fingerprint:
        out.append("the certificate holds no platform fingerprint")
    else:
        out += fingerprint_changes(c.fingerprint, fingerprint)
    return out
