"""Health facts through RM: the fabric, ECC, remapped rows, reset and recovery, the PCIe link,
MIG and Confidential Computing, each read from its RM control (docs/health.md).

Every fact is a dict with `status`: "NV_OK", the NV_ERR_* RM answered (NV_ERR_NOT_SUPPORTED
is recorded as such, never read as healthy), `absent` (the control is not in this release's
ABI) or `not recorded` (a replay of a recording made before rmpeer read it), and `reason`
where it was not read. What RM answered is decoded by name through the matrix; the findings
are judged elsewhere (rmpeer.judge.health), from these dicts alone.
"""

from __future__ import annotations

from rmpeer.abi import status as status_of
from rmpeer.tables.handles import CONF_COMPUTE_HANDLE
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "health:fabric-status", "health:cc-object", "health:cc-caps", "health:fabric-probe",
                "health:ecc", "health:remapped-rows", "health:reset", "health:drain", "health:recovery",
                "health:pcie", "health:mig")

FABRIC_STATUS = "NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS"
FABRIC_PROBE = "NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO"
ECC = "NV2080_CTRL_CMD_GPU_QUERY_ECC_STATUS"
REMAPPED_ROWS = "NV2080_CTRL_CMD_FB_GET_REMAPPED_ROWS"
RESET = "NV2080_CTRL_CMD_GPU_GET_RESET_STATUS"
DRAIN = "NV2080_CTRL_CMD_GPU_GET_DRAIN_AND_RESET_STATUS"
RECOVERY = "NV2080_CTRL_CMD_GPU_GET_RECOVERY_ACTION"
BUS_INFO = "NV2080_CTRL_CMD_BUS_GET_INFO_V2"
GPU_INFO = "NV2080_CTRL_CMD_GPU_GET_INFO_V2"
CC_CAPS = "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES"
CC_CLASS = "NV_CONFIDENTIAL_COMPUTE"

OK = "NV_OK"
ABSENT = "absent"
NOT_RECORDED = "not recorded"


def _named(abi, prefix: str, value: int):
    """The constant named prefix+NAME whose value is `value` ('INITIALIZED'), else the number."""
    for name, v in abi.constants.items():
        if name.startswith(prefix) and v == value and isinstance(v, int):
            return name[len(prefix):]
    return value


def recorded(shim, label: str) -> bool:
    """Whether a call labelled `label` is still ahead in the stretch a replay serves (always,
    live). Recordings made before rmpeer read health facts have none: those facts read as
    `not recorded` there, instead of failing the replay of every older recording."""
    if getattr(shim, "mode", "live") != "replay":
        return True
    return any(line.label == label for line in shim.calls_ahead())


