"""GPU-visible memory for a session's copy engine: allocated, mapped for the CPU, and mapped
at a fixed address of the session's own VA space."""

from __future__ import annotations

from dataclasses import dataclass

from rmpeer.rm.client import CTL_PATH
from rmpeer.rm.host import register_fd


@dataclass
class Memory:
    handle: int
    size: int
    gpu_va: int = 0          # 0: not mapped for the GPU
    cpu: object = None       # the shim's mapping, or None
    fd: int | None = None    # the fd the CPU mapping lives on


def alloc_system(rm, parent: int, handle: int, size: int, *, cached: bool, notifier: bool = False,
                 label: str) -> Memory:
    """System memory the host reads and writes: NV01_MEMORY_SYSTEM, 4 KiB pages."""
    abi = rm.abi
    attr = abi.bits("NVOS32_ATTR").compose(
        LOCATION="PCI", PHYSICALITY="ALLOW_NONCONTIGUOUS", PAGE_SIZE="4KB",
        COHERENCY="CACHED" if cached else "UNCACHED")
    attr2 = abi.bits("NVOS32_ATTR2").compose(GPU_CACHEABLE="NO")
    kind = abi.const("NVOS32_TYPE_NOTIFIER" if notifier else "NVOS32_TYPE_IMAGE")
    rm.alloc(parent, handle, "NV01_MEMORY_SYSTEM", "NV_MEMORY_ALLOCATION_PARAMS",
             label=label, owner=rm.handle, type=kind, attr=attr, attr2=attr2, size=size)
    return Memory(handle, size)


def map_system_to_cpu(rm, device: int, mem: Memory, *, label: str) -> Memory:
    """System memory mapped for the CPU through a new nvidiactl fd (one mapping per fd)."""
    mem.fd = rm.shim.open(CTL_PATH, label=f"{label}:open")
    mem.cpu = rm.map_to_cpu(device, mem.handle, mem.size, mem.fd, label=label)
    return mem


class SessionMemory:
    """Allocates a session's private memory and maps it; one bump allocator of private VA."""

    def __init__(self, rm, session, host, va_plan, handle_base: int):
        self.rm, self.session, self.host, self.va = rm, session, host, va_plan
        self.next_handle, self.next_va = handle_base, va_plan.private_base
        self.cpu_maps: list[Memory] = []

    def handle(self) -> int:
        self.next_handle += 1
        return self.next_handle

    def _gpu_va(self, size: int) -> int:
        page = self.va.page_size
        at = self.next_va
        self.next_va += -(-size // page) * page
        if self.next_va > self.va.private_base + self.va.private_size:
            raise MemoryError("session private VA range exhausted (layouts.yaml va.private_size)")
        return at

    def system(self, size: int, *, cached: bool, notifier: bool = False, label: str) -> Memory:
        return alloc_system(self.rm, self.session.plan.device, self.handle(), size, cached=cached,
                            notifier=notifier, label=label)

    def video(self, size: int, *, label: str) -> Memory:
        h = self.handle()
        self.session.alloc_vidmem(h, size, label=label)
        return Memory(h, size)

    def map_gpu(self, mem: Memory, *, sysmem: bool, label: str) -> Memory:
        """A reservation in the session's VA space and mem mapped into it at a fixed address."""
        mem.gpu_va = self._gpu_va(mem.size)
        h = self.handle()
        self.session.reserve(h, mem.gpu_va, mem.size, label=f"{label}:reserve")
        fields = {"DMA_OFFSET_FIXED": "TRUE"}
        fields.update({"PAGE_SIZE": "4KB", "CACHE_SNOOP": "ENABLE"} if sysmem else {"PAGE_SIZE": "HUGE"})
        flags = self.rm.abi.bits("NVOS46_FLAGS").compose(**fields)
        self.rm.map_dma(self.session.plan.device, h, mem.handle, length=mem.size, flags=flags,
                        dma_offset=mem.gpu_va, label=f"{label}:map")
        return mem

    def map_cpu(self, mem: Memory, *, through_card: bool = False, flags: int = 0, label: str) -> Memory:
        """Map for the CPU on a new fd: nvidiactl for system memory, a registered
        /dev/nvidiaN for objects of the card itself (the usermode doorbell)."""
        if through_card:
            mem.fd = self.rm.shim.open(f"/dev/nvidia{self.session.card.minor}", label=f"{label}:open")
            register_fd(self.rm, mem.fd, label=f"{label}:register-fd")
            mem.cpu = self.rm.map_to_cpu(self.session.plan.device, mem.handle, mem.size, mem.fd, label=label,
                                         flags=flags)
        else:
            map_system_to_cpu(self.rm, self.session.plan.device, mem, label=label)
        self.cpu_maps.append(mem)
        return mem

    def release_cpu_maps(self) -> None:
        """Unmap and close every CPU mapping (RM objects are freed with the client's list)."""
        for mem in reversed(self.cpu_maps):
            self.rm.shim.munmap(mem.cpu)
            self.rm.shim.close(mem.fd, label=f"close:{mem.cpu.label}")
        self.cpu_maps.clear()
