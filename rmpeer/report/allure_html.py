"""`rmpeer report`: the Allure results of a run as ONE self-contained HTML file.

Built with the Allure 3 command line (the npm package `allure`, run by Node.js) and the
awesome report in single-file mode (allurerc.mjs beside this module, shipped in the wheel). The page Allure
writes loads an analytics script from the internet; a certification host may be offline and
a report must not phone home, so that script is removed and the page is then checked to
fetch nothing from outside."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from rmpeer.errors import EXIT_OK, ConfigError, RmpeerError
from rmpeer.machine.signing import trust_line
from rmpeer.machine.writable import writable
from rmpeer.paths import allure_config, checkout_root
from rmpeer.render.text import escaped
from rmpeer.report.hosts import certificate_of, collect, hosts_of, read_result, result_dirs
from rmpeer.report.page import (ALLURE_VERSION, external_urls, fleet_config, fleet_options, quiet_controls,
                                strip_analytics, with_host_table)
from rmpeer.safewrite import make_folder, target_problem, write_file

CONFIG = allure_config()               # rmpeer/report/allurerc.mjs, shipped in the wheel


def allure_prefixes() -> list[Path]:
    """Where `npm install --prefix DIR allure` may have put Allure: the checkout's .allure/
    (git-ignored; CI and a clone install it there), then .allure/ in the working directory
    (an installed wheel has no checkout)."""
    root = checkout_root()
    return ([root / ".allure"] if root else []) + [Path(".allure").resolve()]


INSTALL = (f"npm install --prefix {allure_prefixes()[0]} --no-audit --no-fund allure@{ALLURE_VERSION}")
GET_NODE = ("Node.js is needed to build the HTML report (Allure 3 is an npm package). "
            f"On Debian: apt-get install nodejs npm; then: {INSTALL}")
DEFAULT_TITLE = "rmpeer conformance report"

def allure_command() -> list[str]:
    """node + the Allure 3 CLI installed under .allure/, or an `allure` 3.x on PATH."""
    node = shutil.which("node")
    if not node:
        raise ConfigError(GET_NODE)
    for prefix in allure_prefixes():
        local = prefix / "node_modules" / "allure" / "cli.js"
        if local.exists():
            return [node, str(local)]
    on_path = shutil.which("allure")
    if on_path:
        done = subprocess.run([on_path, "--version"], capture_output=True, text=True, timeout=60)
        if done.stdout.strip().startswith("3."):
            return [on_path]
    raise ConfigError(f"the Allure 3 command line is not installed: {INSTALL} "
                      "(Allure 2's `allure` cannot write the single-file report)")


def check_results(results: Path) -> None:
    """Every *-result.json of the run must parse: Allure skips a corrupt one silently, and a
    report that quietly lacks tests would read as a smaller run."""
    found = sorted(results.glob("*-result.json")) if results.is_dir() else []
    for entry in sorted(results.iterdir()) if found else ():
        # the folder may be another user's (a shared sweep folder): Allure, run by this user,
        # would read a planted link's target into the report
        problem = target_problem(entry)
        if problem:
            raise ConfigError(f"{entry}: refused: {problem}; an Allure results folder holds only regular files")
    if not found:
        raise ConfigError(f"no Allure results in {results}: run the suites with --alluredir {results} "
                          "(rmpeer certify writes them to <output>/allure-results)")
    for path in found:
        read_result(path)


def check_results_entry(copy: Path, given: Path) -> None:
    """A copied result is a regular file: one swapped for a link after check_results is refused."""
    problem = target_problem(copy)
    if problem:
        raise ConfigError(f"{given}: refused: {problem}; an Allure results folder holds only regular files")


HISTORY_LIMIT = 10      # the reports a --history file keeps (each holds every result's status: ~2 MB a full run)


def _with_history(config: Path, history: Path | None, tmp: str) -> Path:
    """The config itself, or one that imports it and keeps Allure's history in `history`."""
    if history is None:
        return config
    mine = Path(tmp) / "allurerc-history.mjs"
    mine.write_text(f"import base from {json.dumps(config.resolve().as_uri())};\n"
                    f"export default {{ ...base, historyPath: {json.dumps(str(history.resolve()))} }};\n")
    return mine


def checked_history(text) -> Path | None:
    """--history FILE: Allure's history of earlier reports (one JSON line per report), kept
    and extended by each report built with it: refused when it is a link or not a regular
    file, or its folder does not exist (exit 2), before Allure runs."""
    if text is None:
        return None
    if not str(text).strip():
        raise ConfigError("--history needs a file name (an empty one keeps no history)")
    path = Path(text)
    problem = target_problem(path)
    if problem:
        raise ConfigError(f"--history {text}: refused: {problem}")
    if not path.resolve().parent.is_dir():
        raise ConfigError(f"--history {text}: its folder does not exist")
    return path


