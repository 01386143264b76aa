"""`rmpeer diff A B`: the same run is the same behaviour (exit 0); the committed 1 x H200 and
2 x H200 recordings differ where the driver's answers differ (exit 1); bandwidth is judged
against the tolerance; bad input is one message and exit 2, nothing written."""

import copy
import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from rmpeer.resources import suites_dir

REPO = suites_dir().parent   # the checkout, or the installed package's copy
from rmpeer.shim.records import read_transcript

pytestmark = pytest.mark.offline
TRANSCRIPTS = REPO / "fixtures" / "transcripts"
ONE = next(iter(sorted(TRANSCRIPTS.glob("h200x1-*.jsonl.gz"))), TRANSCRIPTS / "h200x1-missing.jsonl.gz")
TWO = next(iter(sorted(TRANSCRIPTS.glob("h200x2-*.jsonl.gz"))), TRANSCRIPTS / "h200x2-missing.jsonl.gz")


def rmpeer(*args, cwd=REPO):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    return done.returncode, done.stdout, done.stderr


def diff_json(tmp_path, a, b, *extra):
    out = tmp_path / "diff.json"
    rc, stdout, stderr = rmpeer(a, b, "--json", out, *extra)
    assert "Traceback" not in stderr
    doc = json.loads(out.read_text())
    return rc, stdout, {x["name"].split(" (")[0]: x for x in doc["aspects"]}, doc


def differences(aspect) -> dict:
    return {d["key"]: (d["a"], d["b"]) for d in aspect["differences"]}


def host_facts(path):
    _, lines = read_transcript(path)
    return next(line for line in lines if isinstance(line, dict) and line.get("note") == "host")["facts"]


def layouts_of(path):
    header, _ = read_transcript(path)
    return [entry[0] for entry in header["run"]["layouts"]]


def ioctl_statuses(path, label, layouts=None):
    """Statuses of one step's ioctls; with `layouts`, only in segments whose key ends in one
    of them (or names no layout of the run at all)."""
    _, lines = read_transcript(path)
    own, counted, keep = layouts_of(path), Counter(), True
    for r in lines:
        if isinstance(r, dict):
            if r.get("note") == "segment" and layouts is not None:
                named = [x for x in own if r["key"].endswith(":" + x) or f":{x}/" in r["key"]]
                keep = not named or named[0] in layouts
            continue
        if keep and r.op == "ioctl" and r.label == label:
            counted[r.status_name] += 1
    return counted


@pytest.mark.parametrize("path", [ONE, TWO])
def test_a_recording_against_itself_is_the_same_behaviour(tmp_path, path):
    rc, out, aspects, doc = diff_json(tmp_path, path, path)
    assert rc == 0 and doc["same"] and "SAME BEHAVIOUR" in out
    assert "\033[" not in out   # not a terminal: no colour
    for name in ("RM statuses", "RM call counts", "struct sizes", "reply fields"):
        assert aspects[name]["comparable"] and not aspects[name]["differences"]


def test_the_one_and_two_card_recordings_differ_where_the_driver_answered_differently(tmp_path):
    rc, out, aspects, doc = diff_json(tmp_path, ONE, TWO)
    assert rc == 1 and not doc["same"] and "BEHAVIOUR DIFFERS" in out
    one, two = host_facts(ONE), host_facts(TWO)
    facts = differences(aspects["reply fields"])
    assert facts["cards (count)"] == (len(one["cards"]), len(two["cards"])) == (1, 2)
    assert facts["cards[1]"][0] is None and facts["cards[1]"][1]["index"] == 1
    for pair in set(two["p2p"]) - set(one["p2p"]):           # the P2P matrix: 0->1, 1->0, 1->1
        assert facts[f"p2p.{pair}"] == (None, two["p2p"][pair])
    assert facts["p2p.0->0.status.NVLINK"] == (one["p2p"]["0->0"]["status"]["NVLINK"],
                                               two["p2p"]["0->0"]["status"]["NVLINK"])
    nvlink_ce = next(lce for lce, caps in two["cards"][0]["ce_caps"].items() if "CE_NVLINK_P2P" in caps)
    assert "CE_NVLINK_P2P" not in one["cards"][0]["ce_caps"][nvlink_ce]
    assert "CE_NVLINK_P2P" in facts[f"cards[0].ce_caps.{nvlink_ce}"][1]
    assert not any("uuid" in key or "pci" in key.split(".")[-1] for key in facts)   # identity is not behaviour
    statuses = differences(aspects["RM statuses"])
    both = set(layouts_of(ONE)) & set(layouts_of(TWO))       # only the layouts both ran are compared
    p2p = ioctl_statuses(TWO, "alloc:p2p", both)
    assert not ioctl_statuses(ONE, "alloc:p2p") and p2p
    assert doc["coverage"]["only_in_b"] == [x for x in layouts_of(TWO) if x not in both]
    assert statuses["alloc:p2p"] == ("not called", ", ".join(f"{k} x{n}" for k, n in p2p.most_common()))
    assert "NV_ERR_INVALID_STATE" in statuses["dma-map-peer"][1]   # the detect test's peer map before any P2P
    assert aspects["RM call counts"]["differences"]
    assert not aspects["struct sizes"]["differences"]            # one driver, one ABI
    assert not aspects["test outcomes"]["comparable"] and not aspects["bandwidth"]["comparable"]
    assert "carry no GB/s" in aspects["bandwidth"]["why_not"]
    assert "cards (count)" in out and "alloc:p2p" in out


