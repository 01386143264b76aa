"""The outputs a fleet reads, each rendered from a RunResult: JUnit XML, node_exporter's textfile
format, and one JSON line per run.

The RunResults are built here (the input); what each output must say is worked out from the
format's own rules and read back with an independent parser (xml.etree, prometheus-client's
text parser, json), never taken from the renderer. The end-to-end tests feed each renderer
the certificate of a real replay."""

from __future__ import annotations

import calendar
import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from rmpeer.errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK
from rmpeer.render import jsonline, junit, prometheus
from rmpeer.run import outputs
from rmpeer.paths import transcripts_dir
from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, UNFINISHED,
                           CheckResult, Finding, PairResult, RunResult)

pytestmark = pytest.mark.offline
RECORDINGS = sorted(transcripts_dir().glob("*.jsonl.gz"))


def card(i: int) -> dict:
    return {"index": i, "minor": i, "gpu_id": 6 + i, "pci": f"0000:0{i}:1a.0", "name": "NVIDIA H200",
            "uuid": f"GPU-0000000{i}-aaaa-bbbb-cccc-ddddeeeeffff"}


def run_result(node="gpu-node-07", verdict=NOT_CERTIFIED, **kw) -> RunResult:
    """A two-card run: 4 checks (one of each outcome), one finding of each severity."""
    base = dict(
        node=node, tier="quick", verdict=verdict, started="2026-11-30T00:36:50+00:00", duration_s=3.75,
        certificate_id="c-1234", version="0.1.0", target={"kind": "live"},
        host={"driver_version": "580.159.04", "flavour": "open", "cards": [card(0), card(1)]},
        topology={"name": "h200x2", "matched_by": "expected",
                  "floors": {"cross_card_gbps": 355, "same_card_gbps": 500, "bidirectional_gbps": 650}},
        checks=[CheckResult("read/one-per-card/s0->t1", "read", "read/write", "pair 0->1", "passed",
                            layout="one-per-card", duration_s=0.25),
                CheckResult("read/one-per-card/s1->t0", "read", "read/write", "pair 1->0", "failed",
                            reason="read s1->t0: 4096 bytes differ, first at 0x0 <card 1> & \x07bell",
                            layout="one-per-card", duration_s=0.5),
                CheckResult("setup:map/one-per-card/s0->t0", "setup:map", "setup", "pair 0->0", "skipped",
                            reason="the map is refused as the topology expects", layout="one-per-card"),
                CheckResult("host-facts", "host-facts", "host", "host", "error", reason="RM did not answer")],
        findings=[Finding("read", "pair 1->0", "the pattern", "4096 bytes differ", FAIL),
                  Finding("bandwidth-floor", "pair 0->1 read", "at least 355 GB/s", "120.0 GB/s", DEGRADE),
                  Finding("nvlink-active", "card 1", "18 links", "could not read the link state", UNFINISHED),
                  Finding("xid", "host", "no Xid", "none", INFO)],
        pairs=[PairResult("one-per-card", 0, 1, 0, 1, "read", True, 1 << 26),
               PairResult("one-per-card", 0, 1, 0, 1, "write", True, 1 << 26),
               PairResult("one-per-card", 1, 0, 1, 0, "read", False, 1 << 26),
               PairResult("one-per-card", 1, 0, 1, 0, "write", True, 1 << 26),
               PairResult("one-per-card", 0, 0, 0, 0, "read", None)],
        bandwidth=[{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": 120.0},
                   {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": 130.0},
                   {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": 360.5},
                   {"src_card": 1, "dst_card": 0, "op": "write", "bytes": 1 << 28, "gbps": 370.25}],
        links={"0": {"supported": 18, "active": 18}, "1": {"supported": 18, "active": [0, 1, 2]}},
        reasons=["read s1->t0: 4096 bytes differ", "bandwidth-floor: pair 0->1 read below 355 GB/s"])
    base.update(kw)
    return RunResult(**base)


# -- JUnit XML -----------------------------------------------------------------------------

def suites_of(xml: str) -> ET.Element:
    root = ET.fromstring(xml.encode())    # well-formed, or this raises
    assert root.tag == "testsuites"
    return root


def check_counts(element: ET.Element, cases: list[ET.Element]) -> None:
    """A reader trusts the counts: they must equal what the cases carry."""
    assert int(element.get("tests")) == len(cases)
    for attr, tag in (("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        assert int(element.get(attr)) == sum(1 for c in cases if c.find(tag) is not None), attr


def test_junit_one_testsuite_per_host_with_counts_that_match():
    results = [run_result("node-a"), run_result("node-b", verdict=CERTIFIED, checks=[], findings=[], reasons=[])]
    root = suites_of(junit.junit_xml(results))
    suites = root.findall("testsuite")
    assert [s.get("hostname") for s in suites] == ["node-a", "node-b"]
    for suite in suites:
        check_counts(suite, suite.findall("testcase"))
        assert float(suite.get("time")) == 3.75
        assert suite.get("timestamp") == "2026-11-30T00:36:50"      # JUnit's timestamp has no zone
    check_counts(root, root.findall("testsuite/testcase"))
    # node-a: 4 checks + the degraded and the incomplete finding (not fail, not info) + the verdict
    assert int(suites[0].get("tests")) == 4 + 2 + 1
    assert int(suites[1].get("tests")) == 1 and suites[1].find("testcase/failure") is None   # CERTIFIED: clean


def test_junit_properties_name_driver_sku_certificate_tier_and_verdict():
    suite = suites_of(junit.junit_xml([run_result()])).find("testsuite")
    props = [(p.get("name"), p.get("value")) for p in suite.findall("properties/property")]
    as_dict = dict(props)
    assert as_dict["driver"] == "580.159.04 (open)"
    assert as_dict["sku"] == "2 x NVIDIA H200"
    assert (as_dict["certificate_id"], as_dict["tier"], as_dict["verdict"]) == ("c-1234", "quick", NOT_CERTIFIED)
    assert [v for k, v in props if k == "reason"] == run_result().reasons
    assert "replay" not in as_dict


def test_junit_cases_carry_the_reason_text():
    suite = suites_of(junit.junit_xml([run_result()])).find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    failed = cases["read/one-per-card/s1->t0"]
    assert failed.get("classname") == "rmpeer.read-write.one-per-card"
    assert failed.get("time") == "0.500"
    # the text survives escaping; the BEL byte XML cannot carry is replaced, not dropped silently
    assert failed.find("failure").text == "read s1->t0: 4096 bytes differ, first at 0x0 <card 1> & \ufffdbell"
    assert failed.find("failure").get("message").startswith("read s1->t0: 4096 bytes differ")
    assert cases["setup:map/one-per-card/s0->t0"].find("skipped").get("message") == \
        "the map is refused as the topology expects"
    assert cases["host-facts"].find("error").text == "RM did not answer"
    passed = cases["read/one-per-card/s0->t1"]
    assert list(passed) == []
    degraded = cases["bandwidth-floor: pair 0->1 read"].find("failure")
    assert degraded.get("type") == "DEGRADED" and "expected at least 355 GB/s, found 120.0 GB/s" in degraded.text
    assert cases["nvlink-active: card 1"].find("error").get("type") == "INCOMPLETE"
    assert "xid: host" not in cases                                    # info never shows as a case
    verdict = cases["verdict"].find("failure")
    assert verdict.get("type") == NOT_CERTIFIED and verdict.text.splitlines() == [NOT_CERTIFIED, *run_result().reasons]


def test_junit_shows_an_outcome_it_does_not_know_as_an_error():
    """A check outcome outside pass, fail, error and skip (a newer writer's, or a broken one)
    is not a pass to a JUnit reader: the case carries an <error> naming it."""
    result = run_result(verdict=CERTIFIED, findings=[], checks=[
        CheckResult("read/one-per-card/s0->t1", "read", "read/write", "pair 0->1", "interrupted",
                    reason="cut by SIGTERM", layout="one-per-card")])
    case = next(c for c in suites_of(junit.junit_xml([result])).iter("testcase") if c.get("name").startswith("read/"))
    error = case.find("error")
    assert error is not None and "interrupted" in error.get("message", "") + (error.text or ""), ET.tostring(case)

@pytest.mark.parametrize("verdict, tag", [(DEGRADED, "failure"), (INCOMPLETE, "error"), (CERTIFIED, None)])
def test_junit_verdict_case_never_lets_an_uncertified_host_look_clean(verdict, tag):
    """A DEGRADED or INCOMPLETE host with every check passing still fails one case."""
    result = run_result(verdict=verdict, checks=[run_result().checks[0]], findings=[])
    cases = suites_of(junit.junit_xml([result])).findall("testsuite/testcase")
    bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
    if tag is None:
        assert bad == []
    else:
        assert [c.get("name") for c in bad] == ["verdict"] and bad[0].find(tag).get("type") == verdict


def test_junit_a_replay_says_so_and_names_the_recorded_host(tmp_path):
    result = run_result(target={"kind": "replay", "recorded_host": "h200-rack3", "transcript": "x.jsonl.gz"})
    path = outputs.write_junit([result], tmp_path / "out" / "junit.xml")
    assert [p.name for p in path.parent.iterdir()] == ["junit.xml"]      # no temp file left behind
    suite = suites_of(path.read_text()).find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert "replay of a recording" in props["replay"] and props["recorded_host"] == "h200-rack3"
    assert suite.get("hostname") == "gpu-node-07" and "replay of h200-rack3" in suite.get("name")


def test_junit_of_no_result_is_an_empty_valid_document():
    root = suites_of(junit.junit_xml([]))
    assert root.findall("testsuite") == [] and root.get("tests") == "0"


def test_junit_mutant_without_the_xml_character_filter_is_caught(monkeypatch):
    """Kept as a mutation test: without the filter the BEL byte makes the file unreadable."""
    import re

    monkeypatch.setattr(junit, "_NOT_XML", re.compile("(?!x)x"))
    with pytest.raises(ET.ParseError):
        suites_of(junit.junit_xml([run_result()]))


# -- Prometheus textfile ---------------------------------------------------------------------

def samples(text: str) -> dict[str, list]:
    """metric name -> [(labels, value)] as Prometheus' text format defines them."""
    out: dict = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


def value(series: dict, name: str, **labels) -> float:
    found = [v for l, v in series.get(name, []) if all(l.get(k) == str(x) for k, x in labels.items())]
    assert len(found) == 1, (name, labels, series.get(name))
    return found[0]


def assert_series(series: dict) -> None:
    """What run_result() must give, by the rules: GB/s are 1e9 bytes/s, medians, per-check
    aggregation, dcgm-exporter's labels."""
    assert value(series, "rmpeer_certified", tier="quick", verdict=NOT_CERTIFIED) == 0
    assert value(series, "rmpeer_check_passed", check="read") == 0          # one of two failed
    assert "setup:map" not in {l["check"] for l, _ in series["rmpeer_check_passed"]}   # only skipped: no series
    assert value(series, "rmpeer_check_passed", check="host-facts") == 0    # an error
    assert value(series, "rmpeer_p2p_copy_ok", gpu=0, peer_gpu=1) == 1
    assert value(series, "rmpeer_p2p_copy_ok", gpu=1, peer_gpu=0) == 0      # the read differed
    assert not [l for l, _ in series["rmpeer_p2p_copy_ok"] if l["gpu"] == l["peer_gpu"]]   # never run: no series
    assert value(series, "rmpeer_p2p_bandwidth_bytes_per_second", gpu=0, peer_gpu=1, op="read") == 130e9  # median
    assert value(series, "rmpeer_p2p_bandwidth_bytes_per_second", gpu=1, peer_gpu=0, op="write") == 370.25e9
    assert value(series, "rmpeer_bandwidth_floor_bytes_per_second", op="read") == 355e9
    assert value(series, "rmpeer_bandwidth_floor_bytes_per_second", op="write") == 355e9
    assert value(series, "rmpeer_bandwidth_floor_bytes_per_second", op="same-card") == 500e9
    assert value(series, "rmpeer_bandwidth_floor_bytes_per_second", op="bidirectional") == 650e9
    assert value(series, "rmpeer_nvlink_active_links", gpu=0) == 18
    assert value(series, "rmpeer_nvlink_active_links", gpu=1) == 3
    assert value(series, "rmpeer_run_duration_seconds") == 3.75
    # 2026-11-30T00:36:50Z plus the run's 3.75 s (when it finished), by the calendar
    assert value(series, "rmpeer_last_run_timestamp_seconds") == calendar.timegm((2026, 11, 30, 0, 36, 50)) + 3.75
    assert value(series, "rmpeer_build_info", version="0.1.0", driver_version="580.159.04") == 1
    # dcgm-exporter's label names and spelling, so the series join with DCGM's
    one = next(l for l, _ in series["rmpeer_nvlink_active_links"] if l["gpu"] == "1")
    assert one == {"gpu": "1", "UUID": "GPU-00000001-aaaa-bbbb-cccc-ddddeeeeffff",
                   "pci_bus_id": "00000000:01:1A.0", "modelName": "NVIDIA H200"}
    assert not any("host" in l or "instance" in l for rows in series.values() for l, _ in rows)


def test_prometheus_textfile_series_and_values(tmp_path):
    path = outputs.write_textfile(run_result(), tmp_path / "textfile")
    assert path == tmp_path / "textfile" / "rmpeer.prom"
    assert sorted(p.name for p in path.parent.iterdir()) == ["rmpeer.prom"]     # the temp file was renamed
    assert_series(samples(path.read_text()))


def test_prometheus_textfile_is_replaced_not_rewritten(tmp_path):
    """A scrape that opened the old file keeps reading the old file: a new inode, by rename."""
    first = outputs.write_textfile(run_result(), tmp_path)
    with open(first) as reader:
        old = reader.read(64)
        second = outputs.write_textfile(run_result(verdict=CERTIFIED), tmp_path)
        assert old and reader.read() != "" and first.stat().st_ino != Path(f"/proc/self/fd/{reader.fileno()}").stat().st_ino
    assert value(samples(second.read_text()), "rmpeer_certified", tier="quick", verdict=CERTIFIED) == 1


def test_prometheus_of_a_run_with_no_cards_and_no_figures(tmp_path):
    result = RunResult(node="n", verdict=INCOMPLETE, duration_s=0.5)
    series = samples(outputs.write_textfile(result, tmp_path).read_text())
    assert value(series, "rmpeer_certified", tier="full", verdict=INCOMPLETE) == 0
    assert "rmpeer_p2p_copy_ok" not in series and "rmpeer_last_run_timestamp_seconds" not in series


@pytest.mark.parametrize("mutant", ["no GB conversion", "any check passes", "copy ok by last"])
def test_prometheus_mutants_are_caught(monkeypatch, tmp_path, mutant):
    """Kept as mutation tests: each breaks one rule, and assert_series must notice."""
    if mutant == "no GB conversion":
        monkeypatch.setattr(prometheus, "GB", 1)
    elif mutant == "any check passes":
        monkeypatch.setattr(prometheus, "check_passed", lambda r: {c.check: int(any(
            d.outcome == "passed" for d in r.checks if d.check == c.check)) for c in r.checks})
    else:
        monkeypatch.setattr(prometheus, "copy_ok", lambda r: {(p.src_card, p.dst_card): int(bool(p.ok))
                                                             for p in r.pairs if p.ok is not None})
    with pytest.raises(AssertionError):
        assert_series(samples(outputs.write_textfile(run_result(), tmp_path).read_text()))


@pytest.mark.parametrize("writer", ["junit", "prometheus"])
def test_a_place_that_cannot_be_written_is_one_clear_error(tmp_path, writer):
    """A user's error (a file where a folder must be): a ConfigError (exit 2) naming the option."""
    from rmpeer.errors import ConfigError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=f"--{writer} .*a-file"):
        if writer == "junit":
            outputs.write_junit([run_result()], blocker / "junit.xml")
        else:
            outputs.write_textfile(run_result(), blocker / "textfile")
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


# -- JSON Lines --------------------------------------------------------------------------------

@pytest.mark.parametrize("verdict, code, name", [(CERTIFIED, EXIT_OK, "CERTIFIED"),
                                                 (NOT_CERTIFIED, EXIT_NOT_CERTIFIED, "NOT_CERTIFIED"),
                                                 (DEGRADED, EXIT_DEGRADED, "DEGRADED"),
                                                 (INCOMPLETE, EXIT_INCOMPLETE, "INCOMPLETE")])
def test_json_line_is_one_line_a_scheduler_reads(verdict, code, name):
    result = run_result(verdict=verdict, reasons=["two\nlines", "caf\u00e9"])
    line = jsonline.json_line(result, Path("/var/lib/rmpeer/certificate.json"))
    assert "\n" not in line
    record = json.loads(line)
    assert (record["node"], record["tier"], record["verdict"]) == ("gpu-node-07", "quick", verdict)
    assert record["reasons"] == ["two\nlines", "caf\u00e9"] and record["duration_s"] == 3.75
    assert record["certificate"] == "/var/lib/rmpeer/certificate.json"
    assert (record["exit_code"], record["exit"]) == (code, name)


def test_an_unknown_verdict_is_incomplete_never_certified():
    """Issue 27 row 13: a verdict the table does not know (a newer or a broken writer's) reads
    as INCOMPLETE, exit 5 (errors.py), as exit_code's docstring says; never as a pass."""
    assert (RunResult(verdict="BOGUS").exit_code, RunResult(verdict="BOGUS").exit_name) == (EXIT_INCOMPLETE,
                                                                                          "INCOMPLETE")
    record = json.loads(jsonline.json_line(run_result(verdict="BOGUS"), None))
    assert (record["verdict"], record["exit_code"], record["exit"]) == ("BOGUS", EXIT_INCOMPLETE, "INCOMPLETE")


def test_json_lines_of_many_runs_read_back_one_per_line(tmp_path):
    log = tmp_path / "rmpeer.jsonl"
    with log.open("a", encoding="utf-8") as f:
        for node in ("a", "b", "c"):
            f.write(jsonline.json_line(run_result(node), None) + "\n")
    assert [json.loads(l)["node"] for l in log.read_text(encoding="utf-8").splitlines()] == ["a", "b", "c"]


# -- end to end: each renderer fed by a real replay -------------------------------------------

# The recording of a known kind (fixtures/transcripts/README.md): `certify --quick --record` on
# the 2 x H200 host, CERTIFIED there (109 passed, 1 skipped). What every output must say of its
# replay comes from that, never from the replay's own certificate.
QUICK = "h200x2-20261130T005408Z.jsonl.gz"
QUICK_TIER, QUICK_VERDICT, QUICK_CARDS = "quick", CERTIFIED, 2


@pytest.fixture(scope="module")
def replayed(tmp_path_factory) -> tuple[RunResult, Path]:
    """`rmpeer certify --replay` of the quick recording, read back as a RunResult: it must
    exit 0, as its recorded run did."""
    recording = transcripts_dir() / QUICK
    if not recording.is_file():
        pytest.skip(f"no {QUICK} in fixtures/transcripts/")
    out = tmp_path_factory.mktemp("replay")
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording),
                           "--output", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == EXIT_OK, done.stdout[-2000:] + done.stderr[-2000:]
    path = out / "replay-certificate.json"
    return RunResult.load(path), path


def every_card_pair() -> set:
    """Each layout of the quick tier copies between every two sessions, same card included."""
    return {(s, t) for s in range(QUICK_CARDS) for t in range(QUICK_CARDS)}


def test_junit_of_a_replay(replayed):
    result, _ = replayed
    suite = suites_of(junit.junit_xml([result])).find("testsuite")
    cases = suite.findall("testcase")
    check_counts(suite, cases)
    assert len(cases) >= len(result.checks) + 1 and suite.get("hostname") == result.node
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["verdict"] == QUICK_VERDICT and props["sku"] == "2 x NVIDIA H200" and "replay" in props


def test_prometheus_of_a_replay(replayed, tmp_path):
    result, _ = replayed
    series = samples(outputs.write_textfile(result, tmp_path).read_text())
    assert value(series, "rmpeer_certified", tier=QUICK_TIER, verdict=QUICK_VERDICT) == 1
    copied = {(int(l["gpu"]), int(l["peer_gpu"])): v for l, v in series["rmpeer_p2p_copy_ok"]}
    assert copied == {pair: 1 for pair in every_card_pair()}
    uuids = {c["uuid"] for c in result.host["cards"]}
    assert {l["UUID"] for l, _ in series["rmpeer_p2p_copy_ok"]} <= uuids
    assert all(v > 1e9 for _, v in series["rmpeer_p2p_bandwidth_bytes_per_second"])   # bytes/s, not GB/s


def test_the_reports_pair_matrix_of_a_replay(replayed):
    """certify files the card x card matrix as one more Allure result: a cell for each card pair
    the certificate says was copied through, with the certificate's copy counts."""
    result, path = replayed
    results = path.parent / "allure-results"
    found = [json.loads(p.read_text()) for p in results.glob("*-result.json")]
    matrix = [r for r in found if r.get("fullName") == "rmpeer.pair_matrix"]
    assert len(matrix) == 1
    assert {l["name"]: l["value"] for l in matrix[0]["labels"]}["parentSuite"].startswith(result.node)
    svg = ET.fromstring((results / matrix[0]["attachments"][0]["source"]).read_text())
    tested = {e.get("data-testid") for e in svg.iter() if (e.get("data-testid") or "").startswith("bw-cell-")
              and e.get("data-status") != "none"}
    copied = {(p.src_card, p.dst_card) for p in result.pairs if p.ok is not None}
    assert copied and tested >= {f"bw-cell-{s}-{t}" for s, t in copied}
    for (s, t) in copied:
        cell = next(e for e in svg.iter() if e.get("data-testid") == f"bw-cell-{s}-{t}")
        if any(p.ok is False for p in result.pairs if (p.src_card, p.dst_card) == (s, t)):
            assert cell.get("data-status") == "fail", (s, t)    # a failed copy is never drawn as passed


def test_json_line_of_a_replay(replayed):
    result, path = replayed
    record = json.loads(jsonline.json_line(result, path))
    assert (record["tier"], record["verdict"], record["exit_code"]) == (QUICK_TIER, QUICK_VERDICT, EXIT_OK)
    assert record["certificate"] == str(path)
    assert record["target"] == "replay" and math.isclose(record["duration_s"], result.duration_s, abs_tol=1e-3)
