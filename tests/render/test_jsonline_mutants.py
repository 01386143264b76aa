"""Tests that kill the mutants of rmpeer/render/jsonline.py (docs/mutation.md): the whole JSON line
of a RunResult built by hand, written out character by character here (the field names and order
of schemas/ and docs, the exit codes of rmpeer/errors.py: NOT CERTIFIED 1, INCOMPLETE 5), never
taken from json_line."""

import json
from pathlib import Path

import pytest

from rmpeer.model.result import CERTIFIED, INCOMPLETE, NOT_CERTIFIED, CheckResult, RunResult
from rmpeer.render.jsonline import json_line, json_record

pytestmark = pytest.mark.offline


def replay() -> RunResult:
    return RunResult(
        node="gpu-node-07", tier="quick", verdict=NOT_CERTIFIED, reasons=["read: bad"], duration_s=3.14159,
        started="2026-11-30T00:36:50+00:00", valid_until="2026-12-07T00:36:50+00:00", certificate_id="c-1",
        version="0.1.0", target={"kind": "replay", "recorded_host": "h200-rack3", "transcript": "x.jsonl.gz"},
        checks=[CheckResult("read/a", "read", "read/write", "pair 0->1", "passed"),
                CheckResult("read/b", "read", "read/write", "pair 1->0", "failed", reason="read: bad"),
                CheckResult("read/c", "read", "read/write", "pair 1->1", "failed", reason="read: bad")],
        by_card={"cards": [{"card": 0, "uuid": "GPU-0", "pci": "", "verdict": CERTIFIED, "reasons": []},
                           {"card": 1, "uuid": "GPU-1", "pci": "", "verdict": NOT_CERTIFIED,
                            "reasons": ["read: bad"]}],
                 "pairs": [{"pair": "1-0", "cards": [1, 0], "verdict": NOT_CERTIFIED, "reasons": ["read: bad"]}]},
        not_checked=[{"check": "xid", "subject": "host", "reason": "no /dev/kmsg"}])


def test_the_line_of_a_replay_written_out():
    assert json_line(replay(), Path("/var/lib/rmpeer/c.json")) == (
        '{"node":"gpu-node-07","tier":"quick","verdict":"NOT CERTIFIED","reasons":["read: bad"],'
        '"duration_s":3.142,"started":"2026-11-30T00:36:50+00:00","valid_until":"2026-12-07T00:36:50+00:00",'
        '"certificate":"/var/lib/rmpeer/c.json","certificate_id":"c-1","target":"replay",'
        '"recorded_host":"h200-rack3","exit_code":1,"exit":"NOT_CERTIFIED","counts":{"passed":1,"failed":2},'
        '"version":"0.1.0","selection":null,'
        '"cards":[{"card":0,"uuid":"GPU-0","verdict":"CERTIFIED"},'
        '{"card":1,"uuid":"GPU-1","verdict":"NOT CERTIFIED","reasons":["read: bad"]}],'
        '"pairs":[{"pair":"1-0","verdict":"NOT CERTIFIED","reasons":["read: bad"]}],'
        '"not_checked":[{"check":"xid","subject":"host","reason":"no /dev/kmsg"}]}')


def test_a_live_run_without_a_certificate():
    record = json_record(RunResult(node="n", verdict=INCOMPLETE, duration_s=2,
                                   target={"recorded_host": "never read for a live run"}), None)
    assert record == {"node": "n", "tier": "full", "verdict": INCOMPLETE, "reasons": [], "duration_s": 2.0,
                      "started": "", "valid_until": None, "certificate": None, "certificate_id": "",
                      "target": "live", "recorded_host": None, "exit_code": 5, "exit": "INCOMPLETE", "counts": {},
                      "version": "", "selection": None, "cards": [], "pairs": [], "not_checked": []}


def test_the_duration_is_kept_to_the_millisecond():
    assert json_record(RunResult(duration_s=0.0004999), "")["duration_s"] == 0.0
    assert json_record(RunResult(duration_s=12.34567), "")["duration_s"] == 12.346


def test_a_value_json_cannot_hold_is_written_as_its_text():
    line = json_line(RunResult(verdict=INCOMPLETE, reasons=[Path("/run/rmpeer/x")]), None)
    assert json.loads(line)["reasons"] == ["/run/rmpeer/x"]


def test_a_certificate_path_given_as_text_is_kept():
    assert json.loads(json_line(RunResult(), "c.json"))["certificate"] == "c.json"