class Reader:
    """Reads the facts through one RM client: `system()` once, `card(index, subdevice)` per card."""

    def __init__(self, rm):
        self.rm, self.abi = rm, rm.abi

    def _control(self, obj: int, control: str, label: str, **fields):
        """(reply, None) or (None, the fact saying why not)."""
        if control not in self.abi.controls:
            return None, {"status": ABSENT, "reason": f"{control} is not in the ABI of {self.abi.release}"}
        if not recorded(self.rm.shim, label):
            return None, {"status": NOT_RECORDED, "reason": f"the recording has no {control} call ({label})"}
        reply = self.rm.control(obj, control, label=label, check=False, **fields)
        status = reply["_record"].refused or OK
        if status != OK:
            return None, {"status": status, "reason": f"{control} answered {status}"}
        return reply, None

    def _list(self, obj: int, control: str, list_field: str, size_field: str, elem_struct: str,
              indexes: list[int], label: str):
        """An {index, data} list control: ({index: data}, None) or (None, why not)."""
        abi = self.abi
        if control not in abi.controls:
            return None, {"status": ABSENT, "reason": f"{control} is not in the ABI of {abi.release}"}
        elem = abi.struct(elem_struct)
        _, pst = abi.control(control)
        buf = pst.pack(**{size_field: len(indexes)})
        base = pst.field(list_field).offset
        for i, idx in enumerate(indexes):
            elem.set(memoryview(buf)[base + i * elem.size:base + (i + 1) * elem.size], "index", idx)
        reply, why = self._control(obj, control, label, payload=bytes(buf))
        if why:
            return None, why
        raw = reply["_raw"]
        # by position, as the request listed them (RM fills each entry's data in place)
        return {idx: elem.get(raw[base + i * elem.size:], "data") for i, idx in enumerate(indexes)}, None

    # -- the host ------------------------------------------------------------------------
    def system(self) -> dict:
        return {"fabric": self.fabric(), "cc": self.confidential_compute()}

    def fabric(self) -> dict:
        reply, why = self._control(self.rm.handle, FABRIC_STATUS, "health:fabric-status")
        if why:
            return why
        return {"status": OK, "state": _named(self.abi, "NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS_", reply["fabricStatus"])}

    def confidential_compute(self) -> dict:
        """The CC capabilities, through an NV_CONFIDENTIAL_COMPUTE object under the client,
        freed again at once (nothing is left allocated)."""
        abi, rm = self.abi, self.rm
        if CC_CLASS not in abi.classes or CC_CAPS not in abi.controls:
            return {"status": ABSENT, "reason": f"{CC_CLASS} or {CC_CAPS} is not in the ABI of {abi.release}"}
        if not recorded(rm.shim, "health:cc-object"):
            return {"status": NOT_RECORDED, "reason": f"the recording has no {CC_CLASS} object (health:cc-object)"}
        rec = rm.try_alloc(rm.handle, CONF_COMPUTE_HANDLE, CC_CLASS, "NV_CONFIDENTIAL_COMPUTE_ALLOC_PARAMS",
                           label="health:cc-object", hClient=rm.handle)
        if rec.errno or rec.status:
            status = rec.status_name if rec.status else f"errno {rec.errno}"
            return {"status": status, "reason": f"allocating {CC_CLASS} answered {status}"}
        try:
            reply, why = self._control(CONF_COMPUTE_HANDLE, CC_CAPS, "health:cc-caps")
        finally:
            rm.free(rm.handle, CONF_COMPUTE_HANDLE, label="health:cc-object:free", check=False)
        if why:
            return why
        prefix = "NV_CONF_COMPUTE_SYSTEM_"
        out = {"status": OK,
               "cpu": _named(abi, prefix + "CPU_CAPABILITY_", reply["cpuCapability"]),
               "gpus": _named(abi, prefix + "GPUS_CAPABILITY_", reply["gpusCapability"]),
               "environment": _named(abi, prefix + "ENVIRONMENT_", reply["environment"]),
               "feature": _named(abi, prefix + "FEATURE_", reply["ccFeature"]),
               "devtools": _named(abi, prefix + "DEVTOOLS_MODE_", reply["devToolsMode"])}
        if "multiGpuMode" in reply:
            out["multi_gpu"] = _named(abi, prefix + "MULTI_GPU_MODE_", reply["multiGpuMode"])
        return out

    # -- one card ------------------------------------------------------------------------
    def card(self, index: int, sub: int) -> dict:
        return {"fabric_probe": self.fabric_probe(sub, index), "ecc": self.ecc(sub, index),
                "remapped_rows": self.remapped_rows(sub, index), "reset": self.reset(sub, index),
                "drain": self.drain(sub, index), "recovery": self.recovery(sub, index),
                "pcie": self.pcie(sub, index), "mig": self.mig(sub, index)}

    def fabric_probe(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, FABRIC_PROBE, f"health:fabric-probe:card{index}")
        if why:
            return why
        abi = self.abi
        out = {"status": OK, "state": _named(abi, "NV2080_CTRL_GPU_FABRIC_PROBE_STATE_", reply["state"]),
               "probe_status": _status_name(reply["status"]),
               "cluster_uuid": bytes(reply["clusterUuid"]).hex(), "partition_id": reply["fabricPartitionId"]}
        if "fabricCliqueId" in reply:
            out["clique_id"] = reply["fabricCliqueId"]
        if "fabricHealthMask" in reply and "NV2080_CTRL_GPU_FABRIC_HEALTH_MASK" in abi.bitfields:
            group = abi.bits("NV2080_CTRL_GPU_FABRIC_HEALTH_MASK")
            out["health_mask"] = {name: group.value_of(reply["fabricHealthMask"], name) for name in group.fields}
        if "fabricHealthSummary" in reply:
            out["health_summary"] = _named(abi, "NV2080_CTRL_GPU_FABRIC_HEALTH_SUMMARY_", reply["fabricHealthSummary"])
        return out

    def ecc(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, ECC, f"health:ecc:card{index}")
        if why:
            return why
        abi = self.abi
        unit = abi.struct("NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS")
        _, pst = abi.control(ECC)
        base, raw = pst.field("units").offset, reply["_raw"]
        units = [unit.decode(raw[base + i * unit.size:base + (i + 1) * unit.size])
                 for i in range(abi.const("NV2080_CTRL_GPU_ECC_UNIT_COUNT"))]
        supported = [u for u in units if u["supported"]]
        return {"status": OK, "enabled": any(u["enabled"] for u in supported),
                "units_supported": len(supported), "units_enabled": sum(bool(u["enabled"]) for u in supported),
                # since boot, per unit summed; counters a client may reset (ctrl2080gpu.h)
                "dbe": sum(u["dbe.count"] for u in supported), "sbe": sum(u["sbe.count"] for u in supported),
                "uncorrectable": _named(abi, "NV2080_CTRL_GPU_QUERY_ECC_STATUS_UNC_ERR_", reply["uncorrectableError"]),
                "fatal_poison": bool(reply["bFatalPoisonError"])}

    def remapped_rows(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, REMAPPED_ROWS, f"health:remapped-rows:card{index}")
        if why:
            return why
        flags = self.abi.bits("NV2080_CTRL_FB_GET_REMAPPED_ROWS_FLAGS")
        return {"status": OK, "rows": reply["entryCount"],
                "pending": flags.value_of(reply["flags"], "PENDING") == "TRUE",
                "failure": flags.value_of(reply["flags"], "FAILURE") == "TRUE"}

    def reset(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, RESET, f"health:reset:card{index}")
        return why or {"status": OK, "required": bool(reply["bResetRequired"])}

    def drain(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, DRAIN, f"health:drain:card{index}")
        return why or {"status": OK, "recommended": bool(reply["bDrainRecommended"])}

    def recovery(self, sub: int, index: int) -> dict:
        reply, why = self._control(sub, RECOVERY, f"health:recovery:card{index}")
        return why or {"status": OK, "action": _named(self.abi, "NV2080_CTRL_GPU_RECOVERY_ACTION_", reply["action"])}

    def pcie(self, sub: int, index: int) -> dict:
        """The card's PCIe link: current generation and width (LINK_CTRL_STATUS) and the
        card's maximum (LINK_CAPS); the upstream port's maximum where RM gives it."""
        abi = self.abi
        caps_i = abi.const("NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CAPS")
        status_i = abi.const("NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CTRL_STATUS")
        root_i = abi.const("NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CAPS")
        got, why = self._list(sub, BUS_INFO, "busInfoList", "busInfoListSize", "NV2080_CTRL_BUS_INFO",
                              [status_i, caps_i, root_i], f"health:pcie:card{index}")
        empty = {"gen": None, "width": None, "max_gen": None, "max_width": None}
        if why:
            return {**empty, **why}
        status = abi.bits("NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS")
        caps = abi.bits("NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP")
        out = {"status": OK, **empty, "root_max_gen": None,
               "raw": {"ctrl_status": got[status_i], "caps": got[caps_i], "root_caps": got[root_i]}}
        # a speed is PCIe's Link Speed encoding (1 = 2.5 GT/s, Gen1 ... 6 = 64 GT/s, Gen6), kept
        # only where the headers name it; a width is a lane count, 0 where RM read none
        out["gen"] = _gen(status.fields["LINK_SPEED"], got[status_i])
        out["width"] = _lanes(status.fields["LINK_WIDTH"], got[status_i])
        out["max_gen"] = _gen(caps.fields["MAX_SPEED"], got[caps_i])
        out["max_width"] = _lanes(caps.fields["MAX_WIDTH"], got[caps_i])
        out["root_max_gen"] = _gen(caps.fields["MAX_SPEED"], got[root_i])
        return out

    def mig(self, sub: int, index: int) -> dict:
        smc = self.abi.const("NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE")
        got, why = self._list(sub, GPU_INFO, "gpuInfoList", "gpuInfoListSize", "NV2080_CTRL_GPU_INFO",
                              [smc], f"health:mig:card{index}")
        return why or {"status": OK, "mode": _named(self.abi, "NV2080_CTRL_GPU_INFO_GPU_SMC_MODE_", got[smc])}


