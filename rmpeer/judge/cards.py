"""A verdict per card and per pair of cards, beside the host's (issue 25, part 6): a pure
function of a RunResult, so that a scheduler can tell one bad card from a bad host.

Each finding and each failed check is put on what it is about:
  - a card: a subject "card N" (clocks, boost, links, Xids), or a window of one layout whose
    two sessions sit on the same card (s and t of the layout's card list);
  - a pair of cards: a window across cards (setup, read, write), a bandwidth figure "op a->b",
    or a copy finding "(card a -> card b)";
  - the host: anything else (the topology, the floors' source, a run cut short).
A card's verdict is its own findings' (not its pairs'); a pair's is its setup, read, write and
bandwidth checks'. Fail closed: when the host's run was cut short (INCOMPLETE), nothing in it
is CERTIFIED. Cards are named by the host's numbers (RM's order over the whole host) and UUIDs,
also on a run of some of the cards (whose own numbers are 0..k-1)."""

from __future__ import annotations

import re

from rmpeer.judge.verdict import check_findings, reasons_of
from rmpeer.model.result import (
    CERTIFIED, CUT_SHORT, DEGRADE, DEGRADED, FAIL, INCOMPLETE, NOT_CERTIFIED, UNFINISHED, short)

RANK = {FAIL: (3, NOT_CERTIFIED), UNFINISHED: (4, INCOMPLETE), DEGRADE: (2, DEGRADED)}
DIMENSIONS = ("setup", "read", "write", "bandwidth")
_CARD = re.compile(r"^card (\d+)\b")
_ARROW = re.compile(r"\bcard (\d+) -> .*?\bcard (\d+)\b")
# a window's byte check (rmpeer.run.hostrun.pair_finding): "interleaved s0 (card 0) -> t1 (card 1)"
_WINDOW_CARDS = re.compile(r"\bs\d+ \(card (\d+)\) -> t\d+ \(card (\d+)\)")
_FIGURE = re.compile(r"^(read|write|bidirectional|same-card|all) (\d+)->(\d+)$")
_WINDOW = re.compile(r"^(?:(\S+) )?s(\d+)->t(\d+)")


def _numbering(result) -> tuple[list, list]:
    """(host number of each run card, its UUID)."""
    cards = result.host.get("cards", [])
    sel = result.host.get("selection") or {}
    hosts = list(sel.get("cards") or [c["index"] for c in cards])
    uuids = [c.get("uuid", "") for c in cards]
    return hosts, uuids


def _layout_cards(result) -> dict:
    return {l.name: list(l.cards) for l in result.layouts}


def _dimension(check: str, area: str, subject: str) -> str:
    if check.startswith("setup") or area == "setup":
        return "setup"
    if check in ("read", "write"):
        return check
    if check == "bandwidth-floor" or subject.split(" ", 1)[0] in ("read", "write", "bidirectional", "same-card"):
        return "bandwidth"
    return check


def _place(subject: str, layout: str | None, s, t, layouts: dict):
    """('card', a) / ('pair', (a, b)) / None, in run card numbers."""
    m = _CARD.match(subject)
    if m:
        return "card", int(m[1])
    m = _FIGURE.match(subject)
    if m:
        a, b = int(m[2]), int(m[3])
        return ("card", a) if a == b else ("pair", tuple(sorted((a, b))))
    m = _ARROW.search(subject) or _WINDOW_CARDS.search(subject)
    if m:
        a, b = int(m[1]), int(m[2])
        return ("card", a) if a == b else ("pair", tuple(sorted((a, b))))
    if s is None or t is None:
        m = _WINDOW.match(subject)
        if m:
            layout, s, t = m[1] or layout, int(m[2]), int(m[3])
    cards = layouts.get(layout or "")
    if cards is not None and s is not None and t is not None and max(s, t) < len(cards):
        a, b = cards[s], cards[t]
        return ("card", a) if a == b else ("pair", tuple(sorted((a, b))))
    return None


def _verdict(findings: list) -> tuple[str, list]:
    ranked = [f for f in findings if f.severity in RANK]
    worst = max((RANK[f.severity] for f in ranked), default=(0, CERTIFIED))
    # one reason per root cause, the card's or pair's own (rmpeer.judge.verdict.reasons_of)
    return worst[1], reasons_of(ranked, 160)


