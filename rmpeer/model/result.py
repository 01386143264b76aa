"""The typed result of one run: what was checked, what was measured, and the findings a pure
judge turns into the verdict. The library builds it as the run goes; suites assert on it;
every output (terminal table, certificate.json, Allure, JUnit, Prometheus, JSON Lines, the
fleet's summaries) only renders it.

certificate.json is `RunResult.to_dict()`; `RunResult.load(path)` reads one back, so a fleet
collector renders the results of many hosts with the same code as a single run.

Vocabulary (docs/architecture.md): a *host* is the machine; a *target* is what a run checks
(the live host, or a recording standing in for one); a *layout* is a virtual-rank layout of
matrices/layouts.yaml; a *check* is one assertion about one subject.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path

from rmpeer.errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, EXIT_UNCHECKED
from rmpeer.model.selection import Selection

CERTIFIED, DEGRADED, NOT_CERTIFIED, INCOMPLETE = "CERTIFIED", "DEGRADED", "NOT CERTIFIED", "INCOMPLETE"
VERDICTS = (CERTIFIED, DEGRADED, NOT_CERTIFIED, INCOMPLETE)
# Each verdict's exit code (errors.py's table): the one place a verdict becomes a number, so
# that certify's exit, its JSON line and a fleet's status agree. Exit 1 is NOT CERTIFIED alone.
EXIT_CODES = {CERTIFIED: EXIT_OK, NOT_CERTIFIED: EXIT_NOT_CERTIFIED, DEGRADED: EXIT_DEGRADED,
              INCOMPLETE: EXIT_INCOMPLETE}
UNCHECKED = "UNCHECKED"       # the exit name of --require-complete's refusal alone (exit 8)
REQUIRE_COMPLETE = "require-complete"   # the check name of its findings (rmpeer.judge.unchecked)

# A finding's severity decides which verdict it can cause (rmpeer.judge.verdict):
FAIL = "fail"                # a conformance check failed: NOT CERTIFIED
DEGRADE = "degraded"         # correct, but unfit (floors, links, Xids): DEGRADED
UNFINISHED = "incomplete"    # a check could not run or was cut short: INCOMPLETE
INFO = "info"                # recorded, never changes the verdict
# INFO findings that warn of a check made, never a check left out: a figure fallen from this
# host's own history, a count grown (rmpeer.judge.drift), a history that could not be used or a
# new baseline (rmpeer.run.assemble.with_history). Told under the verdict line, not "not checked".
WARNING_CHECKS = ("drift", "history")
SEVERITIES = (FAIL, DEGRADE, UNFINISHED, INFO)

TIERS = ("passive", "quick", "full")     # shallow to deep: a deeper tier satisfies a shallower one
PARTIAL = "partial"   # a run of chosen layouts (--layout) that covers neither quick nor full: no tier
FORMAT = "rmpeer-result/1"
NODE_ENV = "RMPEER_NODE_NAME"     # names the node instead of the machine's host name
REASON_CHARS = 300
CUT_SHORT = "the run did not finish"   # a card's or pair's reason when the host's run was cut short


ELLIPSIS = "..."


class FrozenError(TypeError):
    """A write to a RunResult once assembled: a renderer that changes what it renders would
    make two outputs of one run disagree."""


def _refuse(self, *args, **kwargs):
    raise FrozenError("a RunResult is frozen once assembled: build a new one (rmpeer.run.assemble)")


class FrozenList(list):
    """A list no method can change (it is still a list: it compares, serialises and slices as one)."""

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    __hash__ = None

    def __reduce_ex__(self, protocol):     # pickle rebuilds it whole, never by append
        return FrozenList, (list(self),)

    def __copy__(self):                    # a copy is the caller's own: a plain list
        return list(self)

    def __deepcopy__(self, memo):
        import copy

        return [copy.deepcopy(v, memo) for v in self]


class FrozenDict(dict):
    """A dict no method can change (still a dict for every reader)."""

    __setitem__ = __delitem__ = __ior__ = pop = popitem = clear = update = setdefault = _refuse

    def __reduce_ex__(self, protocol):
        return FrozenDict, (dict(self),)

    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        import copy

        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}


def frozen(value):
    """`value` with every list and dict in it frozen, the dataclasses it holds (frozen ones:
    Finding, CheckResult, PairResult, LayoutResult) copied with theirs frozen. A tuple is
    already immutable, and may be a hashed field: kept."""
    if isinstance(value, (FrozenList, FrozenDict)):
        return value
    if isinstance(value, dict):
        return FrozenDict((k, frozen(v)) for k, v in value.items())
    if isinstance(value, list):
        return FrozenList(frozen(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        loose = {f.name: frozen(getattr(value, f.name)) for f in fields(value)
                 if isinstance(getattr(value, f.name), (list, dict))
                 and not isinstance(getattr(value, f.name), (FrozenList, FrozenDict))}
        return replace(value, **loose) if loose else value
    return value


def thawed(value):
    """A frozen value as plain lists and dicts, for a caller's own use (to_dict's output)."""
    if isinstance(value, dict):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thawed(v) for v in value]
    return value


def short(text: str, limit: int = REASON_CHARS) -> str:
    """A reason on one line, at most `limit` characters (the judge's reasons, the renderers'
    blame), cut between words, never inside one: "... buffer patte..." reads as a typo."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS) + 1]
    words = cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut[:-1]
    return words.rstrip(" ,;:(") + ELLIPSIS


