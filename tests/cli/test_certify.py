"""`rmpeer certify --replay`: the main job against recordings of real hosts, run as a user
would (from a directory outside the checkout, relative paths), labelled as a replay of that
host everywhere and never as a certificate of this machine; and a host recorded at idle
clocks (--no-boost) comes out DEGRADED (exit 4), saying why. Each replay's JSON line is the
one the code before the one-run-path move gave (tests/verdicts_before.py)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from verdicts_before import TOOL, now, row

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.e2e
RECORDED = sorted(transcripts_dir().glob("*.jsonl.gz"))
DEGRADED = sorted((transcripts_dir() / "degraded").glob("*.jsonl.gz"))


def certify(cwd: Path, *args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", *args, "--json"], cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    return done.returncode, done.stdout + done.stderr


def same_as_before(recording: Path, out: str, rc: int) -> None:
    if TOOL.is_file():      # the table's tool is in the checkout, not in the wheel
        assert now(out, rc) == row(recording, "own")


@pytest.mark.parametrize("recording", RECORDED, ids=lambda p: p.name.split("-")[0])
def test_each_recording_certifies_from_another_directory(tmp_path, recording):
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy(recording, work / recording.name)
    rc, out = certify(work, "--replay", recording.name, "--output", "out")    # both relative to cwd
    label = recording.name.split("-")[0]
    assert rc == 0, out[-3000:]
    assert f"REPLAY of {label} recorded on" in out and "CERTIFIED" in out
    assert not (work / "out" / "certificate.json").exists(), "a replay never writes a certificate of this machine"
    cert = json.loads((work / "out" / "replay-certificate.json").read_text())
    assert cert["target"]["kind"] == "replay" and cert["target"]["recorded_label"] == label
    assert "NOT a certificate" in cert["target"]["note"]
    assert cert["verdict"] == "CERTIFIED" and not cert["counts"].get("failed") and not cert["counts"].get("error")
    assert {c["name"] for c in cert["host"]["cards"]} == {"NVIDIA H200"}
    cards = len(cert["host"]["cards"])
    cells = {(p["src_card"], p["dst_card"]) for p in cert["pairs"] if p["op"] in ("read", "write")}
    assert cells == {(a, b) for a in range(cards) for b in range(cards)}
    assert all(p["ok"] for p in cert["pairs"]), "every pair read and written correctly"
    ran = [c for c in cert["checks"] if c["outcome"] != "skipped"]
    assert ran and {c["area"] for c in ran} >= {"setup", "read/write", "fitness"}
    assert cert["boost"]["asked"] and cert["boost"]["released"] and cert["bandwidth"]
    size = (work / "out" / "replay-certificate.json").stat().st_size
    assert size < 450_000, f"the certificate stays small (every check and pair, nothing more): {size} bytes"
    same_as_before(recording, out, rc)


@pytest.mark.parametrize("recording", DEGRADED, ids=lambda p: p.name.split("-")[0])
def test_a_host_at_idle_clocks_is_degraded(tmp_path, recording):
    rc, out = certify(tmp_path, "--replay", str(recording), "--output", str(tmp_path / "out"))
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert rc == 4, out[-3000:]
    assert cert["verdict"] == "DEGRADED", cert["reasons"]
    assert all("below the floor" in r and "345 MHz" in r for r in cert["reasons"]), cert["reasons"]
    assert "DEGRADED" in out and "boost: not asked (--no-boost)" in out
    same_as_before(recording, out, rc)
