"""The Slurm hooks' own log file (RMPEER_LOG_FILE, set in /etc/default/rmpeer) where another
user could plant something at its name: a link is never written through (root appended to
the file it names), and a FIFO or a device is never opened (the prolog hung on a FIFO until
slurmd's timeout, which drains the node). The hook then logs to syslog alone, and its exit
code is as always. Found by a hostile-input hunt; each case failed before."""

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
SLURM = Path(__file__).resolve().parents[2] / "rmpeer" / "integrations" / "slurm"


def _plant(tmp_path, kind) -> Path:
    log = tmp_path / "hooks.log"
    if kind == "link":
        (tmp_path / "victim").write_text("root's file\n")
        log.symlink_to(tmp_path / "victim")
    elif kind == "fifo":
        os.mkfifo(log)
    return log


@pytest.mark.parametrize("hook", ["rmpeer-prolog", "rmpeer-healthcheck"])
@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_planted_log_file_is_neither_followed_nor_opened(tmp_path, hook, kind):
    log = _plant(tmp_path, kind)
    defaults = tmp_path / "defaults"
    # rmpeer itself is not what is tested: a stand-in that says no verdict (exit 2)
    defaults.write_text(f"RMPEER=/bin/false\nRMPEER_STATE_DIR={tmp_path}/state\nRMPEER_LOG_FILE={log}\n")
    done = subprocess.run([str(SLURM / hook)], capture_output=True, text=True, timeout=30,
                          env={"RMPEER_DEFAULTS": str(defaults), "SLURM_JOB_ID": "7", "RMPEER_PROLOG_CARDS": "all",
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr      # exit 1 of /bin/false is no verdict: never a drain
    if kind == "link":
        assert (tmp_path / "victim").read_text() == "root's file\n"


# -- the hooks' DEGRADED setting: a word they do not know never drains (issue 47, row 3) ----------

DEGRADED_RMPEER = """#!/bin/sh
# stand-in for rmpeer: a DEGRADED verdict of this run (status.json naming its run id), exit 4
while [ $# -gt 0 ]; do case $1 in --output) out=$2; shift ;; --run-id) id=$2; shift ;; esac; shift; done
mkdir -p "$out"
printf '{"node": "n1", "exit": 4, "verdict": "DEGRADED", "run_id": "%s", "line": "rmpeer: bandwidth-floor: x"}\\n' "$id" > "$out/status.json"
echo "rmpeer: bandwidth-floor: x"
exit 4
"""


@pytest.mark.parametrize("hook, variable, value, drains", [
    ("rmpeer-healthcheck", "RMPEER_HEALTH_DEGRADED", "drain", True),
    ("rmpeer-healthcheck", "RMPEER_HEALTH_DEGRADED", "pass", False),
    ("rmpeer-healthcheck", "RMPEER_HEALTH_DEGRADED", "keep", False),
    ("rmpeer-healthcheck", "RMPEER_HEALTH_DEGRADED", "PASS", False),
    ("rmpeer-healthcheck", "RMPEER_HEALTH_DEGRADED", "no", False),
    ("rmpeer-prolog", "RMPEER_PROLOG_DEGRADED", "drain", True),
    ("rmpeer-prolog", "RMPEER_PROLOG_DEGRADED", "pass", False),
    ("rmpeer-prolog", "RMPEER_PROLOG_DEGRADED", "Drain", False),
    ("rmpeer-prolog", "RMPEER_PROLOG_DEGRADED", "yes", False),
])
def test_an_unknown_degraded_setting_never_drains_and_is_logged_as_it_is(tmp_path, hook, variable, value, drains):
    stand_in = tmp_path / "rmpeer"
    stand_in.write_text(DEGRADED_RMPEER)
    stand_in.chmod(0o755)
    log = tmp_path / "hooks.log"
    defaults = tmp_path / "defaults"
    defaults.write_text(f"RMPEER={stand_in}\nRMPEER_STATE_DIR={tmp_path}/state\nRMPEER_LOG_FILE={log}\n"
                        f"{variable}={value}\n")
    done = subprocess.run([str(SLURM / hook)], capture_output=True, text=True, timeout=30,
                          env={"RMPEER_DEFAULTS": str(defaults), "SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1",
                               "RMPEER_PROLOG_CARDS": "all", "PATH": "/usr/bin:/bin"})
    said = log.read_text() if log.exists() else ""
    if hook == "rmpeer-prolog":
        assert done.returncode == (1 if drains else 0), said + done.stderr
    else:   # the health check drains through scontrol; not draining, it never calls it
        assert done.returncode == 0 and ("draining:" in said) == drains, said + done.stderr
    if value not in ("drain", "pass"):
        assert f"{variable}={value}" in said and "neither" in said, said


SWAPPING_RMPEER = """#!/bin/sh
# stand-in for rmpeer: while it runs (seconds, in a real run), the log file the hook checked is
# replaced by a link to another file: what another user who can write its folder may do
rm -f "$SWAP_LOG" && ln -s "$SWAP_VICTIM" "$SWAP_LOG"
echo "rmpeer: said on stderr" >&2
exit 2
"""


@pytest.mark.parametrize("hook", ["rmpeer-prolog", "rmpeer-healthcheck"])
def test_a_log_file_swapped_for_a_link_during_the_run_is_not_written_through(tmp_path, hook):
    """A hostile-input hunt: the hook checked RMPEER_LOG_FILE once, at its start, then opened it
    by name again for rmpeer's stderr and each line it logged after the run: a link put there
    in between had root append to the file it names. The hook now opens the log once."""
    stand_in = tmp_path / "rmpeer"
    stand_in.write_text(SWAPPING_RMPEER)
    stand_in.chmod(0o755)
    log, victim = tmp_path / "hooks.log", tmp_path / "victim"
    victim.write_text("root's file\n")
    defaults = tmp_path / "defaults"
    defaults.write_text(f"RMPEER={stand_in}\nRMPEER_STATE_DIR={tmp_path}/state\nRMPEER_LOG_FILE={log}\n")
    done = subprocess.run([str(SLURM / hook)], capture_output=True, text=True, timeout=30,
                          env={"RMPEER_DEFAULTS": str(defaults), "SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1",
                               "RMPEER_PROLOG_CARDS": "all", "PATH": "/usr/bin:/bin", "SWAP_LOG": str(log),
                               "SWAP_VICTIM": str(victim)})
    assert done.returncode == 0, done.stderr        # exit 2: no verdict, never a drain
    assert victim.read_text() == "root's file\n" and log.is_symlink()
