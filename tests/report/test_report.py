"""The report a person reads: the card x card pictures, and the single-file Allure 3 HTML
report of a real (replayed) run, opened in headless Chromium and read as a person reads it.

The picture tests need nothing. The HTML tests need Node.js with the Allure 3 CLI
(.allure/, see rmpeer/report/allure_html.py) and Chromium, and skip saying so without them.
They take about 15 s: two replayed pytest runs, `allure generate`, and a browser.
RMPEER_UPDATE_DOCS=1 also writes the README's screenshots to docs/."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from rmpeer.paths import matrices_dir, pytest_args, pytest_env, suites_dir
from rmpeer.run.targets import committed_transcripts
from rmpeer.render.table import pair_cells
from rmpeer.model.result import CheckResult, LayoutResult, PairResult, RunResult
from rmpeer.errors import ConfigError
from rmpeer.report import allure_html
from rmpeer.report.page import NO_CERTIFICATE, embedded_files, external_urls, variables
from rmpeer.render.heatmap import bandwidth_heatmap_svg, p2p_matrix_svg
from rmpeer.model.host import Card, HostFacts

REPO = suites_dir().parent   # the checkout, or the installed package's copy

pytestmark = pytest.mark.report
SVG = "{http://www.w3.org/2000/svg}"
DOCS = REPO / "docs"


# -- the pictures ------------------------------------------------------------------------

def cells(svg: str, prefix: str) -> dict[str, ET.Element]:
    """data-testid -> element, for the cells of a picture (parsing also proves it is valid XML)."""
    root = ET.fromstring(svg)
    return {e.get("data-testid"): e for e in root.iter() if (e.get("data-testid") or "").startswith(prefix)}


def shown(element: ET.Element) -> str:
    return " ".join(t.text or "" for t in element.iter(f"{SVG}text"))


def facts(p2p: dict, n: int = 3) -> HostFacts:
    cards = [Card(index=i, minor=i, gpu_id=10 + i, pci=f"0000:0{i}:00.0", pci_device_id=0x2335, name="NVIDIA H200")
             for i in range(n)]
    return HostFacts("580.65.06", "open", "rm-api-query", "580.65.06", cards=cards, p2p=p2p)


def test_p2p_matrix_names_the_link_and_read_write_of_each_pair():
    nvlink = {"caps": ["NVLINK_SUPPORTED", "READS_SUPPORTED", "WRITES_SUPPORTED"], "caps_word": 0xB}
    pcie_write_only = {"caps": ["PCI_SUPPORTED", "WRITES_SUPPORTED"], "caps_word": 0x41}
    p2p = {(a, b): nvlink for a in range(2) for b in range(2)}
    p2p |= {(0, 2): pcie_write_only, (2, 0): {"caps": [], "caps_word": 0},
            (1, 2): {"caps": [], "caps_word": 0, "error": "NV_ERR_NOT_SUPPORTED"}}   # (2, 1), (2, 2) not queried
    svg = p2p_matrix_svg(facts(p2p))
    grid = cells(svg, "p2p-cell-")
    assert len(grid) == 9
    assert grid["p2p-cell-0-1"].get("data-link") == "NVLink" and "read \u2713  write \u2713" in shown(grid["p2p-cell-0-1"])
    assert "same card" in shown(grid["p2p-cell-1-1"])
    assert grid["p2p-cell-0-2"].get("data-link") == "PCIe"
    assert (grid["p2p-cell-0-2"].get("data-read"), grid["p2p-cell-0-2"].get("data-write")) == ("false", "true")
    assert "read \u2717  write \u2713" in shown(grid["p2p-cell-0-2"])
    assert grid["p2p-cell-2-0"].get("data-link") == "none" and "no read, no write" in shown(grid["p2p-cell-2-0"])
    assert "NV_ERR_NOT_SUPPORTED" in shown(grid["p2p-cell-1-2"])
    assert "not queried" in shown(grid["p2p-cell-2-1"])
    fills = {k: e.find(f"{SVG}rect").get("fill") for k, e in grid.items()}
    assert fills["p2p-cell-0-1"] != fills["p2p-cell-0-2"] != fills["p2p-cell-2-0"]   # a colour per link
    assert "H200 0000:02:00.0" in shown(cells(svg, "p2p-matrix-row-2")["p2p-matrix-row-2"])
    assert "caps word 0x41" in svg   # every cap, on hover


def test_p2p_matrix_of_no_card_and_of_malformed_caps():
    empty = p2p_matrix_svg(facts({}, n=0))
    assert "RM lists no card" in shown(cells(empty, "p2p-matrix-empty")["p2p-matrix-empty"])
    with pytest.raises(ValueError, match=r"p2p\[\(0, 1\)\]\['caps'\] must be a list"):
        p2p_matrix_svg(facts({(0, 1): {"caps": "NVLINK_SUPPORTED"}}, n=2))


def test_bandwidth_heatmap_shows_the_median_and_orders_colours_by_it():
    ok = {"setup": [2, 2], "read": [1, 1], "write": [1, 1]}
    pairs = {(0, 0): {**ok, "gbps": [240.0, 250.0, 260.0]}, (0, 1): {**ok, "gbps": [150.0, 149.0, 151.0]},
             (1, 0): {**ok, "gbps": [100.0]}, (1, 1): {**ok, "read": [0, 1], "gbps": [199.5, 200.5]}}
    grid = cells(bandwidth_heatmap_svg(pairs), "bw-cell-")
    assert "150.0 GB/s" in shown(grid["bw-cell-0-1"]) and grid["bw-cell-0-1"].get("data-gbps") == "150.0"
    assert "250.0 GB/s" in shown(grid["bw-cell-0-0"])                          # the median, not the mean
    # failed of total, as the terminal counts ("R:FAIL 1/1")
    assert "R\u2717 1/1" in shown(grid["bw-cell-1-1"]) and grid["bw-cell-1-1"].get("data-status") == "fail"
    assert grid["bw-cell-1-1"].find(f"{SVG}rect").get("stroke")             # a failed check is framed
    assert grid["bw-cell-0-1"].get("data-status") == "pass" and "S\u2713 R\u2713 W\u2713" in shown(
        grid["bw-cell-0-1"]).replace("  ", " ")

    def luminance(cell):
        r, g, b = (int(cell.get("data-fill")[i:i + 2], 16) for i in (1, 3, 5))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    by_speed = sorted(grid.values(), key=lambda c: float(c.get("data-gbps")))
    assert [luminance(c) for c in by_speed] == sorted((luminance(c) for c in by_speed), reverse=True)


def test_bandwidth_heatmap_of_a_run_result_and_certificate_keys():
    """The report's pair matrix: rmpeer.render.table.pair_cells of a RunResult, drawn."""
    result = RunResult(layouts=[LayoutResult("x", [0, 1], 64 << 20)],
                       pairs=[PairResult("x", 0, 1, 0, 1, "read", True, steady_gbps=233.0),
                              PairResult("x", 0, 1, 0, 1, "write", False, steady_gbps=231.0)],
                       checks=[CheckResult("setup:map/x/s1->t0", "setup:map", "setup", "s1->t0", "passed",
                                           layout="x", s=1, t=0)])
    table = pair_cells(result)
    grid = cells(bandwidth_heatmap_svg(table), "bw-cell-")
    assert "232.0 GB/s" in shown(grid["bw-cell-0-1"]) and "W\u2717 1/1" in shown(grid["bw-cell-0-1"])
    assert "no copies" in shown(grid["bw-cell-1-0"]) and grid["bw-cell-1-0"].get("data-status") == "pass"
    assert "not tested" in shown(grid["bw-cell-0-0"])
    as_certificate = {f"{a}->{b}": v for (a, b), v in table.items()}      # certificate.json's "pairs"
    assert bandwidth_heatmap_svg(as_certificate) == bandwidth_heatmap_svg(table)


