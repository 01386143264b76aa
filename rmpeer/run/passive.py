"""The passive tier: what RM says of the host, read without touching the GPUs' work.

It opens one RM client and reads facts only: the cards and their UUIDs, the P2P capability
matrix, each card's NVLinks (state and error counters), clocks and P-state, the Xids the
kernel logged since the last run and the other GPU processes. It allocates no video memory
and drives no engine (no staging buffer, no channel, no boost), so it is safe while a job
holds the GPUs. What it reads is compared with the last run's, kept in a state file
(rmpeer.machine.state): a counter that grew, a link that went down, a card that disappeared.

Every reader is the one the deeper tiers use (rm.host discovery, rm.nvlink, rm.perf through
fitness.Fitness, xids). A recording of any tier replays a passive run
(rmpeer.shim.passive_replay): the passive calls are a subset, in order, of the recording's
runtime:open stretch.

What it read becomes one check per aspect and its findings in rmpeer.judge.passive (pure).
Fail closed: whatever could not be read is a finding of severity incomplete that says what.
"""

from __future__ import annotations

import time
from pathlib import Path

from dataclasses import dataclass, field

from rmpeer.judge.passive import passive_checks, unread
from rmpeer.judge.scope import host_view, state_cards
from rmpeer.machine.state import default_state_path, load_state, module_hash_cache, save_state
from rmpeer.machine.xids import KMSG, kmsg_records, parse_xid, read_kmsg_all
from rmpeer.model.result import INFO, UNFINISHED, Finding
from rmpeer.tables.load import matrices_digest
from rmpeer.rm.errors import RmError
from rmpeer.rm.host import read_proc_gpus
from rmpeer.rm.open import Runtime
from rmpeer.rm.snapshots import snapshot_runtime
from rmpeer.run.fingerprint import recorded_fingerprint, platform_fingerprint
from rmpeer.run.fitness import Fitness, start_clocks
from rmpeer.run.spec import chooser
from rmpeer.shim.records import new_transcript
from rmpeer.shim.passive_replay import PassiveReplay
from rmpeer.tables.topology import TopologyMatrix
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "host:proc-gpus", "host:xids", "gpu-processes:now")

TIER = "passive"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
# -- readers outside RM (each through shim.observe, so a recording serves them) ------------

def read_boot_id(path: str = BOOT_ID) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def xids_since(last: dict | None, kmsg: str | None = None, boot_path: str = BOOT_ID) -> dict:
    """The Xid lines the kernel logged since the last run's position in /dev/kmsg (all the
    ring holds on a first run or after a reboot): {readable, source, reason, complete,
    xids, last_seq, boot_id}."""
    kmsg = kmsg or KMSG
    boot = read_boot_id(boot_path)
    try:
        records = kmsg_records(read_kmsg_all(kmsg))
    except OSError as exc:
        return {"readable": False, "source": "kmsg", "reason": f"{kmsg}: {exc.strerror or exc}", "xids": []}
    same_boot = bool(last) and last.get("boot_id") == boot and last.get("kmsg_seq") is not None
    since = last["kmsg_seq"] if same_boot else -1
    seqs = [seq for seq, _ in records if seq is not None]
    out = {"readable": True, "source": "kmsg", "reason": None, "complete": True, "boot_id": boot,
           "last_seq": max(seqs) if seqs else (since if same_boot else None),
           "since": "the last run" if same_boot else "boot (no earlier run this boot)"}
    if same_boot and seqs and min(seqs) > since + 1:
        out["complete"] = False
        out["reason"] = (f"the kernel log ring no longer holds records {since + 1}..{min(seqs) - 1} "
                         "logged since the last run (overwritten)")
    out["xids"] = [dict(x, seq=seq) for seq, text in records
                   if seq is not None and seq > since for x in [parse_xid(text)] if x]
    return out


