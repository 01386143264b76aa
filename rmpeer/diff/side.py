"""What one run tells `rmpeer diff` (a Side, filled by rmpeer.diff.load), and the rules of
what diff leaves out or words apart: the words the loader, the comparison
(rmpeer.diff.compare) and the renderer (rmpeer.diff.render) share. Pure: it reads no file."""

from __future__ import annotations

from dataclasses import dataclass, field

from rmpeer.model.steps import family_of

# What diff leaves out as volatile: (rule, why, field-name pattern).
VOLATILE = [
    ("timestamps", "the moment of a run or a call", r"created|started|valid_until|t_ns|timestamp|time|.+_at"),
    ("durations", "how long something took", r"duration(_\w+)?|elapsed(_\w+)?|wall_s"),
    ("free memory", "a host-wide figure other processes change", r"(\w+_)?free(_\w+)?"),
    ("temperatures", "the cooling, not RM", r"(\w+_)?temp(erature)?(_\w+)?"),
    ("power and utilisation", "the load of the moment", r"(\w+_)?(power|util|utilization)(_\w+)?"),
    ("health counters", "ECC error counts since boot, and the PCIe generation (and raw link words) "
     "a card drops at idle (rm.health)", r"sbe|dbe|gen|raw"),
]
# Fields that name a machine, a card or a run rather than describe RM's behaviour.
# device_instance: RM numbers the cards in the order it attached them (swapped run to run).
IDENTITY = {"uuid", "pci", "gpu_id", "minor", "device_instance", "driver_version", "flavour", "version_source",
            "abi_release", "abi_forced", "abi_note", "hostname", "node", "seed", "pattern_seed",
            "cluster_uuid",
            "selection"}     # the cards a run took: an aspect of its own (compare_selection), not reply fields
# A figure's method (rmpeer.traffic.bandwidth.METHODS, in each manifest) as it was before a change
# rmpeer made to it, for the recordings that name no methods (made before the manifest): (op,
# its method today, the earlier method, when the change came, from the commit). Gated runs until
# 392b542 (2026-11-30 15:30:53 UTC) read both engines' spans on one card's clock, the other card's
# timer about a millisecond apart after a CUDA context had run (520-530 GB/s both ways at once
# where each card's own clock gives 780).
EARLIER_METHODS = (("bidirectional", "gated", "gated, one card's clock", "2026-11-30T15:30:53Z"),
                   ("all", "gated", "gated, one card's clock", "2026-11-30T15:30:53Z"))
# Clock MHz are behaviour only where RM was asked to hold them: boosted, and after traffic.
CLOCK_PHASES = {"idle": "idle clock MHz wander run to run (345..600 MHz on a healthy H200)",
                "released": "released clock MHz are read a moment after the boost is cleared "
                            "(the clear's RM status is compared instead)"}
# Without the boost on either side, the card picks its own clocks under traffic too.
UNBOOSTED_PHASES = {"after-traffic": "after-traffic clock MHz are the card's own choice when neither run "
                                     "asked for the boost"}


def percent(fraction: float) -> str:
    text = f"{fraction * 100:.4f}".rstrip("0").rstrip(".")
    return f"{text}%"


MISSING = object()   # a value one side does not have (rendered "absent")


@dataclass
class Side:
    """What one file tells; None where it cannot tell it, with the reason in `why_not`."""

    path: str
    kind: str                                   # "transcript" (a recording) | "certificate"
    context: dict = field(default_factory=dict)
    layouts: list | None = None                 # the layouts the run ran; None: unknown
    calls: list | None = None                   # [(layout or None, step label, outcome)] in call order
    structs: dict | None = None                 # struct -> size in bytes
    facts: dict | None = None
    clocks: dict | None = None                  # phase -> card -> {pstate, graphics_mhz, ...}
    boost: dict | None = None                   # {asked, results: card -> {raise, clear}}
    links: dict | None = None                   # card -> {supported, active, reason}
    tests: dict | None = None                   # test id without target -> (layout or None, outcome)
    verdict: str | None = None
    bandwidth: dict | None = None               # pair key -> GB/s
    sources: dict = field(default_factory=dict)
    why_not: dict = field(default_factory=dict)
    # the step families this side's rmpeer did not make yet (rmpeer.diff.load.unmade_families)
    unmade: set = field(default_factory=set)
    # every family the committed recordings hold, of any host (None: unknown): a family none
    # of them holds, made by a newer side, is one the older side did not make yet
    recorded_families: set | None = None
    # what the file says its rmpeer makes (rmpeer.model.steps.manifest: families, checks,
    # fields, figures); None for a file made before rmpeer wrote one: then what its rmpeer made
    # is inferred (unmade, recorded_families; the checks it holds)
    manifest: dict | None = None
    checks_of: dict = field(default_factory=dict)   # test id -> the check it is (a certificate's)
    # how each figure was timed (op -> method: rmpeer.traffic.bandwidth.METHODS), and each
    # bandwidth key's op: a figure timed two ways is not comparable (rmpeer.diff.load.figure_methods)
    figure_methods: dict = field(default_factory=dict)
    bandwidth_ops: dict = field(default_factory=dict)

    def makes(self, part: str) -> set | None:
        """The families, checks, fields or figures its rmpeer makes, by its manifest (None: no manifest)."""
        return set(self.manifest[part]) if self.manifest is not None else None


def step_family(label: str) -> str:
    """A step's family (rmpeer.model.steps.family_of: gpu-processes:before:pids:card0 ->
    gpu-processes:before, ce:s3:g1:copy -> ce:copy). A family with no call on one side, whose
    rmpeer did not make it (not in its manifest, or, for a file with none, Side.unmade), is
    not comparable."""
    return family_of(label)
