"""Node folders as a sweep leaves them, made by `rmpeer fleet node` replaying the recordings
that stand in for hosts (tests/slurm/recordings.py): healthy, at idle clocks, wrong memory,
and a file that is not a recording (a tool error, exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from slurm.recordings import HEALTHY, IDLE_CLOCKS, wrong_memory

RMPEER = str(Path(sys.executable).with_name("rmpeer"))


def fleet_node(shared: Path, node: str, recording: Path | None, *extra, tier="full"):
    env = {k: v for k, v in os.environ.items() if k not in ("RMPEER_STAND_IN", "SLURMD_NODENAME")}
    env["NODE_NAME"] = node
    if recording is not None:
        env["RMPEER_STAND_IN"] = str(recording)
    done = subprocess.run([RMPEER, "fleet", "node", "--tier", tier, "--shared", str(shared), *extra], env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def make_sweep(root: Path) -> tuple[Path, dict]:
    """<root>/shared/<node>/ for four nodes; the exit code and stdout of each run."""
    garbage = root / "not-a-recording.jsonl.gz"
    garbage.write_text("this is not a recording\n")
    nodes = {"gpu-ok": HEALTHY, "gpu-slow": IDLE_CLOCKS, "gpu-bad": wrong_memory(root / "wrong-memory.jsonl.gz"),
             "gpu-tool": garbage}
    shared = root / "shared"
    runs = {n: fleet_node(shared, n, rec) for n, rec in nodes.items()}
    return shared, runs
