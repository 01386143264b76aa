"""Virtual ranks: sessions on one card map one another's buffers with the plain map."""

import pytest

pytestmark = pytest.mark.hardware


@pytest.mark.rm_pairs("same_card")
def test_same_card_map_is_plain(peers, s, t):
    step = peers.report.map(s, t)
    assert step is not None, f"no map: the reservation of window({t}) in session {s} failed"
    flags = peers.rm.abi.bits("NVOS46_FLAGS")
    sent_flags = peers.rm.abi.struct("NVOS46_PARAMETERS").get(bytes.fromhex(step.record.request), "flags")
    assert flags.value_of(sent_flags, "P2P_ENABLE") == "NO", flags.describe(sent_flags)
    assert step.status_name == "NV_OK", step.record.status_text
    assert step.reply["dmaOffset"] == peers.plan.window(t)
