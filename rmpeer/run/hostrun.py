"""The run of one target: opened once, each layout's peer setup built once and shared by
every check of it, traffic through its windows, everything torn down; and the RunResult
of that run, filled in as it goes.

The pytest plugin, `rmpeer certify` (through the plugin) and `rmpeer bench` all use these
two classes; nothing else builds RM objects of a layout. What the run does comes from its
RunSpec (rmpeer.run.spec), resolved before; nothing here resolves an option again. What the
run sees (layouts, pairs, findings, the other GPU processes) is kept here as it goes;
rmpeer.run.assemble alone turns it into the RunResult.
"""

from __future__ import annotations

from dataclasses import replace

from rmpeer.ce.engine import CHANNEL_LABEL, CHANNEL_PARTS, FAULTED_GROUP
from rmpeer.errors import ConfigError
from rmpeer.judge.floors import resolve_floors
from rmpeer.judge.sharedhost import name_other_users, require_idle_of
from rmpeer.model.result import FAIL, Finding, LayoutResult, PairResult
from rmpeer.rm.errors import RmError
from rmpeer.rm.host import read_proc_gpus
from rmpeer.rm.open import Runtime
from rmpeer.rm.peers import PeerSetup
from rmpeer.rm.snapshots import snapshot_runtime
from rmpeer.run.fitness import Fitness, start_clocks
from rmpeer.run.spec import chooser, with_facts
from rmpeer.model.target import Case
from rmpeer.shim.records import new_transcript
from rmpeer.shim.replay import ReplayShim
from rmpeer.tables.layouts import LayoutMatrix
from rmpeer.tables.topology import TopologyMatrix
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "host:proc-gpus", "gpu-processes:before", "gpu-processes:after")


class LayoutRun:
    """One layout's sessions, pairs and windows on the target (the setup runs at once), and
    its traffic, created on first use."""

    def __init__(self, host: "HostRun", case: Case):
        self.host, self.case = host, case
        runtime = host.runtime
        self.plan = host.layouts.plan(case.layout.cards, case.extent, host_cards=len(runtime.host.cards))
        runtime.shim.segment(f"setup:{case.layout.name}")
        self.setup = PeerSetup(runtime.rm, runtime.host, self.plan, host.layouts.va)
        self._traffic = None
        self.refused_frees: list = []
        self.left_allocated: list = []
        self.held_at_teardown = self.frees_accepted = 0
        self.result = LayoutResult(case.layout.name, list(case.layout.cards), case.extent)
        host.built.append(self)
        try:
            self.setup.create_sessions()
            self.setup.run()
        except BaseException:
            _quietly(self.setup.teardown)   # nothing of a failed setup stays allocated
            raise
        finally:
            self.result = replace(self.result, statuses=[{"label": s.label, "s": s.s, "t": s.t,
                                                          "status": s.status_name} for s in self.setup.report.steps])

    @property
    def traffic(self):
        """Each session's copy engine, its buffer seeded with its own pattern."""
        if self._traffic is None:
            from rmpeer.traffic.peer import PeerTraffic

            self.host.runtime.shim.segment(f"traffic:{self.case.layout.name}")
            traffic = PeerTraffic(self.setup, self.host.staging_buffers(), pattern_seed=self.host.spec.pattern_seed)
            try:
                traffic.create()
            except BaseException:
                _quietly(traffic.close)   # its RM objects go with the setup's teardown
                raise
            self._traffic = traffic
        return self._traffic

    def transfer(self, op: str, s: int, t: int) -> PairResult:
        """s's engine reads t's buffer (op read) or writes into it (op write), every byte
        checked; the outcome goes into the run's result (and a Finding when it is wrong)."""
        check = self.traffic.read(s, t) if op == "read" else self.traffic.write(s, t)
        cards = self.plan.cards
        ok = check.ok and all(check.spots.values())
        pair = PairResult(self.case.layout.name, s, t, cards[s], cards[t], op, ok, check.length,
                          round(check.first_gbps, 2), round(check.steady_gbps, 2), check.mismatch)
        self.host.pairs.append(pair)
        if not ok:
            self.host.findings.append(pair_finding(pair, check.spots))
        return pair

    def refused(self, s: int, t: int, status: str) -> PairResult:
        """A window whose map the topology expects RM to refuse: no byte moves through it."""
        cards = self.plan.cards
        pair = PairResult(self.case.layout.name, s, t, cards[s], cards[t], "map", None,
                          mismatch={"refused_as_expected": status})
        self.host.pairs.append(pair)
        return pair

    def close(self) -> list:
        """Tear the layout down, newest object first; the frees RM refused."""
        shim = self.host.runtime.shim
        if shim.mode == "replay":
            self._as_recorded(shim)
        if self._traffic is not None:   # its own stretch: a replay of a run without traffic skips it
            shim.segment(f"traffic-close:{self.case.layout.name}")
            self._traffic.close()
        shim.segment(f"teardown:{self.case.layout.name}")
        rm = self.setup.rm
        self.held_at_teardown, accepted = len(self.setup.allocated()), rm.frees_accepted
        self.refused_frees = self.setup.teardown()
        self.frees_accepted = rm.frees_accepted - accepted
        self.left_allocated = self.setup.allocated()
        self.result = replace(self.result, refused_frees=[f"{r.label}: {r.status_name}" for r in self.refused_frees])
        return self.refused_frees


    def _as_recorded(self, shim) -> None:
        """A replay of some of the checks (a file alone, an xdist worker) tears the layout down
        as the recording did: with the traffic the recorded run built on it, and its engines
        as the recorded run's last check left them (a channel replaced by a detection test)."""
        name = self.case.layout.name
        if self._traffic is None and f"traffic:{name}" in shim.segments:
            self.traffic
        if self._traffic is not None:
            channels = recorded_channels(shim, self.setup.rm.abi, f"teardown:{name}")
            for st in self._traffic.sessions:
                engine = st.engine
                mine = channels.get(engine.session.index)
                if mine is not None and mine[0] != engine.generation:
                    engine.adopt_channel(mine[1], mine[0])


