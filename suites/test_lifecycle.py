"""Teardown returns every object and every byte of video memory (docs/peer-setup.md)."""

import pytest

from rmpeer.judge.sharedhost import judge_teardown
from rmpeer.rm.snapshots import own_vidmem, snapshot_runtime
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "teardown:own", "teardown:gpu-processes")

pytestmark = [pytest.mark.hardware, pytest.mark.rm_fresh]


@pytest.mark.rm_check("teardown-frees-memory", area="lifecycle")
def test_teardown_frees_everything(fresh_setup, host_run):
    """A whole setup of the layout, torn down: every free is accepted, every object the setup
    allocated is gone, and the video memory it took comes back. Counted as this process's
    own memory where RM gives it (other processes may use the cards), else as the cards'
    free memory (docs/peer-setup.md, "A shared host")."""
    setup, rt, shim = fresh_setup, host_run.runtime, host_run.shim
    cards = sorted(set(setup.plan.cards))
    subdevices = {c: rt.host.probe_handles(c)[1] for c in cards}
    host, own, host_unread = {}, {}, {}

    def free(phase):     # the cards' free video memory; a card RM did not answer for is left out
        host[phase] = {}
        for c in cards:
            got, why = rt.host.heap_free(c)
            if why:
                host_unread[c] = why
            else:
                host[phase][c] = got

    free("before")
    own["before"] = own_vidmem(shim, rt.rm, subdevices, label="teardown:own:before")
    setup.create_sessions()
    setup.run()
    free("during")
    own["during"] = own_vidmem(shim, rt.rm, subdevices, label="teardown:own:during")
    refused = setup.teardown()
    free("after")
    own["after"] = own_vidmem(shim, rt.rm, subdevices, label="teardown:own:after")
    others = snapshot_runtime(shim, rt, label="teardown:gpu-processes", with_rm=False)
    verdict = judge_teardown(refused=refused, leftover=rt.rm.objects[setup.mark:], cards=cards,
                             own=own, host=host, others=others, host_unread=host_unread)
    assert verdict.ok, "; ".join(verdict.problems)
    if verdict.not_applicable:
        pytest.skip(f"every free was accepted and every object is gone, but {verdict.not_applicable}")


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
