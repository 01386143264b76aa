"""Tests that kill the mutants of rmpeer/render/junit.py (docs/mutation.md): the whole JUnit
document of a RunResult built by hand, written out here as the JUnit XML schema (Jenkins'
junit-10.xsd / the Ant format: <testsuites> of <testsuite name hostname timestamp tests failures
errors skipped time>, <properties>, <testcase classname name time> holding <failure>, <error>
or <skipped> with message and type) and the module's docstring say it must read, never taken
from junit_xml; read back with xml.etree where a part is checked alone."""

import xml.etree.ElementTree as ET

import pytest

from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, UNFINISHED,
                                 CheckResult, Finding, RunResult)
from rmpeer.render.junit import junit_xml

pytestmark = pytest.mark.offline


def host_result(**kw) -> RunResult:
    base = dict(
        node="n1", tier="quick", verdict=NOT_CERTIFIED, reasons=["read: bad", "nvlink: down"],
        started="2026-11-30T01:36:50+01:00", duration_s=2.5, valid_until="2026-12-07T00:00:00+00:00",
        certificate_id="c-1", version="0.1.0",
        host={"driver_version": "580.1", "flavour": "open", "cards": [{"name": "NVIDIA H200"}, {"name": "NVIDIA H200"}]},
        checks=[CheckResult("read/p/s0-t1", "read", "read/write", "pair 0-1", "passed", layout="one.per card",
                            duration_s=0.25),
                CheckResult("read/p/s1-t0", "read", "read/write", "pair 1-0", "failed", reason="read: bad\nsecond line",
                            layout="one.per card", duration_s=0.5),
                CheckResult("map", "setup:map", "setup", "host", "skipped", reason="not asked"),
                CheckResult("facts", "host-facts", "", "host", "error", reason=""),
                CheckResult("odd", "odd", "host", "host", "weird", reason="r")],
        findings=[Finding("nvlink", "card 1", "18 links", "3 links", DEGRADE),
                  Finding("read", "pair 1-0", "the pattern", "bytes differ", FAIL),        # its check says it
                  Finding("xid", "host", "no Xid", "Xid 79", FAIL),
                  Finding("deadline", "host", "done", "cut", UNFINISHED),
                  Finding("drift", "card 0", "a", "b", INFO),                               # never a case
                  Finding("xid", "host", "no Xid", "Xid 79", DEGRADE)],                     # the same text: once
        not_checked=[{"check": "gpu-processes", "subject": "after", "reason": "no /proc"}],
        by_card={"cards": [{"card": 0, "uuid": "GPU-0", "verdict": CERTIFIED, "reasons": []},
                           {"card": 1, "uuid": "", "verdict": NOT_CERTIFIED, "reasons": ["nvlink"]}],
                 "pairs": [{"pair": "0-1", "verdict": NOT_CERTIFIED, "reasons": ["read: bad"]}]})
    base.update(kw)
    return RunResult(**base)


DOCUMENT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="rmpeer" tests="9" failures="4" errors="3" skipped="1" time="2.500">
  <testsuite name="n1" hostname="n1" timestamp="2026-11-30T00:36:50" tests="9" failures="4" errors="3" skipped="1" time="2.500">
    <properties>
      <property name="node" value="n1" />
      <property name="tier" value="quick" />
      <property name="verdict" value="NOT CERTIFIED" />
      <property name="certificate_id" value="c-1" />
      <property name="driver" value="580.1 (open)" />
      <property name="sku" value="2 x NVIDIA H200" />
      <property name="rmpeer_version" value="0.1.0" />
      <property name="target" value="live" />
      <property name="valid_until" value="2026-12-07T00:00:00+00:00" />
      <property name="reason" value="read: bad" />
      <property name="reason" value="nvlink: down" />
      <property name="card" value="0 (GPU-0): CERTIFIED" />
      <property name="card" value="1 (uuid unknown): NOT CERTIFIED" />
      <property name="pair" value="0-1: NOT CERTIFIED" />
    </properties>
    <testcase classname="rmpeer.read-write.one-per-card" name="read/p/s0-t1" time="0.250" />
    <testcase classname="rmpeer.read-write.one-per-card" name="read/p/s1-t0" time="0.500">
      <failure message="read: bad" type="failed">read: bad
