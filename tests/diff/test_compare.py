"""`rmpeer diff A B`: the same run is the same behaviour (exit 0); the committed 1 x H200 and
2 x H200 recordings differ where the driver's answers differ (exit 1); bandwidth is judged
against the tolerance; bad input is one message and exit 2, nothing written."""

import copy
import re
import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rmpeer.diff.compare import IDENTITY, Coverage
from rmpeer.paths import suites_dir

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
    (lambda d: _file(d / "garbage.json", b"not json at all"), "not a readable rmpeer recording or certificate"),
    (lambda d: _file(d / "cut.jsonl.gz", gzip.compress(ONE.read_bytes()[:0] + b'{"header": {}}\n' * 3)[:20]),
     "not a readable"),
    (lambda d: _file(d / "empty.jsonl", b""), "the file is empty"),
    (lambda d: _file(d / "other.json", b'{"tool": "something else"}'), "not an rmpeer recording or certificate"),
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
    assert rc == 2 and err.strip() == ("rmpeer: diff takes two runs (A B), or two sets: --baseline DIR PATH..., "
                                       "or A... -- B... (1 path given)")


def _file(path, data: bytes):
    path.write_bytes(data)
    return path


BOOSTED_QUICK = sorted(TRANSCRIPTS.glob("h200x2-20261130T005408Z.jsonl.gz"))
NOBOOST_QUICK = sorted((TRANSCRIPTS / "degraded").glob("h200x2-*-noboost.jsonl.gz"))


@pytest.mark.skipif(not (BOOSTED_QUICK and NOBOOST_QUICK), reason="the boosted and --no-boost --quick recordings")
def test_boosted_against_idle_clocks_differs_only_in_the_boost(tmp_path):
    """The same host and layouts, clocks raised or not: every RM step answered the same; the
    boost calls (and the clock readings around them) are what the --no-boost run does not
    make, named as such and not a difference (both headers say whether the boost was asked)."""
    rc, out, aspects, doc = diff_json(tmp_path, BOOSTED_QUICK[0], NOBOOST_QUICK[0])
    assert rc == 0, out[-3000:]
    assert differences(aspects["RM statuses"]) == {} and differences(aspects["RM call counts"]) == {}
    unrun = [x for x in aspects["RM statuses"]["info"] if "run does not make" in x]
    assert len(unrun) == 1 and "perf:boost:*" in unrun[0] and "--no-boost" in unrun[0], aspects["RM statuses"]["info"]
    assert any("perf:pstate:*" in x for x in aspects["RM call counts"]["info"]), aspects["RM call counts"]["info"]
    assert aspects["struct sizes"]["differences"] == []


# ---- two runs of one healthy host: only behaviour differs --------------------------------
# The committed quick run of the 2 x H200 host: its recording and its certificate come from
# one `certify --quick --record` (docs/evidence/README.md). A "second run" is built from them
# by changing only what changes between two healthy runs; a behaviour change is then made on
# top, one at a time, and must be named.

EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence"   # the checkout's (a wheel has no docs/)
QUICK_REC = TRANSCRIPTS / "h200x2-20261130T005408Z.jsonl.gz"
FULL_REC = TRANSCRIPTS / "h200x2-20261130T003650Z.jsonl.gz"
QUICK_CERT = EVIDENCE / "h200x2-20261130T005408Z" / "certificate-quick.json.gz"
FULL_CERT = EVIDENCE / "h200x2-20261130T003650Z" / "certificate.json.gz"
NOBOOST_CERT = EVIDENCE / "h200x2-20261130T003650Z" / "certificate-noboost.json.gz"
COMMITTED = [QUICK_REC, FULL_REC, QUICK_CERT, FULL_CERT, NOBOOST_CERT]
needs_evidence = pytest.mark.skipif(not all(p.exists() for p in COMMITTED),
                                    reason="the committed 2 x H200 recordings and certificates")


def raw_lines(path) -> list:
    """A transcript as plain JSON objects, read without rmpeer."""
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines() if line.strip()]


def write_lines(path, lines):
    path.write_bytes(gzip.compress("".join(json.dumps(d) + "\n" for d in lines).encode()))
    return path