def node_name(replay: str | None = None) -> str:
    """The node a run reports, the same in its certificate, its Allure results and a fleet's
    status.json: RMPEER_NODE_NAME when set (a fleet test standing in for many hosts), else the
    scheduler's name for it (Slurm's SLURMD_NODENAME: several node names can share a host;
    Kubernetes' NODE_NAME from the downward API), else, for a replay, the recording's name
    (a replay tests no machine, and two replays are two hosts in one report), else this
    machine's short host name."""
    for variable in (NODE_ENV, "SLURMD_NODENAME", "NODE_NAME"):
        value = os.environ.get(variable, "").strip()
        if value:
            return value
    if replay:
        return replay_node(replay)
    return os.uname().nodename.split(".")[0]     # gethostname() is uname's nodename on Linux


def replay_node(recording: str) -> str:
    """'h200x2-20261130T151653Z' for .../h200x2-20261130T151653Z.jsonl.gz."""
    name = Path(recording).name
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name or "replay"


@dataclass(frozen=True)
class Finding:
    """One thing the run found wrong (or could not establish): which check, about what,
    what was expected and what was found, in words a person acts on (no class names)."""

    check: str          # e.g. "read", "setup:map", "bandwidth-floor", "nvlink-active", "xid"
    subject: str        # e.g. "host", "card 1", "pair 0->1", "one-per-card s1->t0"
    expected: str
    found: str
    severity: str       # FAIL, DEGRADE, UNFINISHED or INFO
    # the root cause in words, shared by the findings one fault makes ("wrong memory: ...",
    # "the clocks stayed at 345 MHz ..."): the judge says them as one reason, with a count
    cause: str = ""

    @property
    def text(self) -> str:
        return f"{self.check}: {self.subject}: expected {self.expected}, found {self.found}"


@dataclass(frozen=True)
class CheckResult:
    """One check (one pytest item or one library check) and its outcome; frozen: what a
    check found is never changed after it ended (every output renders the same one)."""

    id: str             # stable across runs of the same host: e.g. "read/two-per-card/s1->t2"
    check: str          # the check's declared name (a marker or a table, never a function name)
    area: str           # setup, read/write, negative, lifecycle, fitness, host
    subject: str
    outcome: str        # passed, failed, skipped, error
    reason: str = ""    # a failure's or a skip's reason, bounded
    layout: str | None = None
    duration_s: float = 0.0
    s: int | None = None    # the sessions of a per-window check (setup, read, write)
    t: int | None = None
    # it stopped on an error rmpeer did not expect (a TypeError in its own code, a reading of a
    # kind it cannot use): the check could not be made, so it says nothing of the host
    unexpected: bool = False
    detail: str = ""    # a failure's RM call, decoded field by field (the report attaches it)
    # [start, stop] in seconds since the epoch, for the report's timeline; never in the
    # certificate, which promises what was found, not how long each check took
    span: tuple | None = None


