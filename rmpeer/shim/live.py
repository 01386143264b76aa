"""The live shim: real open/ioctl/mmap on /dev/nvidia*, each call recorded.

It moves bytes and records them; it never decides what a result means.
"""

from __future__ import annotations

import os
import time

from rmpeer.machine import slices
from rmpeer.abi import status as status_of
from rmpeer.shim.libc import MAP_FAILED, MAP_SHARED, O_RDWR_CLOEXEC, PROT_RW, address, ffi, libc
from rmpeer.shim.records import CallRecord, Payload, sampled_digest, word_runs
from rmpeer.model.steps import check_label


class HostBuffer:
    """Host memory handed to the kernel: a struct or the params block it points at."""

    def __init__(self, data):
        size = data if isinstance(data, int) else len(data)
        self._c = ffi.new("unsigned char[]", max(size, 1))
        self.size = size
        if not isinstance(data, int):
            ffi.memmove(self._c, bytes(data), size)

    @property
    def address(self) -> int:
        return address(self._c)

    def read(self) -> bytes:
        return bytes(ffi.buffer(self._c, self.size))

    def write(self, data) -> None:
        ffi.memmove(self._c, bytes(data), len(data))


class Recorder:
    """Numbers records and streams them to a recording's writer, if one is open."""

    def __init__(self, writer=None):
        self.writer, self.seq = writer, 0

    @property
    def recording(self) -> bool:
        return self.writer is not None

    def add(self, record: CallRecord) -> CallRecord:
        check_label(record.label)       # a step of a family no module declared is rmpeer's bug
        self.seq += 1
        record.seq = self.seq
        if self.writer:
            self.writer.write(record)
        return record

    def note(self, kind: str, **data) -> None:
        if self.writer:
            self.writer.note(kind, **data)


class LiveMapping:
    """A CPU mapping of GPU-visible memory (BAR1 vidmem, or system memory)."""

    def __init__(self, shim: "LiveShim", fd: int, base: int, length: int, label: str):
        self.shim, self.fd, self.base, self.length, self.label = shim, fd, base, length, label
        self._ptr = ffi.cast("unsigned char *", base)

    def _check(self, offset, n):
        if offset < 0 or offset + n > self.length:
            raise IndexError(f"{self.label}: {offset:#x}+{n:#x} outside a {self.length:#x}-byte mapping")

    def _rec(self, op, offset, **fields):
        return self.shim.rec.add(CallRecord(0, op, label=self.label, fd=self.fd,
                                            extra={"offset": offset, **fields.pop("extra", {})}, **fields))

    def write(self, offset: int, data: bytes) -> None:
        self._check(offset, len(data))
        ffi.memmove(self._ptr + offset, data, len(data))
        self._rec("mem.write", offset, request=bytes(data).hex())

    def read(self, offset: int, n: int) -> bytes:
        self._check(offset, n)
        data = bytes(ffi.buffer(self._ptr + offset, n))
        self._rec("mem.read", offset, reply=data.hex(), extra={"length": n})
        return data

    def write32(self, offset: int, value: int) -> None:
        self.write(offset, value.to_bytes(4, "little"))


    def wait32(self, offset: int, value: int, timeout_s: float, *, unless=None) -> tuple[bool, int, int]:
        """Poll a word until it equals `value`: (arrived, last value seen, ns waited).
        `unless` = (mapping, offset, width): a word elsewhere (an error notifier's status)
        whose becoming non-zero ends the wait before the timeout."""
        self._check(offset, 4)
        word = ffi.cast("volatile uint32_t *", self._ptr + offset)
        flag = _volatile_word(*unless) if unless else None
        start = time.perf_counter_ns()
        deadline = start + int(timeout_s * 1e9)
        seen, raised = word[0], 0
        while seen != value:
            if flag is not None:
                raised = flag[0]
                if raised:
                    seen = word[0]   # the copy may have ended as the error came
                    break
            if time.perf_counter_ns() > deadline:
                break
            seen = word[0]
        waited = time.perf_counter_ns() - start
        extra = {"want": value, "seen": seen}
        if unless:
            extra["unless"] = {"label": unless[0].label, "offset": unless[1], "seen": raised}
        self._rec("mem.wait", offset, result=int(seen == value), duration_ns=waited, extra=extra)
        return seen == value, seen, waited

    def fill(self, offset: int, data) -> None:
        """Write a large block (a pattern); the recording keeps a digest, not the bytes."""
        view = memoryview(data).cast("B")
        self._check(offset, len(view))
        src, dst = ffi.cast("unsigned char *", ffi.from_buffer(view)), self._ptr + offset
        # memcpy through cffi lets go of the GIL: slices on several threads
        slices.each(lambda at, k: libc().memcpy(dst + at, src + at, k), len(view), slices.SLICE)
        digest = sampled_digest(view) if self.shim.rec.recording else ""
        self._rec("mem.fill", offset, extra={"length": len(view), "digest": digest})

    def view(self, offset: int, n: int):
        """A large block (data read back), as bytes the caller compares without copying.
        The recording keeps it as word runs (records.word_runs), from which a replay
        rebuilds the same bytes for the same comparison."""
        import numpy as np

        self._check(offset, n)
        block = np.frombuffer(ffi.buffer(self._ptr + offset, n), dtype=np.uint8)
        extra = {"length": n, **(word_runs(block) if self.shim.rec.recording else {})}
        self._rec("mem.view", offset, extra=extra)
        return block


