#!/usr/bin/env python3
"""Facts of the perf and NVLink controls at tags of NVIDIA open-gpu-kernel-modules, by compiling.

For each tag: the SDK headers are extracted from the mirror, a C file is generated that
prints sizeof/offsetof of the structs below and the values of the macros, and gcc builds and
runs it. A field or struct a tag does not have is dropped (gcc names it) and reported
missing. The control export table (src/nvidia/generated/g_subdevice_nvoc.c) says which
commands NV20_SUBDEVICE_0 dispatches at that tag: a command not in it is NV_ERR_NOT_SUPPORTED.

    python3 tools/fitness_header_facts.py 535.43.02 580.95.05 > /tmp/facts.json
    python3 tools/fitness_header_facts.py --all > /tmp/facts.json   # every tag 535..595

This is a maintainer's tool: it writes nothing into the repository. Its output is what the
perf/NVLink entries of matrices/drivers.yaml were written from.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

MIRROR = os.environ.get("OGKM_MIRROR", "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo")
WORK = os.environ.get("OGKM_WORK", "/tmp/ogkm")
HEADERS = ["ctrl/ctrl2080/ctrl2080perf.h", "ctrl/ctrl2080/ctrl2080nvlink.h"]
SDK = "src/common/sdk/nvidia/inc"
EXPORTS = "src/nvidia/generated/g_subdevice_nvoc.c"

# A link mask is NV2080_CTRL_NVLINK_LINK_MASK {lenMasks, masks[]} from 580, a plain NvU64 in
# GET_NVLINK_CAPS of 570-575: kind 'u64?' keeps the field only where it is 8 bytes.
_LINK_MASK = lambda p: [(p, "u64?"), (f"{p}.lenMasks", "u8"), (f"{p}.masks", "u64[]")]
_DEVICE_INFO = lambda p: [(f"{p}.deviceIdFlags", "u32"), (f"{p}.domain", "u32"), (f"{p}.bus", "u16"),
                          (f"{p}.device", "u16"), (f"{p}.function", "u16"), (f"{p}.pciDeviceId", "u32"),
                          (f"{p}.deviceType", "u64"), (f"{p}.deviceUUID", "u8[]"),
                          (f"{p}.fabricRecoveryStatusMask", "u32")]

# struct -> fields as (C member path, kind); kind 'u8[]' etc. is an array of scalars,
# 'blob' an array of structs given as bytes (its element struct is listed on its own).
STRUCTS = {
    "NV2080_CTRL_PERF_BOOST_PARAMS": [("flags", "u32"), ("duration", "u32")],
    "NV2080_CTRL_PERF_GET_CURRENT_PSTATE_PARAMS": [("currPstate", "u32")],
    "NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS": [("level", "u32"), ("flags", "u32"),
                                                  ("perfGetClkInfoList", "blob"),
                                                  ("perfGetClkInfoListSize", "u32")],
    "NV2080_CTRL_PERF_GET_CLK_INFO": [("flags", "u32"), ("domain", "u32"), ("currentFreq", "u32"),
                                      ("defaultFreq", "u32"), ("minFreq", "u32"), ("maxFreq", "u32")],
    "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS_PARAMS": [
        ("capsTbl", "u32"), ("lowestNvlinkVersion", "u8"), ("highestNvlinkVersion", "u8"),
        ("lowestNciVersion", "u8"), ("highestNciVersion", "u8"), ("discoveredLinkMask", "u32"),
        ("enabledLinkMask", "u32"), *_LINK_MASK("discoveredLinks"), *_LINK_MASK("enabledLinks")],
    "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS_PARAMS": [
        ("enabledLinkMask", "u32"), *_LINK_MASK("enabledLinks"), ("bSublinkStateInst", "u8"),
        ("bNvleModeEnabled", "u8"), ("linkInfo", "blob")],
    "NV2080_CTRL_NVLINK_LINK_STATUS_INFO": [
        ("capsTbl", "u32"), ("phyType", "u8"), ("subLinkWidth", "u8"), ("linkState", "u32"),
        ("rxSublinkStatus", "u8"), ("txSublinkStatus", "u8"), ("bLaneReversal", "u8"),
        ("nvlinkVersion", "u8"), ("nciVersion", "u8"), ("phyVersion", "u8"),
        ("nvlinkLinkClockKHz", "u32"), ("nvlinkCommonClockSpeedKHz", "u32"), ("nvlinkRefClkSpeedKHz", "u32"),
        ("nvlinkCommonClockSpeedMhz", "u32"), ("nvlinkLineRateMbps", "u32"), ("nvlinkLinkClockMhz", "u32"),
        ("nvlinkRefClkType", "u8"), ("nvlinkLinkDataRateKiBps", "u32"), ("nvlinkRefClkSpeedMhz", "u32"),
        ("connected", "u8"), ("loopProperty", "u8"), ("remoteDeviceLinkNumber", "u8"),
        ("localDeviceLinkNumber", "u8"), ("remoteLinkSid", "u64"), ("localLinkSid", "u64"),
        ("laneRxdetStatusMask", "u32"), *_DEVICE_INFO("remoteDeviceInfo"), *_DEVICE_INFO("localDeviceInfo"),
        ("nvlpwIdx", "u32")],
    "NV2080_CTRL_NVLINK_GET_COUNTERS_PARAMS": [
        ("counterMask", "u32"), ("linkMask", "u64"), *_LINK_MASK("links"), ("counters", "blob")],
    "NV2080_CTRL_NVLINK_GET_COUNTERS_VALUES": [
        ("bTx0TlCounterOverflow", "u8"), ("bTx1TlCounterOverflow", "u8"), ("bRx0TlCounterOverflow", "u8"),
        ("bRx1TlCounterOverflow", "u8"), ("value", "u64[]")],
    "NV2080_CTRL_NVLINK_GET_COUNTERS_V2_PARAMS": [
        ("linkMask", "u64"), *_LINK_MASK("links"), ("counterMask", "u64[]"), ("counter", "blob")],
    "NV2080_CTRL_NVLINK_COUNTERS_V2_VALUES": [("overFlow", "u8"), ("value", "u64")],
    "NV2080_CTRL_NVLINK_GET_ERR_INFO_PARAMS": [
        ("linkMask", "u32"), *_LINK_MASK("links"), ("linkErrInfo", "blob"), ("ioctrlMask", "u32"),
        ("commonErrInfo", "blob"), ("ErrInfoFlags", "u8")],
    "NV2080_CTRL_NVLINK_ERR_INFO": [(n, "u32") for n in (
        "TLErrlog", "TLIntrEn", "TLCTxErrStatus0", "TLCTxErrStatus1", "TLCTxSysErrStatus0", "TLCRxErrStatus0",
        "TLCRxErrStatus1", "TLCRxSysErrStatus0", "TLCTxErrLogEn0", "TLCTxErrLogEn1", "TLCTxSysErrLogEn0",
        "TLCRxErrLogEn0", "TLCRxErrLogEn1", "TLCRxSysErrLogEn0", "MIFTxErrStatus0", "MIFRxErrStatus0",
        "NVLIPTLnkErrStatus0", "NVLIPTLnkErrLogEn0", "NVLIPTLnkCtrlLinkStateRequest", "DLSpeedStatusTx",
        "DLSpeedStatusRx", "NVLDLRxSlsmErrCntl", "NVLDLTopLinkState", "NVLDLTopIntr", "DLStatMN00",
        "DLStatUC01", "MinionNvlinkLinkIntr")] + [("bExcessErrorDL", "u8")],
    "NV2080_CTRL_NVLINK_GET_LINK_FATAL_ERROR_COUNTS_PARAMS": [
        ("linkId", "u32"), ("supportedCounts", "u64"), ("fatalErrorCounts", "u8[]")],
}

CONTROLS = ["NV2080_CTRL_CMD_PERF_BOOST", "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE",
            "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2", "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS",
            "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS",
            "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS_V2", "NV2080_CTRL_CMD_NVLINK_GET_ERR_INFO",
            "NV2080_CTRL_CMD_NVLINK_GET_LINK_FATAL_ERROR_COUNTS"]

# Object-like macros whose values are kept (regexes over the names).
CONSTANTS = [
    r"NV2080_CTRL_PERF_BOOST_DURATION_(MAX|INFINITE)", r"NV2080_CTRL_PERF_PSTATES_(UNDEFINED|P\d+)",
    r"NV2080_CTRL_PERF_CLK_MAX_DOMAINS", r"NV2080_CTRL_NVLINK_MAX_(LINKS|ARR_SIZE|MASK_SIZE|IOCTRLS)",
    r"NV2080_CTRL_NVLINK_STATUS_LINK_STATE_\w+", r"NV2080_CTRL_NVLINK_DEVICE_INFO_DEVICE_TYPE_\w+",
    r"NV2080_CTRL_NVLINK_DEVICE_INFO_DEVICE_ID_FLAGS_(NONE|PCI|UUID)",
    r"NV2080_CTRL_NVLINK_COUNTER_(INVALID|TL_[TR]X[01]|DL_\w+|MAX_TYPES)",
    r"NV2080_CTRL_NVLINK_COUNTER_ERR_DL_\w+", r"NV2080_CTRL_NVLINK_COUNTER_(MAX_GROUPS|MAX_COUNTERS_PER_LINK_IN_REQ)",
    r"NV2080_CTRL_NVLINK_COUNTERS_MAX", r"NV2080_CTRL_NVLINK_NUM_FATAL_ERROR_TYPES",
    r"NV2080_CTRL_NVLINK_CAPS_TBL_SIZE", r"NV2080_CTRL_NVLINK_CAPS_NVLINK_VERSION_\w+",
]
# byte_index:bit_mask caps (kept as {byte, mask})
CAPS = r"NV2080_CTRL_NVLINK_CAPS_(SUPPORTED|P2P_SUPPORTED|SYSMEM_ACCESS|P2P_ATOMICS|SYSMEM_ATOMICS|" \
       r"PEX_TUNNELING|SLI_BRIDGE|SLI_BRIDGE_SENSABLE|POWER_STATE_L[0-3]|VALID|UNCONTAINED_ERROR_RECOVERY)"
# DRF groups: prefix -> fields 'hi:lo' with their named values
BITFIELDS = ["NV2080_CTRL_PERF_BOOST_FLAGS", "NV2080_CTRL_PERF_GET_LEVEL_INFO_FLAGS"]
_WIDTH = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}


def extract(tag: str) -> str:
    root = os.path.join(WORK, tag)
    if not os.path.isdir(os.path.join(root, SDK)):
        os.makedirs(root, exist_ok=True)
        archive = subprocess.run(["git", "-C", MIRROR, "archive", tag, SDK, EXPORTS],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", root], input=archive, check=True)
    return root


def macro_names(inc: str) -> dict[str, str]:
    names = {}
    for h in HEADERS + ["ctrl/ctrl2080/ctrl2080nvlink_common.h"]:
        path = os.path.join(inc, h)
        if os.path.exists(path):
            for m in re.finditer(r"^#define\s+(\w+)\s+(.+?)\s*(?://.*|/\*.*)?$", open(path).read(), re.M):
                names.setdefault(m.group(1), m.group(2))
    return names


def c_program(structs: dict, consts: list[str], drf: list[str], caps: list[str]) -> str:
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <nvtypes.h>",
             *[f'#include "{h}"' for h in HEADERS], "int main(void) {"]
    for name, fields in structs.items():
        lines.append(f'printf("S %s %zu\\n", "{name}", sizeof({name}));')
        for path, _ in fields:
            lines.append(f'printf("F %s %s %zu %zu\\n", "{name}", "{path}", offsetof({name}, {path}), '
                         f'sizeof((({name} *)0)->{path}));')
    for c in consts:
        lines.append(f'printf("C %s %llu\\n", "{c}", (unsigned long long)({c}));')
    for d in drf:
        lines.append(f'printf("D %s %d %d\\n", "{d}", (int)(1 ? {d}), (int)(0 ? {d}));')
    for c in caps:
        lines.append(f'printf("K %s %d %d\\n", "{c}", (int)(1 ? {c}), (int)(0 ? {c}));')
    lines += ["return 0; }"]
    return "\n".join(lines) + "\n"


def compile_and_run(root: str, structs: dict, consts, drf, caps):
    inc = os.path.join(root, SDK)
    structs = {k: list(v) for k, v in structs.items()}
    missing = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(200):
            src = os.path.join(tmp, "facts.c")
            open(src, "w").write(c_program(structs, consts, drf, caps))
            cc = subprocess.run(["gcc", "-w", "-I", inc, "-I", os.path.join(inc, "ctrl"), src, "-o",
                                 os.path.join(tmp, "facts")], capture_output=True, text=True,
                                env={**os.environ, "LC_ALL": "C"})
            if cc.returncode == 0:
                out = subprocess.run([os.path.join(tmp, "facts")], capture_output=True, text=True, check=True).stdout
                return out, missing
            err = cc.stderr
            m = re.search(r"'(\w+)' (?:undeclared|has no member named '(\w+)')|has no member named '(\w+)'", err)
            gone = re.search(r"expected expression before '(\w+)'|'(\w+)' undeclared", err)
            member = re.search(r"has no member named '(\w+)'", err)
            line = re.search(r"facts\.c:(\d+):\d+: error", err)
            if not line:
                raise RuntimeError(err[:2000])
            text = open(src).read().splitlines()[int(line.group(1)) - 1]
            s = re.search(r'printf\("[SF] %s.*?", "(\w+)"(?:, "([\w.]+)")?', text)
            if s and member and s.group(2):
                structs[s.group(1)] = [f for f in structs[s.group(1)] if f[0] != s.group(2)]
                missing.append(f"{s.group(1)}.{s.group(2)}")
            elif s and (gone or "unknown type" in err or "undeclared" in err):
                structs.pop(s.group(1), None)
                missing.append(s.group(1))
            else:
                raise RuntimeError(f"cannot place gcc error:\n{err[:2000]}\nline: {text}")
            del m
    raise RuntimeError("too many retries")


def exports(root: str) -> dict[int, str]:
    path = os.path.join(root, EXPORTS)
    if not os.path.exists(path):
        return {}
    text = open(path).read()
    table = {}
    for m in re.finditer(r"/\*methodId=\*/\s*(0x[0-9a-fA-F]+)u?,.*?/\*func=\*/\s*\"(\w+)\"", text, re.S):
        table[int(m.group(1), 16)] = m.group(2)
    return table


def facts(tag: str) -> dict:
    root = extract(tag)
    inc = os.path.join(root, SDK)
    macros = macro_names(inc)
    consts = sorted(n for n in macros if any(re.fullmatch(p, n) for p in CONSTANTS) and "(" not in n
                    and not re.fullmatch(r"[\d]+\s*:\s*[\d]+", macros[n]))
    caps = sorted(n for n in macros if re.fullmatch(CAPS, n))
    drf = []
    for group in BITFIELDS:
        drf += [n for n, v in macros.items() if n.startswith(group + "_") and re.fullmatch(r"\d+\s*:\s*\d+", v.strip())]
    consts += [n for n in macros for g in BITFIELDS if n.startswith(g + "_") and n not in drf
               and not re.fullmatch(r"\d+\s*:\s*\d+", macros[n].strip())]
    consts += [c for c in CONTROLS if c in macros]
    out, missing = compile_and_run(root, STRUCTS, sorted(set(consts)), drf, caps)
    result = {"tag": tag, "structs": {}, "constants": {}, "bitfields": {}, "caps": {}, "controls": {},
              "missing": missing}
    kinds = {s: dict(f) for s, f in STRUCTS.items()}
    values = {}
    for line in out.splitlines():
        k, *rest = line.split()
        if k == "S":
            result["structs"][rest[0]] = {"size": int(rest[1]), "fields": {}}
        elif k == "F":
            s, path, off, size = rest[0], rest[1], int(rest[2]), int(rest[3])
            kind = kinds[s][path]
            if kind == "u64?":
                if size != 8:
                    continue
                field = [off, "u64"]
            elif kind == "blob":
                field = [off, "u8", size]
            elif kind.endswith("[]"):
                field = [off, kind[:-2], size // _WIDTH[kind[:-2]]]
            else:
                assert size == _WIDTH[kind], (s, path, size)
                field = [off, kind]
            result["structs"][s]["fields"][path] = field
        elif k == "C":
            values[rest[0]] = int(rest[1])
        elif k == "D":
            result["bitfields"][rest[0]] = [int(rest[1]), int(rest[2])]
        elif k == "K":
            result["caps"][rest[0]] = {"byte": int(rest[1]), "mask": int(rest[2])}
    table = exports(root)
    for c in CONTROLS:
        if c in values:
            cmd = values.pop(c)
            result["controls"][c] = {"cmd": cmd, "exported": cmd in table, "handler": table.get(cmd)}
        else:
            result["controls"][c] = None
    # bit-field groups: field -> {bits, values}, value names matched to the longest field
    for group in BITFIELDS:
        fields = {n[len(group) + 1:]: v for n, v in result["bitfields"].items() if n.startswith(group + "_")}
        grouped = {f: {"bits": f"{hi}:{lo}", "values": {}} for f, (hi, lo) in fields.items()}
        for n in list(values):
            if not n.startswith(group + "_"):
                continue
            rest = n[len(group) + 1:]
            owner = max((f for f in fields if rest.startswith(f + "_")), key=len, default=None)
            if owner:
                grouped[owner]["values"][rest[len(owner) + 1:]] = values.pop(n)
        result["bitfields"][group] = grouped
    result["bitfields"] = {g: v for g, v in result["bitfields"].items() if g in BITFIELDS}
    result["constants"] = values
    return result


def all_tags() -> list[str]:
    tags = subprocess.run(["git", "-C", MIRROR, "tag"], capture_output=True, text=True, check=True).stdout.split()
    key = lambda t: tuple(int(x) for x in t.split("."))
    return sorted((t for t in tags if 535 <= key(t)[0] <= 595), key=key)


if __name__ == "__main__":
    tags = all_tags() if sys.argv[1:] == ["--all"] else sys.argv[1:]
    json.dump({t: facts(t) for t in tags}, sys.stdout, indent=1, sort_keys=True)
