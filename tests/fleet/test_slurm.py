"""Fleet mode against a real Slurm: munged, slurmctld and slurmd (three node names on one
slurmd host where the build allows) started on localhost by the fixture, each node standing
in for a GPU host with a recording (RMPEER_STAND_IN). Everything is read back from
`scontrol show node` and `sinfo -R`:
- a sweep over healthy recordings leaves every node IDLE;
- a node at idle clocks (the --no-boost recording) is re-run once, then drained with an
  `rmpeer:` reason; once it replays a healthy recording, `collect --drain` resumes it;
- a job whose prolog meets a NOT CERTIFIED recording does not start on that node;
- a tool error (exit 2, exit 3) in the prolog or the health check never drains a node;
- a human's drain is never resumed by rmpeer.
Under CI a missing Slurm fails the run (.ci/run installs it); elsewhere these tests skip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from slurm import harness
from slurm.recordings import HEALTHY, IDLE_CLOCKS, wrong_memory

from rmpeer.fleet.files import copy_out

pytestmark = pytest.mark.e2e
RMPEER = str(Path(sys.executable).with_name("rmpeer"))

WRAPPER = """#!/bin/sh
# What an admin's /etc/default/rmpeer would say, for the test cluster: this venv's rmpeer, a
# state folder per node name, and a stand-in recording where the test put one. The test
# cluster has no GPU gres (no SLURM_JOB_GPUS): the prolog takes every card, as on such nodes.
export RMPEER={rmpeer} RMPEER_STATE_DIR={root}/node-state/$SLURMD_NODENAME RMPEER_LOG_FILE={root}/hooks.log
export RMPEER_PROLOG_CARDS=all
export SLURM_CONF={root}/slurm.conf PATH={bin}:$PATH
[ -e {root}/stand-in/$SLURMD_NODENAME.jsonl.gz ] && export RMPEER_STAND_IN={root}/stand-in/$SLURMD_NODENAME.jsonl.gz
[ -x {root}/rmpeer-stand-in/$SLURMD_NODENAME ] && export RMPEER={root}/rmpeer-stand-in/$SLURMD_NODENAME
echo "$(date -u +%FT%TZ) {hook} on $SLURMD_NODENAME job $SLURM_JOB_ID extra=$SLURM_JOB_EXTRA comment=$SLURM_JOB_COMMENT" >>{root}/hooks.log
exec {root}/files/{hook}
"""

HEALTH_WRAPPER = """#!/bin/sh
# slurmd's timer runs this on every node every few seconds, with SLURMD_NODENAME and no PATH.
# It runs rmpeer's health check only where a test asked: a stand-in recording, or .live for
# the live path (no GPU here). The rest is what /etc/default/rmpeer would say.
h={root}/health-stand-in/$SLURMD_NODENAME
if [ -e $h.jsonl.gz ]; then export RMPEER_STAND_IN=$h.jsonl.gz; elif [ ! -e $h.live ]; then exit 0; fi
export RMPEER={rmpeer} RMPEER_STATE_DIR={root}/node-state/$SLURMD_NODENAME RMPEER_LOG_FILE={root}/hooks.log
export SLURM_CONF={root}/slurm.conf
exec {root}/files/rmpeer-healthcheck
"""
HEALTH_INTERVAL = 10


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    why = harness.why_not()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs Slurm and munge (.ci/run), but: {why}")
        pytest.skip(why)
    # Not under pytest's tmp folders: those are 0700, and munged (its own user) must reach its files.
    root = Path(tempfile.mkdtemp(prefix="rmpeer-slurm-"))
    os.chmod(root, 0o755)
    copy_out("slurm", root / "files")
    (root / "stand-in").mkdir()
    (root / "health-stand-in").mkdir()
    (root / "rmpeer-stand-in").mkdir()
    prolog, health = root / "prolog-wrapper", root / "health-wrapper"
    prolog.write_text(WRAPPER.format(rmpeer=RMPEER, root=root, bin=Path(RMPEER).parent, hook="rmpeer-prolog"))
    health.write_text(HEALTH_WRAPPER.format(rmpeer=RMPEER, root=root))
    for path in (prolog, health):
        path.chmod(0o755)
    c = harness.LocalSlurm(root, nodes=3, prolog=str(prolog), health_check=str(health),
                           health_interval=HEALTH_INTERVAL)
    try:
        c.start()
        yield c
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def slurm(cluster):
    """The cluster as each test finds it: no job, no stand-in, every node idle."""
    yield cluster
    cluster.run("scancel", "--user=root", check=False)
    health = list((cluster.root / "health-stand-in").iterdir())
    for f in [*(cluster.root / "stand-in").iterdir(), *(cluster.root / "rmpeer-stand-in").iterdir(), *health]:
        f.unlink()
    # A health check already under way may still drain after its stand-in is gone: resume
    # until the nodes stay up for a health-check interval.
    quiet_since = time.monotonic()
    while True:
        drained = [n for n in cluster.nodes if "DRAIN" in cluster.state(n)]
        for node in drained:
            cluster.run("scontrol", "update", f"NodeName={node}", "State=RESUME", check=False)
        if drained:
            quiet_since = time.monotonic()
        if not health or time.monotonic() - quiet_since > HEALTH_INTERVAL + 5:
            break
        time.sleep(1)


def stand_in(cluster, node, recording):
    target = cluster.root / "stand-in" / f"{node}.jsonl.gz"
    target.unlink(missing_ok=True)
    if recording is not None:
        shutil.copyfile(recording, target)


def fleet(cluster, *args, stand_ins=None, timeout=300):
    env = {**cluster.env, "PATH": f"{Path(RMPEER).parent}:{os.environ['PATH']}"}
    if stand_ins:
        env["RMPEER_STAND_IN"] = str(stand_ins)
    done = subprocess.run([RMPEER, "fleet", *args], env=env, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def sweep(cluster, shared, stand_ins, *extra):
    nodes = ",".join(cluster.nodes)
    rc, out = fleet(cluster, "sweep", "--nodes", nodes, "--tier", "full", "--shared", str(shared), "--wait",
                    "--rmpeer", RMPEER, "--time", "10", *extra, stand_ins=stand_ins)
    assert "submitted job" in out, out
    return rc, out


def folder_of(tmp_path, recordings: dict) -> Path:
    d = tmp_path / "recordings"
    d.mkdir(exist_ok=True)
    for node, rec in recordings.items():
        shutil.copyfile(rec, d / f"{node}.jsonl.gz")
    return d


def test_a_sweep_over_healthy_recordings_leaves_every_node_idle(slurm, tmp_path):
    shared = tmp_path / "shared"
    recs = folder_of(tmp_path, {n: HEALTHY for n in slurm.nodes})
    sweep(slurm, shared, recs, "--max-nodes", "2")      # a large fleet is split into several jobs
    record = json.loads((shared / "sweep.json").read_text())
    n = len(slurm.nodes)
    assert [len(j["nodes"]) for j in record["jobs"]] == [min(2, n - i) for i in range(0, n, 2)]
    assert all(j["job"].isdigit() for j in record["jobs"])
    assert sorted(n for j in record["jobs"] for n in j["nodes"]) == sorted(slurm.nodes)
    rc, out = fleet(slurm, "collect", str(shared), "--drain", "--no-report", stand_ins=recs)
    assert rc == 0, out
    lines = [json.loads(x) for x in (shared / "summary.jsonl").read_text().splitlines()]
    assert sorted(x["node"] for x in lines) == sorted(slurm.nodes)
    assert all(x["state"] == "pass" and x["verdict"] == "CERTIFIED" and x["replay_of"] for x in lines), lines
    for node in slurm.nodes:
        info = slurm.show_node(node)
        assert slurm.state(node) == "IDLE", info
        cert = json.loads((shared / node / "replay-certificate.json").read_text())
        assert "replay" in json.dumps(cert.get("subject") or cert.get("target")), "a stand-in says it is a replay"
    assert f"{len(slurm.nodes)} node(s): {len(slurm.nodes)} pass" in out


def test_a_node_at_idle_clocks_is_drained_then_resumed_once_it_passes(slurm, tmp_path):
    shared = tmp_path / "shared"
    slow = slurm.nodes[-1]
    recs = folder_of(tmp_path, {n: (IDLE_CLOCKS if n == slow else HEALTHY) for n in slurm.nodes})
    sweep(slurm, shared, recs)
    rc, out = fleet(slurm, "collect", str(shared), "--drain", "--no-report", stand_ins=recs)
    assert rc == 1, out
    assert f"{slow}: DEGRADED by bandwidth floors alone: running it once more" in out
    info = slurm.show_node(slow)
    assert "DRAIN" in info["State"], info
    assert info["Reason"].startswith("rmpeer: bandwidth-floor: "), info
    assert "below the floor" in info["Reason"]
    assert f"{slow}|rmpeer: bandwidth-floor:" in slurm.reasons()
    for node in slurm.nodes[:-1]:
        assert slurm.state(node) == "IDLE"
    # The way back: the node is mended (here: a healthy recording), checked again where it
    # stands (as an admin would over pdsh; a drained node takes no job), and collected.
    shutil.copyfile(HEALTHY, recs / f"{slow}.jsonl.gz")
    env = {**slurm.env, "RMPEER_STAND_IN": str(recs), "SLURMD_NODENAME": slow}
    done = subprocess.run([RMPEER, "fleet", "node", "--tier", "full", "--shared", str(shared)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rc, out = fleet(slurm, "collect", str(shared), "--drain", "--no-report", stand_ins=recs)
    assert rc == 0, out
    assert f"{slow}: resumed (was: rmpeer: bandwidth-floor:" in out
    assert slurm.state(slow) == "IDLE"
    assert slow not in slurm.reasons()


def test_rmpeer_never_resumes_a_node_a_human_drained(slurm, tmp_path):
    shared = tmp_path / "shared"
    node = slurm.nodes[0]
    recs = folder_of(tmp_path, {n: HEALTHY for n in slurm.nodes})
    sweep(slurm, shared, recs)
    slurm.run("scontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=bad fan, ticket 42")
    rc, out = fleet(slurm, "collect", str(shared), "--drain", "--no-report", stand_ins=recs)
    assert rc == 0, out
    assert "stays drained: its reason is not rmpeer's (bad fan, ticket 42)" in out
    info = slurm.show_node(node)
    assert "DRAIN" in info["State"] and info["Reason"] == "bad fan, ticket 42", info


def submit(cluster, node, marker, *extra):
    done = cluster.run("sbatch", "--parsable", f"--nodelist={node}", "-N1", "--time=5", *extra,
                       f"--output={cluster.root}/job-%j.out", "--wrap", f"touch {marker}")
    return done.stdout.strip().split(";")[0]


def wait_for(cluster, predicate, seconds=120):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def test_a_job_does_not_start_where_the_prolog_finds_the_node_not_certified(slurm, tmp_path):
    node = slurm.nodes[-1]
    stand_in(slurm, node, wrong_memory(tmp_path / "wrong-memory.jsonl.gz"))
    marker = tmp_path / "the-job-ran"
    job = submit(slurm, node, marker)
    assert wait_for(slurm, lambda: "DRAIN" in slurm.state(node)), slurm.show_node(node)
    info = slurm.show_node(node)
    assert info["Reason"].startswith("Prolog error"), info
    fields = dict(f.partition("=")[::2] for f in slurm.run("scontrol", "show", "job", job, "-o").stdout.split())
    assert fields["JobState"] in ("PENDING", "REQUEUED", "REQUEUE_HOLD"), fields
    assert not marker.exists(), "the job ran on a node its prolog found NOT CERTIFIED"
    log = (slurm.root / "hooks.log").read_text()
    assert f"node {node} job {job}: NOT CERTIFIED: rmpeer: " in log


def test_the_prolog_lets_a_job_run_on_a_certified_node_and_one_that_opted_out(slurm, tmp_path):
    node = slurm.nodes[0]
    stand_in(slurm, node, HEALTHY)
    marker = tmp_path / "ran"
    job = submit(slurm, node, marker)
    assert slurm.wait_job(job)["JobState"] == "COMPLETED"
    assert marker.exists() and slurm.state(node) == "IDLE"
    stand_in(slurm, node, wrong_memory(tmp_path / "wrong-memory.jsonl.gz"))
    # --extra came with Slurm 23.02; Debian 12's 22.05 has --comment, which the prolog also reads.
    has_extra = "--extra=" in slurm.run("sbatch", "--help").stdout
    job = submit(slurm, node, tmp_path / "ran-anyway", "--extra=rmpeer=off" if has_extra else "--comment=rmpeer=off")
    assert slurm.wait_job(job)["JobState"] == "COMPLETED"
    assert (tmp_path / "ran-anyway").exists() and slurm.state(node) == "IDLE"
    assert f"node {node} job {job}: skipped: the job asked for it (rmpeer=off)" in \
        (slurm.root / "hooks.log").read_text()


def test_tool_errors_in_the_prolog_never_drain(slurm, tmp_path):
    usage, no_gpu = slurm.nodes[0], slurm.nodes[1]
    garbage = tmp_path / "not-a-recording.jsonl.gz"
    garbage.write_text("this is not a recording\n")
    stand_in(slurm, usage, garbage)                 # certify: exit 2 (the recording cannot be read)
    stand_in(slurm, no_gpu, None)                   # no stand-in: the live path, no GPU here: exit 3
    jobs = {usage: submit(slurm, usage, tmp_path / "a"), no_gpu: submit(slurm, no_gpu, tmp_path / "b")}
    for node, job in jobs.items():
        assert slurm.wait_job(job)["JobState"] == "COMPLETED"
        assert slurm.state(node) == "IDLE", slurm.show_node(node)
    log = (slurm.root / "hooks.log").read_text()
    assert f"node {usage} job {jobs[usage]}: no verdict (rmpeer exit 2: rmpeer: tool: certify exit 2: " in log
    assert f"node {no_gpu} job {jobs[no_gpu]}: no verdict (rmpeer exit 3: rmpeer: tool: certify exit 3: " in log
    assert "(2 passed" not in slurm.reasons()


def job_state(cluster, job) -> str:
    done = cluster.run("scontrol", "show", "job", job, "-o", check=False)
    return dict(f.partition("=")[::2] for f in done.stdout.split()).get("JobState", "")


# What rmpeer-prolog meets in place of rmpeer: a command that prints a line and exits `code`.
EXITING = """#!/bin/sh
echo "rmpeer: tool: a stand-in rmpeer exiting {code}"
exit {code}
"""


def test_no_verdict_exits_never_drain_in_the_prolog(slurm, tmp_path):
    """Issue 27 row 8: rmpeer exiting 5 (incomplete), 6 (busy) and 7 (not idle), errors.py's
    codes of "no verdict", leaves each node IDLE and the job runs."""
    from rmpeer.errors import EXIT_BUSY, EXIT_INCOMPLETE, EXIT_NOT_IDLE

    codes = [EXIT_INCOMPLETE, EXIT_BUSY, EXIT_NOT_IDLE]
    for batch in range(0, len(codes), len(slurm.nodes)):
        jobs = {}
        for node, code in zip(slurm.nodes, codes[batch:batch + len(slurm.nodes)]):
            fake = slurm.root / "rmpeer-stand-in" / node
            fake.write_text(EXITING.format(code=code))
            fake.chmod(0o755)
            jobs[node] = (code, submit(slurm, node, tmp_path / f"ran-{code}"))
        for node, (code, job) in jobs.items():
            # the job ends, or (the bug) the node drains and the job waits: whichever comes first
            assert wait_for(slurm, lambda: "DRAIN" in slurm.state(node) or job_state(slurm, job) == "COMPLETED")
            assert slurm.state(node) == "IDLE" and (tmp_path / f"ran-{code}").exists(), slurm.show_node(node)
            assert f"node {node} job {job}: no verdict (rmpeer exit {code}: " in (slurm.root / "hooks.log").read_text()
        for node in jobs:
            (slurm.root / "rmpeer-stand-in" / node).unlink()


def test_collect_never_drains_a_node_that_gave_no_verdict(slurm, tmp_path):
    """Issue 27 row 9: a node whose status.json says exit 3 (no GPU access) is an error: `fleet
    collect --drain` leaves it IDLE and exits 5 (errors.py: no verdict)."""
    from rmpeer.errors import EXIT_INCOMPLETE

    node = slurm.nodes[0]
    shared = tmp_path / "shared"
    (shared / node).mkdir(parents=True)
    (shared / node / "status.json").write_text(json.dumps(
        {"exit": 3, "line": "rmpeer: tool: certify exit 3: no /dev/nvidiactl"}))
    env = {**slurm.env, "PATH": f"{Path(RMPEER).parent}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "collect", str(shared), "--drain", "--no-report"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == EXIT_INCOMPLETE, done.stdout + done.stderr
    assert slurm.state(node) == "IDLE", slurm.show_node(node)
    assert "drained" not in done.stdout, done.stdout


def health_stand_in(cluster, node, recording):
    """What slurmd's health check on `node` meets: a recording, or "live" (no GPU here)."""
    if recording == "live":
        (cluster.root / "health-stand-in" / f"{node}.live").touch()
    else:
        shutil.copyfile(recording, cluster.root / "health-stand-in" / f"{node}.jsonl.gz")