@dataclass(frozen=True)
class PairResult:
    """One read or write through one window of one layout; frozen, as CheckResult."""

    layout: str
    s: int
    t: int
    src_card: int
    dst_card: int
    op: str             # read | write
    ok: bool | None     # None: not run (the map was refused as the topology expects, or skipped)
    bytes: int = 0
    first_gbps: float | None = None
    steady_gbps: float | None = None
    mismatch: dict | None = None   # {offset, differing_bytes, expected_owner, found_owner, explanation}


@dataclass(frozen=True)
class LayoutResult:
    name: str
    cards: list
    extent: int
    statuses: list = field(default_factory=list)   # [{label, status}] in the order RM answered
    refused_frees: list = field(default_factory=list)


@dataclass
class _Card:
    """The fields of a certificate's host card that its readers use (model.host.Card.as_dict)."""

    index: int = 0
    uuid: str = ""
    pci: str = ""
    name: str = ""


# A certificate read back is input (another user may have written it): each field must be of
# the kind its type names, or from_dict refuses it (ValueError) before anything renders it.
_KINDS = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "dict": (dict,), "list": (list,)}


def _of_kind(value, kind: str) -> bool:
    if kind == "None":
        return value is None
    if kind not in _KINDS:
        return True                   # a kind this check does not name
    if isinstance(value, bool) and kind in ("int", "float"):
        return False
    return isinstance(value, _KINDS[kind]) and (kind != "float" or math.isfinite(value))


def checked(cls, row, where: str) -> dict:
    """`row` (a mapping read from a file) for cls(**row): each field it has, of the kind cls
    declares; ValueError naming the field otherwise."""
    if not isinstance(row, dict):
        raise ValueError(f"{where} is {type(row).__name__}, not a mapping")
    for f in fields(cls):
        kinds = [k.strip() for k in str(f.type).split("|")]
        if f.name in row and not any(_of_kind(row[f.name], k) for k in kinds):
            raise ValueError(f"{where}'s {f.name} is {str(row[f.name])[:40]!r}, not of the kind {f.type}")
    return row


def _without_defaults(cls, row: dict) -> dict:
    defaults = {f.name: f.default for f in fields(cls)}
    return {k: v for k, v in row.items() if k not in defaults or defaults[k] != v or v is MISSING}


