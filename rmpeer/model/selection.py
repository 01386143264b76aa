"""The cards a run took, as its result records them (HostFacts.selection, a certificate's
`host.selection`): frozen types and their words. Which cards to take is decided in
rmpeer.machine.selection; everything that reads a recorded selection back (the verdict
line, JUnit, `rmpeer diff`, a fleet's table) reads it here."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

OPTION, ALL_CARDS, DEFAULT = "--cards", "--all-cards", "default"
# a PCI bus id always ends in its function (.0): "0:1" is the toolkit's MIG index, not a bus
_PCI = re.compile(r"(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-7])", re.I)


def pci_key(text: str):
    """(domain, bus, slot, function) of a PCI bus id in any usual spelling (0000:1b:00.0,
    00000000:1B:00.0 as nvidia-smi prints it, 1b:00.0); None if it is not one."""
    m = _PCI.fullmatch(text.strip())
    if not m:
        return None
    return int(m[1] or "0", 16), int(m[2], 16), int(m[3], 16), int(m[4])


@dataclass(frozen=True)
class HostCard:
    """What rmpeer knows of a card without opening it."""

    index: int        # RM's order (NV_ESC_CARD_INFO): rmpeer's card number on the whole host
    minor: int        # /dev/nvidia<minor>
    pci: str          # dddd:bb:ss.f, as RM reports it
    uuid: str = ""    # GPU-..., the kernel module's for this bus (RM's own once the card is opened)
    model: str = ""

    def describe(self) -> str:
        return f"{self.index} ({self.uuid or 'uuid unknown'}, {self.pci})"


@dataclass(frozen=True)
class Selection:
    """The cards a run may touch: host indices in RM's order (the run numbers them 0..k-1 in
    this order), out of every card of the host."""

    cards: tuple                     # host indices
    of: tuple                        # every HostCard of the host
    source: str
    how: str

    @property
    def whole(self) -> bool:
        return len(self.cards) == len(self.of)

    @property
    def uuids(self) -> list:
        return [self.of[i].uuid for i in self.cards]

    def line(self) -> str:
        """`cards: 1 of 0-1 (from CUDA_VISIBLE_DEVICES)`: what certify says before it runs."""
        src = {OPTION: "--cards", ALL_CARDS: "--all-cards", DEFAULT: "no selection"}.get(self.source,
                                                                                        self.source)
        if len(self.of) == 1:      # "0 of 0" read as none of none
            return f"cards: {spans(self.cards)}, the host's only card (from {src})"
        return f"cards: {spans(self.cards)} of {spans(range(len(self.of)))} (from {src})"

    def as_dict(self) -> dict:
        return {"cards": list(self.cards), "uuids": self.uuids, "source": self.source, "how": self.how,
                "of": [asdict(c) for c in self.of]}

    @classmethod
    def from_dict(cls, d: dict) -> "Selection":
        return cls(tuple(d["cards"]), tuple(HostCard(**c) for c in d["of"]), d["source"], d["how"])


def spans(numbers) -> str:
    """(0, 1, 2, 5) -> '0-2,5'."""
    nums, out = sorted(numbers), []
    for n in nums:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out) or "none"


def selection_line(recorded: dict | None) -> str:
    """`cards: 1 of 0-1 (from --cards): 1 = GPU-...`: the cards a run took and their UUIDs
    ('' when it took every card unasked, or recorded no selection)."""
    if not recorded:
        return ""
    sel = Selection.from_dict(recorded)
    if sel.source == DEFAULT:
        return ""
    uuids = ", ".join(f"{i} = {u}" for i, u in zip(sel.cards, sel.uuids))
    return f"{sel.line()}: {uuids}"


def selection_words(facts: dict) -> tuple[str, tuple]:
    """(words, shape) of the cards a run's facts (HostFacts.as_dict()) say it took; the shape
    (cards taken, cards of the host) is what two runs can differ in: UUIDs name machines."""
    sel = (facts or {}).get("selection")
    n = len((facts or {}).get("cards", []))
    if not sel:
        return f"every card ({n}; recorded before selection)", (n, n)
    s = Selection.from_dict(sel)
    if s.source == DEFAULT:      # nothing asked: "0 of 0 (from no selection)" said it badly on one card
        return f"every card ({len(s.of)}, none asked): {', '.join(s.uuids)}", (len(s.cards), len(s.of))
    return f"{s.line().removeprefix('cards: ')}: {', '.join(s.uuids)}", (len(s.cards), len(s.of))


def collect_cell(result) -> str:
    """The cards column of `fleet collect`'s node table."""
    sel = (getattr(result, "host", None) or {}).get("selection") if result is not None else None
    if not sel:
        return "-" if result is None else "all"
    s = Selection.from_dict(sel)
    return "all" if s.whole else f"{spans(s.cards)}/{len(s.of)}"
