"""What one run will do, resolved once and frozen: the RunSpec, its Policies and its Outputs,
and the CertifyRequest the command line hands down (plain values, no argparse).

Built by rmpeer.run.spec (the builders read the matrices and the device); everything below
the command line reads these and never an option again. Frozen types only: this module
imports nothing of rmpeer but the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.model.host import HostFacts
from rmpeer.model.target import Target

CERTIFICATE, REPLAY_CERTIFICATE, ALLURE_RESULTS = "certificate.json", "replay-certificate.json", "allure-results"


@dataclass(frozen=True)
class Policies:
    """How the run treats a shared or unfamiliar host (carried; the lock, the GPU-process
    listing and the floors' defaults act on them)."""

    require_idle: bool = False     # --require-idle: other GPU processes are a refusal (exit 7)
    no_floors: bool = False        # --no-floors: a host without floors is not DEGRADED for it
    wait_s: float = 0.0            # --wait: how long to wait for another run's lock
    drift_fails: bool = False      # --drift-fails: a drift from this host's own history is DEGRADED
    drift_margin: float = 0.05     # --drift-margin: how far below its own median a figure may fall
    drift_runs: int = 10           # --drift-runs: how many of its last runs the median is of


@dataclass(frozen=True)
class Outputs:
    """What the run's outputs need beyond the RunResult: where they go, which are asked
    for, and the terms the certificate is stamped with."""

    json: bool = False                 # --json: one JSON line on stdout (the terminal's lines on stderr)
    junit: str | None = None           # --junit FILE
    prometheus: str | None = None      # --prometheus DIR
    valid_for: object = None           # --valid-for, a timedelta (None: freshness's default)
    deadline_s: float | None = None    # --deadline, resolved for the tier (None: no watchdog)
    require_complete: bool = False     # --require-complete: unchecked checks refuse a CERTIFIED run
    ran_because: tuple = ()            # --if-stale: why the certificate did not hold
    tier_asked: str = "full"           # the tier asked for (RunSpec.tier: the one the cases earn)


@dataclass(frozen=True)
class CertifyRequest:
    """`rmpeer certify`'s options as plain values (rmpeer.cli builds it from its arguments;
    rmpeer.run.spec.from_request checks it and makes the RunSpec)."""

    output: str = "reports"
    layouts: tuple = ()
    expect_topology: str | None = None
    rm_abi: str | None = None
    extent: str | None = None
    record: str | None = None
    replay: str | None = None
    tier: str | None = None
    quick: bool = False
    require_idle: bool = False
    no_floors: bool = False
    wait: float = 0.0
    drift_fails: bool = False
    drift_margin: str = "5%"
    drift_runs: int = 10
    no_boost: bool = False
    valid_for: str | None = None
    deadline: str | None = None
    require_complete: bool = False
    json: bool = False
    junit: str | None = None
    prometheus: str | None = None
    cards_given: bool = False          # --cards was given (a replay refuses it)
    cards: object | None = None        # selection.Request: the cards asked for
    if_stale: str | None = None        # --if-stale CERT: run only when it no longer holds
    ran_because: tuple = ()            # why it did not (rmpeer.run.freshness.check_fresh)


@dataclass(frozen=True, eq=False)
class RunSpec:
    target: Target                 # the live host or a recording
    cases: tuple                   # model.target.Case: layout x extent, in run order
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
    facts: HostFacts | None = None   # once the host is open (a replay: recorded)
    header: dict = field(default_factory=dict)   # a replay's recording header
    cards: object | None = None    # selection.Request: the cards asked for (a replay: as recorded)
    outputs: Outputs = field(default_factory=Outputs)
    mismatches: tuple = ()         # how the host differs from --expect-topology (rmpeer.run.spec.with_facts)

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

    @property
    def certificate_path(self) -> Path | None:
        if self.output is None:
            return None
        return self.output / (REPLAY_CERTIFICATE if self.is_replay else CERTIFICATE)

    @property
    def allure_dir(self) -> Path | None:
        return self.output / ALLURE_RESULTS if self.output is not None else None

    def topology_problems(self) -> list:
        """How the host differs from the topology asked for (none asked: nothing)."""
        return list(self.mismatches)