second line</failure>
    </testcase>
    <testcase classname="rmpeer.setup" name="map" time="0.000">
      <skipped message="not asked" type="skipped" />
    </testcase>
    <testcase classname="rmpeer.check" name="facts" time="0.000">
      <error message="error" type="error">error</error>
    </testcase>
    <testcase classname="rmpeer.host" name="odd" time="0.000">
      <error message="unknown outcome 'weird': r" type="weird">unknown outcome 'weird': r</error>
    </testcase>
    <testcase classname="rmpeer.finding" name="nvlink: card 1" time="0.000">
      <failure message="nvlink: card 1: expected 18 links, found 3 links" type="DEGRADED">nvlink: card 1: expected 18 links, found 3 links</failure>
    </testcase>
    <testcase classname="rmpeer.finding" name="xid: host" time="0.000">
      <failure message="xid: host: expected no Xid, found Xid 79" type="NOT CERTIFIED">xid: host: expected no Xid, found Xid 79</failure>
    </testcase>
    <testcase classname="rmpeer.finding" name="deadline: host" time="0.000">
      <error message="deadline: host: expected done, found cut" type="INCOMPLETE">deadline: host: expected done, found cut</error>
    </testcase>
    <testcase classname="rmpeer" name="verdict" time="2.500">
      <failure message="NOT CERTIFIED" type="NOT CERTIFIED">NOT CERTIFIED
read: bad
nvlink: down</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_the_document_of_one_host_written_out():
    assert junit_xml([host_result()]) == DOCUMENT


def suite_of(result: RunResult) -> ET.Element:
    return ET.fromstring(junit_xml([result]).encode()).find("testsuite")


def props(result: RunResult) -> list:
    return [(p.get("name"), p.get("value")) for p in suite_of(result).findall("properties/property")]


def test_the_totals_add_the_hosts_and_their_times():
    other = RunResult(node="n2", verdict=CERTIFIED, duration_s=1.25,
                      checks=[CheckResult("a", "a", "host", "host", "passed"), CheckResult("b", "b", "host", "host", "skipped")])
    root = ET.fromstring(junit_xml([host_result(), other]).encode())
    assert [(k, root.get(k)) for k in root.keys()] == [("name", "rmpeer"), ("tests", "12"), ("failures", "4"),
                                                       ("errors", "3"), ("skipped", "2"), ("time", "3.750")]
    second = root.findall("testsuite")[1]
    assert [(k, second.get(k)) for k in second.keys()] == [("name", "n2"), ("hostname", "n2"), ("tests", "3"),
                                                           ("failures", "0"), ("errors", "0"), ("skipped", "1"),
                                                           ("time", "1.250")]
    assert [c.get("name") for c in second.findall("testcase")] == ["a", "b", "verdict"]
    assert second.find("testcase[@name='verdict']").findall("*") == []          # CERTIFIED: a clean case


def test_a_replay_names_its_recorded_host_and_transcript():
    replay = host_result(target={"kind": "replay", "recorded_host": "h200-rack3", "transcript": "x.jsonl.gz"})
    suite = suite_of(replay)
    assert (suite.get("name"), suite.get("hostname")) == ("n1 (replay of h200-rack3)", "n1")
    assert props(replay)[7:12] == [
        ("target", "replay"),
        ("replay", "a replay of a recording: rmpeer's requests were checked, not this host"),
        ("recorded_host", "h200-rack3"), ("transcript", "x.jsonl.gz"), ("valid_until", "2026-12-07T00:00:00+00:00")]


def test_a_replay_that_names_no_host_or_transcript():
    replay = host_result(node="", target={"kind": "replay"}, valid_until=None)
    suite = suite_of(replay)
    assert (suite.get("name"), suite.get("hostname")) == ("unknown-host", "unknown-host")
    assert props(replay)[7:11] == [
        ("target", "replay"),
        ("replay", "a replay of a recording: rmpeer's requests were checked, not this host"),
        ("recorded_host", ""), ("transcript", "")]
    assert not any(n == "valid_until" for n, _ in props(replay))


def test_a_live_run_that_names_a_recorded_host_is_named_by_its_node_alone():
    live = host_result(target={"kind": "live", "recorded_host": "h200-rack3"})
    assert suite_of(live).get("name") == "n1"
    assert not any(n in ("replay", "recorded_host", "transcript") for n, _ in props(live))


