"""Fitness pieces without a GPU: the perf/NVLink ABI against compiled header facts, boost flags,
clock and link readings through a scripted RM, counter comparison, Xid lines, bandwidth floors.

Expected values come from NVIDIA's headers (fixtures/abi/fitness-facts.json, compiled from
them by `rmpeer abi fitness-facts`), the driver's own Xid format (kernel_rc.c), and the
numbers of issue 9, never from the code under test."""

import json
import os
from types import SimpleNamespace

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.shim.records import CallRecord
from rmpeer.tables.load import MATRICES
from rmpeer.judge.floors import judge_bandwidth
from rmpeer.paths import fixtures_dir
from rmpeer.errors import MatrixError
from rmpeer.judge.nvlink import check_active, compare_counters
from rmpeer.rm.nvlink import link_health
from rmpeer.rm.perf import Boost, boost_flags, read_clocks
from rmpeer.tables.topology import TopologyMatrix
from rmpeer.judge.scope import xids_by_card
from rmpeer.machine.xids import XidWatcher, kmsg_messages, parse_xid

pytestmark = pytest.mark.offline
MATRIX = DriverMatrix()
FACTS = json.loads((fixtures_dir() / "abi/fitness-facts.json").read_text())["tags"]
PREFIX = "NV2080_CTRL_"
NEW_CONTROLS = ["NV2080_CTRL_CMD_PERF_BOOST", "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE",
                "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2", "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS",
                "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS",
                "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2", "NV2080_CTRL_CMD_NVLINK_GET_ERR_INFO",
                "NV2080_CTRL_CMD_NVLINK_GET_LINK_FATAL_ERROR_COUNTS"]
STATUS_CODES = {name: spec["code"] for name, spec in
                yaml.safe_load((MATRICES / "nvstatus.yaml").read_text())["statuses"].items()}
GiB, MiB = 1 << 30, 1 << 20


def abi(version):
    return MATRIX.abi(MATRIX.select(version))


# -- the ABI: every checked tag's compiled layout is what the matrix resolves to ---------------

@pytest.mark.parametrize("tag", sorted(FACTS, key=lambda t: tuple(map(int, t.split(".")))))
def test_matrix_matches_the_compiled_headers(tag):
    a, facts = abi(tag), FACTS[tag]
    for short, (size, offsets) in facts["structs"].items():
        st = a.struct(PREFIX + short)
        assert st.size == size, f"{tag}: {st.name} is {st.size} bytes in the matrix, {size} compiled"
        for field, offset in offsets.items():
            assert st.field(field).offset == offset, f"{tag}: {st.name}.{field}"
    for short, value in facts["constants"].items():
        assert a.const(PREFIX + short) == value, f"{tag}: {short}"
    compiled = {PREFIX + short: cmd for short, (cmd, exported) in facts["controls"].items()}
    for name in NEW_CONTROLS:
        if name in compiled:
            assert a.control(name)[0] == compiled[name]
            assert a.control(name)[1].size == facts["structs"][a.controls[name]["params"][len(PREFIX):]][0]
        else:
            assert name not in a.controls, f"{tag} has no {name}, the matrix says it has"
    assert all(exported for _, exported in facts["controls"].values()), "a control NV20_SUBDEVICE_0 does not export"


def test_controls_that_came_later_are_absent_before():
    assert "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE" not in abi("535.288.01").controls
    assert "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2" in abi("550.40.07").controls
    assert "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2" not in abi("550.163.01").controls
    assert "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2" in abi("555.42.02").controls


@pytest.mark.parametrize("version", ["535.43.02", "570.86.15", "580.159.04", "595.45.04"])
def test_boost_flags_compose_to_the_measured_word(version):
    a = abi(version)
    assert boost_flags(a) == 0x52            # CMD=BOOST_TO_MAX | CUDA=YES | CUDA_PRIORITY=HIGH (issue 9)
    assert boost_flags(a, "CLEAR") == 0
    assert a.const("NV2080_CTRL_PERF_BOOST_DURATION_INFINITE") == 0xFFFFFFFF
    assert a.const("NV2080_CTRL_PERF_BOOST_DURATION_MAX") == 3600


