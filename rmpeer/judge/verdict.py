"""The judge: pure functions from what a run measured to Findings, and from Findings and
check outcomes to the verdict. Nothing here reads a device, a test's text or a test's name.

Verdict, strongest first:
  INCOMPLETE     the run was cut short, a check could not run, or no hardware check ran
  NOT CERTIFIED  a conformance check failed (a finding of severity FAIL, or a failed check)
  DEGRADED       correct, but unfit: below the floors, a link down or erring, an unexpected Xid
  CERTIFIED      none of these
An unfinished run outranks a failure: what a cut-short run saw may be the cut's doing."""

from __future__ import annotations

from rmpeer.judge.floors import FAIL as BELOW, OUTLIER, judge_bandwidth
from rmpeer.judge.nvlink import check_active, compare_counters
from rmpeer.judge.scope import xids_by_card
from rmpeer.judge.unchecked import not_checked, refusals
from rmpeer.model.clocks import events, held_text
from rmpeer.model.nvlink import NO_NVLINK
from rmpeer.model.result import (
    CERTIFIED, DEGRADE, DEGRADED, ELLIPSIS, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, REASON_CHARS, UNFINISHED, Finding,
    short)

FITNESS_AREA = "fitness"


def check_findings(checks: list, findings: list = ()) -> list:
    """A failed or erroring check is a finding: FAIL, or DEGRADE in the fitness area (its
    reason is the check's own sentence, which says expected and found); one that stopped on
    an error rmpeer did not expect could not be made (UNFINISHED: INCOMPLETE, never NOT
    CERTIFIED: rmpeer's own error never drains a node). A check whose reason is the findings
    it made (the passive tier's checks: their texts, joined by "; ") is already in the
    verdict through them: a finding appears once in the reasons."""
    texts = {f.text for f in findings if f.severity != INFO}
    out = []
    for c in checks:
        if c.outcome in ("failed", "error") and not _restates(c.reason, texts):
            severity = UNFINISHED if c.unexpected else DEGRADE if c.area == FITNESS_AREA else FAIL
            subject = c.subject if not c.layout or c.subject == c.layout else f"{c.layout} {c.subject}"
            out.append(Finding(c.check, subject, "the check to pass", c.reason or c.outcome, severity))
    return out


def _restates(reason: str, texts: set) -> bool:
    """Whether `reason` is findings' texts joined by "; " (cut by short(), between words), from the first."""
    reason = reason or ""
    # cut by short() (between words, then "...") or at REASON_CHARS exactly (judge.passive's checks)
    cut = None if len(reason) < REASON_CHARS - 40 else reason.removesuffix(ELLIPSIS) if reason.endswith(
        ELLIPSIS) else reason if len(reason) >= REASON_CHARS else None
    return any(reason == t or reason.startswith(t + "; ") or (cut is not None and t.startswith(cut))
               for t in texts) if reason else False


def verdict(findings: list, checks: list) -> tuple[str, list]:
    """(verdict, reasons): one reason per distinct finding text, counting its repeats."""
    ran = [c for c in checks if c.outcome in ("passed", "failed", "error")]
    everything = list(findings)
    if not ran:
        everything.append(Finding("run", "host", "at least one hardware check run", "no hardware check ran",
                                  UNFINISHED))
    everything += check_findings(checks, findings)
    for severity, name in ((UNFINISHED, INCOMPLETE), (FAIL, NOT_CERTIFIED), (DEGRADE, DEGRADED)):
        chosen = [f for f in everything if f.severity == severity]
        if chosen:
            return name, _reasons(chosen)
    return CERTIFIED, []


def _reasons(findings: list) -> list:
    return reasons_of(findings)


def _said(f: Finding) -> str:
    return f.found if f.expected == "the check to pass" else f.text


def reasons_of(findings: list, limit: int = REASON_CHARS) -> list:
    """One reason per root cause: findings that share a cause are one reason, counted, naming
    their checks and the first of their subjects ("32 read/write checks: wrong memory: ...");
    a finding without a cause is one reason per distinct text, counting its repeats. The
    certificate keeps every finding; this is what a reader reads first."""
    groups: dict = {}
    for f in findings:
        key = ("cause", f.cause) if f.cause else ("text", short(_said(f), limit))
        g = groups.setdefault(key, {"subjects": [], "checks": [], "first": f, "members": set()})
        g["members"].add((f.check, f.subject))
        if f.subject not in g["subjects"]:
            g["subjects"].append(f.subject)
        if f.check not in g["checks"]:
            g["checks"].append(f.check)
    out = []
    for (kind, key), g in groups.items():
        n, subjects = len(g["subjects"]), g["subjects"]
        listed = f"{', '.join(subjects[:3])}{f' and {n - 3} more' if n > 3 else ''}"
        if kind == "cause" and len(g["members"]) > 1:
            out.append(short(f"{len(g['members'])} {'/'.join(g['checks'])} checks: {key} ({listed})", limit))
        elif kind == "cause":
            out.append(short(_said(g["first"]), limit))
        else:
            text = key
            more = f" ({n} checks: {listed})" if n > 1 else (
                "" if subjects[0] in text else f" ({g['checks'][0]}: {subjects[0]})")
            out.append(text + more)
    return out