def by_card(result) -> dict:
    """{"cards": [{card, uuid, pci, verdict, reasons}], "pairs": [{pair, cards, uuids, verdict,
    setup, read, write, bandwidth, reasons}]}: every card of the run; every pair that a check
    or a copy was about (a pair no check touched has no verdict to give)."""
    hosts, uuids = _numbering(result)
    layouts = _layout_cards(result)
    card_findings = {i: [] for i in range(len(hosts))}
    pair_findings: dict = {}
    dims: dict = {}

    def put(place, finding, dimension=None):
        if place is None:
            return
        kind, key = place
        if kind == "card" and key in card_findings:
            card_findings[key].append(finding)
        elif kind == "pair" and max(key) < len(hosts):
            pair_findings.setdefault(key, []).append(finding)
            if dimension in DIMENSIONS:
                d = dims.setdefault(key, {})
                d[dimension] = "failed" if finding is not None and finding.severity in RANK else d.get(dimension)

    # a failed check whose reason restates a finding of the run (a read's byte check) is that
    # finding, put on its card or pair below with its cause: said once
    failed = {id(c): made[0] for c in result.checks if c.outcome in ("failed", "error")
              for made in [check_findings([c], result.findings)] if made}
    for c in result.checks:
        place = _place(c.subject, c.layout, c.s, c.t, layouts)
        if place is None:
            continue
        if place[0] == "pair" and max(place[1]) < len(hosts):
            d = dims.setdefault(place[1], {})
            dim = _dimension(c.check, c.area, c.subject)
            if dim in DIMENSIONS and c.outcome == "passed" and d.get(dim) is None:
                d[dim] = "passed"
            pair_findings.setdefault(place[1], [])
        if id(c) in failed:
            put(place, failed[id(c)], _dimension(c.check, c.area, c.subject))
    for f in result.findings:
        put(_place(f.subject, None, None, None, layouts), f, _dimension(f.check, "", f.subject))
    for p in result.pairs:
        if p.src_card != p.dst_card and p.ok is not None and max(p.src_card, p.dst_card) < len(hosts):
            key = tuple(sorted((p.src_card, p.dst_card)))
            pair_findings.setdefault(key, [])
            d = dims.setdefault(key, {})
            d[p.op] = "failed" if not p.ok else d.get(p.op) or "passed"
    cut_short = result.verdict == INCOMPLETE

    def verdict_of(findings):
        verdict, reasons = _verdict(findings)
        if cut_short and verdict == CERTIFIED:
            return INCOMPLETE, [CUT_SHORT]
        return verdict, reasons

    cards = []
    for i, host in enumerate(hosts):
        verdict, reasons = verdict_of(card_findings[i])
        pci = (result.host.get("cards") or [{}] * len(hosts))[i].get("pci", "")
        cards.append({"card": host, "uuid": uuids[i], "pci": pci, "verdict": verdict, "reasons": reasons})
    pairs = []
    for (a, b) in sorted(pair_findings):
        verdict, reasons = verdict_of(pair_findings[(a, b)])
        d = dims.get((a, b), {})
        pairs.append({"pair": f"{hosts[a]}-{hosts[b]}", "cards": [hosts[a], hosts[b]], "uuids": [uuids[a], uuids[b]],
                      "verdict": verdict, **{k: d.get(k) or "not run" for k in DIMENSIONS}, "reasons": reasons})
    return {"cards": cards, "pairs": pairs}


def host_subject(result, subject: str) -> str:
    """A finding's subject with the host's card numbers and a UUID prefix ('card 1' of a run
    of host cards 2 and 5 -> 'card 5 (GPU-8932f937)'; 'read 0->1' -> 'read 2->5'): what a
    drain reason names, so that an operator finds the card."""
    hosts, uuids = _numbering(result)
    number = lambda i: hosts[i] if i < len(hosts) else i     # noqa: E731
    m = _CARD.match(subject)
    if m and int(m[1]) < len(hosts):
        i = int(m[1])
        return f"card {hosts[i]} ({uuids[i][:12]}){subject[m.end():]}" if uuids[i] else f"card {hosts[i]}" + subject[m.end():]
    m = _FIGURE.match(subject)
    if m:
        return f"{m[1]} {number(int(m[2]))}->{number(int(m[3]))}"
    return subject