# -- a scripted RM -----------------------------------------------------------------------------

class ScriptedRm:
    """Answers controls from `answers`: name -> (status name, {field: value} or bytes builder)."""

    def __init__(self, version, answers):
        self.abi, self.answers, self.calls = abi(version), answers, []

    def control(self, obj, name, *, check=True, payload=None, label=None, **fields):
        _, st = self.abi.control(name)
        sent = bytes(payload) if payload is not None else bytes(st.pack(**fields))
        assert len(sent) == st.size
        self.calls.append((obj, name, st.decode(sent)))
        status, reply = self.answers.get(name, ("NV_OK", {}))
        raw = reply(st) if callable(reply) else bytes(st.pack(**reply))
        rec = CallRecord(0, "ioctl", status=STATUS_CODES[status], status_name=status)
        out = st.decode(raw)
        out["_record"], out["_raw"] = rec, raw
        return out


def test_boost_raises_every_card_and_clears_each_once():
    rm = ScriptedRm("580.159.04", {})
    with Boost(rm, {0: 0xA1000000, 1: 0xA1000001}) as boost:
        assert [c[2]["flags"] for c in rm.calls] == [0x52, 0x52]
        assert [c[2]["duration"] for c in rm.calls] == [0xFFFFFFFF] * 2
    assert [(c[0], c[2]["flags"], c[2]["duration"]) for c in rm.calls[2:]] == [(0xA1000001, 0, 0), (0xA1000000, 0, 0)]
    assert boost.failures == {} and boost.raised == []


def test_a_refused_boost_is_reported_and_not_cleared():
    rm = ScriptedRm("580.159.04", {"NV2080_CTRL_CMD_PERF_BOOST": ("NV_ERR_NOT_SUPPORTED", {})})
    with pytest.raises(RuntimeError):
        with Boost(rm, {0: 7}) as boost:
            raise RuntimeError("the copies failed")
    assert boost.failures == {0: "NV_ERR_NOT_SUPPORTED"}
    assert len(rm.calls) == 1


def test_boost_is_cleared_when_the_body_fails():
    rm = ScriptedRm("580.159.04", {})
    with pytest.raises(RuntimeError):
        with Boost(rm, {0: 7}):
            raise RuntimeError("the copies failed")
    assert [c[2]["flags"] for c in rm.calls] == [0x52, 0]


def test_clocks_name_the_pstate_and_say_why_a_value_is_missing():
    # ctrl2080perf.h: NV2080_CTRL_PERF_PSTATES_P0 = 0x1, P8 = 0x100
    rm = ScriptedRm("580.159.04", {"NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE": ("NV_OK", {"currPstate": 0x100})})
    got = read_clocks(rm, 7)
    assert got["pstate"] == "P8"
    assert got["graphics_mhz"] is None and "NV2080_CTRL_CLK_DOMAIN_GPCCLK" in got["reasons"]["graphics_mhz"]
    refused = ScriptedRm("580.159.04", {"NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE": ("NV_ERR_NOT_SUPPORTED", {}),
                                        "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2": ("NV_ERR_NOT_SUPPORTED", {})})
    got = read_clocks(refused, 7)
    assert got["pstate"] is None and "NV_ERR_NOT_SUPPORTED" in got["reasons"]["pstate"]
    assert "NV_ERR_NOT_SUPPORTED" in got["reasons"]["memory_mhz"]
    old = read_clocks(ScriptedRm("535.288.01", {}), 7)
    assert old["pstate"] is None and "not in the ABI" in old["reasons"]["pstate"]


# -- NVLink -------------------------------------------------------------------------------------

