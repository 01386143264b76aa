"""rmpeer.prom as a real Prometheus node_exporter reads it: Debian's prometheus-node-exporter,
started here on 127.0.0.1 with only its textfile collector, scraped over HTTP.

node_exporter re-parses the file strictly on every scrape and reports a file it cannot read
as node_textfile_scrape_error 1 (and drops its series), so a scrape that shows our series
with that error at 0 proves the format as a fleet's Prometheus will see it. Under CI (env CI
set) a missing node_exporter fails the test; elsewhere it skips, saying how to install it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lacking import lacking
from rmpeer.run import outputs
from rmpeer.model.result import CERTIFIED

from test_outputs import (QUICK_TIER, QUICK_VERDICT, assert_series, every_card_pair, replayed,  # noqa: F401
                          run_result, value)  # (replayed: a fixture)

EXPORTER = "/usr/bin/prometheus-node-exporter"
INSTALL = "apt-get install prometheus-node-exporter"


def installed(name: str, path: str, install: str, what: str) -> str:
    """The tool `name` (on PATH, else at `path`); missing: skip, or under CI fail (lacking)."""
    exe = shutil.which(name) or (path if os.access(path, os.X_OK) else None)
    if not exe:
        message = f"no {name} ({path}): {install}"
        lacking(message, f"CI must {what}: {message}")
    return exe


def exporter_or_skip() -> str:
    return installed("prometheus-node-exporter", EXPORTER, INSTALL, "test with a real node_exporter")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NodeExporter:
    """node_exporter with only the textfile collector, reading one folder."""

    def __init__(self, directory: Path):
        self.port = free_port()
        self.log = directory.parent / "node_exporter.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [exporter_or_skip(), f"--web.listen-address=127.0.0.1:{self.port}", "--collector.disable-defaults",
                 "--collector.textfile", f"--collector.textfile.directory={directory}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.scrape()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"node_exporter did not serve on 127.0.0.1:{self.port}: {self.log.read_text()[-2000:]}")
                time.sleep(0.1)

    def scrape(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            return r.read().decode()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def exporter(tmp_path):
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    node = NodeExporter(textfiles)
    try:
        yield node, textfiles
    finally:
        node.stop()      # also when the test failed


def scraped(node: NodeExporter) -> dict:
    out: dict = {}
    for family in text_string_to_metric_families(node.scrape()):
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def test_node_exporter_serves_our_series(exporter):
    node, textfiles = exporter
    before = scraped(node)
    assert not [n for n in before if n.startswith("rmpeer_")]          # nothing until we write
    outputs.write_textfile(run_result(), textfiles)
    series = scraped(node)
    assert value(series, "node_textfile_scrape_error") == 0, Path(node.log).read_text()[-2000:]
    assert_series(series)
    assert value(series, "node_textfile_mtime_seconds", file=str(textfiles / "rmpeer.prom")) > 0
    # a second run replaces the file; the next scrape shows only the new run's verdict
    outputs.write_textfile(run_result(verdict=CERTIFIED), textfiles)
    series = scraped(node)
    assert [l["verdict"] for l, _ in series["rmpeer_certified"]] == [CERTIFIED]


def test_node_exporter_reports_a_file_it_cannot_read(exporter):
    """The oracle itself: a malformed .prom file shows as a scrape error, so 0 above means read."""
    node, textfiles = exporter
    (textfiles / "rmpeer.prom").write_text("rmpeer_certified{tier=\"quick\" 1\n")
    assert value(scraped(node), "node_textfile_scrape_error") == 1


def test_node_exporter_serves_a_replayed_run(replayed, exporter):
    result, _ = replayed
    node, textfiles = exporter
    outputs.write_textfile(result, textfiles)
    series = scraped(node)
    assert value(series, "node_textfile_scrape_error") == 0
    assert value(series, "rmpeer_certified", tier=QUICK_TIER, verdict=QUICK_VERDICT) == 1
    assert value(series, "rmpeer_run_duration_seconds") == result.duration_s
    # a CERTIFIED quick run copied between every two cards, same card included, and every copy held
    copied = {(int(l["gpu"]), int(l["peer_gpu"])): v for l, v in series["rmpeer_p2p_copy_ok"]}
    assert copied == {pair: 1 for pair in every_card_pair()}
    assert value(series, "rmpeer_build_info", version=result.version,
                 driver_version=result.host["driver_version"]) == 1


# dcgm-exporter's own label names (UUID, modelName, Hostname), kept so that rmpeer's series join
# DCGM's in PromQL and Grafana; promtool's lint asks for snake_case and says so for each series
# that carries them, as it does for dcgm-exporter's own output. Everything else must be clean.
DCGM_CAMEL = "label names should be written in 'snake_case' not 'camelCase'"
PROMTOOL = "/usr/bin/promtool"


def promtool_or_skip() -> str:
    return installed("promtool", PROMTOOL, "apt-get install prometheus", "check the metrics with a real promtool")


def test_promtool_check_metrics_passes_but_for_dcgm_exporter_s_label_names(replayed, tmp_path):
    """`promtool check metrics` on a replayed run's rmpeer.prom (per-pair GB/s gauges
    included): no parse error (exit 1), and its only lint findings are dcgm-exporter's
    camelCase label names, one per series that carries them."""
    exe = promtool_or_skip()
    result, _ = replayed
    outputs.write_textfile(result, tmp_path)
    text = (tmp_path / "rmpeer.prom").read_text()
    assert "rmpeer_p2p_bandwidth_bytes_per_second{" in text and 'peer_gpu="1"' in text
    done = subprocess.run([exe, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    findings = [x for x in (done.stdout + done.stderr).splitlines() if x.strip()]
    assert done.returncode in (0, 3), findings            # 1: a parse error
    assert all(x.endswith(DCGM_CAMEL) for x in findings), [x for x in findings if not x.endswith(DCGM_CAMEL)]
    camel = {x.split(" ", 1)[0] for x in findings}
    carrying = {line.split("{", 1)[0] for line in text.splitlines()
                if not line.startswith("#") and ('UUID="' in line or 'modelName="' in line or 'Hostname="' in line)}
    assert camel == carrying


def test_promtool_sees_a_broken_file():
    """The oracle itself: promtool fails a file it cannot parse (exit 1), as node_exporter does."""
    exe = promtool_or_skip()
    done = subprocess.run([exe, "check", "metrics"], input='rmpeer_certified{tier="quick" 1\n', capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
