"""RM objects of the peer setup: a session per rank, a pair per cross-card couple, a window
per (session, peer). Each is a small class that allocates itself from a plan entry."""

from __future__ import annotations

from dataclasses import dataclass

from rmpeer.abi import status as status_of
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "alloc:device", "alloc:subdevice", "alloc:vaspace", "alloc:buffer", "free:alloc")


@dataclass
class StepResult:
    """One setup step as RM answered it, for the suites to assert."""

    label: str
    s: int
    t: int
    handle: int
    record: object          # the CallRecord
    status: int             # RM's status (for a map: the status word RM wrote back)
    reply: dict | None = None

    @property
    def status_name(self) -> str:
        return status_of(self.status).name


class Session:
    """A rank: its device, subdevice, VA space and buffer on one card."""

    def __init__(self, rm, plan, card, va, extent: int):
        self.rm, self.plan, self.card, self.va, self.extent = rm, plan, card, va, extent

    @property
    def index(self) -> int:
        return self.plan.index

    def create(self) -> "Session":
        rm, p, s = self.rm, self.plan, self.plan.index
        rm.alloc(rm.handle, p.device, "NV01_DEVICE_0", "NV0080_ALLOC_PARAMETERS", label=f"alloc:device:s{s}",
                 deviceId=self.card.device_instance, hClientShare=rm.handle)
        rm.alloc(p.device, p.subdevice, "NV20_SUBDEVICE_0", "NV2080_ALLOC_PARAMETERS",
                 label=f"alloc:subdevice:s{s}", subDeviceId=0)
        rm.alloc(p.device, p.vaspace, "FERMI_VASPACE_A", "NV_VASPACE_ALLOCATION_PARAMETERS",
                 label=f"alloc:vaspace:s{s}", vaBase=self.va.vaspace_base, vaSize=self.va.vaspace_size)
        self.alloc_vidmem(p.buffer, self.extent, label=f"alloc:buffer:s{s}")
        return self

    def alloc_vidmem(self, handle: int, size: int, *, label: str) -> int:
        """Video memory in huge pages, aligned for a fixed-offset huge-page map."""
        abi = self.rm.abi
        attr = abi.bits("NVOS32_ATTR").compose(LOCATION="VIDMEM", PAGE_SIZE="HUGE",
                                               PHYSICALITY="ALLOW_NONCONTIGUOUS")
        attr2 = abi.bits("NVOS32_ATTR2").compose(PAGE_SIZE_HUGE="2MB")
        flags = (abi.const("NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE")
                 | abi.const("NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT")
                 | abi.const("NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM"))
        return self.rm.alloc(self.plan.device, handle, "NV01_MEMORY_LOCAL_USER", "NV_MEMORY_ALLOCATION_PARAMS",
                             label=label, owner=self.rm.handle, type=abi.const("NVOS32_TYPE_IMAGE"),
                             flags=flags, attr=attr, attr2=attr2, size=size, alignment=self.va.page_size)

    def reserve(self, handle: int, offset: int, size: int, *, label: str, check: bool = True):
        """A fixed range of this session's VA space (NV01_MEMORY_VIRTUAL); the CallRecord."""
        return self.rm.try_alloc(self.plan.device, handle, "NV01_MEMORY_VIRTUAL",
                                 "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS", label=label, check=check,
                                 offset=offset, limit=offset + size - 1, hVASpace=self.plan.vaspace)


class Pair:
    """An NV50_P2P object joining the subdevices of two sessions on different cards."""

    def __init__(self, rm, op, sessions):
        self.rm, self.op, self.a, self.b = rm, op, sessions[op.a], sessions[op.b]

    def create(self) -> StepResult:
        rm, op = self.rm, self.op
        params = rm.abi.struct("NV503B_ALLOC_PARAMETERS")
        rec = rm.try_alloc(rm.handle, op.handle, "NV50_P2P", params.name, label=op.label,
                           hSubDevice=self.a.plan.subdevice, hPeerSubDevice=self.b.plan.subdevice)
        return _result(op.label, op.a, op.b, op.handle, rec)


class Window:
    """Session s's reservation at window(t) and t's buffer mapped into it (NVOS46)."""

    def __init__(self, rm, op, sessions):
        self.rm, self.op = rm, op
        self.s, self.t = sessions[op.s], sessions[op.t]

    def flags(self) -> int:
        return self.rm.abi.bits("NVOS46_FLAGS").compose(**dict(self.op.flags))

    def reserve(self) -> StepResult:
        op = self.op
        rec = self.s.reserve(op.handle, op.offset, op.limit - op.offset + 1, label=op.reserve_label, check=False)
        return _result(op.reserve_label, op.s, op.t, op.handle, rec)

    def map(self) -> StepResult:
        op = self.op
        rec, reply = self.rm.map_dma(self.s.plan.device, op.handle, self.t.plan.buffer,
                                     length=op.limit - op.offset + 1, flags=self.flags(),
                                     dma_offset=op.offset, label=op.map_label, check=False)
        status = reply["status"] if not rec.errno else -1
        return StepResult(op.map_label, op.s, op.t, op.handle, rec, status, reply)


def _result(label, s, t, handle, rec) -> StepResult:
    status = rec.status if rec.status is not None else -1
    return StepResult(label, s, t, handle, rec, 0 if not (rec.errno or rec.status) else status)
