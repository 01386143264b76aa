"""A whole live run on a recorded host (issue 47, item 6): `rmpeer certify` runs as on a real
H200, through rmpeer.shim.live.LiveShim, while a stand-in for libc (open, close, ioctl, mmap,
munmap, memcpy) answers from a committed recording, and the memory a real run found in its
mappings (a semaphore's value and its timestamps, a read-back's words, a notifier) is put
there just before the live code reads it. Everything above libc is the live code: the RM
client, the engines, the traffic, the byte checks, the judge and the outputs.

    python tests/shim/standin_live.py RECORDING OUTPUT [certify options...]

Used by tests/shim/test_standin_live.py. The host's own files (/proc, the kernel log, NVML)
are what rmpeer observes (LiveShim.observe): those are served from the recording too.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from rmpeer.model.target import Target
from rmpeer.shim import live
from rmpeer.shim.libc import MAP_FAILED
from rmpeer.shim.records import CallRecord, read_transcript, words_from_runs

LIBC_OPS = ("open", "close", "ioctl", "mmap", "munmap")


class Diverged(AssertionError):
    """The live run made a call the recorded run did not make there."""


class RecordedHost:
    """libc as LiveShim calls it, answering from a recording in its order, and the engines'
    side of the mappings: before each read of memory, what the recorded run read there."""

    def __init__(self, path):
        self.header, lines = read_transcript(path)
        self.records = [x for x in lines if isinstance(x, CallRecord)]
        self.pos = 0
        self.maps: dict = {}          # label -> the buffer its mmap gave
        self.buffers: dict = {}       # address -> buffer (alive while mapped)
        self.hosts: dict = {}         # address -> HostBuffer made by the live shim (a payload's home)

    # -- the order of the calls -------------------------------------------------------------
    def _take(self, op: str, label: str | None = None) -> CallRecord:
        if self.pos >= len(self.records):
            raise Diverged(f"the live run made a {op} ({label}) after the recording's last call")
        rec = self.records[self.pos]
        if rec.op != op or (label is not None and rec.label != label):
            made = f"{op} {label!r}" if label is not None else f"an {op} (libc is not told its label)"
            raise Diverged(f"call {rec.seq}: the live run made {made} where the recording has {rec.op} {rec.label!r}")
        self.pos += 1
        return rec

    def recorded(self, record: CallRecord, original) -> CallRecord:
        """Recorder.add: a libc call's record checked against the one it was answered from,
        a memory access's taken in order; then the next read of memory made ready."""
        if record.op in LIBC_OPS:
            answered = self.records[self.pos - 1]
            if (answered.op, answered.label) != (record.op, record.label):
                raise Diverged(f"call {answered.seq}: answered {answered.op} {answered.label!r}, recorded "
                               f"{record.op} {record.label!r}")
        else:
            self._take(record.op, record.label)
        out = original(record)
        self._stage()
        return out

    def _stage(self) -> None:
        if self.pos >= len(self.records):
            return
        rec = self.records[self.pos]
        buf = self.maps.get(rec.label)
        if buf is None or not rec.op.startswith("mem."):
            return
        at = rec.extra.get("offset", 0)
        if rec.op == "mem.read":
            data = bytes.fromhex(rec.reply)
            live.ffi.memmove(buf + at, data, len(data))
        elif rec.op == "mem.wait":
            live.ffi.memmove(buf + at, int(rec.extra["seen"]).to_bytes(4, "little"), 4)
            unless = rec.extra.get("unless")
            if unless and unless.get("seen") and unless.get("label") in self.maps:
                live.ffi.memmove(self.maps[unless["label"]] + unless["offset"],
                                 int(unless["seen"]).to_bytes(4, "little"), 4)
        elif rec.op == "mem.view" and "runs" in rec.extra:
            words = words_from_runs(rec.extra["runs"], rec.extra["length"]).view(np.uint8)
            live.ffi.memmove(buf + at, words.tobytes(), words.size)

    # -- libc -------------------------------------------------------------------------------
    def open(self, path, flags):
        rec = self._take("open")
        live.ffi.errno = rec.errno or 0
        return rec.result

    def close(self, fd):
        rec = self._take("close")
        live.ffi.errno = rec.errno or 0
        return rec.result

    def ioctl(self, fd, request, pointer):
        rec = self._take("ioctl")
        if int(live.ffi.cast("unsigned long", request)) != rec.request_code:
            raise Diverged(f"call {rec.seq} ({rec.label}): request {int(request):#x}, recorded {rec.request_code:#x}")
        top = live.ffi.cast("unsigned char *", pointer)
        sent = bytes(live.ffi.buffer(top, len(rec.reply) // 2))
        if rec.payload is not None:
            self._payload(sent, int(live.ffi.cast("uintptr_t", pointer))).write(bytes.fromhex(rec.payload.reply))
        reply = bytes.fromhex(rec.reply)
        live.ffi.memmove(top, reply, len(reply))
        live.ffi.errno = rec.errno or 0
        return -1 if rec.errno else rec.result

    def _payload(self, sent: bytes, top: int):
        """The params block the top struct points at: the live shim's buffer whose address
        is one of the struct's 8-byte words."""
        for i in range(0, len(sent) - 7, 4):
            held = self.hosts.get(int.from_bytes(sent[i:i + 8], "little"))
            if held is not None and held.address != top:
                return held
        raise Diverged("a call with a params block whose address the top struct does not hold")

    def mmap(self, addr, length, prot, flags, fd, offset):
        rec = self._take("mmap")
        if rec.errno:
            live.ffi.errno = rec.errno
            return live.ffi.cast("void *", MAP_FAILED)
        buf = live.ffi.new("unsigned char[]", length)
        self.maps[rec.label] = live.ffi.cast("unsigned char *", buf)
        self.buffers[int(live.ffi.cast("uintptr_t", buf))] = buf
        return live.ffi.cast("void *", buf)

    def munmap(self, ptr, length):
        rec = self._take("munmap")
        self.maps.pop(rec.label, None)
        self.buffers.pop(int(live.ffi.cast("uintptr_t", ptr)), None)
        return rec.result

    def memcpy(self, dst, src, n):
        live.ffi.memmove(dst, src, n)
        return dst

    # -- what the host's files said -----------------------------------------------------------
    def observe(self, label):
        return self._take("observe", label).extra.get("value")


def install(host: RecordedHost) -> None:
    """The stand-in in place of libc, the host's files and this machine's GPUs."""
    import rmpeer.run.spec as spec
    import rmpeer.run.targets as targets

    live.libc = lambda: host
    add = live.Recorder.add
    live.Recorder.add = lambda self, record: host.recorded(record, lambda r: add(self, r))
    made = live.HostBuffer.__init__

    def keep(self, data):
        made(self, data)
        host.hosts[self.address] = self
    live.HostBuffer.__init__ = keep

    def observe(self, label, read):
        value = host.observe(label)
        add(self.rec, CallRecord(0, "observe", label=label, extra={"value": value}))
        host._stage()
        return value
    live.LiveShim.observe = observe
    exists = os.path.exists      # the recorded host's device nodes are there
    os.path.exists = lambda path: str(path).startswith("/dev/nvidia") or exists(path)
    header = host.header
    target = Target("live", header["label"], header["cards"])
    targets.live_target = spec.live_target = lambda: target
    seeded = spec.live_spec

    def same_seed(**kw):
        return seeded(**{**kw, "pattern_seed": header["run"]["pattern_seed"]})
    spec.live_spec = same_seed


def main(argv) -> int:
    recording, output, *options = argv
    host = RecordedHost(recording)
    install(host)
    from rmpeer.cli import main as rmpeer_main

    try:
        code = rmpeer_main(["certify", "--output", output, *options])
    except SystemExit as exc:
        code = exc.code
    left = [f"{r.op} {r.label}" for r in host.records[host.pos:]]
    print(f"standin: {host.pos} of {len(host.records)} recorded calls made; left: {left[:3]}", file=sys.stderr)
    return int(code or 0)


if __name__ == "__main__":
    os.environ.setdefault("RMPEER_NO_COLOR", "1")
    sys.exit(main(sys.argv[1:]))
