"""Teardown returns every object and every byte of video memory (docs/peer-setup.md)."""

import pytest

pytestmark = [pytest.mark.hardware, pytest.mark.rm_fresh]


@pytest.mark.rm_check("teardown-frees-memory", area="lifecycle")
def test_teardown_frees_everything(fresh_setup, host_run):
    """A whole setup of the layout, torn down: every free is accepted, and the cards' free
    video memory returns to what it was."""
    setup = fresh_setup
    cards = sorted(set(setup.plan.cards))
    heap_free = host_run.runtime.host.heap_free
    before = {c: heap_free(c) for c in cards}
    setup.create_sessions()
    setup.run()
    during = {c: heap_free(c) for c in cards}
    refused = setup.teardown()
    after = {c: heap_free(c) for c in cards}
    assert refused == [], [f"{r.label}: {r.status_name}" for r in refused]
    assert all(during[c] < before[c] for c in cards), "the buffers took no video memory"
    assert after == before


@pytest.mark.rm_check("shared-teardown", area="lifecycle")
def test_shared_setup_was_torn_down_cleanly(host_run, peer_case):
    """The setup every other check of this layout shared was freed without a refusal, and
    RM holds none of its objects afterwards (it is torn down before any check that builds
    its own)."""
    if peer_case.layout.name not in host_run.closed_layouts:
        host_run.layout(peer_case)   # no other check of this layout ran: build it here
    host_run.release_layout()
    closed = host_run.closed_layouts[peer_case.layout.name]
    refused = [f"{r.label}: {r.status_name}" for r in closed.refused_frees]
    assert refused == [], f"expected every free accepted, found refused: {refused}"
    assert closed.held_at_teardown > 0 and closed.frees_accepted == closed.held_at_teardown, (
        f"expected RM to accept a free of each of the {closed.held_at_teardown} objects the layout held, "
        f"found {closed.frees_accepted} frees accepted")
    assert not closed.left_allocated, (
        f"expected no object of the layout left, found {len(closed.left_allocated)}, "
        f"the first {closed.left_allocated[0][2]}")
