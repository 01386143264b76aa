"""NVLink health through RM: each link's state, line rate, far end and error counters.

A host without NVLink (PCIe) is not a failure: link_health says `supported: False` and why.
Counters are read before and after the traffic; rmpeer.judge.nvlink judges the readings.
"""

from __future__ import annotations

from rmpeer.model.nvlink import NO_NVLINK, UP_STATES
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "nvlink:caps", "nvlink:status", "nvlink:counters")

CAPS = "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS"
STATUS = "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS"
COUNTERS = "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS"
STATE_PREFIX = "NV2080_CTRL_NVLINK_STATUS_LINK_STATE_"
DEVICE_TYPE_PREFIX = "NV2080_CTRL_NVLINK_DEVICE_INFO_DEVICE_TYPE_"
_COUNTER = "NV2080_CTRL_NVLINK_COUNTER_"
# The counters reported per link, each the sum of the GET_COUNTERS mask bits named.
COUNTER_GROUPS = {
    "crc": ["DL_RX_ERR_CRC_FLIT"],
    "crc_lanes": [f"DL_RX_ERR_CRC_LANE_L{i}" for i in range(8)],
    "crc_masked": ["DL_RX_ERR_CRC_MASKED"],
    "ecc_lanes": [f"DL_RX_ERR_ECC_LANE_L{i}" for i in range(4)],
    "replay_tx": ["DL_TX_ERR_REPLAY"],
    "replay_rx": ["DL_RX_ERR_REPLAY"],
    "recovery": ["DL_TX_ERR_RECOVERY"],
}


def _names(abi, prefix: str) -> dict[int, str]:
    return {v: n[len(prefix):] for n, v in abi.constants.items() if n.startswith(prefix) and isinstance(v, int)}


def _cap(abi, caps_word: int, name: str) -> bool:
    cap = abi.const("NV2080_CTRL_NVLINK_CAPS_" + name)     # {byte, mask} of the caps table
    return bool(caps_word >> (8 * cap["byte"]) & cap["mask"])


def _link_mask(st, reply: dict, legacy: str, masks: str) -> int:
    """The link mask word: the NV2080_CTRL_NVLINK_LINK_MASK where the ABI has it, else the u32."""
    if st.has(masks + ".masks") and reply.get(masks + ".lenMasks"):
        words = reply[masks + ".masks"]
        return words[0] if isinstance(words, list) else words    # one 64-bit word holds 64 links
    return reply[legacy]


def _remote_pci(e: dict) -> str | None:
    """The far end's PCI address (as Card.pci writes it), where RM names one: which card a
    direct GPU-to-GPU link reaches."""
    if "remoteDeviceInfo.bus" not in e or not any(e.get(f"remoteDeviceInfo.{k}") for k in ("domain", "bus", "device")):
        return None
    return (f"{e['remoteDeviceInfo.domain']:04x}:{e['remoteDeviceInfo.bus']:02x}:"
            f"{e['remoteDeviceInfo.device']:02x}.{e['remoteDeviceInfo.function']:x}")


def _counter_masks(abi) -> dict[str, list[int]]:
    return {group: [abi.const(_COUNTER + n) for n in names if _COUNTER + n in abi.constants]
            for group, names in COUNTER_GROUPS.items()}


def read_counters(rm, subdevice: int, links: list[int]) -> tuple[dict[int, dict] | None, str | None]:
    """{link: {counter group: count}} from GET_COUNTERS, or (None, why not)."""
    abi = rm.abi
    _, st = abi.control(COUNTERS)
    masks = _counter_masks(abi)
    want = 0
    for bits in masks.values():
        for bit in bits:
            want |= bit
    link_word = sum(1 << i for i in links)
    fields = {"counterMask": want, "linkMask": link_word}
    if st.has("links.masks"):
        fields.update({"links.lenMasks": 1, "links.masks": [link_word]})
    reply = rm.control(subdevice, COUNTERS, check=False, label="nvlink:counters", **fields)
    failed = reply["_record"].refused
    if failed:
        return None, f"{COUNTERS}: {failed}"
    values = abi.struct("NV2080_CTRL_NVLINK_GET_COUNTERS_VALUES")
    base, raw = st.field("counters").offset, reply["_raw"]
    out = {}
    for link in links:
        per = values.decode(raw[base + link * values.size:base + (link + 1) * values.size])["value"]
        # value[] is indexed by the position of each counter's mask bit (ctrl2080nvlink.h)
        out[link] = {g: sum(per[bit.bit_length() - 1] for bit in bits) for g, bits in masks.items()}
    return out, None


def link_health(rm, subdevice: int, *, card: int | None = None) -> dict:
    """Per link: index, state, line rate, far end, counters; the active count; or why RM offers none."""
    abi = rm.abi
    caps = rm.control(subdevice, CAPS, check=False, label="nvlink:caps")
    failed = caps["_record"].refused
    if failed:
        return {"card": card, "supported": False, "reason": f"{CAPS}: {failed}", "links": [], "active": 0}
    if not _cap(abi, caps["capsTbl"], "SUPPORTED"):
        return {"card": card, "supported": False, "reason": NO_NVLINK,
                "links": [], "active": 0}
    status = rm.control(subdevice, STATUS, check=False, label="nvlink:status")
    failed = status["_record"].refused
    if failed:
        return {"card": card, "supported": True, "reason": f"{STATUS}: {failed}", "links": [], "active": 0}
    _, st = abi.control(STATUS)
    enabled = _link_mask(st, status, "enabledLinkMask", "enabledLinks")
    info = abi.struct("NV2080_CTRL_NVLINK_LINK_STATUS_INFO")
    base, raw = st.field("linkInfo").offset, status["_raw"]
    states, types = _names(abi, STATE_PREFIX), _names(abi, DEVICE_TYPE_PREFIX)
    up_states = {abi.const(STATE_PREFIX + name) for name in UP_STATES}
    slots = st.field("linkInfo").size // info.size      # the array's length in this ABI
    links = []
    for i in (b for b in range(slots) if enabled >> b & 1):
        e = info.decode(raw[base + i * info.size:base + (i + 1) * info.size])
        links.append({"index": i, "state": states.get(e["linkState"], e["linkState"]),
                      "active": e["linkState"] in up_states and bool(e["connected"]),
                      "line_rate_mbps": e["nvlinkLineRateMbps"],
                      "data_rate_kibps": e.get("nvlinkLinkDataRateKiBps"),
                      # lanes per sublink: a link carries line rate x this many lanes each way
                      "sublink_width": e.get("subLinkWidth"),
                      "connected": bool(e["connected"]),
                      "remote": {"type": types.get(e["remoteDeviceInfo.deviceType"], e["remoteDeviceInfo.deviceType"]),
                                 "link": e["remoteDeviceLinkNumber"], "pci": _remote_pci(e)}})
    counters, why = read_counters(rm, subdevice, [link["index"] for link in links])
    for link in links:
        link["counters"] = counters.get(link["index"]) if counters else None
    return {"card": card, "supported": True, "enabled_mask": enabled, "links": links,
            "active": sum(link["active"] for link in links), "counters_reason": why}

