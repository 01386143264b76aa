"""RunSpec: what one run of one target will do, resolved once and frozen.

Built in one place from `rmpeer certify`'s options (`from_request`, plain values), from a plain pytest
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
from pathlib import Path

from rmpeer.abi import DriverMatrix, status_names
from rmpeer.ce.classes import check_channel, load_engines
from rmpeer.errors import ConfigError, NoDeviceError, TranscriptError
from rmpeer.judge.derived import load_efficiencies
from rmpeer.judge.freshness import parse_valid_for
from rmpeer.judge.scope import host_view
from rmpeer.machine.deadline import parse_deadline
from rmpeer.machine.lock import checked_wait
from rmpeer.machine.selection import chooser_for
from rmpeer.machine.writable import certify_outputs, writable
from rmpeer.model.result import TIERS
from rmpeer.model.selection import Selection
from rmpeer.model.spec import CertifyRequest, Outputs, Policies, RunSpec
from rmpeer.model.host import HostFacts
from rmpeer.run.targets import (
    bundled, cases_for, committed_transcripts, live_target, recorded_cases, recorded_target)
from rmpeer.shim.recording import read_recording
from rmpeer.tables.channel import load_channel
from rmpeer.tables.layouts import QUICK_LAYOUTS, LayoutMatrix, parse_size
from rmpeer.tables.load import matrices_digest
from rmpeer.tables.nvml import load_nvml
from rmpeer.tables.pcie import load_pcie
from rmpeer.tables.topology import TopologyMatrix

MAX_LINKS = "NV2080_CTRL_NVLINK_MAX_LINKS"    # the length of RM's link status array
NOTIFIER = "NvNotification"     # what RM writes into a channel's error notifier
NO_DEVICE = ("no NVIDIA device: /dev/nvidiactl does not exist on this machine (no GPU, or the nvidia kernel "
             "module is not loaded). To see a certification of a recorded host: rmpeer certify --replay RECORDING "
             "(the bundled ones: rmpeer show --list)")


def with_facts(spec: RunSpec, facts) -> RunSpec:
    """The spec once the host is open: its facts, the topology entry it matches when none
    was asked for (of the whole host, when the run took some of its cards), and how it
    differs from the one asked for."""
    topology = spec.topology
    if topology is None and not spec.topology_name and facts is not None:
        topology = TopologyMatrix().match(host_view(facts))
    mismatches = ()
    if spec.topology_name and topology is not None and facts is not None:
        mismatches = tuple(topology.mismatches(host_view(facts)))
    return dataclasses.replace(spec, facts=facts, topology=topology, mismatches=mismatches)


def chooser(spec: RunSpec):
    """Which cards the run's one RM open takes (rmpeer.machine.selection.Chooser)."""
    recorded = (spec.facts.selection if spec.facts is not None else None) if spec.is_replay else None
    return chooser_for(spec.cards, recorded, replay=spec.is_replay)


# -- builders ---------------------------------------------------------------------------------

def _matrices_checked(tier: str) -> None:
    """The matrices a run of `tier` reads, checked whole before anything runs: a broken escape,
    status, engine class or channel field is exit 2 naming its key, never a failed check of the
    run (exit 1) or a crash in it. What one matrix's loader cannot see of another is checked
    here (tables/ sits below abi/ and ce/): the topologies' expected statuses and NVLink counts
    against nvstatus.yaml's names and drivers.yaml's most links, channel.yaml's launch fields
    and subchannel against engines.yaml's bit fields, efficiencies.yaml's copy classes against
    drivers.yaml's (read only when the copies are judged, a broken one was exit 2 after the
    whole run), channel.yaml's error notifier against drivers.yaml's NvNotification. pcie.yaml
    is read by a live run's fingerprint, after its checks, and nvml.yaml by every clock
    reading: now, in every tier. The passive
    tier drives no copy engine and judges no copy: engines.yaml, channel.yaml and
    efficiencies.yaml are not its to refuse."""
    load_pcie()
    load_nvml()
    drivers = DriverMatrix().check_sends()
    links = [e["constants"][MAX_LINKS] for e in drivers.entries if MAX_LINKS in (e.get("constants") or {})]
    TopologyMatrix(nvstatus_names=status_names(), max_links=max(links, default=None))
    if tier != "passive":
        notifier = max((drivers.merged(r)["structs"].get(NOTIFIER) or {}).get("size", 0) for r in drivers.releases)
        check_channel(load_channel(notifier_bytes=notifier), load_engines())
        load_efficiencies(class_names={c for entry in drivers.entries for c in entry.get("classes") or {}})


