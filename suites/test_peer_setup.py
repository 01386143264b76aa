"""Every NV50_P2P pair, every reservation and every map of the seed's peer setup, as RM
answered them on the host, live or recorded (docs/peer-setup.md, "What conformance means").

Expected values are written here from their sources, not taken from the code under test:
the seed's handle and order rules, the struct sizes of the driver headers, the address
choices of matrices/layouts.yaml, and the statuses of the host's topology entry."""

import pytest

from rmpeer.abi import parse_version

pytestmark = pytest.mark.hardware


def seed_pair_handle(a: int, b: int) -> int:
    return 0xB2000000 + a * 16 + b          # the seed: phP2P = 0xB2000000 + a*16 + b


def seed_pairs(cards) -> list:
    """The seed's NV50_P2P order: b ascending, a from b-1 down, cards differing."""
    return [(a, b) for b in range(len(cards)) for a in range(b - 1, -1, -1) if cards[a] != cards[b]]


def seed_windows(n: int) -> list:
    """The seed's window order: k from n*n-1 down, s = k div n, t = k mod n."""
    return [divmod(k, n) for k in range(n * n - 1, -1, -1)]


def header_size(struct: str, driver: str) -> int:
    """Sizes from the driver headers (class/cl503b.h, nvos.h), by the release they changed in."""
    v = parse_version(driver)
    return {"NV503B_ALLOC_PARAMETERS": 88 if v >= (590, 44, 1) else 72,
            "NVOS46_PARAMETERS": 64 if v >= (580, 65, 6) else 56}[struct]


