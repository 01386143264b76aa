"""One fault reads as one reason (issue 44): the findings a fault makes share its cause
(rmpeer.model.result.Finding.cause) and the judge says them once, counted; the verdict line
stays under 400 characters and never cuts a word. The faults are real ones: a recording of a
2 x H200 host whose read-backs hold another session's pattern (tests/slurm/recordings.py:
the healthy recording with the second half of every later block's words re-owned), and the
committed --no-boost recording (the clocks at idle)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.judge.verdict import floor_cause, reasons_of
from rmpeer.model.result import DEGRADE, FAIL, Finding, short
from rmpeer.render.verdict import LINE_CHARS
from rmpeer.traffic import patterns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from slurm.recordings import IDLE_CLOCKS, wrong_memory  # noqa: E402

pytestmark = pytest.mark.offline
WRONG = "wrong memory: another session's pattern where the session's own belongs"


def _replay(tmp_path, recording) -> tuple[int, str, dict]:
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording), "--output",
                           str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    return done.returncode, done.stdout, cert


def _verdict_line(stdout: str, verdict: str) -> str:
    return next(line for line in stdout.splitlines() if f": {verdict}" in line and line.startswith("REPLAY of"))


def test_a_block_holding_another_sessions_pattern_is_diagnosed_wrong_memory():
    # the word of session 1's buffer pattern where session 0's belongs (patterns.py's layout)
    got = patterns.make(0x32DB, patterns.KIND_BUFFER, 1, 8)
    cause, text = patterns.diagnose(got.tobytes(), 0, pattern_seed=0x32DB, kind=patterns.KIND_BUFFER, owner=0,
                                    cards=[0, 1])
    assert cause == WRONG and text.startswith("wrong memory: found the buffer pattern of session 1 (card 1)")
    stale = patterns.make(0x1111, patterns.KIND_BUFFER, 0, 8)
    assert patterns.diagnose(stale.tobytes(), 0, pattern_seed=0x32DB, kind=patterns.KIND_BUFFER, owner=0,
                             cards=[0])[0] == patterns.STALE


def test_wrong_memory_in_every_window_is_one_reason_of_32_checks(tmp_path):
    rc, out, cert = _replay(tmp_path, wrong_memory(tmp_path / "wrong.jsonl.gz"))
    assert rc == 1, out[-2000:]
    assert cert["counts"]["failed"] == 32
    assert cert["reasons"] == [r for r in cert["reasons"] if r.startswith("32 read/write checks: " + WRONG)]
    assert len(cert["reasons"]) == 1, cert["reasons"]
    # every finding is kept, each with its cause
    assert sum(f.get("cause") == WRONG for f in cert["findings"]) == 32
    line = _verdict_line(out, "NOT CERTIFIED")
    verdict_text = line.split(": ", 1)[1].split(" (32 failed")[0]
    assert len(line) <= LINE_CHARS, line      # the whole verdict line, the replay's words included
    assert "card 0 (GPU-" in verdict_text and "card 1 (GPU-" in verdict_text and "pair 0-1" in verdict_text


def test_floors_missed_at_idle_clocks_are_one_reason_naming_the_boost(tmp_path):
    rc, out, cert = _replay(tmp_path, IDLE_CLOCKS)
    assert rc == 4, out[-2000:]
    assert len(cert["reasons"]) == 1, cert["reasons"]
    assert cert["reasons"][0].startswith("7 bandwidth-floor checks: below the floor (calibrated): the clocks stayed at 345 MHz "
                                         "graphics (the boost was not asked: --no-boost)")


def test_findings_of_one_cause_are_counted_and_others_stay_apart():
    floor = lambda subject: Finding("bandwidth-floor", subject, "at least 355 GB/s", "233 GB/s", DEGRADE,  # noqa: E731
                                    cause="below the floors: at 345 MHz")
    remap = Finding("row-remap", "card 1", "no pending row remap", "a row remap pending", FAIL)
    reasons = reasons_of([floor(f"read {s}->{t}") for s, t in ((0, 1), (1, 0), (0, 2), (2, 0))] + [remap])
    assert reasons == ["4 bandwidth-floor checks: below the floors: at 345 MHz (read 0->1, read 1->0, read 0->2 "
                       "and 1 more)", remap.text]
    # one finding of a cause is said in its own words, which are more precise than the cause
    assert reasons_of([floor("read 0->1")]) == [floor("read 0->1").text]


def test_the_same_finding_twice_is_one_member_of_its_cause():
    same = Finding("read", "interleaved s0 (card 0) -> t1 (card 1)", "x", "y", FAIL, cause=WRONG)
    other = Finding("write", "interleaved s0 (card 0) -> t1 (card 1)", "x", "y", FAIL, cause=WRONG)
    assert reasons_of([same, same, other]) == [f"2 read/write checks: {WRONG} (interleaved s0 (card 0) -> t1 "
                                                   "(card 1))"]


def test_a_reason_is_cut_between_words():
    text = "expected every byte of the buffer pattern of session 0, found " * 8
    cut = short(text, 100)
    assert len(cut) <= 100 and cut.endswith("...")
    assert text.startswith(cut[:-3]) and text[len(cut) - 3] == " ", cut


def test_the_floor_cause_names_the_clocks_and_whether_the_boost_was_asked():
    clocks = {"idle": {0: {"graphics_mhz": 345}}, "after-traffic": {0: {"graphics_mhz": 345}, 1: {"graphics_mhz": 345}}}
    assert floor_cause(clocks, False) == "the clocks stayed at 345 MHz graphics (the boost was not asked: --no-boost)"
    assert floor_cause(clocks, True) == "measured at 345 MHz graphics with the boost asked"