def cert_doc(path=QUICK_CERT) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def with_fitness_notes(lines) -> list:
    """The recording as the recorder writes it now: a fitness note (clocks, links, boost) and
    a bandwidth note, taken from the certificate of the same run, before the end line."""
    fitness = cert_doc()["fitness"]
    end = next(i for i, d in enumerate(lines) if d.get("note") == "end")
    t_ns = lines[end]["t_ns"] - 1
    return lines[:end] + [{"note": "bandwidth", "t_ns": t_ns, "figures": fitness["bandwidth"]},
                          {"note": "fitness", "t_ns": t_ns, "summary": fitness}] + lines[end:]


def host_cards(lines) -> list:
    return next(d for d in lines if d.get("note") == "host")["facts"]["cards"]


def second_run_recording(lines) -> list:
    """What differs in a healthy back-to-back run: when and how long, the seed, free memory,
    the order RM attached the cards in, the idle and released clocks, bandwidth within 2%."""
    lines = copy.deepcopy(lines)
    lines[0]["header"].update(created="2026-11-30T00:54:22Z", pattern_seed=4242)
    for d in lines[1:]:
        if "t_ns" in d:
            d["t_ns"] += 14_000_000_000
        if "duration_ns" in d:
            d["duration_ns"] = d["duration_ns"] * 3 // 2 + 7
    cards = host_cards(lines)
    for card, instance in zip(cards, reversed([c["device_instance"] for c in cards])):
        card["device_instance"] = instance
        card["fb_free_bytes"] = 150_000_000_000 - 3 * 2**20 * card["index"]
    summary = next(d for d in lines if d.get("note") == "fitness")["summary"]
    for reading in summary["clocks"]["idle"].values():
        reading["graphics_mhz"] = 450
    for reading in summary["clocks"]["released"].values():
        reading["graphics_mhz"] = 1755
    for figures in (summary["bandwidth"], next(d for d in lines if d.get("note") == "bandwidth")["figures"]):
        for i, row in enumerate(figures):
            row["gbps"] = round(row["gbps"] * (0.98 if i % 2 else 1.02), 2)
    return lines


def first_run_recording(lines) -> list:
    """The base run, with the free-memory figure a later recorder may add, and idle 345 MHz."""
    lines = copy.deepcopy(lines)
    for card in host_cards(lines):
        card["fb_free_bytes"] = 150_000_000_000
    for reading in next(d for d in lines if d.get("note") == "fitness")["summary"]["clocks"]["idle"].values():
        reading["graphics_mhz"] = 345
    return lines


@pytest.fixture
def two_recordings(tmp_path):
    base = first_run_recording(with_fitness_notes(raw_lines(QUICK_REC)))
    return (write_lines(tmp_path / "run1.jsonl.gz", base),
            write_lines(tmp_path / "run2.jsonl.gz", second_run_recording(base)), base)


def first(lines, label):
    return next(d for d in lines if d.get("label") == label and d.get("op") == "ioctl")


def _status(lines):
    rec = first(lines, "alloc:p2p")
    rec.update(status=0x1F, status_name="NV_ERR_INVALID_ARGUMENT")


def _order(lines):
    """The same statuses of one step in another order (issue 45: no test covered it): the
    first NV_OK dma-map-peer and the refused one swap their answers."""
    maps = [d for d in lines if d.get("label") == "dma-map-peer" and d.get("op") == "ioctl"]
    ok = next(d for d in maps if d.get("status_name") == "NV_OK")
    refused = next(d for d in maps if d.get("status_name") not in (None, "NV_OK"))
    for key in ("status", "status_name", "status_text"):
        ok[key], refused[key] = refused.get(key), ok.get(key)


def _struct(lines):
    for d in lines:
        if d.get("label") == "alloc:p2p" and d.get("payload"):
            d["payload"]["request"] = d["payload"]["request"][:-8]


def _summary(lines):
    return next(d for d in lines if d.get("note") == "fitness")["summary"]


def _after_traffic(lines):
    _summary(lines)["clocks"]["after-traffic"]["0"]["graphics_mhz"] = 1410


def _boosted_pstate(lines):
    _summary(lines)["clocks"]["boosted"]["1"]["pstate"] = "P8"


def _boost_clear(lines):
    _summary(lines)["boost"]["results"]["0"]["clear"]["status"] = "NV_ERR_NOT_SUPPORTED"


def _links(lines):
    _summary(lines)["links"]["1"]["active"] = 12