@pytest.mark.parametrize("pairs, problem", [
    ({(0, 1): {"gbps": [float("nan")]}}, "gbps must be finite"),
    ({(0, 1): {"gbps": ["fast"]}}, "gbps must be finite"),
    ({(0, 1): {"read": [3, 2]}}, r"read must be \[passed, total\]"),
    ({"card0": {"gbps": [1.0]}}, "is not \\(card s, card t\\)"),
])
def test_bandwidth_heatmap_rejects_invalid_input(pairs, problem):
    with pytest.raises(ValueError, match=problem):
        bandwidth_heatmap_svg(pairs)


def test_bandwidth_heatmap_of_no_pairs():
    svg = bandwidth_heatmap_svg({})
    assert "no per-pair results" in shown(cells(svg, "bandwidth-heatmap-empty")["bandwidth-heatmap-empty"])


def test_without_node_the_error_says_how_to_get_it(monkeypatch, tmp_path):
    (tmp_path / "x-result.json").write_text("{}")
    monkeypatch.setattr(allure_html.shutil, "which", lambda name: None)
    with pytest.raises(ConfigError) as err:
        allure_html.build_report(tmp_path, tmp_path / "r.html")
    assert "apt-get install nodejs npm" in str(err.value) and "npm install --prefix" in str(err.value)


def test_without_results_the_error_says_where_they_come_from(tmp_path):
    with pytest.raises(ConfigError, match="no Allure results in .*--alluredir"):
        allure_html.build_report(tmp_path, tmp_path / "r.html")


# -- the categories in allurerc.mjs, matched by Allure's own code ----------------------------

def allure_or_skip() -> list[str]:
    try:
        return allure_html.allure_command()
    except ConfigError as exc:
        pytest.skip(str(exc))


