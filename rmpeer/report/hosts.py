"""The hosts of a merged report, read from their folders: which Allure results belong to
which host, and each host's verdict, reasons, duration and driver (from the certificate
beside its results) and environment.properties. Their words on the page (the environment
block, the host table) are rmpeer.report.page's.

`rmpeer certify --output OUT` writes OUT/allure-results and OUT/certificate.json (a replay:
OUT/replay-certificate.json); a fleet collects one OUT per host. A results folder names its
host in every result (the rmpeer_host label, rmpeer/pytest_plugin/reporting.py)."""

from __future__ import annotations

import json
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.report.page import HOST_LABEL, NO_CERTIFICATE, HostResults

CERTIFICATES = ("certificate.json", "replay-certificate.json")


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
            found.append(path / "allure-results")
        elif path.is_dir():
            inner = sorted(p for p in path.iterdir() if p.is_dir())
            hosts = [p if _has_results(p) else p / "allure-results" for p in inner
                     if _has_results(p) or _has_results(p / "allure-results")]
            if not hosts:
                raise ConfigError(f"no Allure results in {path} nor in a folder inside it: run the suites with "
                                  f"--alluredir (rmpeer certify writes them to <output>/allure-results)")
            found += hosts
        else:
            raise ConfigError(f"--results {path}: no such folder")
    return found


def _properties(path: Path) -> dict:
    """A Java properties file as Allure's environment.properties is written (\\: and \\= escaped)."""
    out = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip() or line.lstrip().startswith(("#", "!")):
                continue
            key, value, i = "", "", 0
            while i < len(line):
                if line[i] == "\\" and i + 1 < len(line):
                    key += line[i + 1]
                    i += 2
                elif line[i] in "=:":
                    value = line[i + 1:]
                    break
                else:
                    key += line[i]
                    i += 1
            out[key.strip()] = value.strip()
    return out


def _certificate(results: Path) -> Path | None:
    for folder in (results, results.parent):
        for name in CERTIFICATES:
            if (folder / name).is_file():
                return folder / name
    return None


def hosts_of(results: Path) -> dict[str, list]:
    """host -> its results (parsed) in one results folder."""
    by_host: dict = {}
    for path in sorted(results.glob("*-result.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue      # allure_html.check_results names it
        if not isinstance(data, dict):
            continue
        labels = [l for l in data.get("labels") or [] if isinstance(l, dict)]
        host = next((l.get("value") for l in labels if l.get("name") == HOST_LABEL), None)
        by_host.setdefault(host, []).append(data)
    return by_host


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
        cert = _certificate(results)
        for host, rs in by_host.items():
            if host in seen:
                raise ConfigError(f"host {host!r} is in both {seen[host]} and {results}: give each host's "
                                  f"results once (set RMPEER_NODE_NAME per host)")
            seen[host] = results
            h = HostResults(host, results, environment=_properties(results / "environment.properties"))
            starts = [r["start"] for r in rs if r.get("start")]
            stops = [r["stop"] for r in rs if r.get("stop")]
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
    try:
        data = json.loads(cert.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        h.reasons = [f"{cert}: not a readable certificate ({str(exc)[:200]})"]
        return
    h.certificate = cert
    h.verdict = str(data.get("verdict") or NO_CERTIFICATE)
    h.reasons = [str(r) for r in data.get("reasons") or []]
    if isinstance(data.get("duration_s"), (int, float)):
        h.duration_s = float(data["duration_s"])
    facts = data.get("host") or {}
    h.driver = " ".join(x for x in (facts.get("driver_version"), facts.get("flavour")) if x)