def _gen(field, word: int) -> int | None:
    raw = (word & field.mask) >> field.lo
    return raw if raw in field.values.values() else None


def _lanes(field, word: int) -> int | None:
    raw = (word & field.mask) >> field.lo
    return raw or None


def _status_name(code: int) -> str:
    return status_of(code).name


def read_host(host) -> None:
    """Every fact of `host` (rm.host.Host, discovered): the system's into facts.health, each
    card's into card.health."""
    reader = Reader(host.rm)
    for card in host.cards:
        _, sub = host.probe_handles(card.index)
        card.health = reader.card(card.index, sub)
    host.facts.health = reader.system()


def identity(facts) -> dict:
    """The health facts that describe the platform rather than its state (the fingerprint's
    "health" key): per card UUID its maximum PCIe link, MIG mode and ECC mode; the host's
    Confidential Computing feature. A fact not read is left out, never guessed."""
    out = {}
    for card in facts.cards:
        h, mine = card.health or {}, {}
        pcie, mig, ecc = h.get("pcie") or {}, h.get("mig") or {}, h.get("ecc") or {}
        if pcie.get("status") == OK:
            mine["pcie_max"] = f"Gen{pcie.get('max_gen')} x{pcie.get('max_width')}"
        if mig.get("status") == OK:
            mine["mig"] = mig.get("mode")
        if ecc.get("status") == OK:
            mine["ecc"] = "on" if ecc.get("enabled") else "off"
        if mine:
            out[card.uuid] = mine
    cc = (facts.health or {}).get("cc") or {}
    if cc.get("status") == OK:
        out["confidential_compute"] = cc.get("feature")
    return out