CATEGORY_CASES = {
    "rmpeer.errors.ReplayMismatch: replay of t.jsonl.gz: call 51 (alloc:p2p): request NVOS64_PARAMETERS field "
    "paramsSize (offset 32): the run sent 0x50, the recording has 0x48": "ABI mismatch",
    "rmpeer.errors.ReplayMismatch: replay of t.jsonl.gz: call 9 (alloc:p2p): request NV503B_ALLOC_PARAMETERS is 80 "
    "bytes, the recording sent 72: the struct's size differs": "ABI mismatch",
    "rmpeer.rm.errors.RmError: alloc:p2p: NV_ERR_NOT_SUPPORTED (0x56: not supported)\n  handles: hClient=0x1":
        "P2P refused",
    "rmpeer.rm.errors.RmError: dma-map-peer: NV_ERR_INVALID_ARGUMENT (0x1f: invalid argument)": "Map refused",
    "AssertionError: read s0->t1: 4096 bytes differ, first at 0x0": "Data mismatch",
    "rmpeer.ce.engine.EngineFault: read: session 0's copy engine (LCE 4) did not finish within 1.000 s: "
    "semaphore 0x3": "Engine fault or timeout",
    "AssertionError: host is not h200x8: 2 cards, expected 8": "Host does not match topology",
    "host does not match the expected topology: 2 cards": "Host does not match topology",
    # the verdict's own result and the findings no check stands for (rmpeer/render/entries.py)
    "NOT CERTIFIED: 32 read/write checks: wrong memory: another session's pattern where the session's own belongs "
    "(interleaved s0 (card 0) -> t0 (card 0))": "Verdict",
    "DEGRADED: 7 bandwidth-floor checks: below the floor (calibrated): the clocks stayed at 345 MHz graphics": "Verdict",
    "bandwidth-floor: read 0->1: expected at least 355 GB/s, found 233.1 GB/s, below the floor of 355 GB/s "
    "(h200x2-nv18); clocks (after-traffic): card 0 345 MHz graphics": "Floor misses",
    "xid: card 0: expected no Xid but those a detection test provokes, found Xid 79: GPU has fallen off the bus":
        "Xids",
    "boost: card 1: expected RM to accept the boost, found RM refused it: NV_ERR_NOT_SUPPORTED": "Clocks and boost",
    "row-remap: card 1: expected no failed row remapping, found a row remapping failed": "Health facts",
    # not one of ours: Allure's own default sorts it
    "rmpeer.errors.ReplayMismatch: replay of t: the run reached 'test:x', which the recording never did": "Test errors",
}


