"""`rmpeer certify --replay`: the main job against a recording of a real host, labelled as a
replay of that host and date everywhere, never as a certificate of this machine."""

import json
import subprocess
import sys

import pytest

from rmpeer.resources import suites_dir
from rmpeer.targets import committed_transcripts

REPO = suites_dir().parent   # the checkout, or the installed package's copy

pytestmark = pytest.mark.e2e
TWO_GPU = [p for p in committed_transcripts() if "x2" in p]


@pytest.mark.skipif(not TWO_GPU, reason="no two-GPU transcript committed in fixtures/transcripts/")
def test_certify_a_recording(tmp_path):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", TWO_GPU[0], "--layout",
                           "one-per-card", "--output", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "REPLAY of h200x2 recorded on" in out and "CERTIFIED" in out
    assert not (tmp_path / "certificate.json").exists(), "a replay never writes a certificate of this machine"
    cert = json.loads((tmp_path / "replay-certificate.json").read_text())
    assert cert["subject"]["kind"] == "replay" and cert["subject"]["recorded_label"] == "h200x2"
    assert "NOT a certificate" in cert["subject"]["note"]
    assert cert["verdict"] == "CERTIFIED" and cert["counts"].get("failed", 0) == 0
    assert {c["name"] for c in cert["host"]["cards"]} == {"NVIDIA H200"}
    assert set(cert["pairs"]) == {"0->0", "0->1", "1->0", "1->1"}
    replayed = [t for t in cert["tests"] if t["params"].get("replay")]
    assert replayed and all("replay:" in t["nodeid"] for t in replayed)
