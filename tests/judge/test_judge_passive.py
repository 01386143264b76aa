"""The passive tier's rules (rmpeer.judge.passive), pure: hand-made readings of a two-card
host against what each aspect must find. The replays of real recordings through the whole
passive run are in tests/run/test_passive.py."""

from __future__ import annotations

import pytest

from rmpeer.judge import passive as rules
from rmpeer.model.result import DEGRADE
from rmpeer.model.host import Card, HostFacts

pytestmark = pytest.mark.offline

FACTS = HostFacts("580.159.04", "open", "proc", cards=[Card(0, 0, 6, "0000:00:06.0", 0x2335, uuid="GPU-a"),
                                                        Card(1, 1, 7, "0000:00:07.0", 0x2335, uuid="GPU-b")])


@pytest.mark.parametrize("xids, allowed, replay, expected", [
    ({"readable": True, "xids": [{"pci": "0000:00:07", "xid": 79, "text": "fell off"}]}, set(), False,
     [("xid", "card 1", "Xid 79: fell off", "degraded")]),
    ({"readable": True, "xids": [{"pci": "0000:00:07", "xid": 79, "text": "fell off"}]}, {79}, False, []),
    ({"readable": False, "reason": "/dev/kmsg: Permission denied"}, set(), False,
     [("xid", "host", "/dev/kmsg: Permission denied", "incomplete")]),
    ({"readable": True, "complete": False, "reason": "rotated", "xids": []}, set(), False,
     [("xid", "host", "rotated", "incomplete")]),
    (None, set(), False, [("xid", "host", "not recorded by a passive run", "incomplete")]),
    (None, set(), True, [("xid", "host", "not recorded by a passive run", "info")]),
])
def test_xid_findings(xids, allowed, replay, expected):
    got = rules._xid_findings(xids, FACTS, allowed, replay)
    assert [(f.check, f.subject, f.found, f.severity) for f in got] == expected


def test_links_down_against_the_topology_degrade():
    from rmpeer.tables.topology import TopologyMatrix

    topology = TopologyMatrix().get("h200x2-nv18")
    link = lambda i, state, active: {"index": i, "state": state, "active": active, "connected": True,
                                     "counters": {"crc": 0}}
    links = {0: {"card": 0, "supported": True, "active": 18, "links": [link(i, "ACTIVE", True) for i in range(18)]},
             1: {"card": 1, "supported": True, "active": 17,
                 "links": [link(i, "ACTIVE", True) for i in range(17)] + [link(17, "FAIL", False)]}}
    got = rules._link_findings(links, {}, FACTS, topology)
    assert [(f.subject, f.found, f.severity) for f in got] == [
        ("card 1", "card 1: 17 of 18 enabled NVLinks active", DEGRADE),
        ("card 1", "card 1: link 17 is FAIL (up: ACTIVE or SLEEP, connected)", DEGRADE)]


def test_gpu_processes_that_cannot_be_listed_are_incomplete_live():
    """/proc unreadable (the reading says so): the passive check cannot tell, so it is
    incomplete, never a pass; a replay whose recording never listed them only notes it."""
    procs = {"available": False, "reason": "/proc could not be read: [Errno 13] Permission denied"}
    assert [f.severity for f in rules._process_findings(procs, replay=False)] == ["incomplete"]
    assert [f.severity for f in rules._process_findings(None, replay=False)] == ["incomplete"]
    assert [f.severity for f in rules._process_findings(None, replay=True)] == ["info"]
    assert rules._process_findings({"available": True, "processes": []}, replay=False) == []


def test_the_kernel_modules_account_of_the_cards_must_match_rms():
    """Hand-made /proc/driver/nvidia/gpus entries against RM's two cards (FACTS): card 1's bus
    holding another GPU, or a third GPU RM does not list, is a conformance failure."""
    proc = lambda *uuids: [{"bus": f"0000:00:0{6 + i}.0", "uuid": u} for i, u in enumerate(uuids)]
    assert rules._card_findings(FACTS, proc("GPU-a", "GPU-b"), None) == []
    swapped = rules._card_findings(FACTS, proc("GPU-a", "GPU-x"), None)
    assert [(f.subject, f.found, f.severity) for f in swapped] == [("card 1", "GPU-x there", "fail")]
    extra = rules._card_findings(FACTS, proc("GPU-a", "GPU-b", "GPU-c"), None)
    assert [(f.subject, f.found, f.severity) for f in extra] == [("host", "3", "fail")]


def test_a_reading_the_passive_run_could_not_make_is_incomplete_never_a_pass():
    """Fail closed (the module's rule): the kernel module's GPU list not read, the clocks not
    read, a card's MHz that NVML did not give, a process list without its `available` flag:
    each is a finding that could not tell (incomplete), never INFO nor silence."""
    (f,) = rules._card_findings(FACTS, None, None)
    assert (f.check, f.found, f.severity) == ("cards", "not recorded", "incomplete")
    (f,) = rules._clock_findings(None)
    assert (f.check, f.severity) == ("clocks", "incomplete")
    (f,) = rules._clock_findings({0: {"pstate": "P0", "graphics_mhz": None, "nvml_reason": "NVML: Not Supported"}})
    assert (f.subject, f.found, f.severity) == ("card 0", "NVML: Not Supported", "incomplete")
    assert rules._clock_findings({0: {"pstate": "P0", "graphics_mhz": 1980}}) == []
    (f,) = rules._process_findings({}, replay=False)
    assert (f.check, f.severity) == ("gpu-processes", "incomplete")