def window(layouts_va, extent: int, t: int) -> int:
    """layouts.yaml: window(t) = window_base + t * extent rounded up to whole pages."""
    return layouts_va.window_base + t * -(-extent // layouts_va.page_size) * layouts_va.page_size


def expected(topology, step: str) -> str:
    return topology.expected(step) if topology else "NV_OK"


def answered(step, want: str) -> str:
    """A status check's reason: the status expected (topology or NV_OK) and RM's answer."""
    return f"{step.label} s{step.s}->t{step.t}: expected {want}, found {step.status_name} ({step.record.status_text})"


def sent(record, abi, struct_name=None):
    """The request this run sent RM, decoded through the ABI (the params block when
    struct_name). rmpeer.rm.client keeps the run's own bytes in the record, in a replay too."""
    if struct_name:
        return abi.struct(struct_name).decode(bytes.fromhex(record.payload.request))
    return abi.struct(record.struct).decode(bytes.fromhex(record.request))


@pytest.mark.rm_check("setup:pair", area="setup")
@pytest.mark.rm_pairs("p2p")
def test_pair(peers, host_run, s, t):
    step = peers.report.pair(s, t)
    abi = peers.rm.abi
    request = sent(step.record, abi)
    params = sent(step.record, abi, "NV503B_ALLOC_PARAMETERS")
    assert request["hObjectNew"] == seed_pair_handle(s, t), \
        f"pair {s}->{t}: handle {request['hObjectNew']:#x}, the seed's is {seed_pair_handle(s, t):#x}"
    assert request["hObjectParent"] == request["hRoot"], "an NV50_P2P's parent is the client"
    size = header_size("NV503B_ALLOC_PARAMETERS", host_run.facts.driver_version)
    assert request["paramsSize"] == size, \
        f"pair {s}->{t}: paramsSize {request['paramsSize']}, NV503B_ALLOC_PARAMETERS is {size} bytes in the headers"
    joined = (peers.sessions[s].plan.subdevice, peers.sessions[t].plan.subdevice)
    assert (params["hSubDevice"], params["hPeerSubDevice"]) == joined, \
        (f"pair {s}->{t}: joins subdevices {params['hSubDevice']:#x} and {params['hPeerSubDevice']:#x}, "
         f"its sessions' are {joined[0]:#x} and {joined[1]:#x}")
    want = expected(host_run.topology, "pair")
    assert step.status_name == want, answered(step, want)


@pytest.mark.rm_check("setup:reservation", area="setup")
@pytest.mark.rm_pairs("all")
def test_reservation(peers, host_run, s, t):
    step = peers.report.reserve(s, t)
    params = sent(step.record, peers.rm.abi, "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS")
    w = window(host_run.layouts.va, peers.plan.extent, t)
    assert (params["offset"], params["limit"]) == (w, w + peers.plan.extent - 1), \
        (f"window({t}) in session {s}: reserved {params['offset']:#x}-{params['limit']:#x}, "
         f"layouts.yaml places it at {w:#x}-{w + peers.plan.extent - 1:#x}")
    assert params["hVASpace"] == peers.sessions[s].plan.vaspace, \
        f"window({t}) in session {s}: VA space {params['hVASpace']:#x}, the session's is {peers.sessions[s].plan.vaspace:#x}"
    want = expected(host_run.topology, "reserve")
    assert step.status_name == want, answered(step, want)


@pytest.mark.rm_check("setup:map", area="setup")
@pytest.mark.rm_pairs("all")
def test_map(peers, host_run, s, t):
    """Cross card: P2P_ENABLE=NOSLI; same card (t = s, or virtual ranks): the plain map."""
    step = peers.report.map(s, t)
    assert step is not None, f"no map: the reservation of window({t}) in session {s} failed"
    abi = peers.rm.abi
    request = sent(step.record, abi)
    flags = abi.bits("NVOS46_FLAGS")
    peer = peers.plan.cards[s] != peers.plan.cards[t]
    size, sent_size = header_size("NVOS46_PARAMETERS", host_run.facts.driver_version), len(bytes.fromhex(step.record.request))
    assert sent_size == size, f"map s{s}->t{t}: sent {sent_size} bytes, NVOS46_PARAMETERS is {size} in the headers"
    mapped = (peers.sessions[s].plan.device, peers.sessions[t].plan.buffer)
    assert (request["hDevice"], request["hMemory"]) == mapped, \
        (f"map s{s}->t{t}: device {request['hDevice']:#x} and memory {request['hMemory']:#x}, expected session {s}'s "
         f"device {mapped[0]:#x} and session {t}'s buffer {mapped[1]:#x}")
    assert flags.value_of(request["flags"], "P2P_ENABLE") == ("NOSLI" if peer else "NO"), flags.describe(request["flags"])
    assert flags.value_of(request["flags"], "P2P_SUBDEVICE_ID") == 0, flags.describe(request["flags"])
    assert step.reply["status"] != request["status"], "RM never wrote the status (the sentinel is still there)"
    want = expected(host_run.topology, "map_peer" if peer else "map_same")
    assert step.status_name == want, answered(step, want)
    if step.status == 0:
        w = window(host_run.layouts.va, peers.plan.extent, t)
        assert step.reply["dmaOffset"] == w, f"map s{s}->t{t}: RM mapped at {step.reply['dmaOffset']:#x}, window({t}) is {w:#x}"


@pytest.mark.rm_check("setup:order", area="setup")
def test_setup_order(peers):
    """As RM saw them: every pair (the seed's order), then the reservation and map of each
    window in the seed's order."""
    cards = peers.plan.cards
    want = [("alloc:p2p", a, b) for a, b in seed_pairs(cards)]
    for s, t in seed_windows(len(cards)):
        want += [("alloc:window", s, t), ("dma-map-window" if cards[s] == cards[t] else "dma-map-peer", s, t)]
    seen = sorted(peers.report.steps, key=lambda r: r.record.sent_seq)   # the order this run sent them
    order = [(r.label, r.s, r.t) for r in seen]
    first = next((i for i, (a, b) in enumerate(zip(order, want)) if a != b), min(len(order), len(want)))
    assert order == want, (f"step {first + 1} of {len(want)}: sent {order[first] if first < len(order) else 'nothing'}, "
                           f"the seed's order has {want[first] if first < len(want) else 'nothing'} there")
