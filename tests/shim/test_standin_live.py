"""A whole live run in CI (issue 47, item 6): `rmpeer certify` on this host as on the H200 it
was recorded on, through the live shim, with libc and the engines' memory answered from a
recording (tests/shim/standin_live.py). Everything above libc is the live code, so the RM
client's parsing, the mappings, the copy engine's waits and the byte checks of a live run all
run here on real replies. Its certificate must say what the replay of the same recording says,
and the run must make every call the recorded run made, in order.

The recordings: those made by an rmpeer whose live calls are today's (the quick and passive
tiers of 1 x H200, recorded since the health controls came, 2026-12-01). An older recording
does not fit: today's live code makes calls its rmpeer did not (the health controls), and the
stand-in refuses the first of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
STANDIN = Path(__file__).with_name("standin_live.py")
RUNS = [(transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz", "quick"),
        (transcripts_dir() / "passive" / "h200x1-passive-20261201T222835Z.jsonl.gz", "passive"),
        (ROOT / "docs" / "evidence" / "h200x1-20261203T0905Z-session" / "onepath" / "h200x1-20261203T090714Z.jsonl.gz",
         "quick")]


def _env(tmp_path) -> dict:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    return dict(os.environ, NO_COLOR="1", RMPEER_STATE=str(state / "state.json"), RMPEER_LOCK=str(state / "lock"),
                RMPEER_KEY=str(state / "host.key"),
                PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))


def _outcomes(cert: dict) -> dict:
    return {c["id"]: c["outcome"] for c in cert["checks"]}


@pytest.mark.parametrize("recording, tier", RUNS, ids=[f"{p.name}-{t}" for p, t in RUNS])
def test_a_live_run_on_a_recorded_host_certifies_as_its_replay(recording, tier, tmp_path):
    if not recording.is_file():
        pytest.skip(f"{recording.name} is not in this checkout")
    env = _env(tmp_path)
    live = subprocess.run([sys.executable, str(STANDIN), str(recording), str(tmp_path / "live"), "--tier", tier],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    made = next((x for x in live.stderr.splitlines() if x.startswith("standin: ")), live.stderr[-2000:])
    replay = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording), "--tier", tier,
                             "--output", str(tmp_path / "replay")], capture_output=True, text=True, timeout=600,
                            cwd=tmp_path, env=env)
    assert live.returncode == replay.returncode == 0, (made, live.stdout[-2000:], replay.stdout[-2000:])
    total = made.split(" of ")[1].split(" ")[0]
    assert made.startswith(f"standin: {total} of {total} recorded calls made"), made
    cert = json.loads((tmp_path / "live" / "certificate.json").read_text())
    replayed = json.loads((tmp_path / "replay" / "replay-certificate.json").read_text())
    assert cert["target"]["kind"] == "live" and replayed["target"]["kind"] == "replay"
    assert cert["verdict"] == replayed["verdict"] and cert["reasons"] == replayed["reasons"]
    assert _outcomes(cert) == _outcomes(replayed) and len(cert["checks"]) > 5
    assert [(b["op"], b["src_card"], b["dst_card"], b["gbps"]) for b in cert.get("bandwidth", [])] == \
        [(b["op"], b["src_card"], b["dst_card"], b["gbps"]) for b in replayed.get("bandwidth", [])]
    assert cert["host"]["cards"][0]["uuid"] == replayed["host"]["cards"][0]["uuid"]


def test_a_live_run_whose_calls_leave_the_recorded_host_s_is_stopped(tmp_path):
    """The stand-in's own check: today's live code on a recording of 2026-11-30, before the
    health controls, makes a call that host never answered (the first health control, where
    the recorded run went on to its observations); the run stops on it (exit 5)."""
    old = transcripts_dir() / "h200x1-20261130T003119Z.jsonl.gz"
    live = subprocess.run([sys.executable, str(STANDIN), str(old), str(tmp_path / "live"), "--tier", "quick"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=_env(tmp_path))
    assert live.returncode == 5, live.stderr[-2000:]
    assert "the live run made an ioctl (libc is not told its label) where the recording has observe 'host:proc-gpus'" \
        in live.stderr, live.stderr[-2000:]
