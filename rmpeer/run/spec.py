"""RunSpec: what one run of one target will do, resolved once and frozen.

Built in one place from `rmpeer certify`'s options (`from_certify_args`), from a plain pytest
run's options (`from_pytest_options`), or for `rmpeer bench`; a replay takes what the
recording's header says (its seed, boost, ABI, layouts and extents). Everything below the
builder (HostRun, the pytest plugin, the renderers) reads the spec and never resolves an
option again. The host's facts come from the one RM open of the run (`with_facts`).

Option checks come before any device check: a bad option is exit 2 even on a machine
without a GPU (exit 3 is only for "there is no GPU to run on").
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.errors import ConfigError, NoDeviceError
from rmpeer.machine.lock import checked_wait
from rmpeer.model.result import PARTIAL, TIERS
from rmpeer.machine.writable import certify_outputs, writable

QUICK_LAYOUTS = ("one-per-card", "interleaved")
NO_DEVICE = ("no NVIDIA device: /dev/nvidiactl does not exist on this machine (no GPU, or the nvidia kernel "
             "module is not loaded). To see a certification of a recorded host: rmpeer certify --replay TRANSCRIPT")


@dataclass(frozen=True)
class Policies:
    """How the run treats a shared or unfamiliar host (carried; the lock, the GPU-process
    listing and the floors' defaults act on them)."""

    require_idle: bool = False     # --require-idle: other GPU processes are a refusal (exit 7)
    no_floors: bool = False        # --no-floors: a host without floors is not DEGRADED for it
    wait_s: float = 0.0            # --wait: how long to wait for another run's lock


@dataclass(frozen=True, eq=False)
class RunSpec:
    target: object                 # targets.Target: the live host or a recording
    cases: tuple                   # targets.Case: layout x extent, in run order
    left_out: tuple = ()           # "layout: why" for layouts this target cannot run
    tier: str = "full"
    boost: bool = True
    pattern_seed: int = 0
    abi: str | None = None         # --rm-abi (a replay: the recording's forced ABI)
    record: str | None = None      # folder for a transcript of this run
    extent: int | None = None      # --extent as asked (each case holds its own)
    topology_name: str | None = None   # --expect-topology
    topology: object | None = None     # the entry: the one asked for, else the one the host matches
    policies: Policies = field(default_factory=Policies)
    output: Path | None = None
    facts: object | None = None    # rm.host.HostFacts, once the host is open (a replay: recorded)
    header: dict = field(default_factory=dict)   # a replay's recording header
    cards: object | None = None    # selection.Request: the cards asked for (a replay: as recorded)

    @property
    def is_replay(self) -> bool:
        return self.target.is_replay

    @property
    def staging_extent(self) -> int:
        """The staging buffers' size: the largest extent of the run (a replay: as recorded)."""
        if self.is_replay and "extent" in self.header.get("run", {}):
            return self.header["run"]["extent"]
        return max(c.extent for c in self.cases)

    @property
    def topology_matched_by(self) -> str | None:
        if self.topology is None:
            return None
        return "expected" if self.topology_name else "match"

    def with_facts(self, facts) -> "RunSpec":
        """The spec once the host is open: its facts, and the topology entry it matches when
        none was asked for (of the whole host, when the run took some of its cards)."""
        from rmpeer.machine.selection import host_view

        topology = self.topology
        if topology is None and not self.topology_name and facts is not None:
            from rmpeer.tables.topology import TopologyMatrix

            topology = TopologyMatrix().match(host_view(facts))
        return dataclasses.replace(self, facts=facts, topology=topology)

    def chooser(self):
        """Which cards the run's one RM open takes (rmpeer.machine.selection.Chooser)."""
        from rmpeer.machine.selection import chooser_for

        recorded = (self.facts.selection if self.facts is not None else None) if self.is_replay else None
        return chooser_for(self.cards, recorded, replay=self.is_replay)

    def topology_problems(self) -> list:
        """How the host differs from the topology asked for (none asked: nothing)."""
        from rmpeer.machine.selection import host_view

        if not self.topology_name or self.topology is None or self.facts is None:
            return []
        return self.topology.mismatches(host_view(self.facts))


# -- builders ---------------------------------------------------------------------------------

def _checked_abi(abi):
    if abi:
        from rmpeer.abi import DriverMatrix

        DriverMatrix().choose(abi)     # garbage or an unknown branch: exit 2 before any device check
    return abi


def checked_output(text) -> Path:
    """The output folder, refused before the run when it cannot be written (nothing is created)."""
    return writable("--output", text, folder=True)


def _cases(target, wanted, extent, matrix):
    from rmpeer.run.targets import cases_for

    cases, left_out = cases_for(target, wanted, extent, matrix)
    if not cases:
        raise ConfigError("no layout to check: " + ("; ".join(left_out) or "none selected"))
    return tuple(cases), tuple(left_out)


def _precheck_layouts(wanted, extent, matrix):
    """Card lists and names that no host could run, refused before looking for a device."""
    from rmpeer.tables.layouts import MAX_SESSIONS, parse_cards

    for text in wanted:
        if text in matrix.entries:
            continue
        try:
            cards = parse_cards(text)
        except ConfigError:
            raise ConfigError(f"--layout {text!r}: neither a layout name ({', '.join(matrix.names)}) "
                              f"nor a list of cards such as 0,1,1,0") from None
        if len(cards) > MAX_SESSIONS:
            raise ConfigError(f"--layout {text!r}: {len(cards)} sessions > {MAX_SESSIONS} "
                              f"(the seed's pair handles collide beyond {MAX_SESSIONS})")
        matrix.plan(cards, extent or matrix.default_extent)


def covered_tier(asked: str, cases, host_cards: int, matrix) -> str:
    """The tier a run's cases stand for, never deeper than the one asked: full needs every
    layout that fits a host of `host_cards` cards, quick the quick layouts that fit, each at
    its default extent or larger (a layout is its cards, whatever it is called). A run of
    chosen layouts (--layout, or a recording's) that covers neither is PARTIAL, which no
    --if-stale tier accepts: a certificate must not claim more than it checked."""
    if asked == "passive":
        return asked
    ran: dict = {}
    for case in cases:
        ran[tuple(case.layout.cards)] = max(ran.get(tuple(case.layout.cards), 0), case.extent)
    fitting = matrix.fitting_with_reasons(host_cards)[0]
    needs = {"full": fitting, "quick": [l for l in fitting if l.name in QUICK_LAYOUTS]}
    for tier in ("full", "quick"):
        if TIERS.index(tier) <= TIERS.index(asked) and all(
                ran.get(tuple(l.cards), -1) >= (l.extent or matrix.default_extent) for l in needs[tier]):
            return tier
    return PARTIAL


def replay_spec(path, *, layouts=(), topology_name=None, tier="full", output=None,
                policies=Policies()) -> RunSpec:
    """A recording's run, as its header says it was made."""
    from rmpeer.tables.layouts import LayoutMatrix
    from rmpeer.rm.host import HostFacts
    from rmpeer.shim.replay import recorded_note, transcript_summary
    from rmpeer.run.targets import replay_target
    from rmpeer.tables.topology import TopologyMatrix

    target = replay_target(path)
    header = transcript_summary(target.path)["header"]
    run = header.get("run", {})
    topology = TopologyMatrix().get(topology_name) if topology_name else None
    wanted = list(layouts)
    if tier == "quick" and not wanted:     # the quick layouts the recording holds
        recorded = {entry[0] for entry in run.get("layouts", [])}
        wanted = [name for name in QUICK_LAYOUTS if name in recorded]
    matrix = LayoutMatrix()
    cases, left_out = _cases(target, wanted, None, matrix)
    tier = covered_tier(tier, cases, target.cards, matrix)
    facts = HostFacts.from_dict(recorded_note(target.path, "host")["facts"])
    spec = RunSpec(target=target, cases=cases, left_out=left_out, tier=tier, boost=run.get("boost", False),
                   pattern_seed=run.get("pattern_seed", 0), abi=run.get("forced_abi"), record=None,
                   extent=run.get("extent"), topology_name=topology_name, topology=topology,
                   policies=policies, output=output, header=header)
    return spec.with_facts(facts)


def live_spec(*, layouts=(), extent=None, abi=None, record=None, boost=True, topology_name=None, tier="full",
              output=None, policies=Policies(), pattern_seed=None, target=None, cards=None) -> RunSpec:
    """This host's run (its facts come with the run's one RM open: `with_facts`). `cards`:
    a selection.Request; the layouts fit the number of cards it names."""
    from rmpeer.tables.layouts import LayoutMatrix
    from rmpeer.run.targets import live_target
    from rmpeer.tables.topology import TopologyMatrix

    matrix = LayoutMatrix()
    if extent is not None:
        matrix.check_extent(extent)
    _precheck_layouts(layouts, extent, matrix)
    _checked_abi(abi)
    topology = TopologyMatrix().get(topology_name) if topology_name else None
    target = target or live_target()
    if target is None:
        raise NoDeviceError(NO_DEVICE)
    if cards is not None and cards.count is not None:
        if cards.count > target.cards:
            raise ConfigError(f"{cards.how}: names {cards.count} cards; this host has {target.cards} "
                              f"(`rmpeer host` lists them)")
        target = dataclasses.replace(target, cards=cards.count)   # the run's cards: the ones named
    wanted = list(layouts)
    if tier == "quick" and not wanted:
        wanted = [name for name in QUICK_LAYOUTS if matrix.resolve(name, target.cards)]
    cases, left_out = _cases(target, wanted, extent, matrix)
    tier = covered_tier(tier, cases, target.cards, matrix)
    seed = pattern_seed if pattern_seed is not None else int.from_bytes(os.urandom(2), "little")
    return RunSpec(target=target, cases=cases, left_out=left_out, tier=tier, boost=boost, pattern_seed=seed,
                   abi=abi, record=str(Path(record).resolve()) if record else None, extent=extent,
                   topology_name=topology_name, topology=topology, policies=policies, output=output, cards=cards)


def tier_of(args) -> str:
    tier = getattr(args, "tier", None) or ("quick" if getattr(args, "quick", False) else "full")
    if tier not in TIERS:
        raise ConfigError(f"--tier {tier!r}: one of {', '.join(TIERS)}")
    if getattr(args, "quick", False) and tier != "quick":   # two answers to "how deep": neither is guessed
        raise ConfigError(f"--quick and --tier {tier}: give one of them (--quick is --tier quick)")
    return tier


def from_certify_args(args) -> RunSpec:
    """`rmpeer certify`'s options, checked (options first, then the device), as one spec."""
    from rmpeer.tables.layouts import parse_size

    output = checked_output(args.output)
    certify_outputs(args, output)    # every file the run will write: no link, no device node (exit 2)
    policies = Policies(require_idle=bool(getattr(args, "require_idle", False)),
                        no_floors=bool(getattr(args, "no_floors", False)),
                        wait_s=checked_wait(getattr(args, "wait", 0)))   # before the device
    tier = tier_of(args)
    if args.expect_topology is not None and not args.expect_topology.strip():
        raise ConfigError("--expect-topology needs the name of an entry of matrices/topologies.yaml")
    if args.replay:
        refused = [flag for flag, given in (("--rm-abi", args.rm_abi), ("--extent", args.extent),
                                            ("--record", args.record), ("--no-boost", args.no_boost),
                                            ("--cards", getattr(args, "cards", None)))
                   if given not in (None, False)]
        if refused:
            raise ConfigError(f"{', '.join(refused)}: a replay repeats the recorded run exactly "
                              f"(its ABI, extent, boost, cards and calls); these options cannot apply to it")
        layouts = list(args.layout or [])
        return replay_spec(str(Path(args.replay).resolve()), layouts=layouts, topology_name=args.expect_topology,
                           tier=tier, output=output, policies=policies)
    extent = parse_size(args.extent) if args.extent else None
    from rmpeer.machine.selection import request_of_args

    return live_spec(layouts=list(args.layout or []), extent=extent, abi=args.rm_abi, record=args.record,
                     boost=not args.no_boost, topology_name=args.expect_topology, tier=tier, output=output,
                     policies=policies, cards=request_of_args(args))


def from_pytest_options(getoption) -> list:
    """A plain `pytest suites` run: one spec per target (the recordings given, else this host,
    else the committed recordings unless --rm-live-only)."""
    from rmpeer.tables.layouts import parse_size
    from rmpeer.run.targets import committed_transcripts, live_target

    layouts, topology = list(getoption("--rm-layout")), getoption("--rm-topology")
    extent_text, seed = getoption("--rm-extent"), getoption("--rm-pattern-seed")
    try:
        extent = parse_size(extent_text) if extent_text else None
        pattern_seed = int(seed, 0) & 0xFFFF if seed else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    replays = getoption("--rm-replay")
    live = None if replays else live_target()
    if live is not None:
        return [live_spec(layouts=layouts, extent=extent, abi=getoption("--rm-abi"), record=getoption("--rm-record"),
                          boost=not getoption("--rm-no-boost"), topology_name=topology,
                          pattern_seed=pattern_seed, target=live)]
    if not replays and getoption("--rm-live-only"):
        return []
    return [replay_spec(p, layouts=layouts, topology_name=topology)
            for p in (replays or committed_transcripts())]