def _bandwidth(lines):
    row = next(r for r in next(d for d in lines if d.get("note") == "bandwidth")["figures"]
               if r["op"] == "read" and r["src_card"] == 0 and r["dst_card"] == 1)
    row["gbps"] = round(row["gbps"] * 0.85, 2)


def _ce_caps(lines):
    host_cards(lines)[0]["ce_caps"]["4"].remove("CE_NVLINK_P2P")


BEHAVIOUR = [  # (change, aspect it must be named in, the key named)
    (_status, "RM statuses", "alloc:p2p"),
    (_order, "RM statuses", "dma-map-peer"),
    (_struct, "struct sizes", "NV503B_ALLOC_PARAMETERS"),
    (_after_traffic, "clocks", "after-traffic.0.graphics_mhz"),
    (_boosted_pstate, "clocks", "boosted.1.pstate"),
    (_boost_clear, "clocks", "boost.0.clear"),
    (_links, "links", "1.active"),
    (_bandwidth, "bandwidth", "read card 0->1 256 MiB"),
    (_ce_caps, "reply fields", "cards[0].ce_caps.4"),
]


@needs_evidence
def test_two_healthy_recordings_of_one_host_are_the_same_behaviour(tmp_path, two_recordings):
    run1, run2, _ = two_recordings
    rc, out, aspects, doc = diff_json(tmp_path, run1, run2)
    assert rc == 0 and doc["same"] and "SAME BEHAVIOUR" in out, out
    for name in ("RM statuses", "RM call counts", "struct sizes", "reply fields", "clocks", "links", "bandwidth"):
        assert aspects[name]["comparable"] and not aspects[name]["differences"], name
    assert doc["left_out"]["free memory"]["fields"] == 2
    idle_mhz = sum(k.endswith("_mhz") for r in cert_doc()["fitness"]["clocks"]["idle"].values() for k in r)
    assert idle_mhz == 4    # graphics and memory, 2 cards
    assert doc["left_out"]["idle clock MHz"]["fields"] == doc["left_out"]["released clock MHz"]["fields"] == idle_mhz
    assert "left out as volatile: " in out and f"idle clock MHz ({idle_mhz})" in out and "tolerance: ±5%" in out


@needs_evidence
@pytest.mark.parametrize("change,aspect,key", BEHAVIOUR, ids=[b[0].__name__.strip("_") for b in BEHAVIOUR])
def test_a_behaviour_change_between_two_recordings_is_named(tmp_path, two_recordings, change, aspect, key):
    run1, _, base = two_recordings
    changed = second_run_recording(base)
    change(changed)
    rc, out, aspects, doc = diff_json(tmp_path, run1, write_lines(tmp_path / "changed.jsonl.gz", changed))
    assert rc == 1 and f"BEHAVIOUR DIFFERS: {aspects[aspect]['name']}" in out
    assert [x["name"] for x in doc["aspects"] if x["differs"]] == [aspects[aspect]["name"]]
    assert list(differences(aspects[aspect])) == [key] and key in out


@needs_evidence
def test_a_recording_made_before_clocks_and_links_were_recorded_is_not_comparable_on_them(tmp_path):
    new = write_lines(tmp_path / "new.jsonl.gz", second_run_recording(with_fitness_notes(raw_lines(QUICK_REC))))
    for a, b, lacking in ((QUICK_REC, new, "A"), (new, QUICK_REC, "B")):
        rc, out, aspects, doc = diff_json(tmp_path, a, b)
        assert rc == 0 and "SAME BEHAVIOUR" in out
        for name in ("clocks", "links", "bandwidth"):
            assert not aspects[name]["comparable"] and not aspects[name]["differences"]
            assert aspects[name]["why_not"].startswith(f"{lacking}: ")
        assert "clocks: not comparable" in out and "links: not comparable" in out


@needs_evidence
def test_a_field_only_one_recording_has_is_not_comparable_and_listed(tmp_path, two_recordings):
    run1, _, base = two_recordings
    later = second_run_recording(base)
    host_cards(later)[1]["c2c"] = {"links": 0}        # a field a later recorder adds
    rc, out, aspects, _ = diff_json(tmp_path, run1, write_lines(tmp_path / "later.jsonl.gz", later))
    assert rc == 0 and aspects["reply fields"]["not_comparable_fields"] == ["cards[1].c2c (only in B)"]
    assert "recorded by one side only: cards[1].c2c (only in B)" in out


