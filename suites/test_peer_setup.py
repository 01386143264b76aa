"""Every NV50_P2P pair, every reservation and every map of the seed's peer setup, as RM
answered them on the target host (PEER-SETUP.md, "What conformance means here")."""

import pytest

from rmpeer.plan import pair_handle
from rmpeer.rm.client import STATUS_SENTINEL

pytestmark = pytest.mark.hardware


def expected(topology, step: str) -> str:
    return topology.expected(step) if topology else "NV_OK"


def sent(record, abi, struct_name=None):
    """The request RM received, decoded through the ABI (the payload when struct_name)."""
    if struct_name:
        return abi.struct(struct_name).decode(bytes.fromhex(record.payload.request))
    return abi.struct(record.struct).decode(bytes.fromhex(record.request))


@pytest.mark.rm_pairs("p2p")
def test_pair(peers, topology, s, t):
    step = peers.report.pair(s, t)
    abi = peers.rm.abi
    request = sent(step.record, abi)
    params = sent(step.record, abi, "NV503B_ALLOC_PARAMETERS")
    assert request["hObjectNew"] == pair_handle(s, t)
    assert request["hObjectParent"] == peers.rm.handle, "an NV50_P2P's parent is the client"
    assert request["paramsSize"] == abi.struct("NV503B_ALLOC_PARAMETERS").size
    assert (params["hSubDevice"], params["hPeerSubDevice"]) == (
        peers.sessions[s].plan.subdevice, peers.sessions[t].plan.subdevice)
    assert step.status_name == expected(topology, "pair"), step.record.status_text


@pytest.mark.rm_pairs("all")
def test_reservation(peers, s, t):
    step = peers.report.reserve(s, t)
    params = sent(step.record, peers.rm.abi, "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS")
    window = peers.plan.window(t)
    assert (params["offset"], params["limit"]) == (window, window + peers.plan.extent - 1)
    assert params["hVASpace"] == peers.sessions[s].plan.vaspace
    assert step.status_name == "NV_OK", step.record.status_text


@pytest.mark.rm_pairs("all")
def test_map(peers, topology, s, t):
    step = peers.report.map(s, t)
    assert step is not None, f"no map: the reservation of window({t}) in session {s} failed"
    abi = peers.rm.abi
    request = sent(step.record, abi)
    flags = abi.bits("NVOS46_FLAGS")
    peer = peers.plan.cards[s] != peers.plan.cards[t]
    assert request["status"] == STATUS_SENTINEL, "the status word is preset before the call"
    assert (request["hDevice"], request["hMemory"]) == (
        peers.sessions[s].plan.device, peers.sessions[t].plan.buffer)
    assert flags.value_of(request["flags"], "P2P_ENABLE") == ("NOSLI" if peer else "NO")
    assert flags.value_of(request["flags"], "P2P_SUBDEVICE_ID") == 0
    assert step.reply["status"] != STATUS_SENTINEL, "RM never wrote the status"
    assert step.status_name == expected(topology, "map_peer" if peer else "map_same"), step.record.status_text
    if step.status == 0:
        assert step.reply["dmaOffset"] == peers.plan.window(t)


def test_setup_order(peers):
    """All pairs before any window; pairs b ascending and a descending; windows k descending."""
    report = peers.report
    assert [(r.label, r.s, r.t) for r in report.pairs] == [(op.label, op.a, op.b) for op in peers.plan.pairs]
    assert [(r.s, r.t) for r in report.reserves] == [(op.s, op.t) for op in peers.plan.maps]
    # the order RM saw them in: every pair, then reserve and map of each window in turn
    seen = sorted(report.steps, key=lambda r: r.record.seq)
    expected = [("alloc:p2p", op.a, op.b) for op in peers.plan.pairs]
    for op in peers.plan.maps:
        expected += [("alloc:window", op.s, op.t), (op.map_label, op.s, op.t)]
    assert [(r.label, r.s, r.t) for r in seen] == expected
