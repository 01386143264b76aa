"""A host as RM described it: its cards, the P2P capabilities between them and its health
facts (rmpeer.rm.host reads them; a recording's host note and a certificate's host hold them
as `HostFacts.as_dict()`). Plain data: the spec, the judge and the renderers take it without
opening anything."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Card:
    index: int                  # the suite's card number: position among the valid cards
    minor: int                  # /dev/nvidia<minor>
    gpu_id: int
    pci: str
    pci_device_id: int
    device_instance: int = 0
    name: str = ""
    uuid: str = ""
    fb_bytes: int = 0
    vbios: str = ""
    ce_caps: dict = field(default_factory=dict)   # LCE -> [cap names]
    ce_pces: dict = field(default_factory=dict)   # LCE -> PCE mask
    # a reading RM did not answer -> why ("fb_bytes", "vbios", "ce_pces[4]" -> "NV_ERR_..."):
    # its field above then holds no fact, and no reader may take its 0 or "" for one
    unread: dict = field(default_factory=dict)
    classes: list = field(default_factory=list)
    # RM's health facts of the card (rm.health): fabric probe, ECC, remapped rows, reset,
    # drain, recovery action, PCIe link ("pcie": gen, width, max_gen, max_width), MIG mode
    health: dict = field(default_factory=dict)


@dataclass
class HostFacts:
    driver_version: str
    flavour: str                 # open | proprietary | unknown
    version_source: str          # rm-api-query | proc
    abi_release: str = ""
    abi_forced: bool = False
    abi_note: str = ""           # how the entry was chosen when it is not the driver's own
    cards: list = field(default_factory=list)
    p2p: dict = field(default_factory=dict)     # (a, b) -> {caps, status, read_ces, write_ces}
    health: dict = field(default_factory=dict)  # the host's health facts (rm.health): fabric, cc
    # the cards of a run that took some of the host's (rmpeer.machine.selection.Selection.as_dict):
    # `cards` above are those, numbered 0..k-1; empty when the run took every card
    selection: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["p2p"] = {f"{a}->{b}": v for (a, b), v in self.p2p.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "HostFacts":
        """The inverse of as_dict (a recording's host note, a certificate's host)."""
        d = dict(d)
        d["cards"] = [Card(**{**c, "ce_caps": {int(k): v for k, v in c.get("ce_caps", {}).items()},
                              "ce_pces": {int(k): v for k, v in c.get("ce_pces", {}).items()}})
                      for c in d.get("cards", [])]
        d["p2p"] = {tuple(int(x) for x in k.split("->")): v for k, v in d.get("p2p", {}).items()}
        return cls(**d)
