"""Tests that kill the mutants of rmpeer/render/allure.py (docs/mutation.md): the Allure results of
a RunResult built by hand, each written out here as Allure's result format has its fields
(uuid, historyId, testCaseId, name, fullName, status, stage, start, stop, parameters, labels,
attachments of name, source and type, statusDetails' message and trace) and the module's
docstrings say they are filled (uuids the UUID5 of "rmpeer:<certificate id>:<key>" in the URL
namespace, made here with Python's uuid), never taken from check_entries."""

import uuid
import xml.etree.ElementTree as ET

import pytest

from rmpeer.model.result import CheckResult, LayoutResult, RunResult
from rmpeer.render.allure import check_entries, entry

pytestmark = pytest.mark.offline

HOST = "hostA"
RUN = (100000, 200000)
DRIVER = {"name": "driver", "value": "580.1 (open), ABI 580.1.0"}
LIVE = {"name": "kind", "value": "hardware conformance"}
FILED = [{"name": "parentSuite", "value": HOST}, {"name": "rmpeer_host", "value": HOST}]


def u(key: str, certificate: str = "c-9") -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"rmpeer:{certificate}:{key}"))


def run(checks, **kw) -> RunResult:
    base = dict(certificate_id="c-9", target={"kind": "live", "label": "h200x2"},
                host={"driver_version": "580.1", "flavour": "open", "abi_release": "580.1.0"},
                layouts=[LayoutResult("one-per-card", [2, 3], 64 << 20)],
                bandwidth=[{"src_card": 1, "dst_card": 0, "op": "read", "bytes": 256 << 20, "gbps": 1.0},
                           {"src_card": 0, "dst_card": 1, "op": "write", "bytes": 256 << 20, "gbps": 2.0},
                           {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 256 << 20, "gbps": 395.14},
                           {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 20, "gbps": 9.0}],
                clocks={"idle": {"0": 345}}, links={"1": {"active": 18}}, checks=checks)
    base.update(kw)
    return RunResult(**base)


def entries(checks, **kw):
    return check_entries(run(checks, **kw), HOST, RUN)


def test_a_pair_check_of_a_layout_written_out():
    c = CheckResult("read/one-per-card/s0->t1", "read", "read/write", "pair 0->1", "passed", layout="one-per-card",
                    s=0, t=1, span=(150.5, 160.25))
    key = "check:read/one-per-card/s0->t1"
    assert entries([c]) == [({
        "uuid": u(key), "historyId": f"{key}:{HOST}", "testCaseId": key,
        "name": "read one-per-card s0 (card 2) -> t1 (card 3)", "fullName": key, "status": "passed",
        "stage": "finished", "start": 150500, "stop": 160250,
        "parameters": [{"name": "host", "value": HOST}, {"name": "topology", "value": "h200x2"},
                       {"name": "layout", "value": "one-per-card [2, 3]"}, {"name": "extent", "value": "64 MiB"},
                       {"name": "pair", "value": "s0->t1"}, {"name": "card(s)", "value": "2"},
                       {"name": "card(t)", "value": "3"}, DRIVER],
        "labels": [{"name": "epic", "value": "read/write"}, {"name": "feature", "value": "read"},
                   {"name": "story", "value": "one-per-card"}, LIVE, *FILED],
        "attachments": []}, [])]


def test_a_bandwidth_floor_check_names_its_figure_written_out():
    c = CheckResult("bandwidth-floor/read 0->1", "bandwidth-floor", "fitness", "read 0->1", "failed",
                    reason="below floor")
    key = "check:bandwidth-floor/read 0->1"
    assert entries([c]) == [({
        "uuid": u(key), "historyId": f"{key}:{HOST}", "testCaseId": key,
        "name": "bandwidth-floor read 0->1: 395.1 GB/s (256 MiB)", "fullName": key, "status": "failed",
        "stage": "finished", "start": 100001, "stop": 100001,
        "parameters": [{"name": "host", "value": HOST}, {"name": "topology", "value": "h200x2"},
                       {"name": "figure", "value": "read 0->1"}, {"name": "size", "value": "256 MiB"}, DRIVER],
        "labels": [{"name": "epic", "value": "fitness"}, {"name": "feature", "value": "bandwidth-floor"}, LIVE, *FILED],
        "attachments": [],
        "statusDetails": {"message": "below floor", "trace": "below floor"}, "description": "below floor"}, [])]