@needs_evidence
def test_a_clock_reading_only_one_recording_takes_is_not_comparable_and_listed(tmp_path, two_recordings):
    run1, _, base = two_recordings
    later = second_run_recording(base)
    _summary(later)["clocks"]["boosted"]["0"]["sm_mhz"] = 1980      # a reading a later recorder adds
    rc, out, aspects, _ = diff_json(tmp_path, run1, write_lines(tmp_path / "later.jsonl.gz", later))
    assert rc == 0 and aspects["clocks"]["not_comparable_fields"] == ["boosted.0.sm_mhz (only in B)"]


@needs_evidence
def test_a_recording_without_its_end_line_is_refused(tmp_path):
    cut = [d for d in raw_lines(QUICK_REC) if d.get("note") != "end"]
    rc, out, err = rmpeer(QUICK_REC, write_lines(tmp_path / "cut.jsonl.gz", cut))
    assert rc == 2 and "truncated" in err and len(err.strip().splitlines()) == 1 and not out


# ---- certificates: the committed format and rmpeer-result/1 ------------------------------

def second_run_certificate(doc) -> dict:
    doc = copy.deepcopy(doc)
    doc.update(created="2026-11-30T00:54:25Z", duration_s=doc["duration_s"] + 1.3)
    for pair in doc["pairs"].values():
        pair["gbps"] = [g * 1.01 for g in pair["gbps"]]
    cards = doc["host"]["cards"]
    for card, instance in zip(cards, reversed([c["device_instance"] for c in cards])):
        card["device_instance"] = instance
    for reading in doc["fitness"]["clocks"]["idle"].values():
        reading["graphics_mhz"] = 450
    for reading in doc["fitness"]["clocks"]["released"].values():
        reading["graphics_mhz"] = 1740
    for i, row in enumerate(doc["fitness"]["bandwidth"]):
        row["gbps"] = round(row["gbps"] * (0.97 if i % 2 else 1.03), 2)
    for t in doc["tests"]:
        if "gbps" in t:
            t["gbps"] *= 0.99
    return doc


def base_certificate() -> dict:
    doc = cert_doc()
    for reading in doc["fitness"]["clocks"]["idle"].values():
        reading["graphics_mhz"] = 345
    return doc


def _test_failed(doc):
    t = next(t for t in doc["tests"] if "test_write[" in t["nodeid"] and "interleaved/s1->t2" in t["nodeid"])
    t["outcome"], doc["verdict"] = "failed", "NOT CERTIFIED"


def _cert_bandwidth(doc):
    row = next(r for r in doc["fitness"]["bandwidth"] if r["op"] == "write" and r["src_card"] == 1)
    row["gbps"] *= 0.9


def _cert_after_traffic(doc):
    doc["fitness"]["clocks"]["after-traffic"]["1"]["graphics_mhz"] = 1650


CERT_BEHAVIOUR = [
    (_test_failed, "test outcomes", ["verdict", "test_cross_card_rw.py::test_write[interleaved/s1->t2]"]),
    (_cert_bandwidth, "bandwidth", ["write card 1->0 256 MiB"]),
    (_cert_after_traffic, "clocks", ["after-traffic.1.graphics_mhz"]),
]


@needs_evidence
def test_two_healthy_certificates_of_one_host_are_the_same_behaviour(tmp_path):
    a = write(tmp_path, "a.json.gz", base_certificate(), gz=True)
    b = write(tmp_path, "b.json", second_run_certificate(base_certificate()))
    rc, out, aspects, doc = diff_json(tmp_path, a, b)
    assert rc == 0 and "SAME BEHAVIOUR" in out, out
    for name in ("struct sizes", "reply fields", "clocks", "links", "test outcomes", "bandwidth"):
        assert aspects[name]["comparable"] and not aspects[name]["differences"], name


@needs_evidence
@pytest.mark.parametrize("change,aspect,keys", CERT_BEHAVIOUR, ids=[c[0].__name__.strip("_") for c in CERT_BEHAVIOUR])
def test_a_behaviour_change_between_two_certificates_is_named(tmp_path, change, aspect, keys):
    changed = second_run_certificate(base_certificate())
    change(changed)
    rc, out, aspects, doc = diff_json(tmp_path, write(tmp_path, "a.json", base_certificate()),
                                      write(tmp_path, "b.json", changed))
    assert rc == 1 and [x["name"] for x in doc["aspects"] if x["differs"]] == [aspects[aspect]["name"]]
    assert list(differences(aspects[aspect])) == keys