def certificate(tests, *, target="h200x2", gbps=None, **host):
    base = {"tool": "rmpeer", "created": "2026-01-01T00:00:00Z", "verdict": "CERTIFIED",
            "host": {"driver_version": "580.159.04", "abi_release": "580.65.06", "cards": [{"index": 0, "name": "GPU"}],
                     "p2p": {}, **host},
            "tests": []}
    for name, outcome in tests.items():
        t = {"nodeid": f"suites/test_cross_card_rw.py::{name}[{target}/one-per-card/s0->t1]", "outcome": outcome,
             "params": {"target": target.removeprefix("replay:"), "layout": "one-per-card", "s": 0, "t": 1},
             "properties": {}}
        if gbps and name in gbps:
            t["properties"]["bandwidth"] = {"op": name.removeprefix("test_"), "s": 0, "t": 1, "bytes": 64 << 20,
                                            "steady_gbps": gbps[name]}
        base["tests"].append(t)
    return base


def write(tmp_path, name, doc, *, gz=False):
    path = tmp_path / name
    data = json.dumps(doc).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_bandwidth_outside_the_tolerance_is_a_difference_and_inside_is_not(tmp_path):
    tests = {"test_read": "passed", "test_write": "passed"}
    a = write(tmp_path, "a.json", certificate(tests, gbps={"test_read": 200.0, "test_write": 200.0}))
    b = write(tmp_path, "b.json.gz", certificate(tests, gbps={"test_read": 209.0, "test_write": 178.0}), gz=True)
    rc, out, aspects, _ = diff_json(tmp_path, a, b)                # read +4.5%, write -11%
    assert rc == 1
    assert list(differences(aspects["bandwidth"])) == ["one-per-card write s0->t1 64 MiB"]
    assert "-11.0%" in out
    rc, _, aspects, _ = diff_json(tmp_path, a, b, "--tolerance", "12%")
    assert rc == 0 and aspects["bandwidth"]["comparable"] and not aspects["bandwidth"]["differences"]
    rc, _, aspects, _ = diff_json(tmp_path, a, b, "--tolerance", "4%")
    assert rc == 1 and len(aspects["bandwidth"]["differences"]) == 2


def test_a_certificate_bandwidth_list_is_read_per_card_pair(tmp_path):
    rows = [{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 30, "gbps": 100.0}]
    doc_a = dict(certificate({}), fitness={"bandwidth": rows})
    doc_b = dict(certificate({}), fitness={"bandwidth": [dict(rows[0], gbps=80.0)]})
    rc, _, aspects, _ = diff_json(tmp_path, write(tmp_path, "a.json", doc_a), write(tmp_path, "b.json", doc_b))
    assert rc == 1 and list(differences(aspects["bandwidth"])) == ["read card 0->1 1024 MiB"]