def _nvlink_answers(a, links, *, crc=0, state=3):
    """Replies of a card with `links` enabled. Header facts (ctrl2080nvlink.h): caps SUPPORTED
    is byte 0 mask 0x01; LINK_STATE_ACTIVE = 3; DEVICE_TYPE_GPU = 2; GET_COUNTERS value[] is
    indexed by mask bit, DL_RX_ERR_CRC_FLIT = bit 16, DL_TX_ERR_REPLAY = bit 25."""
    info = a.struct("NV2080_CTRL_NVLINK_LINK_STATUS_INFO")
    values = a.struct("NV2080_CTRL_NVLINK_GET_COUNTERS_VALUES")
    mask = sum(1 << i for i in links)

    def status(st):
        wide = {"enabledLinks.lenMasks": 1, "enabledLinks.masks": [mask]} if st.has("enabledLinks.masks") else {}
        buf = st.pack(enabledLinkMask=mask, **wide)
        for i in links:
            at = st.field("linkInfo").offset + i * info.size
            buf[at:at + info.size] = info.pack(linkState=state, nvlinkLineRateMbps=106250, connected=1,
                                               remoteDeviceLinkNumber=i, **{"remoteDeviceInfo.deviceType": 2})
        return bytes(buf)

    def counters(st):
        buf = st.pack()
        for i in links:
            at = st.field("counters").offset + i * values.size
            per = [0] * 32
            per[16], per[25] = crc + i, 1
            buf[at:at + values.size] = values.pack(value=per)
        return bytes(buf)
    return {"NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS": ("NV_OK", {"capsTbl": 0x01}),
            "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS": ("NV_OK", status),
            "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS": ("NV_OK", counters)}


@pytest.mark.parametrize("version", ["535.43.02", "570.86.15", "580.159.04", "590.44.01"])
def test_link_health_reads_state_rate_far_end_and_counters(version):
    a = abi(version)
    rm = ScriptedRm(version, _nvlink_answers(a, [0, 1, 17], crc=4))
    health = link_health(rm, 7, card=1)
    assert health["supported"] and health["active"] == 3 and health["enabled_mask"] == (1 << 0 | 1 << 1 | 1 << 17)
    first = health["links"][0]
    assert (first["index"], first["state"], first["line_rate_mbps"], first["remote"]) == \
        (0, "ACTIVE", 106250, {"type": "GPU", "link": 0, "pci": None})
    assert health["links"][2]["counters"]["crc"] == 4 + 17 and health["links"][2]["counters"]["replay_tx"] == 1
    sent = rm.calls[-1][2]
    assert sent["counterMask"] >> 16 & 1 and sent["counterMask"] >> 25 & 1 and sent["linkMask"] == health["enabled_mask"]


def test_a_pcie_card_is_not_supported_and_not_failed():
    rm = ScriptedRm("580.159.04", {"NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS": ("NV_ERR_NOT_SUPPORTED", {})})
    health = link_health(rm, 7, card=0)
    assert health["supported"] is False and "NV_ERR_NOT_SUPPORTED" in health["reason"]
    assert check_active(health, 18) == []
    no_caps = link_health(ScriptedRm("580.159.04", {"NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS": ("NV_OK", {})}), 7)
    assert no_caps["supported"] is False and "no NVLink" in no_caps["reason"]


def test_links_are_judged_against_those_rm_enables_not_a_fixed_count():
    """12 of 18 enabled (as H100 PCIe NVL ships: the rest disabled by design) and all up: no
    problem, whatever the topology's count; an enabled link down is one."""
    a = abi("580.159.04")
    health = link_health(ScriptedRm("580.159.04", _nvlink_answers(a, range(12))), 7, card=0)
    assert health["active"] == 12 and check_active(health, 18) == []
    down = link_health(ScriptedRm("580.159.04", _nvlink_answers(a, range(18), state=4)), 7, card=1)
    problems = check_active(down, 18)
    assert problems[0] == "card 1: 0 of 18 enabled NVLinks active" and "link 0 is FAULT (up: ACTIVE or SLEEP" in problems[1]
    none = {"card": 2, "supported": True, "links": [], "active": 0}
    assert check_active(none, 18) == ["card 2: RM enables no NVLink on this card (18 expected)"]


def _reading(card, **per_link):
    return {"card": card, "supported": True,
            "links": [{"index": i, "state": "ACTIVE", "active": True, "counters": c} for i, c in per_link.items()]}