def _volatile_word(mapping: LiveMapping, offset: int, width: int):
    mapping._check(offset, width)
    return ffi.cast(f"volatile uint{8 * width}_t *", mapping._ptr + offset)


class LiveShim:
    mode = "live"

    def __init__(self, writer=None):
        self.rec = Recorder(writer)
        self.header = {}

    def segment(self, key: str, state=None):
        """Marks where a named stretch of calls begins (a replay can start there); the
        state given is what a replay needs to resume there. Live: (None, True)."""
        self.rec.note("segment", key=key, state=state)
        return None, True

    def end_segment(self, *, abandoned: bool = False) -> None:
        """Live, a stretch has no end to check."""

    def finish(self) -> None:
        if self.rec.writer:
            self.rec.writer.close()

    def buffer(self, data) -> HostBuffer:
        return HostBuffer(data)

    def note(self, kind: str, **data) -> None:
        self.rec.note(kind, **data)

    def observe(self, label: str, read):
        """Something read from the host outside RM (kernel log lines): the value `read()`
        returns, recorded so that a replay serves it."""
        value = read()
        self.rec.add(CallRecord(0, "observe", label=label, extra={"value": value}))
        return value

    def open(self, path: str, *, label: str = "open") -> int:
        start = time.perf_counter_ns()
        fd = libc().open(path.encode(), O_RDWR_CLOEXEC)
        err = ffi.errno if fd < 0 else 0
        self.rec.add(CallRecord(0, "open", label=label, path=path, result=fd, errno=err,
                                duration_ns=time.perf_counter_ns() - start))
        if fd < 0:
            raise OSError(err, os.strerror(err), path)
        return fd

    def close(self, fd: int, *, label: str = "close") -> None:
        rc = libc().close(fd)
        self.rec.add(CallRecord(0, "close", label=label, fd=fd, result=rc,
                                errno=ffi.errno if rc < 0 else 0))

    def ioctl(self, fd: int, request: int, top: HostBuffer, *, label: str, escape: int,
              struct, payload: HostBuffer | None = None, payload_struct=None,
              status_field: str | None = "status") -> CallRecord:
        before = top.read()
        payload_before = payload.read() if payload is not None else None
        start = time.perf_counter_ns()
        rc = libc().ioctl(fd, ffi.cast("unsigned long", request), ffi.cast("void *", top.address))
        took = time.perf_counter_ns() - start
        err = ffi.errno if rc < 0 else 0
        after = top.read()
        record = CallRecord(0, "ioctl", label=label, fd=fd, escape=escape, request_code=request,
                            struct=struct.name, request=before.hex(), reply=after.hex(),
                            result=rc, errno=err, duration_ns=took)
        if payload is not None:
            record.payload = Payload(payload_struct.name, payload_before.hex(), payload.read().hex())
        if status_field and struct.has(status_field) and rc == 0:
            st = status_of(struct.get(after, status_field))
            record.status, record.status_name, record.status_text = st.code, st.name, st.text
        return self.rec.add(record)

    def mmap(self, fd: int, length: int, *, label: str) -> LiveMapping:
        start = time.perf_counter_ns()
        ptr = libc().mmap(ffi.NULL, length, PROT_RW, MAP_SHARED, fd, 0)
        base = address(ptr)
        err = ffi.errno if base == MAP_FAILED else 0
        self.rec.add(CallRecord(0, "mmap", label=label, fd=fd, result=base, errno=err,
                                duration_ns=time.perf_counter_ns() - start, extra={"length": length}))
        if base == MAP_FAILED:
            raise OSError(err, os.strerror(err), f"mmap {label}")
        return LiveMapping(self, fd, base, length, label)

    def munmap(self, mapping: LiveMapping) -> None:
        rc = libc().munmap(ffi.cast("void *", mapping.base), mapping.length)
        self.rec.add(CallRecord(0, "munmap", label=mapping.label, fd=mapping.fd, result=rc))