def test_categories_sort_our_failure_messages():
    """allurerc.mjs's rules, loaded and matched by the installed Allure's core-api."""
    cmd = allure_or_skip()
    core = Path(cmd[-1]).parent.parent / "@allurereport" / "core-api" / "dist" / "index.js"
    if not core.exists():
        pytest.skip(f"Allure's core-api is not beside {cmd[-1]}")
    script = f"""
        const {{ normalizeCategoriesConfig, matchCategory }} = await import({json.dumps(core.as_uri())});
        const config = (await import({json.dumps(allure_html.CONFIG.as_uri())})).default;
        const rules = normalizeCategoriesConfig(config.categories);
        const cases = JSON.parse(process.argv[1]);
        console.log(JSON.stringify(cases.map(message =>
            matchCategory(rules, {{ status: "broken", labels: [], message, flaky: false }})?.name ?? null)));
    """
    done = subprocess.run([shutil.which("node"), "--input-type=module", "-e", script, json.dumps(list(CATEGORY_CASES))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert dict(zip(CATEGORY_CASES, json.loads(done.stdout))) == CATEGORY_CASES


# -- the report of a real run, as a person sees it --------------------------------------------

def grown_struct_matrices(tmp: Path) -> Path:
    """A copy of matrices/ in which NV503B_ALLOC_PARAMETERS is 8 bytes larger in every release
    that states it: the replay must then fail at the alloc:p2p request, field by field."""
    out = tmp / "matrices"
    shutil.copytree(matrices_dir(), out)
    data = yaml.safe_load((out / "drivers.yaml").read_text())
    grown = 0
    for release in data["releases"]:
        struct = (release.get("structs") or {}).get("NV503B_ALLOC_PARAMETERS")
        if struct:
            struct["size"] += 8
            grown += 1
    assert grown, "matrices/drivers.yaml states no NV503B_ALLOC_PARAMETERS"
    (out / "drivers.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def replay_run(transcript: str, results: Path, suites: list[str], matrices: Path) -> str:
    cmd = [sys.executable, "-m", "pytest", *(str(suites_dir() / s) for s in suites), "-q", "-p", "no:cacheprovider",
           *pytest_args(), "--rm-replay", transcript, "--rm-layout", "one-per-card", "--alluredir", str(results)]
    done = subprocess.run(cmd, cwd=REPO, env=pytest_env(dict(os.environ, RMPEER_MATRICES=str(matrices))),
                          capture_output=True, text=True, timeout=600)
    out = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode in (0, 1), out          # 1: some tests failed, as the grown struct means them to
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """SLOW (~10 s): the setup and host suites replayed as recorded (passing), the read/write
    suite replayed with a grown struct (failing), and the single-file report of both, built by
    `rmpeer report`'s code."""
    allure_or_skip()
    from rmpeer.report.browser import chromium_path

    if not chromium_path():
        pytest.skip("no Chromium to open the report: apt-get install chromium")
    # RMPEER_REPORT_TRANSCRIPT: another recording to build the report from (e.g. a fresh one).
    transcripts = ([os.environ["RMPEER_REPORT_TRANSCRIPT"]] if os.environ.get("RMPEER_REPORT_TRANSCRIPT") else
                   [p for p in committed_transcripts() if "x2" in Path(p).name] or committed_transcripts())
    if not transcripts:
        pytest.skip("no transcript committed in fixtures/transcripts/ (or named by RMPEER_REPORT_TRANSCRIPT)")
    tmp = tmp_path_factory.mktemp("report")
    results = tmp / "allure-results"
    out = replay_run(transcripts[0], results, ["test_peer_setup.py", "test_host.py"], matrices_dir())
    if not any(json.loads(p.read_text())["status"] == "passed" for p in results.glob("*-result.json")):
        pytest.fail(f"the unchanged replay of {transcripts[0]} passed no test (is the transcript older than "
                    f"the code?), so there is nothing to report as passing:\n{out}")
    replay_run(transcripts[0], results, ["test_cross_card_rw.py"], grown_struct_matrices(tmp))
    html = tmp / "report.html"
    assert allure_html.main_report(str(results), str(html), title="rmpeer report test") == 0
    # What the report must show, from the results pytest wrote (not from the report itself).
    written = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    counts = {}
    for r in written:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    # The report's own ids of the results, from the data the page carries.
    shown = [json.loads(v) for k, v in embedded_files(html.read_text()).items()
             if k.startswith("data/test-results/")]
    return {"html": html, "counts": counts, "results": written, "results_dir": results,
            "shown": {r["name"]: r for r in shown}, "tmp": tmp}


@pytest.fixture(scope="module")
def browser():
    from rmpeer.report.browser import Browser

    with Browser(width=1440, height=900) as b:
        yield b


def open_page(browser, report, route: str = "") -> None:
    browser.open("about:blank")       # a fresh load each time, not a same-document hash change
    browser.open(report["html"].as_uri() + (f"#{route}" if route else ""))


def save_for_docs(browser, report, name: str) -> None:
    shot = browser.screenshot(report["tmp"] / name)
    assert shot.stat().st_size < 300_000, f"{name} is {shot.stat().st_size} bytes"
    if os.environ.get("RMPEER_UPDATE_DOCS"):
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / name)


def field_failure(report) -> dict:
    """The result the grown struct broke: a field-level replay mismatch."""
    for r in sorted(report["results"], key=lambda r: r["name"]):
        message = r.get("statusDetails", {}).get("message", "")
        if r["status"] in ("failed", "broken") and "replay of" in message and " field " in message:
            return r
    pytest.fail("the replay with a grown NV503B_ALLOC_PARAMETERS failed nowhere with a field-level mismatch")


def test_the_report_is_one_offline_file(report):
    html = report["html"].read_text()
    assert "googletagmanager" not in html and "gtag(" not in html
    assert external_urls(html) == []
    assert not [p for p in report["html"].parent.iterdir() if p.suffix in (".js", ".css")]   # nothing beside it


def test_the_overview_shows_the_totals_and_our_tree(report, browser):
    open_page(browser, report)
    browser.wait_for("document.querySelector('[data-testid=metadata-item-total]')")
    assert browser.text("[data-testid=report-title]") == "rmpeer report test"
    counts = report["counts"]
    assert counts.get("passed") and (counts.get("failed", 0) + counts.get("broken", 0))
    assert browser.text("[data-testid=metadata-item-total] [data-testid=metadata-value]") == str(sum(counts.values()))
    for status, n in counts.items():
        assert browser.text(f"[data-testid=metadata-item-{status}] [data-testid=metadata-value]") == str(n), status
    sections = browser.eval("[...document.querySelectorAll('[data-testid=tree-section-title]')].map(e => e.innerText)")
    epics = {l["value"] for r in report["results"] for l in r["labels"] if l["name"] == "epic"}
    assert epics and epics <= set(sections), (epics, sections)          # grouped by our labels: epic first
    failure = field_failure(report)
    assert failure["name"] in browser.text("[data-testid=tree-content]")  # failures are listed, unfolded
    assert browser.outside_requests() == []
    save_for_docs(browser, report, "report-overview.png")


def test_the_failed_test_page_shows_the_field_that_differs(report, browser):
    failure = field_failure(report)
    shown = report["shown"][failure["name"]]
    open_page(browser, report, shown["id"])
    browser.wait_for("document.querySelector('[data-testid=test-result-error-message]')")
    assert browser.text("[data-testid=test-result-info-title]") == failure["name"]
    status = failure["status"]
    assert browser.text(f"[data-testid=test-result-status-{status}]").lower() == status
    assert "Category: ABI mismatch" in browser.text()
    error = browser.text("[data-testid=test-result-error-message]")
    first = failure["statusDetails"]["message"].splitlines()
    assert first[0] in error and "field paramsSize" in error
    assert all(line.strip() in error for line in first[1:])   # the request decoded, field by field
    # Each attachment (the RM call decoded, when the failure attaches it) opens and reads.
    names = [a["name"] for a in failure.get("attachments", [])]
    for i, name in enumerate(names):
        browser.eval(f"document.querySelectorAll('[data-testid=test-result-attachment-header]')[{i}]"
                     ".querySelector('button').click()")
        browser.wait_for("document.querySelectorAll('[data-testid=code-attachment-content]').length > " + str(i))
        body = (report["results_dir"] / failure["attachments"][i]["source"]).read_text()
        assert body.splitlines()[0] in browser.text(), name
    browser.eval("window.scrollTo(0, 0)")
    save_for_docs(browser, report, "report-failure.png")


def test_the_categories_tab_counts_the_abi_mismatches(report, browser):
    mismatches = [r for r in report["results"] if r["status"] in ("failed", "broken")
                  and re.search(r"replay of [\s\S]* field ", r.get("statusDetails", {}).get("message", ""))]
    open_page(browser, report, "categories")
    browser.wait_for("document.querySelector('[data-testid=tree-section-title]')")
    sections = browser.eval("[...document.querySelectorAll('[data-testid=tree-section]')].map(e => e.innerText)")
    assert f"ABI mismatch\n{len(mismatches)}" in sections, sections


def test_a_test_page_shows_labels_parameters_and_attachments(fleet_runs, browser, tmp_path):
    """certify's results (rmpeer.render.allure, from the RunResult) attach the host facts
    (JSON) and the P2P matrix (SVG) to the host-facts check."""
    run = fleet_runs["runs"]["node-x2"]["dir"]
    results = [json.loads(p.read_text()) for p in (run / "allure-results").glob("*-result.json")]
    host = next((r for r in results if r["name"].startswith("host-facts ") and r.get("attachments")
                 and r["status"] == "passed"), None)
    assert host is not None, sorted(r["name"] for r in results)[:20]
    html = tmp_path / "one.html"
    assert allure_html.main_report([str(run)], str(html), title="one host") == 0
    shown = {json.loads(v)["name"]: json.loads(v) for k, v in embedded_files(html.read_text()).items()
             if k.startswith("data/test-results/")}
    report = {"html": html, "shown": shown}
    open_page(browser, report, report["shown"][host["name"]]["id"])
    browser.wait_for("document.querySelector('[data-testid=test-result-info-title]')")
    text = browser.text()
    for label in host["labels"]:
        if label["name"] in ("epic", "feature", "story"):
            assert label["value"] in text, label                    # breadcrumbs and the labels list
    for p in host.get("parameters", []):
        if p.get("mode") == "hidden":      # kept for history ids, never shown
            continue
        assert p["name"] in text and p["value"].strip("'")[:40] in text, p
    headers = browser.eval("[...document.querySelectorAll('[data-testid=test-result-attachment-header]')]"
                           ".map(e => e.innerText)")
    assert [a["name"] for a in host["attachments"]] == [h.split("\n")[1] for h in headers]
    browser.eval("document.querySelectorAll('[data-testid=test-result-attachment-header]')"
                 ".forEach(e => e.querySelector('button').click())")
    browser.wait_for("document.querySelector('[data-testid=code-attachment-content]') && "
                     "document.querySelector('[data-testid=image-attachment-content] img')?.complete")
    assert '"driver_version"' in browser.text("[data-testid=code-attachment-content]")
    assert browser.eval("document.querySelector('[data-testid=image-attachment-content] img').naturalWidth") > 100
    assert browser.outside_requests() == []


# -- one report of many hosts -------------------------------------------------------------------
# Each host's results come from a real `rmpeer certify --replay` run under its own node name
# (RMPEER_NODE_NAME). The 50-host report reuses four such runs: each further host is a copy
# of one of them with the host name rewritten everywhere it occurs, as another node's run of
# the same recording would write it (running 50 replays would take minutes).

# node name -> (recording, matrices, the verdict its kind must give: fixtures/transcripts/README.md):
# the x1 and x2 recordings CERTIFIED, the --no-boost one DEGRADED, the x2 one replayed with a
# struct grown in the ABI NOT CERTIFIED (its requests differ from what the driver was sent)
FLEET_RUNS = {
    # node-x1: the full 1 x H200 recording (the newest 1 x H200 one is a quick run)
    "node-x1": ("h200x1-20261130T003119Z", None, "CERTIFIED"), "node-x2": ("h200x2-", None, "CERTIFIED"),
    "node-slow": ("degraded/h200x1-", None, "DEGRADED"), "node-abi": ("h200x2-", "grown", "NOT CERTIFIED"),
}


def recording(prefix: str) -> Path:
    from rmpeer.paths import transcripts_dir

    found = sorted(transcripts_dir().glob(f"{prefix}*.jsonl.gz"))
    if not found:
        pytest.skip(f"no recording {prefix}* in fixtures/transcripts/")
    return found[-1]


def certify_as(node: str, transcript: Path, out: Path, matrices: Path | None, verdict: str) -> dict:
    """`rmpeer certify --replay` (one small layout) as the host `node`; its certificate. It must
    exit with the one code of `verdict` (errors.py)."""
    from rmpeer.errors import EXIT_DEGRADED, EXIT_NOT_CERTIFIED, EXIT_OK

    want = {"CERTIFIED": EXIT_OK, "DEGRADED": EXIT_DEGRADED, "NOT CERTIFIED": EXIT_NOT_CERTIFIED}[verdict]
    env = dict(os.environ, RMPEER_NODE_NAME=node)
    if matrices is not None:
        env["RMPEER_MATRICES"] = str(matrices)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(transcript), "--layout",
                           "one-per-card", "--output", str(out)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == want, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads((out / "replay-certificate.json").read_text())


def host_of(results: Path) -> str:
    hosts = {l["value"] for p in results.glob("*-result.json") for l in json.loads(p.read_text())["labels"]
             if l["name"] == "rmpeer_host"}
    assert len(hosts) == 1, hosts
    return hosts.pop()


def as_host(run: Path, node: str, out: Path) -> None:
    """A copy of a certify --output folder as host `node` ran it: the node name replaced in
    every result (parameter, labels, history id) and file name made unique again."""
    import hashlib
    import uuid

    old_host = host_of(run / "allure-results")
    old_node = old_host.split(" (")[0]
    new_host = old_host.replace(old_node, node, 1)
    (out / "allure-results").mkdir(parents=True)
    renamed = {p.name: p.name.replace(p.name.split("-attachment")[0], str(uuid.uuid4()))
               for p in (run / "allure-results").glob("*-attachment*")}
    for path in (run / "allure-results").iterdir():
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if path.name.endswith("-result.json"):
            data = json.loads(text)
            data["uuid"] = str(uuid.uuid4())
            data["historyId"] = hashlib.md5((data.get("historyId", "") + new_host).encode()).hexdigest()
            for p in data.get("parameters", []):
                p["value"] = p["value"].replace(old_host, new_host)
            for label in data.get("labels", []):
                if label["value"] == old_host:
                    label["value"] = new_host
            text = json.dumps(data)
            for old, new in renamed.items():
                text = text.replace(old, new)
            (out / "allure-results" / f"{data['uuid']}-result.json").write_text(text, encoding="utf-8")
        elif path.name == "environment.properties":
            (out / "allure-results" / path.name).write_text(text.replace(f"host={old_node}", f"host={node}"))
        else:
            shutil.copyfile(path, out / "allure-results" / renamed.get(path.name, path.name))
    cert = json.loads((run / "replay-certificate.json").read_text())
    cert["node"] = node
    (out / "replay-certificate.json").write_text(json.dumps(cert))


@pytest.fixture(scope="module")
def fleet_runs(tmp_path_factory):
    """SLOW (~15 s): four real replays, each as its own node."""
    allure_or_skip()
    from rmpeer.report.browser import chromium_path

    if not chromium_path():
        pytest.skip("no Chromium to open the report: apt-get install chromium")
    tmp = tmp_path_factory.mktemp("fleet")
    runs = {}
    for node, (prefix, matrices, verdict) in FLEET_RUNS.items():
        grown = grown_struct_matrices(tmp / node) if matrices == "grown" else None
        runs[node] = {"dir": tmp / "runs" / node,
                      "cert": certify_as(node, recording(prefix), tmp / "runs" / node, grown, verdict)}
    verdicts = {node: r["cert"]["verdict"] for node, r in runs.items()}
    assert verdicts == {node: verdict for node, (_, _, verdict) in FLEET_RUNS.items()}, verdicts
    return {"tmp": tmp, "runs": runs}


def expected_hosts(run_dirs: dict) -> dict:
    """host -> (verdict, results written), from what the runs wrote (not from the report)."""
    out = {}
    for d in run_dirs.values():
        results = list((d / "allure-results").glob("*-result.json"))
        out[host_of(d / "allure-results")] = (json.loads((d / "replay-certificate.json").read_text())["verdict"],
                                             len(results))
    return out


def fleet_page(browser, html: Path, timeout: float = 120) -> float:
    """Open the report as a person does; seconds until the host table and Allure's totals show
    (the load event comes first: the host table is plain HTML before Allure's scripts)."""
    import time

    browser.open("about:blank")
    start = time.monotonic()
    browser._call("Page.navigate", session=True, url=html.as_uri())
    browser.wait_for("document.querySelector('[data-testid=rmpeer-hosts]')", timeout=60)
    table = time.monotonic() - start
    browser.wait_for("document.readyState === 'complete' && "
                     "document.querySelector('[data-testid=metadata-item-total]')", timeout=timeout)
    seconds = time.monotonic() - start
    print(f"{html.name}: {html.stat().st_size >> 10} KiB; host table shown after {table:.1f} s, "
          f"the whole report after {seconds:.1f} s")
    return seconds


def assert_fleet_page(browser, html: Path, hosts: dict) -> None:
    rows = browser.eval("[...document.querySelectorAll('[data-testid=rmpeer-host-row]')].map(r => "
                        "[r.dataset.host, r.children[1].innerText, r.innerText])")
    assert {host: verdict for host, verdict, _ in rows} == {h: v for h, (v, _) in hosts.items()}
    assert len(rows) == len(hosts)
    total = sum(n for _, n in hosts.values())
    assert browser.text("[data-testid=metadata-item-total] [data-testid=metadata-value]") == str(total)
    # nothing is a retry: every result written is shown as a result of its own
    shown = [json.loads(v) for k, v in embedded_files(html.read_text()).items()
             if k.startswith("data/test-results/")]
    assert len(shown) == total
    assert not [r["name"] for r in shown if r.get("isRetry") or r.get("retriesCount") or r.get("retries")]
    assert {r["environment"] for r in shown} == set(hosts)           # each result under its own host
    for r in shown:
        assert {"name": "parentSuite", "value": r["environment"]} in r["labels"]
    # the header of all hosts shows when, not a duration (Allure's would be the gap between the runs)
    header = re.search(r"\d{4} at \d+:\d\d:\d\d [AP]M.*", browser.text())
    assert header and "(" not in header.group(0), header
    # one environment (and block) per host in the picker
    browser.click("[data-testid=environment-picker-button]")
    browser.wait_for("document.querySelector('[data-testid=environment-picker-item]')")
    picker = browser.eval("[...document.querySelectorAll('[data-testid=environment-picker-item]')].map(e => e.innerText)")
    assert set(hosts) <= set(picker)
    browser.eval("document.querySelector('[data-testid=environment-picker-button]').click()")
    assert external_urls(html.read_text()) == [] and browser.outside_requests() == []


def allure_duration(seconds: float) -> str:
    """How Allure writes a duration, as a pattern: 2.6 s as "(2s 600ms)", 2 s as "(2s)" or
    "(2s 0ms)", and under a second the milliseconds alone, 0.9 s as "(900ms)" (a replayed
    quick run takes less than a second)."""
    whole, ms = divmod(round(seconds * 1000), 1000)
    if not whole:
        return rf"\({ms}ms\)"
    return rf"\({whole}s {ms}ms\)" if ms else rf"\({whole}s(?: 0ms)?\)"


def choose_host(browser, host: str) -> str:
    """Pick one host in the environment picker; the text of the page then."""
    browser.click("[data-testid=environment-picker-button]")
    browser.wait_for("document.querySelector('[data-testid=environment-picker-item]')")
    assert browser.eval(f"(() => {{ const e = [...document.querySelectorAll('[data-testid=environment-picker-item]')]"
                        f".find(e => e.innerText.trim() === {json.dumps(host)}); if (!e) return false; "
                        "e.querySelector('button').click(); return true; })()")
    browser.wait_for("document.body.innerText.includes('Variables')")
    return browser.text()


def test_x1_and_x2_in_one_report(fleet_runs, browser):
    runs = {n: fleet_runs["runs"][n]["dir"] for n in ("node-x1", "node-x2")}
    html = fleet_runs["tmp"] / "x1-x2.html"
    assert allure_html.main_report([str(d) for d in runs.values()], str(html), title="two hosts") == 0
    hosts = expected_hosts(runs)
    fleet_page(browser, html)
    header = browser.text("[data-testid=report-title]")
    assert header == "two hosts"
    assert_fleet_page(browser, html, hosts)
    # the environment block of one host: its own driver and verdict, and its own run's duration
    x2 = host_of(runs["node-x2"] / "allure-results")
    cert = fleet_runs["runs"]["node-x2"]["cert"]
    try:
        text = choose_host(browser, x2)
        assert "verdict" in text and cert["verdict"] in text and cert["host"]["driver_version"] in text
        assert re.search(allure_duration(cert["duration_s"]), text), text[:600]
    finally:    # the picked environment would carry over to the next page, failed or not
        browser.eval("localStorage.clear()")
    save_for_docs(browser, {"tmp": fleet_runs["tmp"]}, "report-fleet.png")


def test_fifty_hosts_in_one_report(fleet_runs, browser):
    folder = fleet_runs["tmp"] / "fleet-of-50"
    sources = list(fleet_runs["runs"].values())
    for i in range(50):
        as_host(sources[i % len(sources)]["dir"], f"node-{i:02d}", folder / f"node-{i:02d}")
    html = fleet_runs["tmp"] / "fleet-50.html"
    assert allure_html.main_report([str(folder)], str(html), title="fifty hosts") == 0   # a folder of folders
    hosts = expected_hosts({p.name: p for p in folder.iterdir()})
    assert len(hosts) == 50 and {v for v, _ in hosts.values()} == {"CERTIFIED", "DEGRADED", "NOT CERTIFIED"}
    # Shown whole, not timed (tests do not time): 4 s on an idle 2-core machine, 9 s beside four
    # busy loops; fleet_page prints what it took. Its wait is a hang guard, long enough for a CI
    # machine that runs every other test beside it.
    fleet_page(browser, html, timeout=240)
    assert_fleet_page(browser, html, hosts)
    assert browser.text("[data-testid=rmpeer-hosts-summary]").startswith("50 hosts: ")


def test_the_same_host_twice_is_refused(fleet_runs, tmp_path):
    run = fleet_runs["runs"]["node-x1"]["dir"]
    with pytest.raises(ConfigError, match="is in both"):
        allure_html.build_report([str(run), str(run / "allure-results")], tmp_path / "r.html")


# -- the labels every result carries, and the pieces of the fleet report --------------------------

def test_results_name_their_host_and_the_declared_check(tmp_path):
    """RMPEER_NODE_NAME names the host; rm_check(name, area=...) gives epic and feature."""
    (tmp_path / "test_marked.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.rm_check('read', area='read/write')\n"
        "def test_marked():\n    pass\n\n"
        "def test_plain():\n    pass\n")
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "pytest", str(tmp_path / "test_marked.py"), "-q", "-p", "no:cacheprovider",
           *pytest_args(), "--alluredir", str(results)]
    done = subprocess.run(cmd, cwd=tmp_path, env=pytest_env(dict(os.environ, RMPEER_NODE_NAME="rack7-node3")),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    by_name = {}
    for path in results.glob("*-result.json"):
        r = json.loads(path.read_text())
        by_name[r["name"]] = ({l["name"]: l.get("value") for l in r["labels"]},
                           {p["name"]: p.get("value") for p in r["parameters"]})
    labels, params = by_name["read host"]       # its check and subject, not its function's name
    assert (labels["epic"], labels["feature"]) == ("read/write", "read")
    assert labels["parentSuite"] == labels["rmpeer_host"] == "rack7-node3" and "rack7-node3" in params["host"]
    labels, _ = by_name["test_plain"]
    assert labels["parentSuite"] == "rack7-node3"
    assert "epic" not in labels and "feature" not in labels     # no marker: no area or check is made up
    assert "host=rack7-node3" in (results / "environment.properties").read_text()


def fake_results(folder: Path, host: str | None, verdict: str | None = None) -> Path:
    folder.mkdir(parents=True)
    labels = [{"name": "rmpeer_host", "value": host}] if host else []
    (folder / "a-result.json").write_text(json.dumps({"name": "t", "status": "passed", "start": 1000, "stop": 3500,
                                                      "labels": labels}))
    (folder / "environment.properties").write_text("host=x\nreplay\\:h200x2.driver=580.159.04 open\n")
    if verdict:
        (folder.parent / "certificate.json").write_text(json.dumps(
            {"verdict": verdict, "reasons": ["r1"], "duration_s": 2.5, "host": {"driver_version": "580.1"}}))
    return folder


def test_result_folders_are_found_in_each_form_they_come(tmp_path):
    from rmpeer.report import hosts

    one = fake_results(tmp_path / "fleet" / "a" / "allure-results", "a (h200x2)", "CERTIFIED")
    two = fake_results(tmp_path / "fleet" / "b", "b (h200x2)")
    assert hosts.result_dirs([tmp_path / "fleet"]) == [one, two]                  # a folder of host folders
    assert hosts.result_dirs([one.parent, two]) == [one, two]                     # certify --output, or results
    found = hosts.collect([one, two])
    assert [(h.host, h.verdict, h.duration_s, h.driver) for h in found] == [
        ("a (h200x2)", "CERTIFIED", 2.5, "580.1"), ("b (h200x2)", NO_CERTIFICATE, None, "")]
    assert "no certificate" in found[1].reasons[0] and found[1].span_s == 2.5
    assert variables(found[0])["replay:h200x2.driver"] == "580.159.04 open"  # escapes read back
    with pytest.raises(ConfigError, match="no such folder"):
        hosts.result_dirs([tmp_path / "nowhere"])


def test_results_that_do_not_name_their_host_cannot_be_merged(tmp_path):
    from rmpeer.report import hosts

    with pytest.raises(ConfigError, match="do not name their host"):
        hosts.collect([fake_results(tmp_path / "old", None)])