def recorded_channels(shim, abi, key: str) -> dict:
    """session -> (generation, [handles]) of the copy-engine channels the recording's segment
    `key` frees (its teardown: the channels the recorded run's engines had at the end)."""
    starts = shim.segments.get(key, [])
    if not starts:
        return {}
    at = next((i for i in starts if i >= shim.pos), starts[0])
    freed: dict = {}
    request = abi.struct("NVOS00_PARAMETERS")
    for line in shim.lines[at + 1:]:
        if isinstance(line, dict):
            if line.get("note") == "segment":
                break
            continue
        m = CHANNEL_LABEL.fullmatch(line.label.removeprefix("free:"))
        if m and line.op == "ioctl":
            handle = request.decode(bytes.fromhex(line.request))["hObjectOld"]
            freed.setdefault((int(m[1]), int(m[2])), {})[m[3]] = handle
    out = {}
    for (session, generation), parts in sorted(freed.items()):
        if set(parts) == set(CHANNEL_PARTS):
            out[session] = (generation, [parts[p] for p in CHANNEL_PARTS])
    return out


def pair_finding(pair: PairResult, spots: dict | None = None) -> Finding:
    """What a wrong read or write found, in words: where, whose bytes were expected, whose came."""
    where = f"{pair.layout} s{pair.s} (card {pair.src_card}) -> t{pair.t} (card {pair.dst_card})"
    m = pair.mismatch
    if m:
        found = (f"{m['differing_bytes']} bytes differ, the first at offset {m['offset']:#x} "
                 f"(word {m.get('found')}): {m['explanation']}")
        expected = (f"every byte of the {'buffer' if pair.op == 'read' else 'write'} pattern of session "
                    f"{m.get('expected_owner')}")
    else:
        bad = sorted(name for name, good in (spots or {}).items() if not good)
        expected, found = "the window's edges and 2 MiB boundary intact", f"{', '.join(bad)} wrong"
    return Finding(pair.op, where, expected, found, FAIL, cause=(m or {}).get("cause", ""))