@dataclass(frozen=True)
class RunResult:
    """Frozen once made: the assembler builds it whole, and every later step (the history, the
    judge, a late signal) is a new RunResult (dataclasses.replace), so no output can change
    what another output renders. Its lists and dicts are frozen too (FrozenList, FrozenDict)."""

    node: str = ""                  # the host name the run ran on (a replay: the machine replaying)
    tier: str = "full"
    target: dict = field(default_factory=dict)      # {kind: live|replay, label, transcript, recorded_host, ...}
    started: str = ""               # ISO 8601, UTC
    duration_s: float = 0.0
    valid_until: str | None = None
    certificate_id: str = ""
    version: str = ""               # rmpeer's
    matrices: str = ""              # sha256 of the matrices the run used
    # what this rmpeer makes (rmpeer.model.steps.manifest): step families, checks, host facts'
    # fields and figures; `rmpeer diff` reads it to tell what one side's rmpeer never made
    manifest: dict = field(default_factory=dict)
    host: dict = field(default_factory=dict)        # HostFacts.as_dict(): driver, ABI, cards
    fingerprint: dict = field(default_factory=dict)
    topology: dict | None = None    # {name, matched_by: expected|match|defaults, floors}
    layouts: list = field(default_factory=list)     # [LayoutResult]
    pairs: list = field(default_factory=list)       # [PairResult]
    bandwidth: list = field(default_factory=list)   # [{src_card, dst_card, op, bytes, gbps, ...}]
    clocks: dict = field(default_factory=dict)      # phase -> card -> reading
    boost: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)       # card -> {supported, active, reason}
    xids: dict | None = None
    gpu_processes: dict = field(default_factory=dict)   # {before: [...], after: [...]}
    checks: list = field(default_factory=list)      # [CheckResult]
    findings: list = field(default_factory=list)    # [Finding]
    left_out: list = field(default_factory=list)    # layouts not run, and why
    verdict: str = INCOMPLETE       # until judged, a run has not shown anything
    reasons: list = field(default_factory=list)
    ran_because: list = field(default_factory=list)   # certify --if-stale: why the certificate did not hold
    by_card: dict = field(default_factory=dict)   # {cards: [...], pairs: [...]}: rmpeer.judge.cards.by_card
    not_checked: list = field(default_factory=list)   # [{check, subject, reason}]: could not run (rmpeer.judge.unchecked)
    format: str = FORMAT

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (list, dict)):
                object.__setattr__(self, f.name, frozen(value))

    @property
    def counts(self) -> dict:
        out: dict = {}
        for c in self.checks:
            out[c.outcome] = out.get(c.outcome, 0) + 1
        return out

    @property
    def is_replay(self) -> bool:
        return self.target.get("kind") == "replay"

    @property
    def exit_code(self) -> int:
        """The exit code the judged verdict means: 8 when its INCOMPLETE is --require-complete's
        refusal alone, else the verdict's (an unknown verdict is INCOMPLETE's, never 0 or 1)."""
        return EXIT_UNCHECKED if self._refused_alone else EXIT_CODES.get(self.verdict, EXIT_INCOMPLETE)

    @property
    def exit_name(self) -> str:
        """The exit code's name, for a log reader that filters without parsing prose."""
        if self._refused_alone:
            return UNCHECKED
        return (self.verdict if self.verdict in EXIT_CODES else INCOMPLETE).replace(" ", "_")

    @property
    def _refused_alone(self) -> bool:
        unfinished = [f.check for f in self.findings if f.severity == UNFINISHED]
        return self.verdict == INCOMPLETE and bool(unfinished) and all(c == REQUIRE_COMPLETE for c in unfinished)

    def to_dict(self) -> dict:
        d = thawed(asdict(self))
        # the many per-check and per-pair rows leave out what equals its default (from_dict
        # restores it), so a run of ~1700 checks stays a small file
        d["checks"] = [_without_defaults(CheckResult, {k: v for k, v in c.items() if k != "span"}) for c in d["checks"]]
        d["pairs"] = [_without_defaults(PairResult, p) for p in d["pairs"]]
        d["counts"] = self.counts
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RunResult":
        if d.get("format") != FORMAT:
            raise ValueError(f"not an rmpeer result (format {d.get('format')!r}, expected {FORMAT!r})")
        known = {f.name for f in fields(cls)}
        kw = checked(cls, {k: v for k, v in d.items() if k in known}, "the result")
        for name, row_cls in (("layouts", LayoutResult), ("pairs", PairResult), ("checks", CheckResult),
                              ("findings", Finding)):
            kw[name] = [row_cls(**checked(row_cls, x, f"{name}[{i}]")) for i, x in enumerate(d.get(name, []))]
        for i, card in enumerate(kw.get("host", {}).get("cards") or []):
            checked(_Card, card, f"host's cards[{i}]")
        selection = kw.get("host", {}).get("selection")
        if selection:      # the cards the run took, as every reader of it (verdict line, fleet, diff) reads them
            try:
                Selection.from_dict(selection)
            except (TypeError, KeyError, AttributeError) as exc:
                raise ValueError(f"the result's host selection is not one rmpeer writes ({exc})") from None
        return cls(**kw)

    @classmethod
    def load(cls, path) -> "RunResult":
        return cls.from_dict(json.loads(Path(path).read_text()))


@dataclass(frozen=True)
class RunOutcome:
    """What certify gives a caller in its own process (rmpeer.fleet.node), so that it reads the
    run, never its printed lines: the exit code, the judged RunResult its outputs were
    written from (None: no run, as --if-stale's fast path, or none that reached a verdict),
    the certificate's path (None: none written), and the one-line error it ended on."""

    code: int
    result: RunResult | None = None
    certificate: str | None = None
    error: str = ""