def test_slurmds_health_check_drains_with_an_rmpeer_reason_and_never_on_a_tool_error(slurm, tmp_path):
    """HealthCheckProgram run by slurmd itself, on its timer (HealthCheckInterval)."""
    slow, usage, live = slurm.nodes[0], slurm.nodes[1 % len(slurm.nodes)], slurm.nodes[-1]
    log = slurm.root / "hooks.log"
    health_stand_in(slurm, slow, IDLE_CLOCKS)
    assert wait_for(slurm, lambda: "DRAIN" in slurm.state(slow), 180), slurm.show_node(slow)
    info = slurm.show_node(slow)
    assert info["Reason"].startswith("rmpeer: bandwidth-floor: ") and "below the floor" in info["Reason"], info
    assert f"{slow}|rmpeer: bandwidth-floor:" in slurm.reasons()
    if len(slurm.nodes) < 3:
        return
    garbage = tmp_path / "not-a-recording.jsonl.gz"
    garbage.write_text("not a recording\n")
    health_stand_in(slurm, usage, garbage)
    health_stand_in(slurm, live, "live")       # live passive, no GPU: exit 3 (exit 2 before the tiers land)
    said = lambda node: f"rmpeer-healthcheck: node {node}: no verdict (rmpeer exit "
    assert wait_for(slurm, lambda: log.exists() and all(log.read_text().count(said(n)) >= 2 for n in (usage, live)),
                    180), log.read_text()[-3000:]
    assert f"{said(usage)}2: rmpeer: tool: certify exit 2: " in log.read_text()
    for node in (usage, live):
        assert slurm.state(node) == "IDLE", slurm.show_node(node)