class HostRun:
    """The run of one target: its RM client and host facts, the cards' staging buffers, at
    most one layout built at a time, and what the run saw (rmpeer.run.assemble makes the
    RunResult of it)."""

    def __init__(self, spec, layouts: LayoutMatrix | None = None, *, with_staging: bool = True):
        self.spec, self.with_staging = spec, with_staging
        self.target = spec.target
        self.layouts = layouts or LayoutMatrix()
        self.runtime = None
        self.staging: dict = {}
        self.current: LayoutRun | None = None
        self.closed_layouts: dict = {}    # layout name -> its closed LayoutRun
        self.proc_gpus: list = []         # the kernel module's own account of the cards
        self.fitness = None
        self._floors = None       # (HostFloors or None, findings), once the links are read
        self.open_error = None            # why open() failed, for every later test of the target
        self.closed = False
        self.close_problems: list = []    # a close that failed at the run's end, for the judge
        self.built: list = []             # LayoutRun, one per layout built (layout_results)
        self.pairs: list = []             # PairResult, one per read, write or refused map
        self.findings: list = []          # what the traffic found wrong
        self.gpu_processes: dict = {}     # {before: [...], after: [...], <when>_error: why}
        self.host_facts: dict = {}        # HostFacts.as_dict(), once open
        self.shim = self._shim()

    def _shim(self):
        if self.target.is_replay:
            return ReplayShim(self.target.path)
        from rmpeer.shim.live import LiveShim

        return LiveShim(self._transcript() if self.spec.record else None)

    def _transcript(self):
        spec = self.spec
        return new_transcript(spec.record, self.target, {
            "pattern_seed": spec.pattern_seed, "extent": spec.staging_extent, "forced_abi": spec.abi,
            "boost": spec.boost,
            "gated": True,   # copies at once start behind a gate (rmpeer.traffic.bandwidth.Rig)
            "layouts": [[c.layout.name, list(c.layout.cards), c.extent] for c in spec.cases]})

    def open(self, *, load=None) -> "HostRun":
        """RM opened, the host's facts read, the clocks boosted, the staging buffers made.
        load(): modules the run needs next (certify's pytest and its plugin), loaded here
        while the idle clocks' nvidia-smi runs, before its reading is waited for."""
        shim = self.shim
        shim.segment("runtime:open")
        self.runtime = Runtime(shim, forced_abi=self.spec.abi, select=chooser(self.spec))
        # the clocks' reader: NVML starts on a thread of its own while the run's modules load
        # and RM opens (rmpeer.machine.nvml); a replay serves the recorded readings
        early = start_clocks() if shim.mode == "live" else None
        try:
            if self.with_staging:
                # loaded while NVML starts, before the idle reading waits for it: the traffic's
                # modules bring numpy, about 0.05-0.3 s of a start
                from rmpeer.traffic.peer import create_staging
                from rmpeer.traffic.patterns import ahead, run_keys

                # the patterns the layouts' traffic will compare against, made on a thread of
                # their own from here (their fresh pages cost the kernel more than their words)
                ahead(run_keys(self.spec.pattern_seed, self.spec.cases))
            if load is not None:
                load()
            try:
                self.runtime.open()
            except RmError as exc:
                if self.spec.abi and not self.target.is_replay:
                    facts = self.runtime.facts
                    raise ConfigError(f"--rm-abi {self.spec.abi}: the forced ABI ({facts.abi_release}) does not "
                                      f"match the running driver {facts.driver_version}: RM refused "
                                      f"{exc.label} ({exc.status_name}) during discovery") from None
                raise
            self.proc_gpus = shim.observe("host:proc-gpus", read_proc_gpus)
            self.spec = with_facts(self.spec, self.runtime.facts)
            self.host_facts = self.runtime.facts.as_dict()
            self._other_processes("before")
            self.fitness = Fitness(self.runtime, boost=self.spec.boost, layout=self.layout_factory,
                                   tier=self.spec.tier, clocks_source=early)
            early = None            # the Fitness's now (it reads through it, and ends it at its close)
            self.fitness.start()
            if self.target.is_replay:
                self.fitness.recorded_provokers = recorded_provoked_xids(shim, self.runtime.abi)
            if self.with_staging:
                # each card's staging buffers, made once for the whole run and before any layout,
                # so no layout's teardown frees them (see traffic.Staging)
                self.staging = create_staging(self.runtime.rm, self.runtime.host, self.spec.staging_extent)
        except BaseException:
            if early is not None:
                _quietly(early.close)
            if self.fitness is not None:
                _quietly(self.fitness.close_clocks)
            _quietly(self.runtime.close)   # nothing stays allocated; freeing the client ends a boost
            self.runtime = None
            raise
        return self

    def _other_processes(self, when: str) -> None:
        """The other processes holding the GPUs (from /proc and RM's own list), recorded so a
        replay serves them; before the run --require-idle refuses a host that has any."""
        snap = snapshot_runtime(self.shim, self.runtime, label=f"gpu-processes:{when}")
        if snap is not None and snap.get("error"):
            self.gpu_processes[f"{when}_error"] = snap["error"]
        elif snap is not None:
            self.gpu_processes[when] = snap.get("processes", [])
        if when == "before" and self.spec.policies.require_idle and not self.target.is_replay:
            require_idle_of(snap, getattr(getattr(self.runtime, "facts", None), "selection", None))

    def layout_factory(self, layout, extent: int):
        """The layout factory the bandwidth rig builds on: (setup, release)."""
        return self.layout(Case(self.target, layout, extent)).setup, self.release_layout

    def staging_buffers(self) -> dict:
        if not self.staging:
            raise RuntimeError("this HostRun was opened without staging buffers (with_staging=False)")
        return self.staging

    @property
    def topology(self):
        """The topology entry this host must be (--expect-topology), or the one it matches, or None."""
        return self.spec.topology

    @property
    def facts(self):
        return self.runtime.facts if self.runtime is not None else self.spec.facts

    @property
    def floors(self):
        """(floors.HostFloors or None, findings): calibrated where topologies.yaml measured this
        host, derived from RM's facts (the links read at the run's start) elsewhere; once."""
        if self._floors is None:
            links = self.fitness.links_before if self.fitness is not None else {}
            abi = getattr(self.runtime, "abi", None)
            self._floors = resolve_floors(self.facts, links, TopologyMatrix(), expected=self.spec.topology_name,
                                          no_floors=self.spec.policies.no_floors,
                                          classes=dict(abi.classes) if abi is not None else None)
        return self._floors

    @property
    def layout_results(self) -> list:
        """Each layout built, as it stands: its LayoutResult (frozen: a new one per step)."""
        return [run.result for run in self.built]

    def layout(self, case: Case) -> LayoutRun:
        """The case's layout, built once: the layout built before it is torn down first."""
        if self.current is not None and self.current.case == case:
            return self.current
        self.release_layout()
        self.current = LayoutRun(self, case)
        return self.current

    def release_layout(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            current.close()
            self.closed_layouts[current.case.layout.name] = current

    def fresh_setup(self, case: Case, tag: str):
        """A PeerSetup of the case's layout that the caller drives step by step, with no
        other layout alive (a check that needs no pair to exist, or counts memory)."""
        self.release_layout()
        rt = self.runtime
        plan = self.layouts.plan(case.layout.cards, case.extent, host_cards=len(rt.host.cards))
        rt.shim.segment(f"fresh:{tag}:{case.layout.name}")
        return PeerSetup(rt.rm, rt.host, plan, self.layouts.va)

    def close(self) -> None:
        """Closes everything, each part even when one before it failed; the facts stay."""
        if self.runtime is None or self.closed:
            return
        self.closed = True
        try:
            self.release_layout()
        finally:
            self.shim.segment("runtime:close")
            try:
                _quietly(lambda: self._other_processes("after"))
                if self.fitness is not None:
                    self.fitness.close()
                    self.shim.note("fitness", summary=self.fitness.summary())   # for rmpeer diff
            finally:
                for staging in self.staging.values():
                    staging.close(self.shim)
                self.staging = {}
                self.runtime.close()   # frees the client: every object left, and any boost
                self.shim.finish()

    def abandon(self) -> None:
        """An interrupted run: free the RM client (and with it every object and any boost)
        without replaying or recording the orderly teardown."""
        if self.runtime is None or self.closed:
            return
        self.closed = True
        if self.fitness is not None:
            _quietly(self.fitness.close_watch)
        _quietly(self.runtime.close)

    def fitness_findings(self) -> list:
        """The fitness findings of the run (none without a fitness reading); a figure below its
        floor on a card another process used names that process."""
        if self.fitness is None:
            return []

        return name_other_users(self.fitness.findings(self.spec.topology, self.floors[0]),
                                self.gpu_processes.get("before"), self.gpu_processes.get("after"))


def recorded_provoked_xids(shim, abi) -> set:
    """The Xids a recorded run provoked on purpose: an MMU fault for each channel it replaced
    after a fault (only a detection test faults a channel and replaces it; a fault in a check
    fails that check instead). A replay's kernel log is the recorded run's, whichever of its
    checks this replay runs."""
    replaced = any(getattr(line, "label", "").endswith(FAULTED_GROUP) for line in shim.lines)
    return {abi.const("ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT")} if replaced else set()


def _quietly(clean_up) -> None:
    """Clean up after a failure; a second failure on the way must not hide the first one,
    which is the one to report (a replay that diverged diverges again while freeing)."""
    try:
        clean_up()
    except Exception:
        pass
