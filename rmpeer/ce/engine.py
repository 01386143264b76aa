"""A session's copy engine driven through RM alone (no CUDA, no UVM): a GPFIFO channel on
the LCE the card names for P2P, fed from a pushbuffer in cached system memory, completion
by a semaphore released into uncached system memory and polled with a timeout.

The sequence and its pitfalls are docs/copy-engine.md; every class number, method offset
and bit field comes from matrices/engines.yaml and drivers.yaml, and the channel's own
geometry (sizes, offsets, subchannel, chunking) from matrices/channel.yaml.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from rmpeer.errors import RmpeerError
from rmpeer.tables.handles import COPY_ENGINE_BASE as CE_HANDLE_BASE
from rmpeer.tables.handles import COPY_ENGINE_STRIDE as CE_HANDLE_STRIDE
from rmpeer.ce.classes import Generation
from rmpeer.rm.host import engine_type
from rmpeer.ce.memory import Memory, SessionMemory
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "ce:control", "ce:semaphores", "ce:error-notifier", "ce:usermode", "ce:doorbell",
                "ce:channel-group", "ce:context-share", "ce:gpfifo", "ce:copy", "ce:work-token", "ce:schedule",
                "ce:free-faulted-group", "free:ce", "close:ce")





class EngineFault(RmpeerError):
    """A copy that never completed: RM wrote the channel's error notifier, or the timeout
    fired first; what the notifier says."""

    def __init__(self, session: int, lce: int, label: str, waited_ns: int, notifier: dict, seen: int, want: int,
                 mmu_fault_code: int, timeout_ns: int):
        self.session, self.lce, self.notifier, self.waited_ns = session, lce, notifier, waited_ns
        self.reported = waited_ns < timeout_ns   # the notifier ended the wait, not the timeout
        self.info32 = notifier.get("info32", 0)
        self.info16 = notifier.get("info16", 0)
        self.mmu_fault = self.info32 == mmu_fault_code
        reason = ("MMU fault (ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT)" if self.mmu_fault
                  else f"error {self.info32}")
        ended = (f"RM reported an error after {waited_ns / 1e9:.3f} s" if self.reported
                 else f"the timeout fired after {waited_ns / 1e9:.3f} s")
        super().__init__(
            f"{label}: session {session}'s copy engine (LCE {lce}) did not finish ({ended}): "
            f"semaphore {seen:#x}, wanted {want:#x}; error notifier: "
            f"info32={self.info32} ({reason}), info16={self.info16:#x} (engine), status={notifier.get('status', 0):#x}")


@dataclass
class CopyResult:
    length: int
    gpu_ns: int          # between the timestamped releases before and after the copy
    host_ns: int         # submit to completion seen by the host
    gpu_start: int = 0   # the card's own timestamps (ns) of those two releases
    gpu_end: int = 0

    @property
    def gbps(self) -> float:
        return self.length / self.gpu_ns if self.gpu_ns > 0 else 0.0


FAULTED_GROUP = "free-faulted-group"    # the label's end when a faulted channel's group is freed
CHANNEL_PARTS = ("channel-group", "context-share", "gpfifo", "copy")   # _channel's objects, in order
CHANNEL_LABEL = re.compile(r"ce:s(\d+):g(\d+):(" + "|".join(CHANNEL_PARTS) + ")")


class CopyEngine:
    """One session's channel and copy object, with its control block and semaphores."""

    def __init__(self, rm, session, host, va_plan, gen: Generation, channel: dict, lce: int):
        self.rm, self.session, self.host, self.gen, self.channel, self.lce = rm, session, host, gen, channel, lce
        base = CE_HANDLE_BASE + session.index * CE_HANDLE_STRIDE
        self.mem = SessionMemory(rm, session, host, va_plan, base)
        self.payload = 0
        self.put = 0
        self.pb_cursor = 0
        self.object_bound = False
        self.generation = 0
        self.channel_handles: list[int] = []

    # -- setup -------------------------------------------------------------------------
    def create(self) -> "CopyEngine":
        lay, mem, s = self.channel, self.mem, self.session.index
        self.ctrl = mem.map_gpu(mem.map_cpu(mem.system(lay["control_block_size"], cached=True,
                                                      label=f"ce:s{s}:control"), label=f"ce:s{s}:control:cpu"),
                                sysmem=True, label=f"ce:s{s}:control")
        self.sem = mem.map_gpu(mem.map_cpu(mem.system(lay["semaphore_size"], cached=False, notifier=True,
                                                     label=f"ce:s{s}:semaphores"), label=f"ce:s{s}:semaphores:cpu"),
                               sysmem=True, label=f"ce:s{s}:semaphores")
        self.notifier = mem.map_cpu(mem.system(lay["notifier_size"], cached=False, notifier=True,
                                               label=f"ce:s{s}:error-notifier"), label=f"ce:s{s}:error-notifier:cpu")
        status = self.rm.abi.struct("NvNotification").field("status")
        self.fault_flag = (self.notifier.cpu, status.offset, status.width)   # what ends a wait early
        usermode = self.gen.usermode
        um = mem.handle()
        self.rm.alloc(self.session.plan.subdevice, um, usermode.name, self.gen.usermode_params,
                      label=f"ce:s{s}:usermode", bBar1Mapping=0, bPriv=0)
        access = self.rm.abi.bits("NVOS33_FLAGS").compose(ACCESS="WRITE_ONLY")
        self.doorbell = mem.map_cpu(Memory(um, lay["usermode_map_size"]), through_card=True, flags=access,
                                    label=f"ce:s{s}:doorbell")
        self._channel()
        return self

    def _channel(self) -> None:
        """Channel group, SYNC context share, GPFIFO channel, copy object, token, schedule."""
        rm, lay, s, abi = self.rm, self.channel, self.session.index, self.rm.abi
        dev, vas = self.session.plan.device, self.session.plan.vaspace
        engine = engine_type(abi, self.lce)
        tag = f"ce:s{s}:g{self.generation}"
        group, share, chan, copy = (self.mem.handle() for _ in range(4))
        self.channel_handles = [group, share, chan, copy]
        rm.alloc(dev, group, "KEPLER_CHANNEL_GROUP_A", "NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS",
                 label=f"{tag}:channel-group", hVASpace=vas, engineType=engine)
        rm.alloc(group, share, "FERMI_CONTEXT_SHARE_A", "NV_CTXSHARE_ALLOCATION_PARAMETERS",
                 label=f"{tag}:context-share", hVASpace=vas,
                 flags=abi.bits("NV_CTXSHARE_ALLOCATION_FLAGS").compose(SUBCONTEXT="SYNC"))
        self.ctrl.cpu.write(0, bytes(lay["pushbuffer_offset"]))  # ring and USERD start zeroed
        rm.alloc(group, chan, self.gen.gpfifo.name, "NV_CHANNEL_ALLOC_PARAMS", label=f"{tag}:gpfifo",
                 hObjectError=self.notifier.handle, gpFifoOffset=self.ctrl.gpu_va + lay["ring_offset"],
                 gpFifoEntries=lay["ring_entries"], hContextShare=share,
                 hUserdMemory=[self.ctrl.handle], userdOffset=[lay["userd_offset"]], engineType=engine)
        rm.alloc(chan, copy, self.gen.copy.name, "NVB0B5_ALLOCATION_PARAMETERS", label=f"{tag}:copy",
                 version=abi.const("NVB0B5_ALLOCATION_PARAMETERS_VERSION_1"), engineType=engine)
        self.token = rm.control(chan, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN",
                                label=f"{tag}:work-token")["workSubmitToken"]
        rm.control(group, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", label=f"{tag}:schedule", bEnable=1)
        self.put, self.pb_cursor, self.object_bound = 0, 0, False

    def replace_channel(self) -> None:
        """A faulted channel takes no more work: free its group (RM frees what is under it)
        and build a new one; the other channels never notice."""
        group = self.channel_handles[0]
        self.rm.free(self.session.plan.device, group, label=f"ce:s{self.session.index}:{FAULTED_GROUP}")
        self.rm.forget(self.channel_handles)
        self.notifier.cpu.write(0, bytes(self.rm.abi.struct("NvNotification").size))
        self.generation += 1
        self._channel()

    def state(self) -> dict:
        return {"put": self.put, "payload": self.payload, "pb_cursor": self.pb_cursor,
                "object_bound": self.object_bound, "generation": self.generation,
                "next_handle": self.mem.next_handle, "channel_handles": list(self.channel_handles)}

    def restore(self, state: dict) -> None:
        """The counters of a recorded moment (a replay that jumps); where the recorded run had
        replaced its channel by then, the client's table holds the recorded channel instead,
        as the newest objects, as a replacement leaves them."""
        self.put, self.payload, self.pb_cursor = state["put"], state["payload"], state["pb_cursor"]
        self.object_bound, self.generation = state["object_bound"], state["generation"]
        self.mem.next_handle = state["next_handle"]
        self.adopt_channel(list(state["channel_handles"]), self.generation)

    def adopt_channel(self, handles: list, generation: int) -> None:
        """Take the recorded channel `handles` (of `generation`) as this engine's, in the
        client's table too, as the newest objects, as a replacement leaves them."""
        if handles != self.channel_handles:
            self.rm.forget(self.channel_handles)
            self.rm.adopt(self._channel_objects(handles, generation))
        self.channel_handles, self.generation = list(handles), generation

    def _channel_objects(self, handles: list, generation: int) -> list:
        """(parent, handle, label) of a channel's four objects, as _channel allocates them."""
        group, share, chan, copy = handles
        tag = f"ce:s{self.session.index}:g{generation}"
        parents = (self.session.plan.device, group, group, chan)
        return [(parent, handle, f"{tag}:{part}") for parent, handle, part in zip(parents, handles, CHANNEL_PARTS)]

    # -- pushing work --------------------------------------------------------------------
    def _method(self, address: int, *values: int) -> list[int]:
        header = self.gen.gpfifo.bits("DMA").compose(
            SEC_OP="INC_METHOD", METHOD_COUNT=len(values), METHOD_SUBCHANNEL=self.channel["copy_subchannel"],
            METHOD_ADDRESS=address >> 2)
        return [header, *values]

    def _copy_method(self, name: str, *values: int) -> list[int]:
        return self._method(self.gen.copy.methods[name], *values)

    def _release(self, slot: int, payload: int) -> list[int]:
        """A four-word semaphore release (payload, 0, 64-bit GPU timestamp) after a flush."""
        va = self.sem.gpu_va + slot * self.channel["semaphore_slot_size"]
        launch = self.gen.copy.bits("LAUNCH_DMA").compose(**self.channel["launch_release"])
        return (self._copy_method("SET_SEMAPHORE_A", *_split(va), payload)
                + self._copy_method("LAUNCH_DMA", launch))

    def submit(self, words: list[int]) -> None:
        lay, gp = self.channel, self.gen.gpfifo
        data = b"".join(w.to_bytes(4, "little") for w in words)
        pb_start, pb_end = lay["pushbuffer_offset"], lay["control_block_size"]
        if pb_start + self.pb_cursor + len(data) > pb_end:
            self.pb_cursor = 0   # every earlier submit has completed: copies are synchronous
        at = pb_start + self.pb_cursor
        align = lay["pushbuffer_align"]
        self.pb_cursor += -(-len(data) // align) * align
        self.ctrl.cpu.write(at, data)
        va = self.ctrl.gpu_va + at
        # GET holds address bits 31:2, GET_HI the bits above 32 (compose refuses what does not fit)
        high, low = _split(va)
        entry0 = gp.bits("GP_ENTRY0").compose(GET=low >> 2)
        entry1 = gp.bits("GP_ENTRY1").compose(GET_HI=high, LENGTH=len(words))
        self.ctrl.cpu.write(lay["ring_offset"] + self.put * gp.constants["GP_ENTRY__SIZE"],
                            (entry0 | entry1 << 32).to_bytes(8, "little"))
        self.put = (self.put + 1) % lay["ring_entries"]
        # Cached system memory on x86: these stores are seen in program order, and the
        # uncached doorbell store below is not reordered before them (docs/copy-engine.md).
        self.ctrl.cpu.write32(lay["userd_offset"] + gp.userd["GPPut"], self.put)
        self.doorbell.cpu.write32(self.gen.usermode.registers["NOTIFY_CHANNEL_PENDING"], self.token)

    def _acquire(self, slot: int, value: int) -> list[int]:
        """Host methods that hold the channel until semaphore `slot` reaches `value`
        (circular >=): the channel is armed, and starts when the host opens the gate."""
        gp = self.gen.gpfifo
        high, low = _split(self.sem.gpu_va + slot * self.channel["semaphore_slot_size"])
        execute = gp.bits("SEM_EXECUTE").compose(OPERATION="ACQ_CIRC_GEQ", ACQUIRE_SWITCH_TSG="EN",
                                                 PAYLOAD_SIZE="32BIT")
        return self._method(gp.methods["SEM_ADDR_LO"], gp.bits("SEM_ADDR_LO").compose(OFFSET=low >> 2),
                            gp.bits("SEM_ADDR_HI").compose(OFFSET=high), value, 0, execute)

    def open_gate(self, slot: int, value: int) -> None:
        """Let a channel armed by start_copy(gate=(slot, value)) start."""
        self.sem.cpu.write32(slot * self.channel["semaphore_slot_size"], value)

    def start_copy(self, src: int, dst: int, length: int, *, slots: tuple = (0, 1), gate: tuple | None = None) -> int:
        """Submit a copy of `length` bytes between GPU virtual addresses of this session,
        framed by two timestamped releases into semaphore `slots` (start, end); returns the
        payload that marks its end. With gate=(slot, value) the channel first waits for the
        host to write `value` into that slot (open_gate), so that several engines armed
        one after another start together."""
        words = []
        if not self.object_bound:
            words += self._method(self.gen.gpfifo.methods["SET_OBJECT"], self.gen.copy.number)
            self.object_bound = True
        if gate is not None:
            words += self._acquire(*gate)
        self.payload = self.payload % 0xFFFFFFFF + 1    # a 32-bit semaphore value, never 0
        words += self._release(slots[0], self.payload)
        launch = self.gen.copy.bits("LAUNCH_DMA").compose(**self.channel["launch_copy"])
        chunk = self.channel["max_copy_bytes"]
        for off in range(0, length, chunk):
            n = min(chunk, length - off)
            words += self._copy_method("OFFSET_IN_UPPER", *_split(src + off), *_split(dst + off))
            words += self._copy_method("LINE_LENGTH_IN", n)
            words += self._copy_method("LAUNCH_DMA", launch)
        words += self._release(slots[1], self.payload)
        self.submit(words)
        return self.payload

    def timestamp(self, slot: int) -> int:
        """The GPU time (ns) of the last release into a semaphore slot."""
        at = slot * self.channel["semaphore_slot_size"] + self.channel["semaphore_timestamp_offset"]
        return int.from_bytes(self.sem.cpu.read(at, 8), "little")

    def wait_copy(self, payload: int, length: int, *, label: str, timeout_s: float) -> CopyResult:
        """Wait for the copy that ends with `payload`; its GPU time from the two timestamps.
        A fault ends the wait as soon as RM writes the channel's error notifier (its status
        last, method_notification.c), not at the timeout."""
        done, seen, waited = self.sem.cpu.wait32(self.channel["semaphore_slot_size"], payload, timeout_s,
                                                 unless=self.fault_flag)
        if not done:
            raise EngineFault(self.session.index, self.lce, label, waited, self.read_notifier(), seen, payload,
                              self.rm.abi.const("ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT"), int(timeout_s * 1e9))
        start, end = self.timestamp(0), self.timestamp(1)
        return CopyResult(length, end - start, waited, start, end)

    def copy(self, src: int, dst: int, length: int, *, label: str, timeout_s: float = 5.0) -> CopyResult:
        """Copy `length` bytes between GPU virtual addresses of this session; wait for it."""
        return self.wait_copy(self.start_copy(src, dst, length), length, label=label, timeout_s=timeout_s)

    def read_notifier(self) -> dict:
        st = self.rm.abi.struct("NvNotification")
        return st.decode(self.notifier.cpu.read(0, st.size))


def _split(value: int) -> tuple[int, int]:
    """A 64-bit address as the (upper, lower) 32-bit method words."""
    return value >> 32, value & 0xFFFFFFFF