def test_a_transcript_bandwidth_note_and_test_verdicts_are_compared(tmp_path):
    from rmpeer.shim.records import TranscriptWriter, host_header

    paths = []
    for name, gbps in (("a.jsonl", 230.0), ("b.jsonl.gz", 150.0)):
        w = TranscriptWriter(tmp_path / name, host_header(label="h"))
        w.note("host", facts={"cards": [{"index": 0}], "p2p": {}})
        w.note("bandwidth", pairs=[{"src_card": 0, "dst_card": 1, "op": "write", "bytes": 1 << 26, "gbps": gbps}])
        w.note("verdict", nodeid="suites/test_cross_card_rw.py::test_write[h/one-per-card/s0->t1]",
               params={"target": "h"}, outcome="passed")
        w.close()
        paths.append(tmp_path / name)
    rc, _, aspects, _ = diff_json(tmp_path, *paths)
    assert rc == 1 and differences(aspects["bandwidth"]) == {
        "write card 0->1 64 MiB": ("230.0 GB/s", "150.0 GB/s (-34.8%)")}
    assert not aspects["RM statuses"]["differences"] and not aspects["reply fields"]["differences"]
    assert aspects["test outcomes"]["comparable"] and not aspects["test outcomes"]["differences"]


def test_tests_align_across_live_and_replay_labels_and_outcome_changes_are_listed(tmp_path):
    a = write(tmp_path, "a.json", certificate({"test_read": "passed", "test_write": "passed"}))
    same = write(tmp_path, "replay.json", certificate({"test_read": "passed", "test_write": "passed"},
                                                      target="replay:h200x2"))
    rc, _, aspects, _ = diff_json(tmp_path, a, same)
    assert rc == 0 and aspects["test outcomes"]["comparable"]
    changed = certificate({"test_read": "passed", "test_write": "failed"}, target="replay:h200x2")
    changed["verdict"] = "NOT CERTIFIED"
    rc, _, aspects, _ = diff_json(tmp_path, a, write(tmp_path, "b.json", changed))
    assert rc == 1 and differences(aspects["test outcomes"]) == {
        "verdict": ("CERTIFIED", "NOT CERTIFIED"),
        "test_cross_card_rw.py::test_write[one-per-card/s0->t1]": ("passed", "failed")}


def test_new_fact_fields_are_compared_without_code_for_them_and_volatile_ones_are_not(tmp_path):
    a = certificate({}, bus={"width": 16}, cards=[{"index": 0, "uuid": "GPU-a", "nvlink": {"links": 18}}])
    b = copy.deepcopy(a)
    b["created"], b["host"]["cards"][0]["uuid"] = "2027-02-02T00:00:00Z", "GPU-b"
    rc, _, _, _ = diff_json(tmp_path, write(tmp_path, "a.json", a), write(tmp_path, "b.json", b))
    assert rc == 0
    b["host"]["bus"]["width"], b["host"]["cards"][0]["nvlink"]["links"] = 8, 12
    rc, _, aspects, _ = diff_json(tmp_path, write(tmp_path, "a.json", a), write(tmp_path, "b.json", b))
    assert rc == 1 and differences(aspects["reply fields"]) == {"bus.width": (16, 8),
                                                                 "cards[0].nvlink.links": (18, 12)}


def test_allure_results_one_per_aspect_and_same_behaviour_when_nothing_differs(tmp_path):
    out = tmp_path / "allure"
    assert rmpeer(ONE, ONE, "--alluredir", out)[0] == 0
    results = [json.loads(p.read_text()) for p in out.glob("*-result.json")]
    by_name = {r["name"]: r for r in results}
    assert by_name["same behaviour"]["status"] == "passed"
    assert {r["status"] for r in results} <= {"passed", "skipped"}
    for r in results:
        assert r["stage"] == "finished" and r["uuid"] and r["historyId"] and r["labels"]
    out2 = tmp_path / "allure2"
    assert rmpeer(ONE, TWO, "--alluredir", out2)[0] == 1
    results = {json.loads(p.read_text())["name"]: json.loads(p.read_text()) for p in out2.glob("*-result.json")}
    assert "same behaviour" not in results
    facts = results["reply fields"]
    assert facts["status"] == "failed" and facts["statusDetails"]["message"].endswith("differ")
    attachment = results["reply fields"]["attachments"][0]["source"]
    assert "cards (count): A 1 | B 2" in (out2 / attachment).read_text()


