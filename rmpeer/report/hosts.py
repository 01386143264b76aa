"""The hosts of a merged report, read from their folders: which Allure results belong to
which host, and each host's verdict, reasons, duration and driver (from the certificate
beside its results) and environment.properties. Their words on the page (the environment
block, the host table) are rmpeer.report.page's.

`rmpeer certify --output OUT` writes OUT/allure-results and OUT/certificate.json (a replay:
OUT/replay-certificate.json); a fleet collects one OUT per host. A results folder names its
host in every result (the rmpeer_host label, rmpeer/pytest_plugin/reporting.py)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.model.spec import CERTIFICATE, REPLAY_CERTIFICATE
from rmpeer.report.page import HOST_LABEL, NO_CERTIFICATE, HostResults
from rmpeer.safewrite import json_input, read_found

CERTIFICATES = (CERTIFICATE, REPLAY_CERTIFICATE)     # what certify --output writes beside its results
# What a folder another user may have filled can make rmpeer read: an Allure result is a few
# KiB (its attachments are files of their own), an environment.properties a few lines, a
# certificate a few hundred KiB.
RESULT_LIMIT = 16 << 20
PROPERTIES_LIMIT = 1 << 20
CERTIFICATE_LIMIT = 64 << 20


def read_result(path: Path) -> dict:
    """One Allure result of a results folder: a regular file (never a link's target, never a
    FIFO that would hang the read), JSON, an object; exit 2 naming it otherwise."""
    try:
        data = json_input(read_found(path, limit=RESULT_LIMIT))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable Allure result ({str(exc)[:200]}); "
                          "remove it or rerun the suites") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not an Allure result (a JSON object); remove it or rerun the suites")
    return data


def _has_results(path: Path) -> bool:
    return path.is_dir() and any(path.glob("*-result.json"))


def result_dirs(paths) -> list[Path]:
    """The Allure results folders named: each path is a results folder, a certify --output
    folder (holding allure-results/), or a folder of such per-host folders."""
    found = []
    for given in paths:
        path = Path(given)
        if _has_results(path):
            found.append(path)
        elif _has_results(path / "allure-results"):
            found.append(_not_a_link(path / "allure-results"))
        elif path.is_dir():
            inner = sorted(_not_a_link(p) for p in path.iterdir() if p.is_dir())
            hosts = [p if _has_results(p) else _not_a_link(p / "allure-results") for p in inner
                     if _has_results(p) or _has_results(p / "allure-results")]
            if not hosts:
                raise ConfigError(f"no Allure results in {path} nor in a folder inside it: run the suites with "
                                  f"--alluredir (rmpeer certify writes them to <output>/allure-results)")
            found += hosts
        else:
            raise ConfigError(f"--results {path}: no such folder")
    return found


def _not_a_link(path: Path) -> Path:
    """A folder rmpeer found inside one it was given: a link planted there would make the
    report show (and vouch for) another folder's results."""
    if path.is_symlink():
        raise ConfigError(f"{path}: refused: it is a symbolic link (to {os.readlink(path)}); give the folder "
                          "it points to itself, if it is meant")
    return path


