"""The passive tier: what RM says of the host, read without touching the GPUs' work.

It opens one RM client and reads facts only: the cards and their UUIDs, the P2P capability
matrix, each card's NVLinks (state and error counters), clocks and P-state, the Xids the
kernel logged since the last run and the other GPU processes. It allocates no video memory
and drives no engine (no staging buffer, no channel, no boost), so it is safe while a job
holds the GPUs. What it reads is compared with the last run's, kept in a state file
(rmpeer.machine.state): a counter that grew, a link that went down, a card that disappeared.

Every reader is the one the deeper tiers use (rm.host discovery, rm.nvlink, rm.perf through
fitness.Fitness, xids). A recording of any tier replays a passive run (PassiveReplay): the
passive calls are a subset, in order, of the recording's runtime:open stretch.

Fail closed: whatever could not be read is a finding of severity incomplete that says what.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

from dataclasses import dataclass, field

from rmpeer.errors import ReplayMismatch
from rmpeer.judge.health import health_findings
from rmpeer.judge.verdict import link_error_findings, link_state_findings, xid_findings
from rmpeer.machine.selection import (
    host_view, last_cards_here, other_cards_xids_dropped, some_cards, state_cards)
from rmpeer.machine.state import default_state_path, load_state, module_hash_cache, save_state
from rmpeer.machine.xids import KMSG, kmsg_records, parse_xid, read_kmsg_all
from rmpeer.model.result import FAIL, INFO, UNFINISHED, CheckResult, Finding
from rmpeer.paths import matrices_digest
from rmpeer.rm.errors import RmError
from rmpeer.rm.host import read_proc_gpus
from rmpeer.rm.open import Runtime
from rmpeer.rm.snapshots import snapshot_runtime
from rmpeer.run.fingerprint import recorded_fingerprint, platform_fingerprint
from rmpeer.run.fitness import Fitness
from rmpeer.run.spec import chooser
from rmpeer.shim.records import new_transcript
from rmpeer.shim.replay import ReplayShim
from rmpeer.tables.topology import TopologyMatrix

TIER = "passive"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
# A recording holds the clocks read at the run's start as "idle"; a passive run calls its
# own reading "passive" (a job may be running), and a replay serves the recorded one.
OBSERVE_ALIASES = {"host:clocks:passive": "host:clocks:idle"}


class PassiveReplay(ReplayShim):
    """A recording served to a passive run: calls the passive run does not make (the boost,
    the staging buffers, the layouts) are passed over; every call it makes must be in the
    recording's current stretch, in order, and is checked field by field as in any replay.
    An observation the stretch lacks is None ("not recorded")."""

    def _next(self, op: str, label: str):
        for i in range(self.pos, len(self.lines)):
            line = self.lines[i]
            if isinstance(line, dict):
                if line.get("note") == "segment":
                    break
                continue
            if line.op == op and line.label == label:
                self.pos = i + 1
                return copy.copy(line)

        raise ReplayMismatch(f"replay of {self.path}: in {self.current_segment!r} the passive run made a {op} "
                             f"call ({label}) that the recording does not have there")

    def end_segment(self, *, abandoned: bool = False) -> None:
        self.segment_checked = True      # a subset: the calls passed over are not owed

    def observe(self, label: str, read):
        for name in (label, OBSERVE_ALIASES.get(label)):
            if name is not None:
                try:
                    return super().observe(name, read)
                except ReplayMismatch:
                    pass
        # not in this stretch: a recording of a deeper tier read the kernel log at its end,
        # and those Xids are that run's own (its detection tests provoke some), not the
        # host's since an earlier run: they do not stand in for a passive reading
        return None


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
    return {"available": True, "processes": snap.get("processes", []), "unreadable": snap.get("unreadable", [])}


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
    shim = _shim(target, record, abi)
    shim.segment("runtime:open")
    out = {"problems": [], "header": shim.header}
    forced = shim.header.get("run", {}).get("forced_abi") if target.is_replay else abi
    runtime = Runtime(shim, forced_abi=forced, select=select)    # select: the cards taken (rmpeer.machine.selection)
    try:
        runtime.open()
        out["facts"] = runtime.facts
        out["proc_gpus"] = shim.observe("host:proc-gpus", read_proc_gpus)
        fitness = Fitness(runtime, boost=False, layout=None)
        out["clocks"] = fitness.read_clocks(TIER)
        out["links"] = fitness.read_links()
        out["xids"] = shim.observe("host:xids", lambda: xids_since(last))
        out["gpu_processes"] = gpu_processes(shim, runtime)
    except OSError as exc:
        out["problems"].append(f"RM: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else ""))
    except RmError as exc:
        out["problems"].append(f"RM refused {exc.label}: {exc.headline()}")
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


def _check(seen: "PassiveSeen", name: str, area: str, subject: str, findings: list, duration_s: float = 0.0):
    """One CheckResult per aspect: failed when it found a problem, error when it could not
    tell, skipped when a replay's recording does not hold what it reads, passed otherwise."""
    mine = [f for f in findings if f.severity != INFO]
    outcome = ("error" if any(f.severity == UNFINISHED for f in mine) else "failed" if mine else
               "skipped" if any(f.found.startswith("not recorded") for f in findings) else "passed")
    seen.checks.append(CheckResult(f"passive/{name}", name, area, subject, outcome,
                                   "; ".join(f.text for f in mine)[:300], None, duration_s))
    seen.findings.extend(findings)


