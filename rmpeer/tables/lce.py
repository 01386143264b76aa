"""Which of a card's copy engines (LCEs) a run drives: a pure choice from the caps and PCE
masks RM reported (model.host.Card), shared by the engine that opens the channel (rmpeer.ce)
and the floors derived from its PCE count (rmpeer.judge.derived)."""

from __future__ import annotations

from rmpeer.errors import RmpeerError


def pick_lce(card, p2p: bool = True) -> int:
    """The LCE the caps name for NVLink P2P; else the one with the most PCEs that is no GRCE."""
    if p2p:
        named = [lce for lce, caps in sorted(card.ce_caps.items()) if "CE_NVLINK_P2P" in caps]
        if named:
            return named[0]
    candidates = [lce for lce, caps in card.ce_caps.items() if "CE_GRCE" not in caps] or list(card.ce_caps)
    if not candidates:
        raise RmpeerError(f"card {card.index} ({card.name}) reports no copy engine")
    return max(candidates, key=lambda lce: (bin(card.ce_pces.get(lce, 0)).count("1"), -lce))