def gpu_processes(shim, runtime) -> dict | None:
    """The other processes holding the GPUs, from /proc and RM's own list (rmpeer.judge.sharedhost),
    or why they are not known; None in a replay of a recording that did not list them."""
    snap = snapshot_runtime(shim, runtime, label="gpu-processes:now")
    if snap is None:
        return None
    if snap.get("error"):
        return {"available": False, "reason": snap["error"]}
    # RM's refusals kept: beside them, the pids /proc hid from this user are holders unproven
    return {"available": True, "processes": snap.get("processes", []), "unreadable": snap.get("unreadable", []),
            "rm_errors": snap.get("rm_errors", {})}


# -- the run ------------------------------------------------------------------------------

def state_key(target) -> str:
    """Each target keeps its own history: the live host, or one recording."""
    return "live" if not target.is_replay else f"replay:{Path(target.path).name}"


def _shim(target, record: str | None, abi: str | None):
    if target.is_replay:
        return PassiveReplay(target.path)
    from rmpeer.shim.live import LiveShim

    if not record:
        return LiveShim()

    return LiveShim(new_transcript(record, target, {"tier": TIER, "pattern_seed": 0, "extent": 0,
                                                    "forced_abi": abi, "boost": False, "layouts": []}, kind=TIER))


def read_passive(target, last: dict | None, *, record: str | None = None, abi: str | None = None,
                 select=None) -> dict:
    """Opens RM, reads every passive fact, closes: {facts, proc_gpus, clocks, links, xids,
    gpu_processes, problems}. `problems`: what could not be read (RM refused, ...)."""
    # the clocks' reader: NVML starts on a thread of its own from here, beside RM's open and
    # the facts' reads, as the quick and full tiers' does (HostRun.open); a replay serves the
    # recorded reading and starts none
    early = None if target.is_replay else start_clocks()
    try:
        return _read(target, last, record, abi, select, early)
    finally:
        if early is not None:
            early.close()         # NVML ended in this process: read, or the run stopped first


