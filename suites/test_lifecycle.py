"""Teardown returns every object and every byte of video memory (PEER-SETUP.md)."""

import pytest

pytestmark = pytest.mark.hardware


def test_teardown_frees_everything(runtime, peer_case, request):
    """A whole setup of the layout, torn down: every free is accepted, and the cards'
    free video memory returns to what it was."""
    from rmpeer.plan import plan_peers
    from rmpeer.rm.peers import PeerSetup

    from fixtures.plugin import LAYOUTS

    va = request.config.stash[LAYOUTS].va
    plan = plan_peers(peer_case.layout.cards, peer_case.extent, va.window_fn(peer_case.extent),
                      page_size=va.page_size)
    cards = sorted(set(plan.cards))
    before = {c: runtime.host.heap_free(c) for c in cards}
    setup = PeerSetup(runtime.rm, runtime.host, plan, va)
    setup.create_sessions()
    setup.run()
    during = {c: runtime.host.heap_free(c) for c in cards}
    refused = setup.teardown()
    after = {c: runtime.host.heap_free(c) for c in cards}
    assert refused == [], [f"{r.label}: {r.status_name}" for r in refused]
    assert all(during[c] < before[c] for c in cards), "the buffers took no video memory"
    assert after == before