def _some(cases, left_out=()):
    if not cases:
        raise ConfigError("no layout to check: " + ("; ".join(left_out) or "none selected"))
    return tuple(cases), tuple(left_out)


def replay_spec(path, *, layouts=(), topology_name=None, tier="full", output=None,
                policies=Policies()) -> RunSpec:
    """A recording's run, as its header says it was made (the recording read once)."""
    recording = read_recording(path)
    target, run = recorded_target(recording), recording.run
    _matrices_checked("passive" if run.get("tier") == "passive" else tier)    # the tier the recording was
    topology = TopologyMatrix().get(topology_name) if topology_name else None
    wanted = list(layouts)
    if run.get("tier") == "passive":       # RM's facts alone: the tier it covers, whatever was asked
        if wanted:
            raise ConfigError(f"--layout {', '.join(wanted)}: recording {target.path} is of a passive run, "
                              f"which builds no layout")
        cases, left_out, tier = (), (), "passive"
    else:
        if tier == "quick" and not wanted:     # the quick layouts the recording holds
            recorded = {entry[0] for entry in run.get("layouts", [])}
            wanted = [name for name in QUICK_LAYOUTS if name in recorded]
        cases, left_out = _some(recorded_cases(target, run, wanted))
        tier = LayoutMatrix().covered_tier(tier, cases, target.cards)
    try:     # the host note is input: a card field or a pair name the recorder never writes is exit 2
        facts = HostFacts.from_dict(recording.host_facts)
        if facts.selection:      # the cards the recorded run took, as every reader of it reads them
            Selection.from_dict(facts.selection)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        raise TranscriptError(f"recording {target.path}: its host note's facts cannot be read ({exc})") from None
    spec = RunSpec(target=target, cases=cases, left_out=left_out, tier=tier, boost=run.get("boost", False),
                   pattern_seed=run.get("pattern_seed", 0), abi=run.get("forced_abi"), record=None,
                   extent=run.get("extent"), topology_name=topology_name, topology=topology,
                   policies=policies, output=output, header=recording.header)
    return with_facts(spec, facts)


def live_spec(*, layouts=(), extent=None, abi=None, record=None, boost=True, topology_name=None, tier="full",
              output=None, policies=Policies(), pattern_seed=None, target=None, cards=None) -> RunSpec:
    """This host's run (its facts come with the run's one RM open: `with_facts`). `cards`:
    a selection.Request; the layouts fit the number of cards it names."""
    _matrices_checked(tier)       # before the device
    if abi:
        DriverMatrix().choose(abi)     # garbage or an unknown branch: exit 2 before any device check
    matrix = LayoutMatrix()
    if extent is not None:
        matrix.check_extent(extent)
    matrix.precheck(layouts, extent)
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
    cases, left_out = _some(*cases_for(target, wanted, extent, matrix, tier))
    tier = matrix.covered_tier(tier, cases, target.cards)
    seed = pattern_seed if pattern_seed is not None else int.from_bytes(os.urandom(2), "little")
    return RunSpec(target=target, cases=cases, left_out=left_out, tier=tier, boost=boost, pattern_seed=seed,
                   abi=abi, record=str(Path(record).resolve()) if record else None, extent=extent,
                   topology_name=topology_name, topology=topology, policies=policies, output=output, cards=cards)


def tier_of(tier: str | None, quick: bool = False) -> str:
    """The tier asked for: --tier, or --quick (the same as --tier quick), else full."""
    tier = tier or ("quick" if quick else "full")
    if tier not in TIERS:
        raise ConfigError(f"--tier {tier!r}: one of {', '.join(TIERS)}")
    if quick and tier != "quick":   # two answers to "how deep": neither is guessed
        raise ConfigError(f"--quick and --tier {tier}: give one of them (--quick is --tier quick)")
    return tier


