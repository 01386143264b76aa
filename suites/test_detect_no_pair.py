"""A P2P_ENABLE map before any NV50_P2P exists is refused with NV_ERR_INVALID_STATE; the same
map succeeds once the pair exists. No other layout's pairs are alive while it runs."""

import pytest

from rmpeer.rm.objects import Pair, Window

pytestmark = [pytest.mark.hardware, pytest.mark.rm_fresh, pytest.mark.rm_min_cards(2),
              pytest.mark.rm_layouts("one-per-card")]


@pytest.mark.rm_check("map-needs-a-pair", area="negative")
def test_peer_map_needs_a_pair(fresh_setup, host_run):
    setup = fresh_setup
    try:
        setup.create_sessions()
        op = next(op for op in setup.plan.maps if op.peer)
        window = Window(host_run.runtime.rm, op, setup.sessions)
        assert window.reserve().status_name == "NV_OK"
        before = window.map()
        assert before.status_name == "NV_ERR_INVALID_STATE", before.record.status_text
        pair = Pair(host_run.runtime.rm, setup.plan.pairs[0], setup.sessions).create()
        assert pair.status_name == "NV_OK"
        after = window.map()
        assert after.status_name == "NV_OK", after.record.status_text
    finally:
        assert setup.teardown() == []
