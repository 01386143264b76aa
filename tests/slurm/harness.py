"""A Slurm cluster on localhost, started for the fleet tests and stopped after them.

Debian's slurm-wlm and munge, as root, with everything (config, key, state, spool, logs,
munge's socket) under one temporary folder, and free ports: nothing of the machine's own
Slurm or munge is touched. Several node names run on one host, each with its own slurmd
(`slurmd -N nodeX`, NodeHostname=localhost and a port each), where this build allows it;
otherwise the cluster has one node. What worked on these machines is in
/work/shared/spec/FLEET.md (Debian's slurm-wlm 22.05)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

NEEDED = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")


def missing_tools() -> list[str]:
    return [t for t in NEEDED if not shutil.which(t)]


def why_not() -> str | None:
    """Why a cluster cannot start here, or None."""
    if os.geteuid() != 0:
        return "the Slurm tests start slurmctld and slurmd as root (SlurmUser=root); this is not root"
    missing = missing_tools()
    if missing:
        return f"no {', '.join(missing)}: apt-get install slurm-wlm munge"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no munge user: apt-get install munge"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """munged, slurmctld and one slurmd per node name, all under `root`."""

    def __init__(self, root: Path, nodes: int = 3, prolog: str | None = None, health_check: str | None = None,
                 health_interval: int = 0):
        self.root, self.wanted, self.prolog, self.health_check = Path(root), nodes, prolog, health_check
        self.health_interval = health_interval
        self.procs: list[subprocess.Popen] = []
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.socket = self.root / "munge" / "munge.socket"
        self.nodes: list[str] = []

    # -- the environment every Slurm command of the tests runs with ---------------------------
    @property
    def env(self) -> dict:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *cmd, timeout=30, check=True) -> subprocess.CompletedProcess:
        done = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
        return done

    # -- start and stop ----------------------------------------------------------------------
    def start(self):
        for sub in ("munge", "state", "spool", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self._start_munge()
        names = [f"node{i}" for i in range(1, self.wanted + 1)] if self.wanted > 1 else [self.host]
        try:
            self._start_slurm(names)
        except RuntimeError:
            if len(names) == 1:
                raise
            self.stop_slurm()          # this build runs one slurmd per host: a one-node cluster
            self._start_slurm([self.host])
        return self

    def _start_munge(self):
        munge = pwd.getpwnam("munge")
        key, mdir = self.root / "munge" / "munge.key", self.root / "munge"
        key.write_bytes(os.urandom(1024))
        for path in (mdir, key):
            os.chown(path, munge.pw_uid, munge.pw_gid)
        key.chmod(0o400)
        mdir.chmod(0o700)
        (self.root / "munge" / "log").touch()
        os.chown(self.root / "munge" / "log", munge.pw_uid, munge.pw_gid)
        os.chmod(self.root, 0o755)
        cmd = ["munged", "--foreground", f"--socket={self.socket}", f"--key-file={key}",
               f"--pid-file={mdir / 'munged.pid'}", f"--log-file={mdir / 'log'}", f"--seed-file={mdir / 'seed'}",
               "--force"]
        self.procs.append(subprocess.Popen(cmd, user="munge", group="munge", stdout=subprocess.DEVNULL,
                                           stderr=open(self.root / "log" / "munged.err", "w")))
        self._wait(lambda: self.socket.exists(), 10, "munged did not open its socket")

    def _write_conf(self, names: list[str]):
        cpus = os.cpu_count() or 1
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20) // 2
        r = self.root
        lines = [
            "ClusterName=rmpeertest", f"SlurmctldHost={self.host}(127.0.0.1)", f"SlurmctldPort={free_port()}",
            "SlurmUser=root", "SlurmdUser=root", "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "ReturnToService=2",
            "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            f"StateSaveLocation={r / 'state'}", f"SlurmdSpoolDir={r / 'spool' / '%n'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}", f"SlurmdPidFile={r / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={r / 'log' / 'slurmd-%n.log'}",
            "SlurmctldDebug=info", "SlurmdDebug=info", "SchedulerType=sched/builtin",
            "SlurmctldParameters=enable_configless", "MinJobAge=300", "InactiveLimit=0", "KillWait=5",
            "SchedulerParameters=nohold_on_prolog_fail",
            # Two cores shared with the replays: give a busy slurmd time to answer.
            "MessageTimeout=60", "SlurmdTimeout=600",
        ]
        if self.prolog:
            lines.append(f"Prolog={self.prolog}")
        if self.health_check:
            lines += [f"HealthCheckProgram={self.health_check}", f"HealthCheckInterval={self.health_interval}",
                      "HealthCheckNodeState=ANY"]
        one = len(names) == 1
        for name in names:
            port = "" if one else f" NodeHostname=localhost NodeAddr=127.0.0.1 Port={free_port()}"
            lines.append(f"NodeName={name}{port} CPUs={cpus} RealMemory={mem} State=UNKNOWN")
        if one:
            lines.insert(3, f"SlurmdPort={free_port()}")
        lines.append(f"PartitionName=main Nodes={','.join(names)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")

    def _start_slurm(self, names: list[str]):
        self._write_conf(names)
        for n in names:
            (self.root / "spool" / n).mkdir(parents=True, exist_ok=True)
        self.procs.append(self._daemon(["slurmctld", "-D", "-f", str(self.conf)], "slurmctld"))
        self._wait(lambda: self.run("scontrol", "ping", check=False).returncode == 0, 30,
                   "slurmctld did not answer scontrol ping")
        for n in names:
            cmd = ["slurmd", "-D", "-f", str(self.conf)] + ([] if len(names) == 1 else ["-N", n])
            self.procs.append(self._daemon(cmd, f"slurmd-{n}"))
        self.nodes = names
        self._wait(lambda: all(self.state(n) == "IDLE" for n in names), 40,
                   f"the nodes did not come up idle: {[self.state(n) for n in names]}; see {self.root / 'log'}")

    def _daemon(self, cmd, name):
        err = open(self.root / "log" / f"{name}.out", "w")
        return subprocess.Popen(cmd, env=self.env, stdout=err, stderr=subprocess.STDOUT, start_new_session=True)

    def _wait(self, ready, seconds, message):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{message}: {dead[0].args[0]} exited {dead[0].returncode}; "
                                   f"see {self.root / 'log'}")
            try:
                if ready():
                    return
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{message} (after {seconds} s)")

    def stop_slurm(self):
        keep = []
        for p in self.procs:
            if p.args[0] in ("slurmctld", "slurmd"):
                self._end(p)
            else:
                keep.append(p)
        self.procs = keep
        shutil.rmtree(self.root / "state", ignore_errors=True)
        (self.root / "state").mkdir()

    def stop(self):
        """Every daemon this cluster started, by its own pid; the slurmd's job steps too."""
        for p in reversed(self.procs):
            self._end(p)
        self.procs = []

    @staticmethod
    def _end(p: subprocess.Popen):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    # -- reading the cluster back ------------------------------------------------------------
    def show_node(self, name: str) -> dict:
        text = self.run("scontrol", "show", "node", name, "-o").stdout.strip()
        out = {}
        for field in text.split(" "):
            key, _, value = field.partition("=")
            out[key] = value
        # Reason may hold spaces: take everything after "Reason=" up to the " [user@time]" tail.
        if " Reason=" in text:
            out["Reason"] = text.split(" Reason=", 1)[1].rsplit(" [", 1)[0]
        return out

    def state(self, name: str) -> str:
        """The node's state and flags (IDLE, IDLE+DRAIN, ...), less NOT_RESPONDING: a slurmd
        slow to answer a ping on two busy cores is not what these tests are about."""
        return self.show_node(name).get("State", "").replace("+NOT_RESPONDING", "")

    def reasons(self) -> str:
        return self.run("sinfo", "-R", "-h", "-o", "%N|%E").stdout

    def wait_job(self, job_id: str, seconds: float = 120) -> dict:
        """Until the job has ended: its fields (JobState, ExitCode, ...)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            done = self.run("scontrol", "show", "job", job_id, "-o", check=False)
            fields = dict(f.partition("=")[::2] for f in done.stdout.split())
            if fields.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                                           "BOOT_FAIL", "OUT_OF_MEMORY", "PENDING", "REQUEUED") \
                    and fields.get("JobState") not in ("PENDING", "REQUEUED"):
                return fields
            time.sleep(0.5)
        raise TimeoutError(f"job {job_id} did not end in {seconds} s")
