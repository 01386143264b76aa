"""How the shipped hooks pick the cards (issue 25, part 1): the Slurm prolog reads the job's
SLURM_JOB_GPUS (then CUDA_VISIBLE_DEVICES), the Kubernetes Job and the NPD plugin
NVIDIA_VISIBLE_DEVICES. The hooks are run as shipped, with no environment but the job's; the
rmpeer they call is the real one (`python -m rmpeer`, through a two-line wrapper that also
writes down its arguments), certifying a stand-in recording where a run is expected."""

import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
HOOKS = Path(__file__).resolve().parents[2] / "rmpeer" / "integrations"
ROOT = Path(__file__).resolve().parents[2]


def _rmpeer(tmp_path) -> Path:
    """`rmpeer` as the hooks call it: the package's own CLI, its argv kept in args.txt."""
    script = tmp_path / "rmpeer"
    script.write_text(f"#!/bin/sh\necho \"$@\" >>{tmp_path}/args.txt\n"
                      f"PYTHONPATH={ROOT} exec {sys.executable} -m rmpeer \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _prolog(tmp_path, **env):
    defaults = tmp_path / "defaults"
    defaults.write_text(f"RMPEER={_rmpeer(tmp_path)}\nRMPEER_STATE_DIR={tmp_path}/state\n"
                        f"RMPEER_LOG_FILE={tmp_path}/hooks.log\n")
    done = subprocess.run([str(HOOKS / "slurm" / "rmpeer-prolog")], capture_output=True, text=True, timeout=300,
                          env={"RMPEER_DEFAULTS": str(defaults), "SLURM_JOB_ID": "7", **env})
    read = lambda name: (tmp_path / name).read_text() if (tmp_path / name).exists() else ""   # noqa: E731
    return done, read("args.txt"), read("hooks.log")


def test_the_prolog_skips_a_job_without_gpus(tmp_path):
    done, args, log = _prolog(tmp_path)
    assert done.returncode == 0 and args == "", "a job with no GPUs: nothing run on the node's GPUs"
    assert "the job has no GPUs" in log


def test_the_prolog_takes_the_jobs_gpus(tmp_path):
    done, args, log = _prolog(tmp_path, SLURM_JOB_GPUS="")
    assert "--cards-env SLURM_JOB_GPUS,CUDA_VISIBLE_DEVICES" in args
    # an empty SLURM_JOB_GPUS names no card: no verdict (certify exit 2), and the job starts
    assert done.returncode == 0 and "no verdict (rmpeer exit 2" in log and "names no card" in log


def test_the_prolog_with_every_card_asked_for(tmp_path):
    done, args, _ = _prolog(tmp_path, RMPEER_PROLOG_CARDS="all", RMPEER_STAND_IN=str(
        transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"))   # one layout: what matters is the options
    assert "--all-cards" in args and "--cards-env" not in args
    assert done.returncode == 0


def test_kubernetes_takes_nvidia_visible_devices():
    job = yaml.safe_load((HOOKS / "kubernetes" / "rmpeer-sweep-job.yaml").read_text())
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--cards-env") + 1] == "NVIDIA_VISIBLE_DEVICES"
    assert "--cards-env NVIDIA_VISIBLE_DEVICES" in (HOOKS / "kubernetes" / "npd" / "rmpeer-npd.sh").read_text()


def test_fleet_node_passes_the_card_options_to_certify():
    from rmpeer.cli.fleet import add_parser
    from rmpeer.fleet.node import certify_args
    from rmpeer.cli.cards import passed_on
    import argparse

    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers(dest="command"))
    args = p.parse_args(["fleet", "node", "--output", "o", "--cards-env", "SLURM_JOB_GPUS"])
    assert certify_args("quick", Path("o"), None, None, False, passed_on(args))[-2:] == ["--cards-env", "SLURM_JOB_GPUS"]
    args = p.parse_args(["fleet", "node", "--output", "o", "--cards", "GPU-ab,1"])
    assert certify_args("quick", Path("o"), None, None, False, passed_on(args))[-2:] == ["--cards", "GPU-ab,1"]


def test_the_prolog_run_by_hand_takes_every_card(tmp_path):
    """Without a job id (not slurmd's run) there is no job to take the GPUs of."""
    defaults = tmp_path / "defaults"
    defaults.write_text(f"RMPEER={_rmpeer(tmp_path)}\nRMPEER_STATE_DIR={tmp_path}/state\n"
                        f"RMPEER_LOG_FILE={tmp_path}/hooks.log\n")
    subprocess.run([str(HOOKS / "slurm" / "rmpeer-prolog")], capture_output=True, text=True, timeout=300,
                   env={"RMPEER_DEFAULTS": str(defaults)})
    assert "--cards-env SLURM_JOB_GPUS,CUDA_VISIBLE_DEVICES" in (tmp_path / "args.txt").read_text()
