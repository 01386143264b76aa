"""A P2P_ENABLE map before any NV50_P2P exists is refused with NV_ERR_INVALID_STATE; the same
map succeeds once the pair exists. No other layout's pairs are alive while it runs.

RM keeps one peer mapping per pair of GPUs for every process (docs/peer-setup.md, "A shared
host"): where another process holds the cards (CUDA makes its own pairs), the refusal cannot
be shown, and the check says it is not applicable here, naming that process."""

import pytest

from rmpeer.rm.objects import Pair, Window
from rmpeer.judge.sharedhost import HELD, NOT_APPLICABLE, judge_map_before_pair
from rmpeer.rm.snapshots import snapshot_runtime
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "no-pair:gpu-processes")

pytestmark = [pytest.mark.hardware, pytest.mark.rm_fresh, pytest.mark.rm_min_cards(2),
              pytest.mark.rm_layouts("one-per-card")]


@pytest.mark.rm_check("map-needs-a-pair", area="negative")
def test_peer_map_needs_a_pair(fresh_setup, host_run):
    setup, rt = fresh_setup, host_run.runtime
    try:
        setup.create_sessions()
        op = next(op for op in setup.plan.maps if op.peer)
        window = Window(rt.rm, op, setup.sessions)
        reserved = window.reserve()
        assert reserved.status_name == "NV_OK", \
            f"{reserved.label} s{reserved.s}->t{reserved.t}: expected NV_OK, found {reserved.status_name}"
        before = window.map()
        cards = (setup.sessions[op.s].card.index, setup.sessions[op.t].card.index)
        others = None
        if before.status_name == "NV_OK":   # only then: who else holds the cards (recorded)
            others = snapshot_runtime(host_run.shim, rt, label="no-pair:gpu-processes", cards=cards)
        precondition = judge_map_before_pair(before.status_name, cards, others)
        if precondition.kind == NOT_APPLICABLE:
            pytest.skip(precondition.reason)
        assert precondition.kind == HELD, precondition.reason
        pair = Pair(rt.rm, setup.plan.pairs[0], setup.sessions).create()
        assert pair.status_name == "NV_OK", f"{pair.label} s{pair.s}->t{pair.t}: expected NV_OK, found {pair.status_name}"
        after = window.map()
        assert after.status_name == "NV_OK", after.record.status_text
    finally:
        left = setup.teardown()
        assert left == [], (f"the teardown's frees RM refused: "
                            + "; ".join(f"{r.label} {r.status_name or r.errno}" for r in left)[:300])
