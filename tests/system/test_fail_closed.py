"""A run that did not finish is never CERTIFIED (issue 16): SIGINT or SIGTERM mid-run, a run
in which no hardware check ran, and a host that is not the topology asked for. Each is run
as a user would (`rmpeer certify --replay` in a process of its own); the exit codes are the
documented ones (rmpeer/errors.py): 1 NOT CERTIFIED, 5 INCOMPLETE."""

import json
import os
import signal
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
TWO = sorted(transcripts_dir().glob("h200x2-*.jsonl.gz"))
needs_recording = pytest.mark.skipif(not TWO, reason="no two-card recording in fixtures/transcripts/")
PROGRESS_LINES = 3        # lines of progress seen before the signal: the run is under way


def _certificate(out):
    return json.loads((out / "replay-certificate.json").read_text())


@needs_recording
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_run_gives_incomplete(tmp_path, sig):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-u", "-m", "rmpeer", "certify", "--replay", str(TWO[0]), "--output",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if sum(1 for x in seen if x.startswith("  ") and "s  " in x) >= PROGRESS_LINES:
            break
    proc.send_signal(sig)
    rest, _ = proc.communicate(timeout=300)
    text = "".join(seen) + rest
    assert proc.returncode == 5, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert "INCOMPLETE" in text and "CERTIFIED (" not in text.replace("NOT CERTIFIED", ""), text[-3000:]
    cert = _certificate(out)
    assert cert["verdict"] == "INCOMPLETE"
    assert any(signal.Signals(sig).name in r for r in cert["reasons"]), cert["reasons"]


@needs_recording
def test_no_hardware_check_run_is_incomplete_not_certified(tmp_path):
    """The suites replaced by an empty folder: pytest collects nothing, and certify says so."""
    empty = tmp_path / "suites"
    empty.mkdir()
    script = ("import sys, rmpeer.paths as r; r.suites_dir = lambda: __import__('pathlib').Path(sys.argv[1]); "
              "from rmpeer.cli import main; sys.exit(main(sys.argv[2:]))")
    done = subprocess.run([sys.executable, "-c", script, str(empty), "certify", "--replay", str(TWO[0]), "--layout",
                           "one-per-card", "--output", str(tmp_path / "out")], capture_output=True, text=True,
                          timeout=600)
    text = done.stdout + done.stderr
    assert done.returncode == 5, text[-3000:]
    cert = _certificate(tmp_path / "out")
    assert cert["verdict"] == "INCOMPLETE" and cert["checks"] == []
    assert any("no hardware check ran" in r for r in cert["reasons"]), cert["reasons"]


@needs_recording
def test_expect_topology_is_honoured(tmp_path):
    """The two-card recording, certified as the one-card topology: NOT CERTIFIED, saying why."""
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(TWO[0]), "--layout",
                           "one-per-card", "--expect-topology", "h200x1", "--output", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    text = done.stdout + done.stderr
    assert done.returncode == 1, text[-3000:]
    cert = _certificate(tmp_path / "out")
    assert cert["verdict"] == "NOT CERTIFIED"
    assert any("topology" in r and "h200x1" in r for r in cert["reasons"]), cert["reasons"]


@needs_recording
def test_the_json_summary_is_one_object_on_stdout(tmp_path):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(TWO[0]), "--layout",
                           "one-per-card", "--json", "--output", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["verdict"] == "CERTIFIED" and summary["target"] == "replay" and summary["exit_code"] == 0
    assert os.path.exists(summary["certificate"])


@needs_recording
@pytest.mark.parametrize("no_floors, code, verdict", [(False, 4, "DEGRADED"), (True, 0, "CERTIFIED")],
                         ids=["without-floors-degraded", "no-floors-certified"])
def test_a_host_without_floors_is_never_a_silent_pass(tmp_path, no_floors, code, verdict):
    """The recorded host with its topology entry removed and no efficiency for its copy engine
    (so that no floor can be derived either): its bandwidth is judged against nothing, so the
    verdict says so (DEGRADED), unless --no-floors accepts that."""
    import re
    import shutil

    from rmpeer.paths import matrices_dir

    matrices = tmp_path / "matrices"
    shutil.copytree(matrices_dir(), matrices)
    topologies = matrices / "topologies.yaml"
    text = topologies.read_text()
    kept = re.sub(r"\n  h200x2-nv18:\n(    .*\n|\s*\n)*", "\n", text)
    assert kept != text
    topologies.write_text(kept)
    efficiencies = matrices / "efficiencies.yaml"
    lean = re.sub(r"\n  hopper:\n(    .*\n|\s*\n)*", "\n", efficiencies.read_text())
    assert lean != efficiencies.read_text()
    efficiencies.write_text(lean)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(TWO[0]), "--layout",
                           "one-per-card", "--output", str(tmp_path / "out"), *(["--no-floors"] if no_floors else [])],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, RMPEER_MATRICES=str(matrices)))
    text = done.stdout + done.stderr
    assert done.returncode == code, text[-3000:]
    cert = _certificate(tmp_path / "out")
    assert cert["verdict"] == verdict and cert["topology"] is None
    if not no_floors:
        assert any(re.search(r"no floors for this host: no entry of (matrices/)?topologies\.yaml matches.*"
                             r"none derived: card 0 .*copy-engine class is none", r)
                   for r in cert["reasons"]), cert["reasons"]
