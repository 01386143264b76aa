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