def test_the_selection_is_a_property_before_the_cards():
    sel = {"cards": [1], "uuids": ["GPU-1"], "source": "--cards", "how": "--cards 1",
           "of": [{"index": 0, "minor": 0, "pci": "0000:01:00.0", "uuid": "GPU-0"},
                  {"index": 1, "minor": 1, "pci": "0000:02:00.0", "uuid": "GPU-1"}]}
    got = props(host_result(host={"selection": sel}, reasons=[], by_card={}))
    assert got[-1] == ("selection", "cards: 1 of 0-1 (from --cards): 1 = GPU-1")


@pytest.mark.parametrize("host, driver, sku", [
    ({}, "", "no card"),
    ({"driver_version": "580.1", "cards": [{"name": "NVIDIA H200"}, {}, {"name": "NVIDIA H100"}, {"name": None}]},
     "580.1", "1 x NVIDIA H200, 2 x unknown card, 1 x NVIDIA H100"),
    ({"flavour": "open"}, "(open)", "no card")])
def test_the_driver_and_the_sku(host, driver, sku):
    got = dict(props(host_result(host=host)))
    assert (got["driver"], got["sku"]) == (driver, sku)


@pytest.mark.parametrize("started, stamp", [
    ("2026-11-30T00:36:50Z", "2026-11-30T00:36:50"),
    ("2026-11-29T19:36:50.987-05:00", "2026-11-30T00:36:50"),
    ("2026-11-30T00:36:50.5", "2026-11-30T00:36:50"),          # no zone: taken as UTC already
    ("yesterday", None),
    ("", None)])
def test_the_timestamp_is_the_start_in_utc_without_a_zone(started, stamp):
    assert suite_of(host_result(started=started)).get("timestamp") == stamp


def test_characters_xml_cannot_hold_become_the_replacement_character():
    bad = "a\x00b\x08c\x0bd\x0ce\x0ef\x1fg\ufffeh\uffffi"
    result = host_result(checks=[CheckResult("c\x01", "x", "host", "host", "failed", reason=bad + "\ttab\rcr")],
                         findings=[], reasons=[], node="n\x07", by_card={})
    suite = suite_of(result)
    case = suite.find("testcase")
    assert case.get("name") == "c\ufffd" and suite.get("name") == suite.get("hostname") == "n\ufffd"
    failure = case.find("failure")
    assert failure.text == "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\ufffdh\ufffdi\ttab\ncr"   # XML reads \r as \n
    assert dict(props(result))["node"] == "n\ufffd"


def test_a_long_message_is_cut_to_1000_characters_its_text_kept_whole():
    reason = "w" * 1500 + "\nnext"
    case = suite_of(host_result(checks=[CheckResult("c", "x", "host", "host", "failed", reason=reason)],
                                findings=[])).find("testcase")
    assert case.find("failure").get("message") == "w" * 1000 and case.find("failure").text == reason


@pytest.mark.parametrize("verdict, tag", [(DEGRADED, "failure"), (INCOMPLETE, "error")])
def test_the_verdict_case_of_a_host_not_certified(verdict, tag):
    case = suite_of(host_result(verdict=verdict, reasons=[])).find("testcase[@name='verdict']")
    [outcome] = list(case)
    assert (outcome.tag, outcome.get("type"), outcome.get("message"), outcome.text) == (tag, verdict, verdict, verdict)


def test_a_classname_keeps_no_dot_in_its_parts():
    checks = [CheckResult("a", "x", "..", "host", "passed", layout="two-per.card"),
              CheckResult("b", "x", "read/write", "host", "passed", layout="--"),
              CheckResult("c", "x", "set_up", "host", "passed", layout="")]
    names = [c.get("classname") for c in suite_of(host_result(checks=checks, findings=[])).findall("testcase")]
    assert names[:3] == ["rmpeer.none.two-per-card", "rmpeer.read-write.none", "rmpeer.set_up"]


def test_the_timestamp_is_utc_whatever_the_hosts_time_zone():
    import os
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"         # UTC+9, no daylight saving
    time.tzset()
    try:
        stamp = suite_of(host_result(started="2026-11-30T09:36:50+09:00")).get("timestamp")
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()
    assert stamp == "2026-11-30T00:36:50"


def test_a_classname_keeps_capitals_and_strips_only_dashes():
    checks = [CheckResult("a", "x", "Read", "host", "passed", layout="X-Ray."),
              CheckResult("b", "x", "XX", "host", "passed")]
    names = [c.get("classname") for c in suite_of(host_result(checks=checks, findings=[])).findall("testcase")]
    assert names[:2] == ["rmpeer.Read.X-Ray", "rmpeer.XX"]