def judge(result, require_complete: bool = False) -> tuple[str, list, list]:
    """(verdict, reasons, refusals) of a RunResult, from its findings and its checks alone.
    require_complete: a run that would be CERTIFIED while a check could not be made is
    INCOMPLETE instead, and its refusals (UNFINISHED findings, rmpeer.judge.unchecked) are
    its reasons: one judgement, never a second call with them added."""
    given, reasons = verdict(result.findings, result.checks)
    refusing = refusals(given, not_checked(result)) if require_complete else []
    if refusing:
        return INCOMPLETE, reasons_of(refusing), refusing
    return given, reasons, []


def unfollowed(result) -> str | None:
    """Why a result read back (a certificate another may have edited) does not hold the verdict
    its own findings and checks give, or None: what fleet collect and calibrate --from check."""
    given, _, _ = judge(result)
    if given == result.verdict:
        return None
    return (f"the certificate says {result.verdict}, its own findings and checks give {given} "
            f"(rmpeer {result.version or '?'} wrote it): edited by hand?")


# -- fitness: measurements -> findings -------------------------------------------------------

def clocks_text(clocks: dict) -> str:
    phase = "after-traffic" if "after-traffic" in clocks else next(reversed(clocks), None)
    cards = clocks.get(phase, {})
    return f"clocks ({phase}): " + ", ".join(
        f"card {c} {r.get('graphics_mhz')} MHz graphics / {r.get('memory_mhz')} MHz memory, {r.get('pstate')}"
        f"{held_text(r)}" for c, r in cards.items())


def boost_findings(fitness) -> list:
    """RM gave a P-state for every card; the boost, when asked, was accepted and raised the
    clocks as far as the card can go under its own power limit; and no reading found the
    clocks slowed down by the hardware (slowdown_findings).

    The boost is judged against the idle sample's MHz, except where NVML says the card holds
    its clocks at its power limit (clock-event reason SW power cap): a card under load (a job's,
    or rmpeer's own copies) reaches less than an idle sample taken before the load rose, and
    that is what it can reach, not a boost that failed."""
    out = []
    idle = fitness.clocks.get("idle", {})
    for card, r in idle.items():
        if not r.get("pstate"):
            out.append(Finding("clocks", f"card {card}", "a P-state from RM", "none", DEGRADE))
    out += slowdown_findings(fitness.clocks)
    if fitness.boost is None:
        return out
    for card, status in fitness.boost.failures.items():
        out.append(Finding("boost", f"card {card}", "RM to accept the boost", f"RM refused it: {status}", DEGRADE))
    for card, r in fitness.clocks.get("boosted", {}).items():
        before, now = idle.get(card, {}).get("graphics_mhz"), r.get("graphics_mhz")
        if before is not None and now is not None and now < before and not events(r, "cap"):
            out.append(Finding("boost", f"card {card}", f"a graphics clock of at least {before} MHz after the boost",
                               f"{now} MHz", DEGRADE))
    return out


def slowdown_findings(clocks: dict) -> list:
    """One finding per card whose clocks NVML says the hardware or the driver slowed down
    (thermal, power brake, an external slowdown signal: matrices/nvml.yaml's 'slowdown'
    reasons) at any reading of the run: a fault of the host's cooling or power, whatever load
    the card was under."""
    seen: dict = {}
    for phase, cards in clocks.items():
        for card, r in (cards or {}).items():
            slow = events(r, "slowdown") if isinstance(r, dict) else []
            if slow:
                seen.setdefault(card, []).append(f"{', '.join(slow)} at the {phase} reading "
                                                 f"({r.get('graphics_mhz')} of {r.get('max_graphics_mhz')} MHz)")
    return [Finding("clocks", f"card {card}", "clocks no hardware slowdown holds down (NVML's clock-event reasons)",
                    "; ".join(texts), DEGRADE) for card, texts in seen.items()]


def bandwidth_findings(topology, figures: list, clocks: dict, *, boost_asked: bool | None = None) -> list:
    """Figures below the topology's floor, or far below their siblings (floors.judge_bandwidth).
    The figures one cause holds down share it: the clocks they were measured at, and whether
    the boost was asked (a run with --no-boost measures at whatever clocks the card idles at)."""
    out = []
    cause = floor_cause(clocks, boost_asked)
    for x in judge_bandwidth(topology, figures):
        if x["level"] not in (BELOW, OUTLIER):
            continue
        if x["level"] == BELOW:
            expected = f"at least {x['floor']:g} GB/s"
            # a derived floor's formula states the floor itself: "below 18 links x ... = 355.2 GB/s (derived; ...)"
            below = (f"below the floor of {x['floor']:g} GB/s ({getattr(topology, 'name', '?')})"
                     if x["basis"] == "calibrated" else f"below {x['formula']}")
            found = f"{x['gbps']:.1f} GB/s, {below}; {clocks_text(clocks)}"
            said = f"below the floor ({x['basis']}): {cause}"
        else:
            expected = f"within 15% of its siblings' median {x['median']:.1f} GB/s"
            found = f"{x['gbps']:.1f} GB/s; {clocks_text(clocks)}"
            said = f"far below their siblings: {cause}"
        out.append(Finding("bandwidth-floor", f"{x['op']} {x['pair']}", expected, found, DEGRADE, cause=said))
    return out


