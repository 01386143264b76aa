"""The few scontrol and srun calls the collector makes (never from a prolog: the prolog only
exits non-zero and lets slurmd drain). A drain carries the `rmpeer:` prefix; a resume only
ever touches a node whose reason carries it, so a human's drain is never undone."""

from __future__ import annotations

import shutil
import subprocess

from rmpeer.errors import ConfigError
from rmpeer.fleet.outcome import REASON_PREFIX


def _scontrol(*args, timeout=30) -> subprocess.CompletedProcess:
    if not shutil.which("scontrol"):
        raise ConfigError("scontrol is not on PATH: --drain needs Slurm's client commands on this machine")
    return subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=timeout)


def node_info(node: str) -> dict:
    """`scontrol show node -o`: State (e.g. IDLE+DRAIN) and Reason (without its [user@time] tail)."""
    done = _scontrol("show", "node", node, "-o")
    if done.returncode:
        return {}
    text = done.stdout.strip()
    info = {k: v for k, _, v in (f.partition("=") for f in text.split(" "))}
    info["Reason"] = text.split(" Reason=", 1)[1].rsplit(" [", 1)[0] if " Reason=" in text else ""
    return info


def is_drained(info: dict) -> bool:
    return any(s in info.get("State", "") for s in ("DRAIN", "DOWN", "FAIL"))


def ours(info: dict) -> bool:
    return info.get("Reason", "").startswith(REASON_PREFIX)


def drain(node: str, reason: str) -> str:
    done = _scontrol("update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
    return "" if done.returncode == 0 else done.stderr.strip()


def resume(node: str) -> str:
    done = _scontrol("update", f"NodeName={node}", "State=RESUME")
    return "" if done.returncode == 0 else done.stderr.strip()


def run_on(node: str, command: list, time_limit_min: int, timeout: float) -> int:
    """One task on one node (exclusive), waiting for it: the collector's re-run."""
    cmd = ["srun", "--immediate=60", f"--nodelist={node}", "-N1", "-n1", "--exclusive",
           f"--time={time_limit_min}", "--job-name=rmpeer-rerun", *command]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return -1
