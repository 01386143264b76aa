"""Every hardware suite file passes when run alone against each committed recording (issue
16): no check depends on another having run first, the replay tears each layout down as the
recording did, and the Xid check knows which Xids the recorded run provoked on purpose (the
Xid 31 of a detection test that this run may not run). A mutant that forgets the recorded
detection faults makes the Xid check fail alone, so the rule is what lets it pass."""

import os
import subprocess
import sys

import pytest

from rmpeer.paths import pytest_args, pytest_env, suites_dir, transcripts_dir

pytestmark = pytest.mark.offline
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDINGS = sorted(transcripts_dir().glob("*.jsonl.gz"))
SUITES = sorted(p.name for p in suites_dir().glob("test_*.py"))


def alone(suite, recording, *extra):
    env = pytest_env(dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    env["PYTHONPATH"] = os.pathsep.join([TESTS, env["PYTHONPATH"]])
    done = subprocess.run([sys.executable, "-m", "pytest", str(suites_dir() / suite), "-q", "-p", "no:cacheprovider",
                           *pytest_args(), "-p", "mutants", "--rm-replay", str(recording), *extra],
                          cwd=suites_dir().parent, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


# The topology each recorded host is (fixtures/transcripts/README.md: the 2 x H200 host has
# NVLink NV18), given as --rm-topology to test_host.py alone: its topology check then runs
# against every recording instead of skipping ("no topology asked for").
TOPOLOGY_OF = {"h200x1": "h200x1", "h200x2": "h200x2-nv18"}


@pytest.mark.skipif(not RECORDINGS, reason="no recording in fixtures/transcripts/")
@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.name.split(".")[0])
@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_file_passes_alone(suite, recording):
    """Exit 0 only: pytest's 5 is "no tests collected", a file that tested nothing."""
    topology = ["--rm-topology", TOPOLOGY_OF[recording.name.split("-")[0]]] if suite == "test_host.py" else []
    rc, out = alone(suite, recording, *topology)
    assert rc == 0 and "error" not in out.splitlines()[-1], out[-3000:]
    if topology:
        assert "skipped" not in out.splitlines()[-1], f"a check of test_host.py skipped:\n{out[-3000:]}"


def test_the_xid_check_alone_needs_the_recorded_faults():
    recording = next((p for p in RECORDINGS if p.name.startswith("h200x1")), None)
    if recording is None:
        pytest.skip("no one-card recording")
    rc, out = alone("test_fitness.py", recording, "--rm-mutant", "no-recorded-faults")
    assert rc != 0 and "expected no Xid but those a detection test provokes, found Xid 31" in out, out[-3000:]