def test_any_counter_increase_is_a_problem_naming_card_link_counter_and_values():
    before = {"card": 1, "links": [{"index": 3, "state": "ACTIVE", "active": True,
                                    "counters": {"crc": 0, "replay_tx": 2, "recovery": 0}}]}
    after = {"card": 1, "links": [{"index": 3, "state": "ACTIVE", "active": True,
                                   "counters": {"crc": 5, "replay_tx": 2, "recovery": 1}}]}
    assert compare_counters(before, after) == ["card 1 link 3: crc 0 -> 5", "card 1 link 3: recovery 0 -> 1"]
    assert compare_counters(before, before) == []


def test_lane_counts_the_fec_corrected_are_reported_not_judged():
    """As read on 2 x H200 (580.159.04) over one healthy run: per-lane CRC and ECC counts
    grew (11 -> 33, 16 -> 48) while nvidia-smi showed 0 CRC, replay and recovery errors."""
    before = {"card": 0, "links": [{"index": 0, "state": "SLEEP", "active": True,
                                    "counters": {"crc": 0, "crc_lanes": 11, "ecc_lanes": 16, "replay_rx": 0}}]}
    after = {"card": 0, "links": [{"index": 0, "state": "SLEEP", "active": True,
                                   "counters": {"crc": 0, "crc_lanes": 33, "ecc_lanes": 48, "replay_rx": 0}}]}
    assert compare_counters(before, after) == []
    after["links"][0]["counters"]["replay_rx"] = 1
    assert compare_counters(before, after) == ["card 0 link 0: replay_rx 0 -> 1"]


def test_a_sleeping_trained_link_is_up():
    """RM reported SLEEP (5) for all 18 links of a card that had just moved 395 GB/s."""
    a = abi("580.159.04")
    health = link_health(ScriptedRm("580.159.04", _nvlink_answers(a, range(18), state=5)), 7, card=0)
    assert health["active"] == 18 and check_active(health, 18) == []


def test_a_link_that_went_down_or_away_is_a_problem():
    before = {"card": 0, "links": [{"index": 0, "state": "ACTIVE", "active": True, "counters": {}},
                                   {"index": 1, "state": "ACTIVE", "active": True, "counters": {}}]}
    after = {"card": 0, "links": [{"index": 0, "state": "FAULT", "active": False, "counters": {}}]}
    assert compare_counters(before, after) == ["card 0 link 0: went from ACTIVE to FAULT",
                                               "card 0 link 1: no longer enabled"]


# -- Xids ---------------------------------------------------------------------------------------

# As kernel_rc.c prints them: "NVRM: Xid (PCI:%04x:%02x:%02x[ GPU-I:%02u[ GPU-CI:%02u]]): %d, ..."
XID_31 = ("NVRM: Xid (PCI:0000:18:00): 31, pid=4242, name=python3, Ch 00000008, intr 00000000. "
          "MMU Fault: ENGINE CE4 HUBCLIENT_CE0 faulted @ 0x7f00_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_READ")
XID_94 = "NVRM: Xid (PCI:0000:2A:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No"
XID_79 = "NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus."


def test_xid_lines_parse_to_pci_number_and_text():
    assert parse_xid(XID_31) == {"pci": "0000:18:00", "xid": 31, "text": XID_31.split("31, ", 1)[1]}
    assert parse_xid(XID_94) == {"pci": "0000:2a:00", "xid": 94, "gpu_instance": 5,
                                 "text": "pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No"}
    assert parse_xid("[ 12.3] " + XID_79)["xid"] == 79
    assert parse_xid("NVRM: GPU at PCI:0000:18:00: GPU-1234") is None
    assert parse_xid("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal") is None


def test_kmsg_records_keep_their_text_and_drop_continuation_lines():
    data = (f"3,1001,5000,-;{XID_31}\n SUBSYSTEM=pci\n DEVICE=+pci:0000:18:00.0\n"
            f"6,1002,5001,-;nvidia-modeset: something else\n").encode()
    assert kmsg_messages(data) == [XID_31, "nvidia-modeset: something else"]