@needs_evidence
def test_the_boosted_and_no_boost_certificates_differ_on_clocks_after_traffic_and_bandwidth(tmp_path):
    rc, out, aspects, doc = diff_json(tmp_path, QUICK_CERT, NOBOOST_CERT)
    assert rc == 1
    after = {k: v for k, v in differences(aspects["clocks"]).items() if k.startswith("after-traffic.")}
    quick, noboost = cert_doc(QUICK_CERT)["fitness"]["clocks"], cert_doc(NOBOOST_CERT)["fitness"]["clocks"]
    assert after == {f"after-traffic.{c}.graphics_mhz": (f"{quick['after-traffic'][c]['graphics_mhz']} MHz",
                     f"{noboost['after-traffic'][c]['graphics_mhz']} MHz ("
                     f"{noboost['after-traffic'][c]['graphics_mhz'] / quick['after-traffic'][c]['graphics_mhz'] - 1:+.1%})")
                     for c in ("0", "1")}
    assert len(differences(aspects["bandwidth"])) == len(cert_doc(NOBOOST_CERT)["fitness"]["bandwidth"])
    assert "boosted" not in str(list(differences(aspects["clocks"])))          # read on one side only
    assert any("read only in A: boosted, released" in i for i in aspects["clocks"]["info"])


# ---- runs of different coverage ----------------------------------------------------------

@needs_evidence
@pytest.mark.parametrize("full,quick", [(FULL_REC, QUICK_REC), (FULL_CERT, QUICK_CERT)], ids=["recordings", "certificates"])
def test_a_full_and_a_quick_run_compare_the_layouts_both_ran(tmp_path, full, quick):
    rc, out, aspects, doc = diff_json(tmp_path, full, quick)
    assert rc == 0 and "SAME BEHAVIOUR" in out, out
    ran = layouts_of(FULL_REC), layouts_of(QUICK_REC)   # each certificate's run recorded these
    assert doc["coverage"]["layouts_compared"] == sorted(set(ran[0]) & set(ran[1])) == ["interleaved", "one-per-card"]
    assert sorted(doc["coverage"]["only_in_a"]) == sorted(set(ran[0]) - set(ran[1])) and not doc["coverage"]["only_in_b"]
    assert "compared: layouts interleaved, one-per-card; only in A (left out): " in out
    if not full.name.endswith(".jsonl.gz"):
        only = [t for t in cert_doc(full)["tests"]
                if any(f"[h200x2/{layout}/" in t["nodeid"] or f"[h200x2/{layout}]" in t["nodeid"]
                       for layout in set(ran[0]) - set(ran[1]))]
        assert f"{len(only)} tests of layouts only one side ran left out" in aspects["test outcomes"]["info"]


# ---- certificates in the format "rmpeer-result/1" ----------------------------------------

def result_doc() -> dict:
    """The committed quick run as a RunResult: facts, clocks and checks from its certificate,
    each layout's setup statuses from its recording."""
    from rmpeer.model.result import CheckResult, LayoutResult, RunResult

    legacy, lines = cert_doc(), raw_lines(QUICK_REC)
    ran = lines[0]["header"]["run"]["layouts"]
    statuses, segment = {}, ""
    for d in lines[1:]:
        if d.get("note") == "segment":
            segment = d["key"]
        elif "note" not in d and d["op"] == "ioctl" and segment.startswith("setup:"):
            statuses.setdefault(segment.removeprefix("setup:"), []).append(
                {"label": d["label"], "status": d.get("status_name")})
    checks = []
    for t in legacy["tests"]:
        test, param = re.search(r"::(\w+)\[h200x2/?(.*)\]$", t["nodeid"]).groups()
        layout = param.split("/")[0] if param.split("/")[0] in [name for name, *_ in ran] else None
        checks.append(CheckResult(id=f"{test}/{param}", check=test, area="read/write", subject=param or "host",
                                  outcome=t["outcome"], layout=layout, duration_s=0.012))
    fitness = legacy["fitness"]
    return RunResult(node="vm", tier="quick", target={"kind": "live", "label": "h200x2"},
                     started=legacy["created"], duration_s=legacy["duration_s"], certificate_id="run-1",
                     version="0.1.0", host=legacy["host"],
                     layouts=[LayoutResult(name, cards, extent, statuses.get(name, [])) for name, cards, extent in ran],
                     bandwidth=fitness["bandwidth"], clocks=fitness["clocks"], boost=fitness["boost"],
                     links=fitness["links"], xids=fitness["xids"], checks=checks,
                     gpu_processes={"before": [], "after": []}, verdict=legacy["verdict"]).to_dict()


