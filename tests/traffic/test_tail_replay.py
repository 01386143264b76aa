"""Blocks of any size, on real runs (issue 47, item 7): the live full and quick certifies of
docs/evidence/h200x1-20261205T0454Z-tail ran at --extent 10MiB (each window one 8 MiB slice and
a 2 MiB tail) and were CERTIFIED; every window's read-back covered the whole 10 MiB. Their quick
recording, derived here (under tmp_path, never committed) with one byte of one read-back flipped
in the tail slice, replays NOT CERTIFIED naming that byte; as recorded, it replays CERTIFIED."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
TAIL = ROOT / "docs" / "evidence" / "h200x1-20261205T0454Z-tail" / "tail"
QUICK, FULL = TAIL / "recordings" / "quick-10MiB.jsonl.gz", TAIL / "recordings" / "full-10MiB.jsonl.gz"
EXTENT, SLICE = 10 << 20, 8 << 20          # --extent 10MiB; rmpeer.machine.slices' 8 MiB
needs = pytest.mark.skipif(not QUICK.is_file(), reason="docs/evidence (a checkout, not a wheel)")


def _replay(path: Path, out: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(path), "--output", str(out),
                           "--json"], capture_output=True, text=True, env=env, timeout=300)
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def _flipped(dest: Path, word: int) -> Path:
    """The quick recording with byte 0 of word `word` of the first read test's read-back
    flipped (bit 0): one reply of the recorded memory changed, every other line as recorded."""
    lines, out, seg, done = gzip.open(QUICK, "rt").read().splitlines(), [], None, False
    for line in lines:
        rec = json.loads(line)
        seg = rec.get("key") if rec.get("note") == "segment" else seg
        if not done and rec.get("op") == "mem.view" and str(seg).startswith("test:test_cross_card_rw:test_read:"):
            (first, count, value), = rec["extra"]["runs"]
            assert (first, count) == (0, EXTENT // 8)
            runs = [[0, word, value], [word, 1, (value + word) ^ 1], [word + 1, count - word - 1, value + word + 1]]
            rec["extra"]["runs"] = [r for r in runs if r[1]]
            line, done = json.dumps(rec), True
        out.append(line)
    assert done
    with gzip.open(dest, "wt") as f:
        f.write("\n".join(out) + "\n")
    return dest


@needs
@pytest.mark.parametrize("path", [QUICK, FULL], ids=["quick", "full"])
def test_every_read_back_of_the_live_10_mib_runs_covers_the_whole_block(path):
    header = json.loads(gzip.open(path, "rt").readline())["header"]
    assert header["run"]["extent"] == EXTENT and EXTENT % SLICE
    views = [json.loads(x) for x in gzip.open(path, "rt") if '"mem.view"' in x]
    covered = [sum(r[1] for r in v["extra"]["runs"]) * 8 for v in views if "readback" in v.get("label", "")]
    assert covered and set(covered) == {EXTENT}, set(covered)


@needs
def test_the_live_10_mib_quick_run_replays_certified(tmp_path):
    rc, line = _replay(QUICK, tmp_path / "out")
    assert (rc, line["verdict"]) == (0, "CERTIFIED"), line


@needs
@pytest.mark.parametrize("word, offset", [(EXTENT // 8 - 1, "0x9ffff8"), (SLICE // 8, "0x800000")],
                         ids=["last-byte-of-the-tail", "first-byte-of-the-tail"])
def test_a_flip_in_the_tail_slice_is_not_certified_naming_its_offset(tmp_path, word, offset):
    rc, line = _replay(_flipped(tmp_path / "flipped.jsonl.gz", word), tmp_path / "out")
    assert (rc, line["verdict"]) == (1, "NOT CERTIFIED"), line
    (reason,) = line["reasons"]
    assert reason.startswith("read: one-per-card s0 (card 0) -> t0 (card 0):") and \
        f"found 1 bytes differ, the first at offset {offset} " in reason, reason