def _card_findings(facts, proc_gpus, last) -> list:
    out = []
    if proc_gpus is None:
        out.append(Finding("cards", "host", "the kernel module's list of GPUs", "not recorded", UNFINISHED))
    else:
        by_bus = {g["bus"].lower(): g for g in proc_gpus}
        for card in facts.cards:
            g = by_bus.get(card.pci.lower())
            if g is None or g["uuid"] != card.uuid:
                out.append(Finding("cards", f"card {card.index}", f"{card.uuid} at {card.pci} in /proc/driver/nvidia",
                                   f"{g['uuid'] if g else 'no GPU'} there", FAIL))
        # a run of some cards checks those alone (a container's /proc may list no other)
        if len(by_bus) != len(facts.cards) and not some_cards(facts):
            out.append(Finding("cards", "host", f"{len(facts.cards)} GPUs (RM's count) in /proc/driver/nvidia",
                               f"{len(by_bus)}", FAIL))
    now = {c.uuid for c in facts.cards}
    for card in last_cards_here(facts, (last or {}).get("cards", [])):
        if card["uuid"] not in now:
            out.append(Finding("cards", f"card {card['index']} ({card['pci']})",
                               f"{card['uuid']}, present at the last run ({last.get('at')})", "it is gone", FAIL))
    return out


def _p2p_findings(facts, topology, topology_asked: bool) -> list:
    out = [Finding("p2p-caps", f"cards {a}->{b}", "RM's P2P capabilities", f"RM refused: {v['error']}", UNFINISHED)
           for (a, b), v in sorted(facts.p2p.items()) if v.get("error")]
    if topology is not None and topology_asked:
        out += [Finding("topology", "host", f"the topology {topology.name}", p, FAIL)
                for p in topology.mismatches(host_view(facts))]
    elif topology is None:
        out.append(Finding("topology", "host", "a topology of matrices/topologies.yaml",
                           "none matches: active NVLinks not judged", INFO))
    return out


def _link_findings(links: dict, last_links: dict, facts, topology) -> list:
    """Each card's links now (rmpeer.judge.verdict's rules), and their counters since the last run's reading."""
    out = []
    for card in facts.cards:
        health = links.get(card.index, {})
        out += link_state_findings(card.index, health, topology)
        if health.get("supported"):
            out += link_error_findings(card.index, last_links.get(card.uuid), health, since=" since the last run")
    return out


def _clock_findings(clocks: dict | None) -> list:
    if clocks is None:
        return [Finding("clocks", "host", "each card's clocks and P-state", "not read (see the rm finding)",
                        UNFINISHED)]
    out = []
    for card, r in clocks.items():
        if not r.get("pstate"):
            out.append(Finding("clocks", f"card {card}", "a P-state from RM",
                               r.get("rm_reasons", {}).get("pstate", "none"), UNFINISHED))
        if r.get("graphics_mhz") is None:
            out.append(Finding("clocks", f"card {card}", "clocks in MHz from NVML",
                               r.get("nvml_reason") or "none reported", UNFINISHED))
    return out


def _xid_findings(xids: dict | None, facts, allowed: set, replay: bool) -> list:
    """The Xids since the last run (rmpeer.judge.verdict's rule); a passive run that could not read
    them has not made its check."""
    if not xids:
        return [Finding("xid", "host", "the Xids since the last run", "not recorded by a passive run",
                        INFO if replay else UNFINISHED)]
    but = f" but {sorted(allowed)}" if allowed else ""
    return xid_findings(xids, facts.cards, (), allowed, wanted=f"no Xid since the last run{but}",
                        since=" since the last run", unreadable=UNFINISHED)


def _process_findings(procs: dict | None, replay: bool) -> list:
    if procs is None:
        return [Finding("gpu-processes", "host", "the other GPU processes", "not recorded",
                        INFO if replay else UNFINISHED)]
    if not procs.get("available"):
        return [Finding("gpu-processes", "host", "the other GPU processes", procs.get("reason", "not available"),
                        UNFINISHED)]
    return []


def _health_check(seen: "PassiveSeen", topology) -> None:
    """RM's health facts (rmpeer.judge.health): one check, and what could not be checked."""
    found, _ = health_findings(seen.host, (topology.links or {}).get("kind") if topology else None)
    # in the fitness area: the judge reads a failed check of it as DEGRADED at most, so a health
    # finding's own severity decides (Confidential Computing on: DEGRADED, never NOT CERTIFIED)
    _check(seen, "health", "fitness", "host", found)     # its INFO findings: rmpeer.judge.unchecked


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
        _check(seen, "host", "host", "host", [Finding("rm", "host", "the host's facts through RM",
                                                      "; ".join(read["problems"]) or "nothing read", UNFINISHED)])
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
    problems = [Finding("rm", "host", "every passive reading", p, UNFINISHED) for p in read["problems"]]
    _check(seen, "cards", "host", "host", _card_findings(facts, read.get("proc_gpus"), last) + history + problems)
    _check(seen, "p2p-caps", "host", "host", _p2p_findings(facts, topology, bool(topology_name)))
    last_links = (last or {}).get("links", {})
    _check(seen, "nvlink", "fitness", "host", _link_findings(read.get("links", {}), last_links, facts, topology))
    _check(seen, "clocks", "fitness", "host", _clock_findings(read.get("clocks")))
    xids = other_cards_xids_dropped(read.get("xids"), facts)
    _check(seen, "xids", "fitness", "host", _xid_findings(xids, facts, set(allowed_xids), target.is_replay))
    _check(seen, "gpu-processes", "host", "host", _process_findings(read.get("gpu_processes"), target.is_replay))
    _health_check(seen, topology)
    seen.duration_s = round(time.monotonic() - t0, 3)
    if save:
        xids = read.get("xids") or {}
        runs = dict(state.get("runs", {}))
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
