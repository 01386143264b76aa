"""A copy from an unmapped address: the timeout fires, the error notifier says MMU fault (31)
and names the engine, the channel is replaced, and the engines go on working."""

import pytest

from rmpeer.ce.engine import EngineFault

pytestmark = [pytest.mark.hardware, pytest.mark.rm_layouts("one-per-card")]

UNMAPPED = 0x7F0000000000   # inside the VA space, never reserved by the plan
FAULT_TIMEOUT_S = 1.0
MMU_FAULT_XID = 31          # ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT (nverror.h), also the Xid logged


@pytest.mark.rm_check("fault-detected", area="negative")
def test_unmapped_copy_faults_and_channel_is_replaced(traffic, peers, expect_xid):
    st = traffic.sessions[0]
    engine = st.engine
    expect_xid(peers.plan.cards[0], MMU_FAULT_XID)   # the kernel logs it: not a fault of the host
    with pytest.raises(EngineFault) as fault:
        engine.copy(UNMAPPED, st.part(0), 1 << 20, label="detect:unmapped", timeout_s=FAULT_TIMEOUT_S)
    assert fault.value.info32 == MMU_FAULT_XID, str(fault.value)
    assert fault.value.lce == engine.lce, \
        f"the fault was reported on copy engine {fault.value.lce}, the faulting channel's is {engine.lce}"
    print(fault.value)
    engine.replace_channel()
    for t in range(len(traffic.sessions)):
        check = traffic.read(0, t)
        assert check.ok, check.mismatch
    if len(traffic.sessions) > 1:
        assert traffic.read(1, 0).ok, "another session's engine stopped working"