def _properties(path: Path) -> dict:
    """A Java properties file as Allure's environment.properties is written (\\: and \\= escaped)."""
    if not path.exists() and not path.is_symlink():
        return {}
    try:
        text = read_found(path, limit=PROPERTIES_LIMIT).decode("utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "!")):
            continue
        key, value, i = [], "", 0
        while i < len(line):
            if line[i] == "\\" and i + 1 < len(line):
                key.append(line[i + 1])
                i += 2
            elif line[i] in "=:":
                value = line[i + 1:]
                break
            else:
                key.append(line[i])
                i += 1
        out["".join(key).strip()] = value.strip()
    return out


def certificate_of(results: Path) -> Path | None:
    """The certificate beside a results folder (certify --output holds both), in it or above it."""
    for folder in (results, results.parent):
        for name in CERTIFICATES:
            if (folder / name).is_file() or (folder / name).is_symlink():     # a link: refused where it is read
                return folder / name
    return None


def hosts_of(results: Path) -> dict[str, list]:
    """host -> its results (parsed) in one results folder."""
    by_host: dict = {}
    for path in sorted(results.glob("*-result.json")):
        data = read_result(path)
        labels = data.get("labels") or []
        if not isinstance(labels, list):
            raise ConfigError(f"{path}: not an Allure result (its labels are not a list); remove it or rerun "
                              "the suites")
        host = next((l.get("value") for l in labels if isinstance(l, dict) and l.get("name") == HOST_LABEL), None)
        if host is not None and not isinstance(host, str):
            raise ConfigError(f"{path}: its {HOST_LABEL} label is not a host's name; remove it or rerun the suites")
        by_host.setdefault(host, []).append(data)
    return by_host


def _times(results: list, key: str) -> list:
    """Allure's start or stop stamps (milliseconds) that are numbers; any other is not one."""
    return [r[key] for r in results if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)
            and math.isfinite(r[key])]


def collect(dirs: list[Path]) -> list[HostResults]:
    """One HostResults per host, in the order given; a host named twice is refused (its results
    would be shown as retries of each other)."""
    hosts: list[HostResults] = []
    seen: dict[str, Path] = {}
    for results in dirs:
        by_host = hosts_of(results)
        if None in by_host:
            raise ConfigError(f"{results}: the results do not name their host (made by an rmpeer without the "
                              f"{HOST_LABEL} label): rerun the suites to merge them with other hosts")
        cert = certificate_of(results)
        for host, rs in by_host.items():
            if host in seen:
                raise ConfigError(f"host {host!r} is in both {seen[host]} and {results}: give each host's "
                                  f"results once (set RMPEER_NODE_NAME per host)")
            seen[host] = results
            h = HostResults(host, results, environment=_properties(results / "environment.properties"))
            starts, stops = _times(rs, "start"), _times(rs, "stop")
            h.span_s = (max(stops) - min(starts)) / 1000 if starts and stops else 0.0
            if cert is not None and len(by_host) == 1:
                _read_certificate(h, cert)
            else:
                h.reasons = [f"no certificate beside {results}: the verdict is not known"
                             if cert is None else f"{results} holds {len(by_host)} hosts: its certificate is not "
                             "one host's"]
            hosts.append(h)
    return hosts


def _read_certificate(h: HostResults, cert: Path) -> None:
    """The host's verdict, reasons, duration and driver from the certificate beside its
    results. Input: a field of another kind makes it "not a readable certificate", said as
    the host's reason, never believed in part."""
    try:
        data = json_input(read_found(cert, limit=CERTIFICATE_LIMIT))
        verdict, reasons, duration, driver = _certificate_fields(data)
    except (OSError, ValueError, ConfigError) as exc:
        h.reasons = [f"{cert}: not a readable certificate ({getattr(exc, 'strerror', None) or str(exc)[:200]})"]
        return
    h.certificate, h.verdict, h.reasons, h.duration_s, h.driver = cert, verdict, reasons, duration, driver


def _certificate_fields(data) -> tuple:
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    verdict = data.get("verdict") or NO_CERTIFICATE
    reasons = data.get("reasons") or []
    duration = data.get("duration_s")
    facts = data.get("host") or {}
    if not isinstance(verdict, str):
        raise ValueError("its verdict is not text")
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise ValueError("its reasons are not a list of text")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))
                                 or not math.isfinite(duration) or duration < 0):
        raise ValueError("its duration_s is not a number of seconds")
    if not isinstance(facts, dict):
        raise ValueError("its host is not a mapping")
    driver = [facts.get("driver_version"), facts.get("flavour")]
    if not all(x is None or isinstance(x, str) for x in driver):
        raise ValueError("its driver version is not text")
    return verdict, list(reasons), None if duration is None else float(duration), " ".join(x for x in driver if x)