def _read(target, last, record, abi, select, early) -> dict:
    shim = _shim(target, record, abi)
    shim.segment("runtime:open")
    out = {"problems": [], "header": shim.header}
    forced = shim.header.get("run", {}).get("forced_abi") if target.is_replay else abi
    runtime = Runtime(shim, forced_abi=forced, select=select)    # select: the cards taken (rmpeer.machine.selection)
    try:
        runtime.open()
        out["facts"] = runtime.facts
        out["proc_gpus"] = shim.observe("host:proc-gpus", read_proc_gpus)
        fitness = Fitness(runtime, boost=False, layout=None, clocks_source=early)
        out["clocks"] = fitness.read_clocks(TIER)
        out["links"] = fitness.read_links()
        out["xids"] = shim.observe("host:xids", lambda: xids_since(last))
        out["gpu_processes"] = gpu_processes(shim, runtime)
    except OSError as exc:
        out["problems"].append(f"RM: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else ""))
    except RmError as exc:
        out["problems"].append(f"RM refused {exc.line()}")
    except BaseException:
        try:                     # a failure while closing must not hide the one that stopped the run
            _close(shim, runtime)
        except Exception:
            pass
        raise
    _close(shim, runtime)
    return out


def _close(shim, runtime) -> None:
    shim.segment("runtime:close")
    runtime.close()          # frees the client, and every object under it
    shim.finish()


@dataclass
class PassiveSeen:
    """What a passive run read and found, for rmpeer.run.assemble (which alone makes the
    RunResult of it)."""

    started_s: float                   # time.time() at the start
    started: str                       # the same, ISO 8601 UTC (the state file's "at")
    matrices: str = ""
    host: dict = field(default_factory=dict)
    fingerprint: dict = field(default_factory=dict)
    topology: dict | None = None
    clocks: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    xids: dict | None = None
    gpu_processes: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    duration_s: float = 0.0


def observe(spec, *, state_path=None, allowed_xids=(), save: bool = True) -> PassiveSeen:
    """The passive tier's steps against spec.target (live, or a recording): RM's facts read,
    each aspect checked into findings, and the state file updated for the next run
    (save=False: left as it was). Not judged here: rmpeer.run.execute judges once."""
    target, topology_name = spec.target, spec.topology_name
    t0 = time.monotonic()
    started = time.time()
    seen = PassiveSeen(started_s=started, started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                       matrices=matrices_digest())
    state_path = Path(state_path or default_state_path())
    state, state_problem = load_state(state_path)
    key = state_key(target)
    last = state.get("runs", {}).get(key)
    read = read_passive(target, last, record=spec.record, abi=spec.abi, select=chooser(spec))
    facts = read.get("facts")
    if facts is None:
        seen.checks, seen.findings = unread(read["problems"])
        seen.duration_s = round(time.monotonic() - t0, 3)
        return seen
    matrix = TopologyMatrix()
    topology = matrix.get(topology_name) if topology_name else matrix.match(host_view(facts))
    seen.host = facts.as_dict()
    if target.is_replay:
        seen.fingerprint = recorded_fingerprint(facts, links=read.get("links"), matrices=seen.matrices,
                                                header=read.get("header"))
    else:
        seen.fingerprint = platform_fingerprint(facts, links=read.get("links"), matrices=seen.matrices,
                                                cache=module_hash_cache(state_path))
    seen.topology = ({"name": topology.name, "matched_by": "expected" if topology_name else "match"}
                     if topology else None)
    seen.clocks = {TIER: read.get("clocks", {})}
    seen.links = read.get("links", {})
    seen.xids = read.get("xids")
    seen.gpu_processes = {"now": read.get("gpu_processes")}
    history = []
    if state_problem:
        history.append(Finding("state", "host", "the last run's state", state_problem, UNFINISHED))
    elif last is None:
        history.append(Finding("state", "host", "a last run to compare with",
                               f"none in {state_path}: this run is the baseline", INFO))
    seen.checks, seen.findings = passive_checks(read, last, history, topology, topology_asked=bool(topology_name),
                                                allowed_xids=set(allowed_xids), replay=target.is_replay)
    seen.duration_s = round(time.monotonic() - t0, 3)
    if save:
        xids = read.get("xids") or {}
        runs = dict(state.get("runs", {}))
        last_links = (last or {}).get("links", {})
        runs[key] = {"at": seen.started, "boot_id": xids.get("boot_id", (last or {}).get("boot_id")),
                     "kmsg_seq": xids.get("last_seq", (last or {}).get("kmsg_seq")),
                     "cards": state_cards(facts, (last or {}).get("cards", [])),
                     # links not read this time (RM refused): the last reading stays the baseline
                     "links": {**last_links, **{c.uuid: read["links"][c.index] for c in facts.cards
                                                if c.index in read.get("links", {})}}}
        problem = save_state(state_path, {**state, "runs": runs})
        if problem:
            seen.findings.append(Finding("state", "host", "the state saved for the next run", problem, INFO))
    return seen


def remember_kmsg_position(target, state_path=None, *, kmsg: str | None = None,
                           boot_path: str = BOOT_ID) -> str | None:
    """After a quick or full run, which judged the Xids of its own time (and provoked some
    on purpose): the state's kernel log position moves to the end, so that the next passive
    run reports only what came later. None, or why it could not."""
    if target.is_replay:
        return None
    state_path = Path(state_path or default_state_path())
    state, problem = load_state(state_path)
    if problem:
        return problem
    try:
        seqs = [seq for seq, _ in kmsg_records(read_kmsg_all(kmsg) if kmsg else read_kmsg_all()) if seq is not None]
    except OSError as exc:
        return f"/dev/kmsg: {exc.strerror or exc}"
    runs = dict(state.get("runs", {}))
    key = state_key(target)
    runs[key] = {**runs.get(key, {}), "boot_id": read_boot_id(boot_path), "kmsg_seq": max(seqs) if seqs else None}
    return save_state(state_path, {**state, "runs": runs})
