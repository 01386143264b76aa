"""Checks that stay right on a host other processes use (docs/peer-setup.md, "A shared host").

RM keeps a peer mapping per pair of GPUs, shared by every client on the host: once any
process (CUDA's UVM, for one) has a P2P object between two cards, a P2P_ENABLE map between
them succeeds for everyone. And free video memory is a host-wide figure. So:

- the no-pair check (a peer map before any NV50_P2P is refused) is judged "not applicable"
  on a host where another process holds the cards, naming it, and fails anywhere else;
- the teardown check accounts for this process's own video memory (RM's per-process
  figure, GET_PID_INFO for our pid), the host-wide figure only where nothing else runs;
- a missed bandwidth floor names the process that used the card meanwhile;
- --require-idle refuses a host that other processes use.

The readings these checks judge (who holds the GPUs, this process's video memory) are
rmpeer.rm.snapshots': this module only judges them, pure, and reads no device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rmpeer.errors import NotIdleError
from rmpeer.judge.scope import count_for_idle
from rmpeer.model.processes import GpuProcess
from rmpeer.model.result import INFO

HELD, NOT_APPLICABLE, VIOLATED = "held", "not-applicable", "violated"


def _processes(value) -> list[GpuProcess]:
    return [p if isinstance(p, GpuProcess) else GpuProcess.from_dict(p) for p in value]


# ---- the no-pair check ------------------------------------------------------------------

@dataclass
class Precondition:
    kind: str           # held, not-applicable or violated
    reason: str = ""


def _cards_text(cards) -> str:
    return f"cards {' and '.join(map(str, cards))}"


def holders_of(processes, cards) -> list[GpuProcess]:
    """The processes that can hold a peer mapping between `cards`: those holding both cards
    (CUDA opens every card it makes a context on; its unified memory driver pairs NVLink
    peers as soon as both are in use), and RM clients that hold the driver but no card
    node (nvidiactl alone reaches every card). One holding only one of the two cannot."""
    procs = _processes(processes)
    return [p for p in procs if set(cards) <= set(p.cards) or (p.driver and not p.cards and not p.minors)]


def judge_map_before_pair(status_name: str, cards, snapshot: dict | None) -> Precondition:
    """A P2P_ENABLE map before this run made any NV50_P2P between `cards` (a, b):
    held (RM refused it, NV_ERR_INVALID_STATE), not applicable (RM mapped it, and another
    process holds the cards: its P2P objects made the pair's mapping, which RM shares with
    every client), or violated (anything else, with what was expected and found)."""
    if status_name == "NV_ERR_INVALID_STATE":
        return Precondition(HELD)
    if status_name != "NV_OK":
        return Precondition(VIOLATED, f"expected RM to refuse the map with NV_ERR_INVALID_STATE, found {status_name}")
    mapped = (f"RM mapped {_cards_text(cards)} peer to peer before this run made any NV50_P2P between them")
    if snapshot is None:
        return Precondition(VIOLATED, f"expected NV_ERR_INVALID_STATE, found NV_OK: {mapped}, and the recording "
                                      f"does not say which other processes held the GPUs")
    held_by = holders_of(snapshot.get("processes", []), cards)
    if held_by:
        names = "; ".join(p.describe() for p in held_by)
        return Precondition(NOT_APPLICABLE,
                            f"not applicable on this host: {mapped}, because another process holds them "
                            f"({names}); RM keeps one peer mapping per pair of GPUs for all processes "
                            f"(docs/peer-setup.md), so the refusal cannot be shown while it runs")
    unseen = snapshot.get("unreadable") or []
    blind = (f" (the open files of {len(unseen)} processes could not be read: run as root to see them)"
             if unseen else "")
    return Precondition(VIOLATED, f"expected NV_ERR_INVALID_STATE, found NV_OK: {mapped}, and no other process "
                                  f"holds the GPUs{blind}")


# ---- the teardown check -----------------------------------------------------------------

@dataclass
class TeardownJudgement:
    problems: list = field(default_factory=list)    # each: expected ..., found ...
    basis: str = ""                                  # what the memory part compared
    not_applicable: str = ""                         # the memory part could not be judged, and why

    @property
    def ok(self) -> bool:
        return not self.problems


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def judge_teardown(*, refused, leftover, cards, own: dict | None = None, host: dict | None = None,
                   others: dict | None = None, host_unread: dict | None = None) -> TeardownJudgement:
    """Judges a setup's teardown from what it allocated and what came back.

    refused: the frees RM refused (records with .label and .status_name); leftover: the
    objects the setup allocated that are still in the client's book after teardown;
    own: {'before'|'during'|'after': own_vidmem(...) result or None} (this process);
    host: {'before'|'during'|'after': {card: free bytes}} (host-wide; a card RM did not
    answer for is left out, host_unread {card: why} says why); others: a
    snapshot_gpu_processes result or None (unknown)."""
    j = TeardownJudgement()
    for r in refused:
        j.problems.append(f"expected RM to accept every free, found {r.label}: {r.status_name}")
    if leftover:
        labels = ", ".join(label for _, _, label in leftover[:6])
        j.problems.append(f"expected every object of the setup freed, found {len(leftover)} never freed ({labels})")
    phases = ("before", "during", "after")
    readings = {ph: (own or {}).get(ph) for ph in phases}
    unread = {c: e for r in readings.values() if r for c, e in r["errors"].items()}   # card -> why not
    complete = all(readings[ph] is not None and all(c in readings[ph]["bytes"] for c in cards) for ph in phases)
    if complete:
        b, d, a = (readings[ph]["bytes"] for ph in phases)
        # RM must have counted the setup's buffers as ours, or its figure shows nothing
        # about them: then it is set aside (said in .basis) for the other bases
        grew = [c for c in cards if d[c] > b[c]]
        if len(grew) == len(cards):
            j.basis = "this process's video memory (RM, per process)"
            for c in cards:
                if a[c] != b[c]:
                    j.problems.append(f"expected this process's video memory on card {c} back to {_mib(b[c])} "
                                      f"after teardown, found {_mib(a[c])} (the setup took {_mib(d[c] - b[c])}, "
                                      f"teardown returned {_mib(d[c] - a[c])})")
            return j
        flat = ", ".join(str(c) for c in cards if c not in grew)
        unread.update({c: "RM's per-process figure did not grow with the setup's buffers"
                       for c in cards if c not in grew})
        j.basis = f"(RM's per-process video memory did not count the setup's buffers on card {flat})"
    held_by = [p for p in _processes((others or {}).get("processes", [])) if set(p.cards) & set(cards)]
    if held_by:
        why = "; ".join(f"card {c}: {e}" for c, e in sorted(unread.items()))
        j.not_applicable = (f"the video memory teardown returned cannot be told apart on this host: RM gave no "
                            f"usable per-process figure ({why or 'not read'}) and free memory is host-wide while "
                            f"{'; '.join(p.describe() for p in held_by)}")
        return j
    if host is None or any(host.get(ph) is None for ph in phases):
        j.problems.append("expected video memory readings before, during and after the setup, found none")
        return j
    unanswered = sorted(c for c in cards if any(c not in host[ph] for ph in phases))
    if unanswered:      # RM's refusal is no reading: the check cannot tell, it never passes
        why = "; ".join(f"card {c}: {(host_unread or {}).get(c, 'not read')}" for c in unanswered)
        j.not_applicable = (f"the video memory teardown returned cannot be told: RM gave no usable per-process "
                            f"figure and did not answer the cards' free memory ({why})")
        return j
    j.basis = ("the cards' free video memory (host-wide; no other process known to use the cards) "
               + j.basis).strip()
    b, d, a = (host[ph] for ph in phases)
    for c in cards:
        if d[c] >= b[c]:
            j.problems.append(f"expected the setup's buffers to take video memory on card {c}, found "
                              f"{_mib(b[c])} free before and {_mib(d[c])} during")
        elif a[c] != b[c]:
            j.problems.append(f"expected card {c}'s free video memory back to {_mib(b[c])} after teardown, found "
                              f"{_mib(a[c])} (the setup took {_mib(b[c] - d[c])}, teardown returned "
                              f"{_mib(a[c] - d[c])})")
    return j


# ---- bandwidth findings and --require-idle ------------------------------------------------

_PAIR = re.compile(r"(\d+)\s*->\s*(\d+)")
_CARD = re.compile(r"card (\d+)\b")
# the findings of one card's clocks (rmpeer.judge.verdict.boost_findings): on a card another
# process used, what they compare is that process's load, not what the card can reach
CLOCK_CHECKS = ("clocks", "boost")
# of those, the ones that compare clock rates (the boost to reach the idle sample's MHz), not
# RM's answers (a P-state, the boost accepted): only a rate is the other process's doing
_MHZ = re.compile(r"\d+ MHz")


def _cards_of_finding(f) -> set[int]:
    if isinstance(f, dict):
        if "src_card" in f and "dst_card" in f:
            return {int(f["src_card"]), int(f["dst_card"])}
        text = str(f.get("pair", ""))
    else:
        text = getattr(f, "subject", "")
        if getattr(f, "check", "") in CLOCK_CHECKS and (one := _CARD.fullmatch(text)):
            return {int(one.group(1))}
    m = _PAIR.search(text)
    return {int(m.group(1)), int(m.group(2))} if m else set()


def users_text(cards, before=None, after=None) -> str:
    """' while pid N (cmd) held card C; ...' for the processes holding any of `cards` before
    or after the run (each once), or '' when none did."""
    seen, parts = set(), []
    for p in _processes(list(before or []) + list(after or [])):
        held = sorted(set(p.cards) & set(cards))
        if held and p.pid not in seen:
            seen.add(p.pid)
            parts.append(f"pid {p.pid} ({p.command}) held card{'s' if len(held) > 1 else ''} "
                         f"{', '.join(map(str, held))}")
    return f" while {'; '.join(parts)}" if parts else ""


def name_other_users(findings, before=None, after=None) -> list:
    """The fitness findings, each on a card another process held (before or after the run)
    with 'while pid N (cmd) held card C' appended to its reason. Accepts floors.py's finding
    dicts (the 'message') and result.Finding (the 'found'); returns new objects.

    A bandwidth finding stays what it was, named: the figure was measured, and is low; so does
    a finding of RM's answers (no P-state, the boost refused). A finding that compares clock
    rates on such a card could not be judged: its idle sample and its boosted clocks were
    taken under the other process's load and power draw, so it becomes a check that could not
    be made (INFO: the certificate's not_checked lists it, and
    --require-complete refuses the run), never an unexplained DEGRADED."""
    out = []
    for f in findings:
        suffix = users_text(_cards_of_finding(f), before, after)
        if not suffix:
            out.append(f)
        elif isinstance(f, dict):
            out.append({**f, "message": f.get("message", "") + suffix})
        elif f.check in CLOCK_CHECKS and _MHZ.search(f.expected) and f.severity != INFO:
            out.append(replace(f, severity=INFO, cause="",
                               found=f"not judged{suffix}: found {f.found}, expected {f.expected}"))
        else:
            out.append(replace(f, found=f.found + suffix))
    return out


def require_idle_of(reading, selection) -> None:
    """--require-idle on one reading of the other GPU processes (rm.snapshots' shape: its
    processes, the pids /proc kept from this user, RM's refusals, or the error that kept it
    from being read), for a run of the cards `selection` took. Every tier asks this one rule:
    a reading that failed proves nothing (idle unproven is not idle), and the pids whose
    files this user may not read count only when RM's own list, which names every holder,
    was refused too."""
    if reading is None or reading.get("error"):
        why = reading["error"] if reading else "not recorded"
        raise NotIdleError(f"--require-idle: could not tell whether other processes use the GPUs ({why})")
    require_idle(count_for_idle(reading.get("processes", []), selection),
                 unknown=reading.get("unreadable", ()) if reading.get("rm_errors") else ())


def require_idle(procs, *, unknown=()) -> None:
    """--require-idle: refuse (NotIdleError, exit 7) a host where other processes hold the
    GPUs, naming them in one line. `unknown`: pids whose use of the GPUs could not be read
    (pass them only when RM's own list was unavailable): refused too, since idle is unproven."""
    procs = _processes(procs)
    if not procs and not unknown:
        return
    named = "; ".join(p.describe() for p in procs)
    blind = (f"{'; and ' if named else ''}{len(unknown)} processes whose open files this user may not read "
             f"(run as root, or on a driver whose RM lists GPU processes)" if unknown else "")
    raise NotIdleError(f"--require-idle: other processes use the GPUs: {named}{blind}")