def _generate(cmd: list[str], config: Path, results: list[Path], title: str, history: Path | None = None) -> str:
    """`allure generate` of results folders into one page, analytics removed; with `history`,
    each result shows its trend over the earlier reports kept there (the same host's runs:
    a result's history id names its host and its check, rmpeer.render.allure)."""
    with tempfile.TemporaryDirectory(prefix="rmpeer-allure-") as tmp:
        config = _with_history(config, history, tmp)
        # --cwd: Allure must not pick up another allurerc from the caller's directory.
        limit = ["--history-limit", str(HISTORY_LIMIT)] if history is not None else []
        done = subprocess.run(cmd + ["generate", "--config", str(config), "--cwd", tmp, "--output", tmp, *limit,
                                     "--name", title, *(str(r.resolve()) for r in results)],
                              capture_output=True, text=True, timeout=600)
        pages = [p for p in (Path(tmp) / "index.html", Path(tmp) / "awesome" / "index.html") if p.exists()]
        if done.returncode or not pages:     # Allure's own words may quote a result's: one line, escaped
            raise RmpeerError(f"allure generate failed (exit {done.returncode}): "
                              + escaped((done.stderr or done.stdout).strip()[-600:]))
        return strip_analytics(pages[0].read_text(encoding="utf-8"))


def _write(html: str, output: Path) -> Path:
    remote = external_urls(html)
    if remote:
        raise RmpeerError("the report would load from outside (an offline host cannot, and a report must "
                          "not phone home): " + "; ".join(remote[:10]))
    try:
        make_folder(output.parent)
        write_file(output, html, what="the report")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {output}: {exc.strerror or exc}") from None
    return output


def build_report(results_dir, output_html, *, title: str = DEFAULT_TITLE, history: Path | None = None) -> Path:
    """Allure results -> one HTML file a person opens offline; returns its path.
    results_dir may be one folder or a list: several hosts' folders make one fleet report."""
    given = [results_dir] if isinstance(results_dir, (str, os.PathLike)) else list(results_dir)
    if len(given) == 1 and _single_run(Path(given[0])):
        results, output = Path(given[0]), Path(output_html)
        check_results(results)
        writable("--output", output, folder=False)   # before Allure runs (nothing is created)
        return _write(quiet_controls(_generate(allure_command(), CONFIG, [results], title, history)), output)
    return build_fleet_report(given, output_html, title=title, history=history)


def _single_run(path: Path) -> bool:
    """A folder that holds results itself (not a folder of per-host folders) and names at most
    one host: the plain report of one run."""
    if not path.is_dir() or not any(path.glob("*-result.json")):
        return not (path / "allure-results").is_dir() and not any(p.is_dir() for p in path.glob("*/"))
    check_results(path)      # links, FIFOs and devices refused before any result is read
    return len(hosts_of(path)) <= 1


def build_fleet_report(paths, output_html, *, title: str = DEFAULT_TITLE, history: Path | None = None) -> Path:
    """Many hosts' results -> one page: each host an environment of the report (with its own
    environment block) and the parent suite and a parameter of each of its results (so no
    host's result is taken for a retry of another's), and a host table first."""
    output = Path(output_html)
    dirs = result_dirs(paths)
    for d in dirs:
        check_results(d)
    writable("--output", output, folder=False)
    cmd = allure_command()
    hosts = collect(dirs)
    env_ids = {h.host: f"host-{i:03d}" for i, h in enumerate(hosts, 1)}
    with tempfile.TemporaryDirectory(prefix="rmpeer-fleet-") as tmp:
        copies = []
        for i, d in enumerate(dirs):
            # each run's environment.properties and executor.json would overwrite the others':
            # they are left out, and each host's environment becomes its environment block
            copy = Path(tmp) / f"results-{i:03d}"
            copy.mkdir()
            for f in d.iterdir():
                if f.is_file() and f.name not in ("environment.properties", "executor.json"):
                    try:        # the file itself, never a link's target (check_results refused links)
                        os.link(f, copy / f.name, follow_symlinks=False)
                    except OSError:
                        shutil.copyfile(f, copy / f.name, follow_symlinks=False)
                    check_results_entry(copy / f.name, f)
            copies.append(copy)
        config = Path(tmp) / "allurerc.mjs"
        config.write_text(fleet_config(CONFIG.resolve().as_uri(), env_ids, hosts))
        html = _generate(cmd, config, copies, title, history)
    html = with_host_table(quiet_controls(fleet_options(html, env_ids, hosts)), hosts)
    return _write(html, output)


def main_report(results, output, *, title: str | None = None, history=None) -> int:
    """`rmpeer report [--results DIR [DIR ...]] [--output FILE] [--title TEXT]`: one folder is one
    run's report; several folders, or a folder of per-host folders, one report of many hosts."""
    # one folder (a str, as callers in this process pass it) or several (the command line's list)
    results = [results] if isinstance(results, (str, os.PathLike)) else list(results)
    out = build_report(results, output, title=title or DEFAULT_TITLE, history=checked_history(history))
    print(f"rmpeer: report written to {escaped(out)} ({out.stat().st_size // 1024} KiB, one file; "
          "open it in a browser, it needs no network)")
    for line in signature_lines(results):
        print(f"rmpeer: {escaped(line)}")      # a certificate's words and a folder's name are input
    return EXIT_OK


def signature_lines(paths) -> list[str]:
    """How far the certificate beside each results folder (certify --output holds both) is
    vouched for: the report shows what the results say, the signature says who said it."""
    out = []
    for d in result_dirs(paths):
        cert = certificate_of(d)
        out.append(f"{cert}: {trust_line(cert, follow=False)}" if cert else
                   f"{d}: no certificate beside these results: signature not checked")
    return out
