"""A P2P_ENABLE map before any NV50_P2P exists is refused with NV_ERR_INVALID_STATE; the same
map succeeds once the pair exists. Its own module: no other module's pairs are alive."""

import pytest

from rmpeer.plan import plan_peers
from rmpeer.rm.objects import Pair, Window
from rmpeer.rm.peers import PeerSetup

pytestmark = [pytest.mark.hardware, pytest.mark.rm_min_cards(2), pytest.mark.rm_layouts("one-per-card")]


def test_peer_map_needs_a_pair(runtime, peer_case, request):
    from fixtures.plugin import LAYOUTS

    va = request.config.stash[LAYOUTS].va
    plan = plan_peers(peer_case.layout.cards, peer_case.extent, va.window_fn(peer_case.extent),
                      page_size=va.page_size)
    setup = PeerSetup(runtime.rm, runtime.host, plan, va)
    try:
        setup.create_sessions()
        op = next(op for op in plan.maps if op.peer)
        window = Window(runtime.rm, op, setup.sessions)
        assert window.reserve().status_name == "NV_OK"
        before = window.map()
        assert before.status_name == "NV_ERR_INVALID_STATE", before.record.status_text
        pair = Pair(runtime.rm, plan.pairs[0], setup.sessions).create()
        assert pair.status_name == "NV_OK"
        after = window.map()
        assert after.status_name == "NV_OK", after.record.status_text
    finally:
        assert setup.teardown() == []