def floor_cause(clocks: dict, boost_asked: bool | None) -> str:
    """What the figures were measured at, as one phrase: 'the clocks stayed at 345 MHz graphics
    (the boost was not asked: --no-boost)', or 'at 1980 MHz graphics' when the boost was asked."""
    phase = "after-traffic" if "after-traffic" in clocks else next(reversed(clocks), None)
    mhz = sorted({r.get("graphics_mhz") for r in clocks.get(phase, {}).values()}, key=str)
    at = "/".join(str(m) for m in mhz) if mhz else "unread"
    if boost_asked is False:
        return f"the clocks stayed at {at} MHz graphics (the boost was not asked: --no-boost)"
    return f"measured at {at} MHz graphics" + (" with the boost asked" if boost_asked else "")


def figure_subject(src: int, dst: int, op: str) -> str:
    return f"{op} {src}->{dst}"


def link_state_findings(card, health: dict, topology) -> list:
    """One reading of a card's links (rm.nvlink.link_health): read whole, and as many active
    as the topology expects. A card RM says has no NVLink is judged only where the topology
    expects links; a reading RM refused is never a pass."""
    expected = topology.expected_nvlinks if topology else None
    subject = f"card {card}"
    reason = health.get("reason")
    if not health.get("supported") and reason == NO_NVLINK:
        return [Finding("nvlink-active", subject, f"{expected} active NVLinks", "no NVLink", DEGRADE)] if expected else []
    if not health.get("supported") or reason:
        return [Finding("nvlink", subject, "NVLink state from RM", reason or "not read", UNFINISHED)]
    return [Finding("nvlink-active", subject, "every NVLink RM enables up", p, DEGRADE)
            for p in check_active(health, expected)]


def link_error_findings(card, before: dict | None, after: dict, *, since: str = "") -> list:
    """No error counter of a card grown, and no link gone down, from `before` (an earlier
    reading: the run's start, or the last run's; None: nothing to compare) to `after`;
    counters RM would not give make the comparison impossible, so they are never a pass.
    `since` words the span ("" for a run's own, " since the last run"); `after` RM refused
    (its caps or its status) gives no counter either."""
    subject = f"card {card}"
    refused = after.get("reason") if after.get("reason") != NO_NVLINK else None
    out = [Finding("nvlink-errors", subject, "readable error counters", why, UNFINISHED)
           for why in dict.fromkeys([*(r.get("counters_reason") for r in (before, after) if r), refused]) if why]
    if before is not None and before.get("supported") and after.get("supported") and not refused:
        out += [Finding("nvlink-errors", subject, f"no error counter grown{since}", p, DEGRADE)
                for p in compare_counters(before, after)]
    return out


def link_findings(card, before: dict, after: dict | None, topology) -> list:
    """A run's links: the state at its start, and (with `after`, the reading at its end) no
    error counter grown over the run."""
    out = link_state_findings(card, before, topology)
    if after is not None and before.get("supported"):
        out += link_error_findings(card, before, after)
    return out


XID_WANTED = "no Xid but those a detection test provokes"


def xid_findings(seen: dict, cards, expected=(), provoked_any_card=frozenset(), *, wanted: str = XID_WANTED,
                 since: str = "", unreadable: str = INFO) -> list:
    """Every Xid the kernel logged in the span `seen` covers (xids.py readings), unless a
    detection test provoked it: `expected` lists (card, xid), each allowing one Xid;
    `provoked_any_card` holds Xid numbers allowed on any card, any number of times (those a
    recorded run's detection tests provoked; the passive tier's allowed Xids). A log that
    could not be read is `unreadable` (a deeper tier records it, INFO: many hosts keep the
    kernel log from unprivileged users; the passive tier, whose check it is, UNFINISHED);
    a log that lost records of the span (`complete` False) cannot say there were none."""
    if not seen.get("readable"):
        return [Finding("xid", "host", "a readable kernel log", seen.get("reason") or "not readable", unreadable)]
    out = []
    if seen.get("complete") is False:
        out.append(Finding("xid", "host", f"every kernel log record{since}", seen.get("reason") or "some lost",
                           UNFINISHED))
    allowed = list(expected)
    for card, xids in sorted(xids_by_card(seen.get("xids", []), cards).items(), key=lambda kv: str(kv[0])):
        for x in xids:
            if (card, x["xid"]) in allowed:
                allowed.remove((card, x["xid"]))
            elif x["xid"] not in provoked_any_card:
                out.append(Finding("xid", f"card {card}", wanted, f"Xid {x['xid']}: {x['text'][:160]}", DEGRADE))
    return out