def second_run_result(doc) -> dict:
    doc = copy.deepcopy(doc)
    doc.update(started="2026-11-30T00:54:25Z", duration_s=doc["duration_s"] * 1.2, certificate_id="run-2",
               valid_until="2026-12-30T00:54:25Z")
    for check in doc["checks"]:
        check["duration_s"] *= 1.7
    for reading in doc["clocks"]["idle"].values():
        reading["graphics_mhz"] = 465
    for row in doc["bandwidth"]:
        row["gbps"] = round(row["gbps"] * 1.01, 2)
    cards = doc["host"]["cards"]
    for card, instance in zip(cards, reversed([c["device_instance"] for c in cards])):
        card["device_instance"] = instance
    return doc


@needs_evidence
def test_two_healthy_results_are_the_same_behaviour_and_a_changed_status_or_check_is_named(tmp_path):
    a = write(tmp_path, "a.json", result_doc())
    rc, out, aspects, _ = diff_json(tmp_path, a, write(tmp_path, "b.json.gz", second_run_result(result_doc()), gz=True))
    assert rc == 0, out
    for name in ("RM statuses", "RM call counts", "struct sizes", "reply fields", "clocks", "links",
                 "test outcomes", "bandwidth"):
        assert aspects[name]["comparable"] and not aspects[name]["differences"], name
    changed = second_run_result(result_doc())
    p2p = next(s for x in changed["layouts"] if x["name"] == "interleaved" for s in x["statuses"]
               if s["label"] == "alloc:p2p")
    p2p["status"] = "NV_ERR_INSUFFICIENT_RESOURCES"
    check = next(c for c in changed["checks"] if c["id"] == "test_read/one-per-card/s1->t0")
    check["outcome"], changed["verdict"] = "failed", "NOT CERTIFIED"
    rc, out, aspects, doc = diff_json(tmp_path, a, write(tmp_path, "b.json", changed))
    assert rc == 1 and [x["name"] for x in doc["aspects"] if x["differs"]] == ["RM statuses", "test outcomes"]
    assert list(differences(aspects["RM statuses"])) == ["alloc:p2p"]
    assert differences(aspects["test outcomes"]) == {"verdict": ("CERTIFIED", "NOT CERTIFIED"),
                                                    "test_read/one-per-card/s1->t0": ("passed", "failed")}


@needs_evidence
def test_one_run_in_both_certificate_formats_and_its_recording_are_the_same_behaviour(tmp_path):
    new = write(tmp_path, "result.json", result_doc())
    rc, out, aspects, _ = diff_json(tmp_path, new, QUICK_CERT)
    assert rc == 0, out
    assert not aspects["test outcomes"]["comparable"] and "check ids" in aspects["test outcomes"]["why_not"]
    for name in ("reply fields", "clocks", "links", "bandwidth"):
        assert aspects[name]["comparable"] and not aspects[name]["differences"], name
    rc, out, aspects, _ = diff_json(tmp_path, new, QUICK_REC)
    assert rc == 0 and not aspects["RM statuses"]["comparable"] and aspects["reply fields"]["comparable"]


@pytest.mark.parametrize("doc,message", [({"format": "rmpeer-result/9"}, "not an rmpeer result"),
                                         ({"format": "rmpeer-result/1", "checks": [{"id": "x"}]}, "not a readable")])
def test_a_result_of_another_format_or_malformed_is_one_message_and_exit_2(tmp_path, doc, message):
    rc, out, err = rmpeer(write(tmp_path, "bad.json", doc), ONE)
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


# ---- mutation tests: each rule above, switched off, must change the answer ---------------

def _healthy_recordings(tmp_path):
    base = first_run_recording(with_fitness_notes(raw_lines(QUICK_REC)))
    return write_lines(tmp_path / "r1.jsonl.gz", base), write_lines(tmp_path / "r2.jsonl.gz", second_run_recording(base))


