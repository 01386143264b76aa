"""The suite catches a cross-card map made without the P2P flag: RM says NV_OK, and only
the byte check shows that the engine read its own card's memory (docs/copy-engine.md)."""

import pytest
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "detect:reserve", "detect:map-without-flag", "detect:free")


pytestmark = [pytest.mark.hardware, pytest.mark.rm_min_cards(2), pytest.mark.rm_layouts("one-per-card")]

from rmpeer.tables.handles import SPARE_BASE

SPARE_HANDLE = SPARE_BASE + 1


@pytest.mark.rm_check("missing-p2p-flag-caught", area="negative")
def test_map_without_p2p_flag_is_caught(peers, traffic):
    s, t = 0, 1
    rm, plan = peers.rm, peers.plan
    va = plan.windows[-1] + 4 * plan.extent   # past every window, huge-page aligned
    va -= va % peers.va.page_size
    session = peers.sessions[s]
    rec = session.reserve(SPARE_HANDLE, va, plan.extent, label="detect:reserve")
    assert rec.status == 0, rec.status_name
    plain = rm.abi.bits("NVOS46_FLAGS").compose(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="HUGE")
    mapped, reply = rm.map_dma(session.plan.device, SPARE_HANDLE, peers.sessions[t].plan.buffer,
                               length=plan.extent, flags=plain, dma_offset=va, label="detect:map-without-flag",
                               check=False)
    try:
        assert reply["status"] == 0, "RM refuses the flagless cross-card map outright"
        check = traffic.read(s, t, via=va)
        assert not check.ok, "the flagless map read the right bytes: the P2P flag would be unnecessary"
        found = check.mismatch["explanation"]
        assert f"session {t} (card {plan.cards[t]})" not in found.split("where")[0], found
        print(f"flagless map of card {plan.cards[t]}'s buffer from card {plan.cards[s]}: {found}")
    finally:
        rm.free(session.plan.device, SPARE_HANDLE, label="detect:free")