def test_a_card_check_attaches_its_links_and_the_decoded_call_written_out():
    c = CheckResult("nvlink-errors/card 1", "nvlink-errors", "", "card 1", "error", reason="x", detail="call decoded")
    key = "check:nvlink-errors/card 1"
    links = (u(f"attachment:{key}:card 1 links") + "-attachment.json")
    call = (u(f"attachment:{key}:the call, decoded") + "-attachment.txt")
    files = [("card 1 links", links, "application/json", '{\n "active": 18\n}'),
             ("the call, decoded", call, "text/plain", "call decoded")]
    assert entries([c]) == [({
        "uuid": u(key), "historyId": f"{key}:{HOST}", "testCaseId": key, "name": "nvlink-errors card 1",
        "fullName": key, "status": "broken", "stage": "finished", "start": 100001, "stop": 100001,
        "parameters": [{"name": "host", "value": HOST}, {"name": "topology", "value": "h200x2"},
                       {"name": "card", "value": "card 1"}, DRIVER],
        "labels": [{"name": "feature", "value": "nvlink-errors"}, LIVE, *FILED],
        "attachments": [{"name": "card 1 links", "source": links, "type": "application/json"},
                        {"name": "the call, decoded", "source": call, "type": "text/plain"}],
        "statusDetails": {"message": "x", "trace": "call decoded"}, "description": "call decoded"}, files)]


@pytest.mark.parametrize("links, text", [({1: {"active": 2}}, '{\n "active": 2\n}'), ({}, "null")])
def test_links_kept_under_a_number_or_none_at_all(links, text):
    c = CheckResult("e", "nvlink-errors", "", "card 1", "passed")
    [(_, files)] = entries([c], links=links)
    assert [f[3] for f in files] == [text]


def test_a_card_subject_that_is_no_number_attaches_no_links():
    c = CheckResult("e", "nvlink-errors", "", "card x", "passed")
    [(_, files)] = entries([c])
    assert [f[3] for f in files] == ["null"]


def test_the_clocks_check_attaches_the_readings_and_a_failure_rmpeer_did_not_expect_is_broken():
    c = CheckResult("clocks", "clocks", "fitness", "host", "failed", unexpected=True)
    [(result, files)] = entries([c])
    name = u("attachment:check:clocks:clocks") + "-attachment.json"
    assert result["status"] == "broken" and "statusDetails" not in result and "description" not in result
    assert files == [("clocks", name, "application/json", '{\n "idle": {\n  "0": 345\n }\n}')]


def test_host_facts_attach_the_facts_and_the_p2p_matrix_when_they_are_whole():
    host = {"driver_version": "580.1", "flavour": "open", "version_source": "proc"}
    c = CheckResult("host-facts", "host-facts", "host", "host", "skipped", reason="r")
    [(result, files)] = entries([c], host=host)
    assert result["status"] == "skipped"
    assert [(f[0], f[1], f[2]) for f in files] == [
        ("host facts", u("attachment:check:host-facts:host facts") + "-attachment.json", "application/json"),
        ("P2P capability matrix", u("attachment:check:host-facts:P2P capability matrix") + "-attachment.svg",
         "image/svg+xml")]
    assert files[0][3] == '{\n "driver_version": "580.1",\n "flavour": "open",\n "version_source": "proc"\n}'
    assert ET.fromstring(files[1][3]).tag.endswith("svg")


def test_host_facts_that_are_not_whole_attach_the_facts_alone():
    c = CheckResult("host-facts", "host-facts", "host", "host", "passed")
    [(_, files)] = entries([c])
    assert [f[0] for f in files] == ["host facts"]


def test_no_driver_no_driver_parameter_and_an_outcome_allure_does_not_know_is_unknown():
    c = CheckResult("odd", "odd", "host", "host", "weird")
    [(result, _)] = entries([c], host={}, target={})
    assert result["status"] == "unknown"
    assert result["parameters"] == [{"name": "host", "value": HOST}, {"name": "topology", "value": ""}]


def test_a_replay_labels_its_recording():
    c = CheckResult("odd", "odd", "", "host", "passed")
    [(result, _)] = entries([c], target={"kind": "replay", "transcript": "x.jsonl.gz"})
    assert result["labels"] == [{"name": "feature", "value": "odd"},
                                {"name": "replay", "value": "x.jsonl.gz"},
                                {"name": "kind", "value": "request regression (replay)"},
                                {"name": "tag", "value": "request regression (replay)"}, *FILED]
    [(result, _)] = entries([c], target={"kind": "replay"})
    assert result["labels"][1] == {"name": "replay", "value": ""}