def _boost_clear_changed(tmp_path):
    base = first_run_recording(with_fitness_notes(raw_lines(QUICK_REC)))
    changed = second_run_recording(base)
    _boost_clear(changed)
    return write_lines(tmp_path / "r1.jsonl.gz", base), write_lines(tmp_path / "r2.jsonl.gz", changed)


def _field_on_one_side(tmp_path):
    base = first_run_recording(with_fitness_notes(raw_lines(QUICK_REC)))
    later = second_run_recording(base)
    host_cards(later)[0]["c2c"] = {"links": 0}
    return write_lines(tmp_path / "r1.jsonl.gz", base), write_lines(tmp_path / "r2.jsonl.gz", later)


def _old_and_new_recording(tmp_path):
    return QUICK_REC, write_lines(tmp_path / "new.jsonl.gz", with_fitness_notes(raw_lines(QUICK_REC)))


def _two_unboosted_certificates(tmp_path):
    """Two --no-boost runs: the card picks its clocks, idle and under traffic."""
    doc = cert_doc(NOBOOST_CERT)
    second = copy.deepcopy(doc)
    for phase, mhz in (("idle", 465), ("after-traffic", 420)):
        for reading in second["fitness"]["clocks"][phase].values():
            reading["graphics_mhz"] = mhz
    return write(tmp_path, "a.json", doc), write(tmp_path, "b.json", second)


def _full_and_quick(tmp_path):
    return FULL_REC, QUICK_REC


def _empty_fitness(side, fitness, why):
    fitness = fitness if isinstance(fitness, dict) else {}
    side.clocks, side.links, side.boost = (fitness.get(k) or {} for k in ("clocks", "links", "boost"))


def _same(rc, doc):
    return rc == 0


def _differs(rc, doc):
    return rc == 1


def _clocks_not_comparable(rc, doc):
    clocks = next(x for x in doc["aspects"] if x["name"] == "clocks")
    return rc == 0 and not clocks["comparable"]


MUTANTS = [  # (rule switched off, (module, name, mutant), the pair, what holds without the mutant)
    ("volatile fields compared", ("diff.compare", "volatile_rule", lambda key: None), _healthy_recordings, _same),
    ("idle and released MHz compared", ("diff.compare", "CLOCK_PHASES", {}), _healthy_recordings, _same),
    ("no tolerance", ("diff.compare", "_beyond", lambda va, vb, tolerance: va != vb), _healthy_recordings, _same),
    ("device instance is behaviour", ("diff.compare", "IDENTITY", IDENTITY - {"device_instance"}), _healthy_recordings, _same),
    ("a field one side lacks differs", ("diff.compare", "FIELD_NAME", re.compile(r"(?!)")), _field_on_one_side, _same),
    ("unboosted after-traffic MHz compared", ("diff.compare", "UNBOOSTED_PHASES", {}), _two_unboosted_certificates, _same),
    ("boost statuses not compared", ("diff.compare", "_compare_boost", lambda a, b, aspect: None), _boost_clear_changed,
     _differs),
    ("no fitness note read as empty", ("diff.load", "_fitness", _empty_fitness), _old_and_new_recording,
     _clocks_not_comparable),
    ("every layout compared", ("diff.compare", "coverage", lambda a, b: Coverage(None)),
     _full_and_quick, _same),
    ("calls not attributed to layouts", ("diff.load", "segment_layout", lambda key, layouts: None),
     _full_and_quick, _same),
]


def diff_in_process(tmp_path, a, b):
    from rmpeer.cli import main

    out = tmp_path / "mutant.json"
    out.unlink(missing_ok=True)
    rc = main(["diff", str(a), str(b), "--json", str(out)])
    return rc, json.loads(out.read_text())


@needs_evidence
@pytest.mark.parametrize("rule,mutant,pair,holds", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_rule_switched_off_changes_the_answer(tmp_path, monkeypatch, capsys, rule, mutant, pair, holds):
    import importlib

    a, b = pair(tmp_path)
    assert holds(*diff_in_process(tmp_path, a, b)), f"without the mutant: {rule}"
    module, name, value = mutant
    monkeypatch.setattr(importlib.import_module(f"rmpeer.{module}"), name, value)
    assert not holds(*diff_in_process(tmp_path, a, b)), f"the mutant '{rule}' survived"
