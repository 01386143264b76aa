#!/usr/bin/env python3
"""Hardware probe: what RM answers to the perf, clock and NVLink controls, card by card.

Opens the host the way rmpeer does (one RM client, the probe subdevice of every card),
calls every candidate control with check=False, raises the clocks with PERF_BOOST and
clears them again, and writes everything to one JSON file, beside nvidia-smi's view of the
same clocks and links. It never stops half way: each control is caught on its own, and the
RM client is always freed (which also ends any boost left behind).

    PYTHONPATH=$PWD python3 tools/probe_fitness.py [OUT.json]    # default $OUT/probe-fitness.json

Every command, struct, constant and flag comes from matrices/drivers.yaml.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback

REPLY_HEX_BYTES = 512
SETTLE_S = 1.0          # the clocks move within a few ms; one second leaves room
SMI_TIMEOUT_S = 60


def _jsonable(value):
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _decoded(st, raw: bytes) -> dict:
    return {k: _jsonable(v) for k, v in st.decode(raw).items()}


def _elements(abi, raw: bytes, params, list_field: str, elem_name: str, indexes) -> dict:
    """Elements `indexes` of an array-of-structs field, decoded with the element struct."""
    elem = abi.struct(elem_name)
    base = params.field(list_field).offset
    return {str(i): _decoded(elem, raw[base + i * elem.size:base + (i + 1) * elem.size]) for i in indexes
            if base + (i + 1) * elem.size <= len(raw)}


def call(rm, obj: int, control: str, *, variant: str = "", payload: bytes | None = None,
         elements=None, **fields) -> dict:
    """One control, never raising: its status, what it sent, and the reply decoded and raw."""
    entry = {"control": control, "variant": variant}
    try:
        cmd, st = rm.abi.control(control)
        entry.update(cmd=f"{cmd:#x}", params=st.name, params_size=st.size)
        reply = rm.control(obj, control, check=False, payload=payload,
                           label=f"probe:{control}:{variant}", **fields)
        rec, raw = reply["_record"], reply["_raw"]
        entry.update(status=rec.status_name or ("NV_OK" if not rec.status else rec.status),
                     status_code=rec.status, errno=rec.errno,
                     decoded=_decoded(st, raw), reply_hex=raw[:REPLY_HEX_BYTES].hex())
        if elements and not rec.status and not rec.errno:
            entry["elements"] = elements(raw, st)
    except Exception as exc:   # a probe records what failed and goes on
        entry["exception"] = f"{type(exc).__name__}: {exc}"
        entry["traceback"] = traceback.format_exc(limit=4)
    return entry


def _mask_bits(word: int) -> list[int]:
    return [i for i in range(64) if word >> i & 1]


def _const(abi, name, default=None):
    try:
        return abi.const(name)
    except KeyError:
        return default


def clocks(rm, sub) -> list[dict]:
    """The clock and P-state candidates: current P-state, and the perf level info."""
    abi = rm.abi
    out = [call(rm, sub, "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE")]
    try:
        _, lv = abi.control("NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2")
    except KeyError as exc:
        return out + [{"control": "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2", "exception": str(exc)}]
    elem = abi.struct("NV2080_CTRL_PERF_GET_CLK_INFO")
    slots = abi.const("NV2080_CTRL_PERF_CLK_MAX_DOMAINS")
    base = lv.field("perfGetClkInfoList").offset

    def listed(raw, st, n=None):
        count = min(st.get(raw, "perfGetClkInfoListSize"), slots) if n is None else n
        return _elements(abi, raw, st, "perfGetClkInfoList", elem.name, range(count))

    # The clock domain numbers are not in the open headers: let RM fill an empty list, then
    # ask for each single bit as a domain (a scan, not an ABI fact) to see which it answers.
    for level in (0, 1, 2):
        out.append(call(rm, sub, "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2", variant=f"level{level}:empty-list",
                        elements=lambda raw, st: listed(raw, st, slots), level=level, perfGetClkInfoListSize=0))
        buf = lv.pack(level=level, perfGetClkInfoListSize=slots)
        for i in range(slots):
            elem.field("domain").write(memoryview(buf)[base + i * elem.size:], 1 << i)
        out.append(call(rm, sub, "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2", variant=f"level{level}:domain-bit-scan",
                        payload=bytes(buf), elements=listed))
    return out


def nvlink(rm, sub) -> list[dict]:
    abi = rm.abi
    out = [call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS")]
    status = call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", variant="sublink-state-cached")
    enabled = (status.get("decoded") or {}).get("enabledLinkMask", 0) or 0
    links = _mask_bits(enabled) or list(range(_const(abi, "NV2080_CTRL_NVLINK_MAX_LINKS", 32)))

    def per_link(elem):
        return lambda raw, st: _elements(abi, raw, st, st_field[st.name], elem, links)
    st_field = {"NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS_PARAMS": "linkInfo",
                "NV2080_CTRL_NVLINK_GET_COUNTERS_PARAMS": "counters",
                "NV2080_CTRL_NVLINK_GET_ERR_INFO_PARAMS": "linkErrInfo"}
    out.append(call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", variant="sublink-state-cached",
                    elements=per_link("NV2080_CTRL_NVLINK_LINK_STATUS_INFO")))
    out.append(call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", variant="sublink-state-instant",
                    elements=per_link("NV2080_CTRL_NVLINK_LINK_STATUS_INFO"), bSublinkStateInst=1))
    link_word = 0
    for i in links:
        link_word |= 1 << i
    mask_fields = {"linkMask": link_word}
    _, cst = abi.control("NV2080_CTRL_CMD_NVLINK_GET_COUNTERS")
    if cst.has("links.lenMasks"):
        mask_fields.update({"links.lenMasks": 1, "links.masks": [link_word]})
    dl = 0
    for name, value in abi.constants.items():
        if name.startswith(("NV2080_CTRL_NVLINK_COUNTER_DL_", "NV2080_CTRL_NVLINK_COUNTER_TL_")) \
                and isinstance(value, int) and not name.endswith("__SIZE"):
            dl |= value
    out.append(call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS", variant="dl-and-tl-counters",
                    elements=per_link("NV2080_CTRL_NVLINK_GET_COUNTERS_VALUES"), counterMask=dl, **mask_fields))
    if "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2" in abi.controls:
        # V2 asks by counter index; ctrl2080nvlink.h places index i at group i / 64, bit i % 64.
        groups = [0] * abi.const("NV2080_CTRL_NVLINK_COUNTER_MAX_GROUPS")
        wanted = sorted((v, n) for n, v in abi.constants.items()
                        if n.startswith("NV2080_CTRL_NVLINK_COUNTER_ERR_DL_") and not n.endswith("_SIZE"))
        for index, _ in wanted[:abi.const("NV2080_CTRL_NVLINK_COUNTER_MAX_COUNTERS_PER_LINK_IN_REQ")]:
            groups[index // 64] |= 1 << (index % 64)
        _, v2 = abi.control("NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2")
        per = abi.const("NV2080_CTRL_NVLINK_COUNTER_MAX_COUNTERS_PER_LINK_IN_REQ")
        cv = abi.struct("NV2080_CTRL_NVLINK_COUNTERS_V2_VALUES")

        def v2_elements(raw, st):
            base = st.field("counter").offset
            return {str(link): [_decoded(cv, raw[base + (link * per + j) * cv.size:][:cv.size])
                                for j in range(len(wanted))] for link in links}
        entry = call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2", variant="err-dl-counters",
                     elements=v2_elements, counterMask=groups,
                     **{k: v for k, v in mask_fields.items() if v2.has(k)})
        entry["asked"] = [n for _, n in wanted]
        out.append(entry)
    out.append(call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_ERR_INFO",
                    elements=per_link("NV2080_CTRL_NVLINK_ERR_INFO")))
    for link in links:
        out.append(call(rm, sub, "NV2080_CTRL_CMD_NVLINK_GET_LINK_FATAL_ERROR_COUNTS", variant=f"link{link}",
                        linkId=link))
    return out


def boost(rm, sub, command: str) -> dict:
    """PERF_BOOST with flags composed by name from the matrix (CMD, CUDA, CUDA_PRIORITY)."""
    try:
        bits = rm.abi.bits("NV2080_CTRL_PERF_BOOST_FLAGS")
        if command == "CLEAR":
            flags, duration = bits.compose(CMD="CLEAR"), 0
        else:
            flags = bits.compose(CMD=command, CUDA="YES", CUDA_PRIORITY="HIGH")
            duration = rm.abi.const("NV2080_CTRL_PERF_BOOST_DURATION_INFINITE")
    except Exception as exc:
        return {"control": "NV2080_CTRL_CMD_PERF_BOOST", "variant": command, "exception": repr(exc)}
    entry = call(rm, sub, "NV2080_CTRL_CMD_PERF_BOOST", variant=command, flags=flags, duration=duration)
    entry["flags_sent"] = f"{flags:#x} ({bits.describe(flags)})"
    return entry


def smi(*args) -> dict:
    try:
        p = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=SMI_TIMEOUT_S)
        return {"args": list(args), "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr[-4000:]}
    except (OSError, subprocess.SubprocessError) as exc:
        return {"args": list(args), "error": f"{type(exc).__name__}: {exc}"}


def main(argv) -> int:
    path = argv[1] if len(argv) > 1 else os.path.join(os.environ.get("OUT", "."), "probe-fitness.json")
    report = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cards": [], "errors": [],
              "boost": [], "nvidia_smi": {}}

    def save():
        with open(path, "w") as fh:
            json.dump(report, fh, indent=1, default=str)

    report["nvidia_smi"]["before"] = smi("-q", "-d", "CLOCK,PERFORMANCE")
    runtime = None
    try:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from rmpeer.runtime import Runtime
        from rmpeer.shim.live import LiveShim
        runtime = Runtime(LiveShim()).open()
        rm, host = runtime.rm, runtime.host
        report["driver"] = runtime.facts.as_dict() | {"cards": None, "p2p": None}
        subs = {c.index: host.probe_handles(c.index)[1] for c in host.cards}
        for card in host.cards:
            sub = subs[card.index]
            entry = {"index": card.index, "pci": card.pci, "name": card.name, "uuid": card.uuid,
                     "subdevice": f"{sub:#x}", "clocks": [], "nvlink": []}
            report["cards"].append(entry)
            for group, probe in (("clocks", clocks), ("nvlink", nvlink)):
                try:
                    entry[group] = probe(rm, sub)
                except Exception:
                    entry[group + "_error"] = traceback.format_exc(limit=6)
            save()
        # Boost every card, read, clear, read: the clock change as RM and NVML see it.
        for phase, command in (("boost", "BOOST_TO_MAX"), ("clear", "CLEAR")):
            step = {"phase": phase, "set": {}, "read": {}}
            for index, sub in subs.items():
                step["set"][str(index)] = boost(rm, sub, command)
            time.sleep(SETTLE_S)
            for index, sub in subs.items():
                try:
                    step["read"][str(index)] = clocks(rm, sub)[:3]
                except Exception:
                    step["read"][str(index)] = traceback.format_exc(limit=6)
            report["nvidia_smi"][f"after-{phase}"] = smi("-q", "-d", "CLOCK,PERFORMANCE")
            report["boost"].append(step)
            save()
    except BaseException as exc:   # noqa: BLE001 - the probe's whole point is to keep going
        report["errors"].append({"error": f"{type(exc).__name__}: {exc}",
                                 "traceback": traceback.format_exc(limit=8)})
    finally:
        if runtime is not None:
            try:
                runtime.close()
            except Exception as exc:
                report["errors"].append({"error": f"close: {type(exc).__name__}: {exc}"})
        report["nvidia_smi"]["nvlink-status"] = smi("nvlink", "-s")
        report["nvidia_smi"]["nvlink-errors"] = smi("nvlink", "-e")
        report["nvidia_smi"]["after-close"] = smi("-q", "-d", "CLOCK,PERFORMANCE")
        report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        save()
    print(f"probe written to {path} ({len(report['cards'])} cards, {len(report['errors'])} errors)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