@pytest.mark.parametrize("make,message", [
    (lambda d: d / "missing.jsonl.gz", "no such file"),
    (lambda d: _file(d / "garbage.json", b"not json at all"), "not a readable rmpeer transcript or certificate"),
    (lambda d: _file(d / "cut.jsonl.gz", gzip.compress(ONE.read_bytes()[:0] + b'{"header": {}}\n' * 3)[:20]),
     "not a readable"),
    (lambda d: _file(d / "empty.jsonl", b""), "the file is empty"),
    (lambda d: _file(d / "other.json", b'{"tool": "something else"}'), "not an rmpeer transcript or certificate"),
    (lambda d: _file(d / "header.jsonl", b'{"header": {"format": "x/9"}}\n'), "not an rmpeer-transcript/2"),
    (lambda d: _file(d / "binary.jsonl", bytes(range(256))), "not a readable"),
    (lambda d: _file(d / "cards.json", b'{"host": {"cards": 5}, "tests": []}'), "not a readable"),
    (lambda d: _file(d / "record.jsonl", b'{"header": {"format": "rmpeer-transcript/2"}}\n{"op": "ioctl", "x": 1}\n'),
     "not a readable"),
])
def test_bad_input_is_one_message_and_exit_2_with_nothing_written(tmp_path, make, message):
    bad = make(tmp_path)
    report = tmp_path / "out.json"
    for args in ((bad, ONE), (ONE, bad)):
        rc, out, err = rmpeer(*args, "--json", report, "--alluredir", tmp_path / "allure")
        assert rc == 2 and message in err and "Traceback" not in err + out
        assert len(err.strip().splitlines()) == 1
        assert not report.exists() and not (tmp_path / "allure").exists()


@pytest.mark.parametrize("args,message", [(("--tolerance", "fast"), "--tolerance"),
                                           (("--json", "/nonexistent/dir/x.json"), "folder does not exist")])
def test_bad_options_exit_2(args, message):
    rc, out, err = rmpeer(ONE, ONE, *args)
    assert rc == 2 and message in err and "Traceback" not in err + out


@pytest.mark.parametrize("args", [("--tolerance", "150%"), ("--tolerance", "-1%"), ("--tolerance=-1%",),
                                  ("--tolerance", "0.05"), ("--tolerance", "5"), ("--tolerance", "100.5%"),
                                  ("--tolerance", "5%%"), ("--tolerance", "")])
def test_a_tolerance_is_a_percentage_from_0_to_100_written_with_a_percent_sign(args):
    rc, out, err = rmpeer(ONE, ONE, *args)
    assert rc == 2 and not out and "Traceback" not in err
    assert err.strip().count("\n") == 0 and "--tolerance" in err and "written with %" in err


@pytest.mark.parametrize("text,shown", [("0%", "±0%"), ("100%", "±100%"), ("12.5%", "±12.5%")])
def test_a_tolerance_in_range_is_taken_and_stated(tmp_path, text, shown):
    rc, out, _, doc = diff_json(tmp_path, ONE, ONE, "--tolerance", text)
    assert rc == 0 and f"tolerance: {shown}" in out and doc["tolerance_text"] == shown
    assert doc["tolerance"] == pytest.approx(float(text.rstrip("%")) / 100)


def test_a_usage_error_exits_2():
    rc, _, err = rmpeer(ONE)
    assert rc == 2 and "usage" in err


def _file(path, data: bytes):
    path.write_bytes(data)
    return path


BOOSTED_QUICK = sorted(TRANSCRIPTS.glob("h200x2-20261130T005408Z.jsonl.gz"))
NOBOOST_QUICK = sorted((TRANSCRIPTS / "degraded").glob("h200x2-*-noboost.jsonl.gz"))


@pytest.mark.skipif(not (BOOSTED_QUICK and NOBOOST_QUICK), reason="the boosted and --no-boost --quick recordings")
def test_boosted_against_idle_clocks_differs_only_in_the_boost(tmp_path):
    """The same host and layouts, clocks raised or not: every RM step answered the same; only
    the boost calls (and the clock readings around them) are new."""
    rc, out, aspects, doc = diff_json(tmp_path, BOOSTED_QUICK[0], NOBOOST_QUICK[0])
    assert rc == 1
    statuses = differences(aspects["RM statuses"])
    assert statuses and all(label.startswith("perf:boost:") for label in statuses), statuses
    counts = differences(aspects["RM call counts"])
    assert all(label.startswith("perf:") for label in counts), counts
    assert aspects["struct sizes"]["differences"] == []
