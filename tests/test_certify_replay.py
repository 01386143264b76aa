"""`rmpeer certify --replay`: the main job against recordings of real hosts, run as a user
would (from a directory outside the checkout, relative paths), labelled as a replay of that
host everywhere and never as a certificate of this machine; and a host recorded at idle
clocks (--no-boost) comes out DEGRADED, saying why."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.resources import transcripts_dir

pytestmark = pytest.mark.e2e
RECORDED = sorted(transcripts_dir().glob("*.jsonl.gz"))
DEGRADED = sorted((transcripts_dir() / "degraded").glob("*.jsonl.gz"))


def certify(cwd: Path, *args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=900)
    return done.returncode, done.stdout + done.stderr


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
    assert cert["subject"]["kind"] == "replay" and cert["subject"]["recorded_label"] == label
    assert "NOT a certificate" in cert["subject"]["note"]
    assert cert["verdict"] == "CERTIFIED" and not cert["counts"].get("failed") and not cert["counts"].get("error")
    assert {c["name"] for c in cert["host"]["cards"]} == {"NVIDIA H200"}
    cards = len(cert["host"]["cards"])
    assert set(cert["pairs"]) == {f"{a}->{b}" for a in range(cards) for b in range(cards)}
    ran = [t for t in cert["tests"] if t["outcome"] != "skipped"]
    assert ran and all(t["nodeid"].count("[replay:") == 1 for t in ran), "every test that ran says it is a replay"
    assert cert["fitness"]["boost"]["asked"] and cert["fitness"]["bandwidth"]
    assert len(json.dumps(cert)) < 400_000, "the certificate stays small"


@pytest.mark.parametrize("recording", DEGRADED, ids=lambda p: p.name.split("-")[0])
def test_a_host_at_idle_clocks_is_degraded(tmp_path, recording):
    rc, out = certify(tmp_path, "--replay", str(recording), "--output", str(tmp_path / "out"))
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert rc == 1, out[-3000:]
    assert cert["verdict"] == "DEGRADED", cert["reasons"]
    assert all("below the floor" in r and "345 MHz" in r for r in cert["reasons"]), cert["reasons"]
    assert "DEGRADED" in out and "boost: not asked (--no-boost)" in out