@pytest.mark.parametrize("span, start, stop", [
    ((150.5, 160.25), 150500, 160250),
    ((300.0, 400.0), 200000, 200000),        # past the run's end: at its end
    ((50.0, 60.0), 100001, 100001),          # before its start: just after it
    ((150.0, 120.0), 150000, 150000),        # a stop before the start: at the start
    ([150, 151], 150000, 151000),
    ((150.0,), 100001, 100001), ((150.0, 151.0, 152.0), 100001, 100001), ((150.0, "x"), 100001, 100001),
    ("ab", 100001, 100001), (None, 100001, 100001)])
def test_a_checks_span_sits_inside_the_runs(span, start, stop):
    c = CheckResult("odd", "odd", "host", "host", "passed", span=span)
    [(result, _)] = entries([c])
    assert (result["start"], result["stop"]) == (start, stop)


def test_a_layout_check_of_a_layout_the_run_did_not_list():
    c = CheckResult("read/x/s0->t1", "read", "read/write", "pair 0->1", "passed", layout="x", s=0, t=1)
    [(result, _)] = entries([c])
    assert result["name"] == "read pair 0->1"
    assert result["parameters"][2:] == [{"name": "layout", "value": "x"}, {"name": "pair", "value": "s0->t1"}, DRIVER]


def test_a_pair_past_the_layouts_cards_names_no_card():
    c = CheckResult("read/one-per-card/s0->t2", "read", "read/write", "pair 0->2", "passed", layout="one-per-card",
                    s=0, t=2)
    [(result, _)] = entries([c])
    assert result["name"] == "read pair 0->2"
    assert result["parameters"][4:] == [{"name": "pair", "value": "s0->t2"}, DRIVER]
    c = CheckResult("read/one-per-card/s2->t0", "read", "read/write", "pair 2->0", "passed", layout="one-per-card",
                    s=2, t=0)
    assert entries([c])[0][0]["name"] == "read pair 2->0"


def test_a_figure_of_no_size_or_no_figure():
    bw = [{"src_card": 0, "dst_card": 1, "op": "read", "gbps": 12.25}]
    c = CheckResult("b", "bandwidth-floor", "fitness", "read 0->1", "passed")
    [(result, _)] = entries([c], bandwidth=bw)
    assert result["name"] == "bandwidth-floor read 0->1: 12.2 GB/s (its size)"
    assert result["parameters"][2:] == [{"name": "figure", "value": "read 0->1"}, DRIVER]
    [(result, _)] = entries([c], bandwidth=[{"src_card": 0, "dst_card": 1, "op": "read", "gbps": None}])
    assert result["name"] == "bandwidth-floor read 0->1"
    [(result, _)] = entries([CheckResult("b", "bandwidth-floor", "fitness", "read 5->6", "passed")])
    assert result["name"] == "bandwidth-floor read 5->6" and result["parameters"][2:] == [DRIVER]


def test_a_check_other_than_bandwidth_floor_looks_up_no_figure():
    c = CheckResult("r", "read", "read/write", "read 0->1", "passed")
    assert entries([c])[0][0]["name"] == "read read 0->1"


def test_an_entry_with_a_message_alone():
    got = entry(run([]), HOST, key="k", name="n", status="failed", labels=[], span=(1, 2), message="m")
    assert got["statusDetails"] == {"message": "m", "trace": ""} and got["description"] == ""
    got = entry(run([]), HOST, key="k", name="n", status="failed", labels=[], span=(1, 2), text="t")
    assert got["statusDetails"] == {"message": "", "trace": "t"} and got["description"] == "t"
    got = entry(run([]), HOST, key="k", name="n", status="passed", labels=[], span=(1, 2))
    assert got["parameters"] == [{"name": "host", "value": HOST}] and got["attachments"] == []


def test_an_attached_value_json_cannot_hold_is_written_as_its_text():
    from pathlib import PurePosixPath

    where = PurePosixPath("/run/x")
    checks = [CheckResult("c", "clocks", "fitness", "host", "passed"),
              CheckResult("n", "nvlink-errors", "", "card 1", "passed"),
              CheckResult("h", "host-facts", "host", "host", "passed")]
    got = entries(checks, clocks={"idle": where}, links={"1": {"log": where}}, host={"log": where})
    assert [f[3] for _, files in got for f in files] == ['{\n "idle": "/run/x"\n}', '{\n "log": "/run/x"\n}',
                                                         '{\n "log": "/run/x"\n}']


def test_a_card_check_other_than_nvlink_errors_attaches_no_links():
    [(result, files)] = entries([CheckResult("p", "pcie", "host", "card 1", "passed")])
    assert files == [] and result["attachments"] == []