def parse_margin(text) -> float:
    """--drift-margin '5%' -> 0.05: a percentage above 0 and at most 50 (a bare number could
    mean 5 or 0.05)."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", str(text))
    if not m or not 0 < float(m.group(1)) <= 50:
        raise ConfigError(f"--drift-margin {text}: give a percentage above 0 and at most 50, e.g. 5%")
    return float(m.group(1)) / 100


def checked_runs(value) -> int:
    """--drift-runs: how many of the host's last runs its median is of, 3 to 50."""
    if isinstance(value, bool) or not isinstance(value, int) or not 3 <= value <= 50:
        raise ConfigError(f"--drift-runs {value}: give a whole number of runs from 3 to 50")
    return value


def from_request(req: CertifyRequest) -> RunSpec:
    """`rmpeer certify`'s options, checked (options first, then the device), as one spec
    that carries what its outputs need (RunSpec.outputs)."""
    asked = tier_of(req.tier, req.quick)         # options are checked first
    valid_for = parse_valid_for(req.valid_for)
    output = writable("--output", req.output, folder=True)     # refused now if it cannot be written; none made
    outputs = Outputs(json=req.json, junit=req.junit, prometheus=req.prometheus, valid_for=valid_for,
                      deadline_s=parse_deadline(req.deadline, asked, replay=bool(req.replay)),
                      require_complete=req.require_complete, ran_because=tuple(req.ran_because), tier_asked=asked)
    # every file the run will write: no link, no device node (exit 2)
    certify_outputs(output, replay=bool(req.replay), junit=req.junit, prometheus=req.prometheus)
    policies = Policies(require_idle=req.require_idle, no_floors=req.no_floors,
                        wait_s=checked_wait(req.wait), drift_fails=req.drift_fails,   # before the device
                        drift_margin=parse_margin(req.drift_margin), drift_runs=checked_runs(req.drift_runs))
    if req.expect_topology is not None and not req.expect_topology.strip():
        raise ConfigError("--expect-topology needs the name of an entry of matrices/topologies.yaml")
    if req.replay is not None and not str(req.replay).strip():     # `--replay "$UNSET"`: never a live run
        raise ConfigError("--replay needs a recording (an empty name would certify this host's GPUs instead)")
    # the matrices folder, read whole at the run's end for its digest: exit 2 now, never a hang then
    matrices_digest()
    if req.replay:
        refused = [flag for flag, given in (("--rm-abi", req.rm_abi), ("--extent", req.extent),
                                            ("--record", req.record), ("--no-boost", req.no_boost),
                                            ("--cards", req.cards_given),
                                            # a gate of the live host before its run: the recorded run had none
                                            ("--require-idle", req.require_idle))
                   if given not in (None, False)]
        if refused:
            raise ConfigError(f"{', '.join(refused)}: a replay repeats the recorded run exactly "
                              f"(its ABI, extent, boost, cards and calls); these options cannot apply to it")
        given = Path(req.replay)
        # a bundled recording by its name (rmpeer show --list), where no such file is here
        path = given if os.path.lexists(given) else Path(bundled(str(req.replay)) or given)
        spec = replay_spec(str(path.resolve()), layouts=list(req.layouts),
                           topology_name=req.expect_topology, tier=asked, output=output, policies=policies)
    else:
        extent = parse_size(req.extent) if req.extent else None
        spec = live_spec(layouts=list(req.layouts), extent=extent, abi=req.rm_abi, record=req.record,
                         boost=not req.no_boost, topology_name=req.expect_topology, tier=asked, output=output,
                         policies=policies, cards=req.cards)
    return dataclasses.replace(spec, outputs=outputs)


def passive_spec(target, *, topology_name=None, record=None, abi=None, valid_for=None, output=None,
                 policies=Policies()) -> RunSpec:
    """The passive tier of `target` as a spec of its own (no case: no layout is built)."""
    return RunSpec(target=target, cases=(), tier="passive", abi=abi, record=record, topology_name=topology_name,
                   policies=policies, output=output, outputs=Outputs(valid_for=valid_for, tier_asked="passive"))


def from_pytest_options(getoption) -> list:
    """A plain `pytest suites` run: one spec per target (the recordings given, else this host,
    else the committed recordings unless --rm-live-only)."""
    layouts, topology = list(getoption("--rm-layout")), getoption("--rm-topology")
    extent_text, seed = getoption("--rm-extent"), getoption("--rm-pattern-seed")
    try:
        extent = parse_size(extent_text) if extent_text else None
        pattern_seed = int(seed, 0) & 0xFFFF if seed else None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    matrices_digest()      # as from_request: a matrices folder the run could not digest is refused now
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
