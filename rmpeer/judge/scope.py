"""What a run of some of the host's cards answers for, from its facts alone: the whole host
as a topology entry sees it (HostView), the Xids and processes that are its own, and the
passive baseline's cards it vouches for. Pure: the cards a run took are decided in
rmpeer.machine.selection and recorded in HostFacts.selection (rmpeer.model.selection)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rmpeer.model.selection import Selection, pci_key


@dataclass(frozen=True)
class _Unopened:
    """A card of the host the run did not open: what a topology entry can check of it."""

    index: int
    name: str


@dataclass(frozen=True)
class HostView:
    """The whole host as a topology entry describes it, from a run's facts (HostFacts) that
    hold only the selected cards: those with their host numbers, the others as /proc names
    them, and the P2P facts of the selected pairs (the others were not asked)."""

    cards: tuple
    p2p: dict


def host_view(facts):
    """`facts` when the run took every card (or predates selection), else its HostView:
    a subset is judged by the entry of the host it is part of (topologies.yaml)."""
    if not getattr(facts, "selection", None):
        return facts
    sel = Selection.from_dict(facts.selection)
    if sel.whole:
        return facts
    run = dict(zip(sel.cards, facts.cards))
    cards = tuple(dataclasses.replace(run[c.index], index=c.index) if c.index in run
                  else _Unopened(c.index, c.model) for c in sel.of)
    p2p = {(sel.cards[a], sel.cards[b]): v for (a, b), v in facts.p2p.items()}
    return HostView(cards, p2p)


def count_for_idle(processes, selection: dict | None) -> list:
    """The GPU processes --require-idle counts on a run that took some cards: those holding
    a selected card, and RM clients holding no card node at all (nvidiactl alone reaches
    every card). A process on the other cards only is another job's business."""
    if not selection or Selection.from_dict(selection).whole:     # HostFacts.selection
        return list(processes)
    def held(p, key):
        return p.get(key) if isinstance(p, dict) else getattr(p, key, ())

    return [p for p in processes if held(p, "cards") or not held(p, "minors")]


def other_cards_xids_dropped(xids, facts):
    """The kernel log's Xids without those of the cards a run did not take (another job's
    card is not this run's to judge); the Xids of no known card stay (they may be ours)."""
    if not xids or not xids.get("xids") or not getattr(facts, "selection", None):
        return xids

    sel = Selection.from_dict(facts.selection)
    others = [c for c in sel.of if c.index not in sel.cards]
    return {**xids, "xids": [x for x in xids["xids"] if card_of(x, others) is None]}


def some_cards(facts) -> bool:
    """Whether a run's facts are of some of the host's cards only."""
    sel = getattr(facts, "selection", None)
    return bool(sel) and not Selection.from_dict(sel).whole


def last_cards_here(facts, last_cards) -> list:
    """The last passive run's cards that this run can vouch for: all of them, or on a run of
    some cards those at the buses it took (another job's card is not this run's to miss)."""
    if not some_cards(facts):
        return list(last_cards)
    taken = {pci_key(c.pci) for c in facts.cards}
    return [c for c in last_cards if pci_key(c.get("pci", "")) in taken]


def state_cards(facts, last_cards) -> list:
    """The cards the passive state keeps for the next run: this run's (the host's numbers),
    and on a run of some cards the last run's others as they were."""
    if not some_cards(facts):
        return [{"index": c.index, "pci": c.pci, "uuid": c.uuid} for c in facts.cards]
    sel = Selection.from_dict(facts.selection)
    mine = [{"index": h, "pci": c.pci, "uuid": c.uuid} for h, c in zip(sel.cards, facts.cards)]
    taken = {pci_key(c["pci"]) for c in mine}
    return [c for c in last_cards if pci_key(c.get("pci", "")) not in taken] + mine


# -- which card an Xid names -----------------------------------------------------------------

def card_of(xid: dict, cards) -> int | None:
    """The card (HostFacts card, pci 'dddd:bb:ss.f') an Xid names, by domain:bus:device."""
    for card in cards:
        if str(card.pci).lower().split(".", 1)[0] == xid["pci"]:
            return card.index
    return None


def xids_by_card(xids: list[dict], cards) -> dict:
    """{card index or 'unknown': [xids]}."""
    out: dict = {}
    for x in xids:
        card = card_of(x, cards)
        out.setdefault("unknown" if card is None else card, []).append(x)
    return out