def test_watcher_reads_only_what_was_logged_after_start(tmp_path):
    log = tmp_path / "kmsg"
    log.write_text(f"3,1,1,-;{XID_79}\n")          # before start: not reported
    watcher = XidWatcher(kmsg=str(log)).start()
    with log.open("a") as fh:
        fh.write(f"3,2,2,-;{XID_31}\n SUBSYSTEM=pci\n6,3,3,-;unrelated\n3,4,4,-;{XID_94}\n")
    got = watcher.stop()
    assert got["readable"] and got["source"] == "kmsg"
    assert [(x["pci"], x["xid"]) for x in got["xids"]] == [("0000:18:00", 31), ("0000:2a:00", 94)]


def test_watcher_falls_back_to_dmesg_then_says_when_nothing_is_readable(tmp_path):
    logs = [["[1.0] boot", f"[2.0] {XID_79}"], ["[1.0] boot", f"[2.0] {XID_79}", f"[3.0] {XID_31}"]]
    watcher = XidWatcher(kmsg=str(tmp_path / "absent"), dmesg=lambda: logs.pop(0)).start()
    got = watcher.stop()
    assert got["readable"] and got["source"] == "dmesg" and [x["xid"] for x in got["xids"]] == [31]

    def refused():
        raise OSError("dmesg: read kernel buffer failed: Operation not permitted")
    blind = XidWatcher(kmsg=str(tmp_path / "absent"), dmesg=refused).start().stop()
    assert blind["readable"] is False and blind["xids"] == []
    assert "absent" in blind["reason"] and "Operation not permitted" in blind["reason"]


def test_xids_map_to_cards_by_pci_address():
    cards = [SimpleNamespace(index=0, pci="0000:18:00.0"), SimpleNamespace(index=1, pci="0000:2a:00.0")]
    xids = [parse_xid(XID_31), parse_xid(XID_94), parse_xid("NVRM: Xid (PCI:0000:99:00): 48, DBE")]
    assert {k: [x["xid"] for x in v] for k, v in xids_by_card(xids, cards).items()} == {0: [31], 1: [94], "unknown": [48]}


# -- topology floors and the bandwidth verdict -------------------------------------------------

TOPOLOGIES = TopologyMatrix()


def fig(src, dst, op, gbps, size=256 * MiB):
    return {"src_card": src, "dst_card": dst, "op": op, "bytes": size, "gbps": gbps}


def test_the_h200_floors_are_0_9_of_the_healthy_medians_measured():
    """0.9 x the medians of docs/evidence/h200x2-20261130T003650Z at 256 MiB, boosted: one
    direction 394.7, same card 559.3, both directions at once 724 (714.8 and 733.9)."""
    t = TOPOLOGIES.get("h200x2-nv18")
    assert (t.floors.cross_card_gbps, t.floors.same_card_gbps, t.floors.bidirectional_gbps) == (355, 500, 650)
    assert (t.floors.warn_band, t.floors.size, t.expected_nvlinks) == (0.05, 256 * MiB, 18)
    one = TOPOLOGIES.get("h200x1")
    assert (one.floors.same_card_gbps, one.floors.cross_card_gbps, one.expected_nvlinks) == (500, None, None)


def test_healthy_boosted_figures_pass():
    t = TOPOLOGIES.get("h200x2-nv18")
    healthy = [fig(0, 1, "read", 394), fig(1, 0, "read", 395), fig(0, 1, "write", 396), fig(1, 0, "write", 394),
               fig(0, 0, "same-card", 557), fig(1, 1, "same-card", 560), fig(0, 1, "bidirectional", 760)]
    assert judge_bandwidth(t, healthy) == []


def test_below_the_floor_fails_naming_pair_figure_and_floor():
    t = TOPOLOGIES.get("h200x2-nv18")
    got = judge_bandwidth(t, [fig(0, 1, "read", 233), fig(1, 0, "read", 241)])   # issue 9, clocks at 345 MHz
    assert [(f["level"], f["pair"], f["gbps"], f["floor"]) for f in got] == [("FAIL", "0->1", 233, 355),
                                                                            ("FAIL", "1->0", 241, 355)]
    assert "0->1" in got[0]["message"] and "233.0" in got[0]["message"] and "355" in got[0]["message"]


