"""Which cards a recorded run touched: every RM call of a recording walked, each handle it
uses traced to the card whose device object it hangs under.

A card is touched when its device node is opened, when a device object is allocated on it
(NV01_DEVICE_0's deviceId is its device instance), when any handle allocated under that
device (subdevice, memory, channel, engine, peer object) is used by a later call, or when a
client-level control names its gpuId. RM can do nothing on a card without one of these, so a
run of some cards whose recording touches no other card did nothing on the others (issue 25:
no allocation, channel, boost, copy or reset there). Used by tests on recordings and by the
live evidence on the recording a subset run makes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rmpeer.abi import DriverMatrix
from rmpeer.shim.records import read_transcript

_CARD_NODE = re.compile(r"/dev/nvidia(\d+)$")
DEVICE_PARAMS = "NV0080_ALLOC_PARAMETERS"
# requests whose handle fields name objects: the NVOS escapes and the fd-carrying wrappers
HANDLE_FIELD = re.compile(r"(^|\.)h[A-Z]\w*$")
GPU_ID_FIELD = re.compile(r"(^|\.)gpuIds?(\[\d+\])?$")


@dataclass
class Touches:
    minors: set = field(default_factory=set)          # /dev/nvidia<minor> opened
    devices: set = field(default_factory=set)         # device instances with a device object
    gpu_ids: set = field(default_factory=set)         # gpuIds named by client-level controls
    uses: dict = field(default_factory=dict)          # device instance -> labels of calls on it

    def foreign(self, minors, devices, gpu_ids) -> list:
        """Each touch outside the given cards, in words (empty: none)."""
        out = [f"opened /dev/nvidia{m}" for m in sorted(self.minors - set(minors))]
        out += [f"device instance {d}: {', '.join(sorted(self.uses.get(d, {'alloc'}))[:6])}"
                for d in sorted(self.devices - set(devices))]
        out += [f"gpuId {g:#x} named" for g in sorted(self.gpu_ids - set(gpu_ids))]
        return out


def _decode(abi, name, hexed) -> dict:
    if not name or not hexed or "[" in name:
        return {}
    try:
        return abi.struct(name).decode(bytes.fromhex(hexed))
    except Exception:      # a struct this ABI does not describe: no handle read from it
        return {}


def _flat(d: dict, prefix: str = ""):
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _flat(v, key + ".")
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                yield f"{key}[{i}]", x
        else:
            yield key, v


def walk(lines, abi) -> Touches:
    """The Touches of a recording's records (rmpeer.shim.records.read_transcript's lines)."""
    t = Touches()
    owner: dict = {}          # handle -> device instance
    for line in lines:
        if isinstance(line, dict):
            continue
        if line.op == "open" and line.path and (m := _CARD_NODE.match(line.path)):
            t.minors.add(int(m.group(1)))
            continue
        if line.op != "ioctl":
            continue
        request = _decode(abi, line.struct, line.request)
        payload = line.payload
        params = _decode(abi, payload.struct, payload.request) if payload else {}
        new, parent = request.get("hObjectNew"), request.get("hObjectParent")
        if payload is not None and payload.struct == DEVICE_PARAMS and new is not None:
            device = params.get("deviceId")
            owner[new] = device
            t.devices.add(device)
            t.uses.setdefault(device, set()).add(line.label)
        elif new is not None and parent in owner:
            owner[new] = owner[parent]
        for key, value in list(_flat(request)) + list(_flat(params)):
            if HANDLE_FIELD.search(key) and key != "hObjectNew" and value in owner and isinstance(value, int):
                t.uses.setdefault(owner[value], set()).add(line.label)
                t.devices.add(owner[value])
            elif GPU_ID_FIELD.search(key) and isinstance(value, int) and value:
                t.gpu_ids.add(value)
    return t


def walk_transcript(path) -> tuple[Touches, dict]:
    """(Touches, the recorded host facts note) of a recording."""
    _, lines = read_transcript(path)
    driver = next(x for x in lines if isinstance(x, dict) and x.get("note") == "driver")
    host = next(x for x in lines if isinstance(x, dict) and x.get("note") == "host")
    return walk(lines, DriverMatrix().abi(driver["abi"])), host["facts"]
