"""`rmpeer fleet sweep`: one `sbatch --exclusive --ntasks-per-node=1 -N n` job over the nodes
(several jobs above --max-nodes, as aznhc splits at about 300), each node writing its own
folder <shared>/<node>/ through `rmpeer fleet node --shared`. The shared folder gets
sweep.json (nodes, tier, job ids) for the collector, which reports a listed node that wrote
nothing as an error."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rmpeer.errors import ConfigError, quoted
from rmpeer.safewrite import refuse_unsafe, write_file
from rmpeer.model.result import TIERS

SWEEP = "sweep.json"


def expand(nodes: str) -> list[str]:
    """A Slurm host list (node[1-3],gpu7) as names, by Slurm's own parser."""
    done = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True, timeout=30)
    if done.returncode or not done.stdout.split():
        # scontrol's last line says why (a host list it cannot parse, no Slurm configuration):
        # one line, as every refusal
        why = (done.stderr.strip().splitlines() or ["no names"])[-1].removeprefix("scontrol: ")
        raise ConfigError(f"--nodes {nodes!r}: scontrol could not expand it ({why})")
    return done.stdout.split()


def rmpeer_command() -> list[str]:
    """How a node starts this same rmpeer (the sweep assumes the same install path on every node)."""
    exe = shutil.which("rmpeer")
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0].endswith("rmpeer") else None
    if here and here.is_file():
        return [str(here)]
    return [exe] if exe else [sys.executable, "-m", "rmpeer"]


def batch_script(names: list[str], tier: str, shared: Path, rmpeer: list[str], time_min: int,
                 run_id: str = "") -> str:
    # the sweep's id goes into every node's status.json: a collector acts only on this sweep's
    task = " ".join(shlex.quote(a) for a in [*rmpeer, "fleet", "node", "--tier", tier, "--shared", str(shared),
                                              *(["--run-id", run_id] if run_id else [])])
    return "\n".join([
        "#!/bin/sh",
        "#SBATCH --job-name=rmpeer-sweep",
        "#SBATCH --exclusive",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --nodes={len(names)}",
        f"#SBATCH --nodelist={','.join(names)}",
        f"#SBATCH --time={time_min}",
        "# One rmpeer per node; each writes <shared>/<node>/ (status.json and its certificate).",
        f"srun --ntasks-per-node=1 --kill-on-bad-exit=0 {task}",
        "",
    ])


def submit(*, nodes: str, tier: str, shared: str, max_nodes: int = 300, time_min: int = 30,
           partition: str | None = None, rmpeer: str | None = None, wait: bool = False) -> int:
    if tier not in TIERS:
        raise ConfigError(f"--tier {tier!r}: one of {', '.join(TIERS)}")
    if max_nodes < 1:
        raise ConfigError(f"--max-nodes {max_nodes}: give at least 1 node per job")
    if not str(shared).isprintable():      # a line break would end the job script's line
        raise ConfigError(f"--shared {quoted(str(shared))}: a folder's name without line breaks or control characters")
    try:
        command = shlex.split(rmpeer) if rmpeer else rmpeer_command()
    except ValueError as exc:
        raise ConfigError(f"--rmpeer {quoted(rmpeer)}: not a command line ({exc})") from None
    if not command:
        raise ConfigError("--rmpeer '': give the command that starts rmpeer on the nodes")
    if not shutil.which("sbatch"):
        raise ConfigError("sbatch is not on PATH: the sweep submits a Slurm job")
    shared = Path(shared).resolve()
    names = expand(nodes)        # before the folder is made: a refused host list leaves nothing behind
    try:
        shared.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--shared {shared}: cannot create it ({exc.strerror})") from None
    chunks = [names[i:i + max_nodes] for i in range(0, len(names), max_nodes)]
    # every name the sweep writes, checked before any job is submitted: a link or a FIFO
    # planted at sweep.json (or a later chunk's script) would otherwise be refused only after
    # jobs ran with no record of them (rmpeer.safewrite refuses it again at the write)
    for name in [f"sweep-{n}.sh" for n in range(len(chunks))] + [SWEEP]:
        refuse_unsafe(shared / name, f"fleet sweep: {name}")
    jobs = []
    import uuid

    run_id = str(uuid.uuid4())
    for n, chunk in enumerate(chunks):
        script = shared / f"sweep-{n}.sh"
        write_file(script, batch_script(chunk, tier, shared, command, time_min, run_id))
        # the log's path on sbatch's command line, not in the script: no name can end a
        # directive's line there ('%' is sbatch's own pattern character, kept literal)
        log = str(shared).replace("%", "%%") + "/slurm-%j.out"
        cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []),
               *([f"--partition={partition}"] if partition else []), f"--output={log}", str(script)]
        # With --wait each sbatch blocks: start them all, then wait for each.
        jobs.append((chunk, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    record = {"nodes": names, "tier": tier, "run_id": run_id, "jobs": [], "submitted": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                          time.gmtime())}
    failed = False
    for chunk, proc in jobs:
        out, err = proc.communicate()
        job = out.strip().split(";")[0]
        record["jobs"].append({"job": job, "nodes": chunk, "sbatch_exit": proc.returncode})
        if not job:
            failed = True
            print(f"rmpeer fleet sweep: sbatch refused {len(chunk)} node(s): {err.strip()}", file=sys.stderr)
        else:
            print(f"submitted job {job}: {len(chunk)} node(s), tier {tier}, results under {shared}")
    write_file(shared / SWEEP, json.dumps(record, indent=1) + "\n")
    if failed:
        raise ConfigError("the sweep was not (wholly) submitted; see the lines above")
    return 0