@pytest.mark.parametrize("figure,level", [
    (fig(0, 1, "write", 360), "WARN"),                 # 355 <= 360 < 355 x 1.05
    (fig(0, 1, "write", 373), None),                   # above 372.75
    (fig(0, 1, "write", 354.9), "FAIL"),
    (fig(1, 1, "same-card", 520), "WARN"),             # 500 x 1.05 = 525
    (fig(1, 1, "same-card", 480), "FAIL"),
    (fig(0, 1, "bidirectional", 640), "FAIL"),
    (fig(0, 1, "bidirectional", 670), "WARN"),         # 650 x 1.05 = 682.5
    (fig(0, 1, "read", 233, size=64 * MiB), None),     # below the floors' size: not judged
    (fig(0, 1, "read", 233, size=1 * GiB), "FAIL"),
    (fig(0, 1, "all", 100), None),                     # no floor for all cards at once
])
def test_floor_and_warning_band(figure, level):
    got = judge_bandwidth(TOPOLOGIES.get("h200x2-nv18"), [figure])
    assert [f["level"] for f in got] == ([level] if level else [])


def test_a_pair_far_below_its_siblings_is_an_outlier_even_without_floors():
    figures = [fig(0, 1, "read", 300, 1 * GiB), fig(1, 0, "read", 394, 1 * GiB)]   # 300 < 0.85 x 394
    got = judge_bandwidth(TOPOLOGIES.get("hgx-h200x8-nvswitch"), figures)
    assert [(f["level"], f["pair"], f["median"]) for f in got] == [("OUTLIER", "0->1", 394)]
    near = [fig(0, 1, "read", 340, 1 * GiB), fig(1, 0, "read", 394, 1 * GiB)]        # 340 > 334.9
    assert judge_bandwidth(TOPOLOGIES.get("hgx-h200x8-nvswitch"), near) == []
    eight = [fig(a, b, "write", 390, GiB) for a in range(3) for b in range(3) if a != b]
    eight[4]["gbps"] = 200
    got = judge_bandwidth(TOPOLOGIES.get("hgx-h200x8-nvswitch"), eight)
    assert [(f["pair"], f["median"]) for f in got] == [(f"{eight[4]['src_card']}->{eight[4]['dst_card']}", 390)]


def test_outliers_compare_only_the_same_op_and_size():
    figures = [fig(0, 0, "same-card", 557), fig(0, 1, "read", 394), fig(0, 1, "read", 233, 64 * MiB)]
    assert judge_bandwidth(TOPOLOGIES.get("hgx-h200x8-nvswitch"), figures) == []


def _edited_topologies(tmp_path, change):
    data = yaml.safe_load((MATRICES / "topologies.yaml").read_text())
    change(data["topologies"]["h200x2-nv18"])
    path = tmp_path / "topologies.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("change,entry,problem", [
    (lambda t: t["floors"].update(cross_card_gbps=-1), "floors.cross_card_gbps", "above 0"),
    (lambda t: t["floors"].update(speed=3), "floors", "unknown keys ['speed']"),
    (lambda t: t["floors"].update(warn_band=1.5), "floors.warn_band", "fraction"),
    (lambda t: t["floors"].update(size="big"), "floors.size", "not a size"),
    (lambda t: t.update(floors={"warn_band": 0.1}), "floors", "states no floor"),
    (lambda t: t.update(floors=[355]), "floors", "must be dict"),
    (lambda t: t["links"].update(kind="infiniband"), "links.kind", "not one of"),
    (lambda t: t["links"].update(count="eighteen"), "links.count", "must be int"),
])
def test_malformed_floors_and_links_are_refused_by_name(tmp_path, change, entry, problem):
    path = _edited_topologies(tmp_path, change)
    with pytest.raises(MatrixError) as err:
        TopologyMatrix(path)
    text = str(err.value)
    assert str(path) in text and f"topology h200x2-nv18.{entry}" in text and problem in text, text


def test_the_compiled_facts_fixture_stays_small():
    assert os.path.getsize(fixtures_dir() / "abi/fitness-facts.json") < 50_000
