"""Tests that kill the mutants of rmpeer/shim/live.py (docs/mutation.md, issue 47 item 9).

The live shim's calls to libc go to stand-ins that answer as the kernel would (a file
descriptor, -1 with errno, MAP_FAILED), and its clock to a fake one that advances a fixed step
per reading, so that what it records is known exactly beforehand. The expected values are
worked out by hand (byte orders, hex, offsets, errno numbers and their strerror texts from
errno(3)), or are the committed recordings' own: the labels, the descriptors and the lengths a
real H200 run recorded (fixtures/transcripts/h200x1-20261201T100856Z.jsonl.gz)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from rmpeer.machine import slices
from rmpeer.shim import live
from rmpeer.shim.records import CallRecord, sampled_digest, word_runs

pytestmark = pytest.mark.offline

# From the recording h200x1-20261201T100856Z (seq 4, 51, 208/209): open:nvidiactl gave fd 5; the
# upload staging mapping was 64 MiB on fd 8; ce:s0:doorbell was unmapped and closed on fd 21.
OPEN_LABEL, STAGING, SEM, NOTIFIER = "open:nvidiactl", "staging:card0:upload:cpu", "ce:s0:semaphores:cpu", "ce:s0:error-notifier:cpu"
STEP = 1_000_000     # ns per reading of the fake clock


class Kept:
    """A recording's writer that keeps what it is given."""

    def __init__(self):
        self.records, self.notes, self.closed = [], [], 0

    def write(self, record):
        self.records.append(record)

    def note(self, kind, **data):
        self.notes.append((kind, data))

    def close(self):
        self.closed += 1


class Keeping(live.Recorder):
    """A recorder with no recording (writer None) that still lets the test see each record."""

    def __init__(self):
        super().__init__(None)
        self.kept = []

    def add(self, record):
        self.kept.append(record)
        return super().add(record)


class Clock:
    """time as the live shim reads it: each perf_counter_ns() is STEP after the one before."""

    def __init__(self, start=10 * STEP):
        self.now, self.reads = start, 0

    def perf_counter_ns(self):
        self.reads += 1
        self.now += STEP
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(live, "time", c)
    return c


def _memory(n):
    buf = live.ffi.new("unsigned char[]", n)
    return buf, int(live.ffi.cast("uintptr_t", buf))


def _at(buf, offset, n) -> bytes:
    return bytes(live.ffi.buffer(buf + offset, n))


def _mapping(n=64, label=SEM, writer=None, fd=8):
    shim = live.LiveShim(writer)
    buf, base = _memory(n)
    return shim, buf, live.LiveMapping(shim, fd, base, n, label)


# -- HostBuffer ---------------------------------------------------------------------------------

def test_a_host_buffer_of_a_size_is_that_many_zero_bytes_at_its_address():
    hb = live.HostBuffer(24)
    assert hb.size == 24 and hb.read() == bytes(24)
    assert bytes(live.ffi.buffer(live.ffi.cast("unsigned char *", hb.address), 24)) == bytes(24)
    empty = live.HostBuffer(0)
    assert empty.size == 0 and empty.read() == b""


def test_a_host_buffer_of_bytes_holds_them_and_a_write_changes_its_start():
    hb = live.HostBuffer(bytearray(b"\x01\x02\x03\x04\x05"))
    assert hb.size == 5 and hb.read() == b"\x01\x02\x03\x04\x05"
    assert bytes(live.ffi.buffer(live.ffi.cast("unsigned char *", hb.address), 5)) == b"\x01\x02\x03\x04\x05"
    hb.write(bytearray(b"\xaa\xbb"))
    assert hb.read() == b"\xaa\xbb\x03\x04\x05"
    assert live.LiveShim().buffer(b"\x09\x08").read() == b"\x09\x08"


# -- Recorder -----------------------------------------------------------------------------------

def test_a_recorder_numbers_from_one_and_writes_only_to_a_writer():
    alone = live.Recorder()
    assert alone.recording is False and alone.writer is None
    first = alone.add(CallRecord(0, "open", label=OPEN_LABEL))
    assert first.seq == 1 and alone.add(CallRecord(0, "close", label="close:nvidiactl")).seq == 2
    alone.note("segment", key="x")        # no writer: nothing to note to, no error

    kept = Kept()
    rec = live.Recorder(kept)
    assert rec.recording is True
    a, b = CallRecord(0, "open", label=OPEN_LABEL), CallRecord(0, "close", label="close:nvidiactl")
    assert rec.add(a) is a and rec.add(b) is b
    assert [(r.seq, r.op) for r in kept.records] == [(1, "open"), (2, "close")]
    rec.note("driver", version="580.159.04", abi="580.76.05")
    assert kept.notes == [("driver", {"version": "580.159.04", "abi": "580.76.05"})]


# -- LiveMapping: bounds, write, read ------------------------------------------------------------

def test_a_mapping_refuses_what_is_outside_it_in_one_line():
    _, _, m = _mapping(16, label=STAGING)
    m.write(12, b"\x01\x02\x03\x04")        # ends exactly at the end: inside
    assert m.read(0, 16)[12:] == b"\x01\x02\x03\x04"
    assert m.read(16, 0) == b""             # nothing, at the end: inside
    assert m.wait32(12, 0x04030201, 0.0)[:2] == (True, 0x04030201)   # the last word: inside
    with pytest.raises(IndexError) as e:
        m.write(13, b"\x01\x02\x03\x04")
    assert str(e.value) == "staging:card0:upload:cpu: 0xd+0x4 outside a 0x10-byte mapping"
    with pytest.raises(IndexError) as e:
        m.read(-1, 1)
    assert str(e.value) == "staging:card0:upload:cpu: -0x1+0x1 outside a 0x10-byte mapping"
    with pytest.raises(IndexError):
        m.read(8, 9)
    with pytest.raises(IndexError):
        m.wait32(13, 0, 0.0)
    with pytest.raises(IndexError):
        m.view(1, 16)
    with pytest.raises(IndexError):
        m.fill(4, np.zeros(13, np.uint8))


def test_a_mapping_writes_and_reads_its_memory_and_records_each_at_its_offset():
    kept = Kept()
    shim, buf, m = _mapping(32, label=STAGING, writer=kept, fd=8)
    m.write(4, b"\xde\xad\xbe\xef")
    assert _at(buf, 0, 12) == b"\x00" * 4 + b"\xde\xad\xbe\xef" + b"\x00" * 4
    live.ffi.memmove(buf + 20, b"\x10\x20\x30", 3)
    assert m.read(19, 5) == b"\x00\x10\x20\x30\x00"
    m.write32(8, 0x11223344)                # little-endian: 44 33 22 11
    assert _at(buf, 8, 5) == b"\x44\x33\x22\x11\x00"
    w, r, w32 = kept.records
    assert (w.seq, w.op, w.label, w.fd, w.request, w.extra) == (1, "mem.write", STAGING, 8, "deadbeef", {"offset": 4})
    assert (r.seq, r.op, r.label, r.fd, r.reply, r.extra) == (2, "mem.read", STAGING, 8, "0010203000",
                                                            {"offset": 19, "length": 5})
    assert (w32.op, w32.request, w32.extra) == ("mem.write", "44332211", {"offset": 8})
    assert r.request == "" and w.reply == ""


# -- LiveMapping.wait32 ----------------------------------------------------------------------------

def test_a_wait_for_a_word_already_there_reads_the_clock_twice(clock):
    kept = Kept()
    _, buf, m = _mapping(16, writer=kept, fd=20)
    live.ffi.cast("uint32_t *", buf + 4)[0] = 0x01020304
    assert m.wait32(4, 0x01020304, 5.0) == (True, 0x01020304, STEP)
    assert clock.reads == 2
    (rec,) = kept.records
    assert (rec.op, rec.label, rec.fd, rec.result, rec.duration_ns) == ("mem.wait", SEM, 20, 1, STEP)
    assert rec.extra == {"offset": 4, "want": 0x01020304, "seen": 0x01020304}


def test_a_wait_polls_until_the_clock_is_past_its_deadline(clock):
    """Deadline 3 ms after the start, the clock 1 ms a reading: the readings at +1, +2 and +3 ms
    are not past it, +4 ms is; the wait's end is read at +5 ms."""
    kept = Kept()
    _, buf, m = _mapping(16, writer=kept)
    live.ffi.cast("uint32_t *", buf + 8)[0] = 6
    assert m.wait32(8, 7, 0.003) == (False, 6, 5 * STEP)
    assert clock.reads == 6
    (rec,) = kept.records
    assert (rec.result, rec.duration_ns, rec.extra) == (0, 5 * STEP, {"offset": 8, "want": 7, "seen": 6})
    assert "unless" not in rec.extra


def test_a_wait_ends_as_the_watched_word_becomes_non_zero(clock):
    kept = Kept()
    shim, buf, sem = _mapping(64, writer=kept)
    nbuf, nbase = _memory(16)
    notifier = live.LiveMapping(shim, 21, nbase, 16, NOTIFIER)
    live.ffi.cast("uint32_t *", buf + 16)[0] = 3
    live.ffi.memmove(nbuf + 14, b"\xff\xff", 2)          # a u16 status at +14 (NvNotification)
    assert sem.wait32(16, 1, 1.0, unless=(notifier, 14, 2)) == (False, 3, STEP)
    assert clock.reads == 2                               # no look at the clock: the flag ended it
    (rec,) = kept.records
    assert rec.result == 0 and rec.duration_ns == STEP
    assert rec.extra == {"offset": 16, "want": 1, "seen": 3,
                         "unless": {"label": NOTIFIER, "offset": 14, "seen": 0xFFFF}}


def test_a_watched_word_of_zero_lets_the_wait_go_on_and_is_recorded_as_zero(clock):
    kept = Kept()
    shim, buf, sem = _mapping(64, writer=kept)
    nbuf, nbase = _memory(16)
    notifier = live.LiveMapping(shim, 21, nbase, 16, NOTIFIER)
    live.ffi.memmove(nbuf + 12, b"\x07\x07\x00\x00\x09\x09", 6)   # zero at +14..16 only
    assert sem.wait32(16, 1, 0.002, unless=(notifier, 14, 2)) == (False, 0, 4 * STEP)
    assert kept.records[-1].extra["unless"] == {"label": NOTIFIER, "offset": 14, "seen": 0}
    live.ffi.cast("uint32_t *", buf + 16)[0] = 1
    assert sem.wait32(16, 1, 0.002, unless=(notifier, 14, 2)) == (True, 1, STEP)
    assert kept.records[-1].extra["unless"] == {"label": NOTIFIER, "offset": 14, "seen": 0}
    assert kept.records[-1].result == 1
    with pytest.raises(IndexError):
        sem.wait32(16, 1, 0.002, unless=(notifier, 14, 4))          # the flag outside its mapping


def test_a_watched_word_is_read_with_its_own_width(clock):
    shim, buf, sem = _mapping(64)
    nbuf, nbase = _memory(16)
    notifier = live.LiveMapping(shim, 21, nbase, 16, NOTIFIER)
    live.ffi.memmove(nbuf + 8, b"\x00\x00\x00\x00\x00\x00\x00\x80", 8)   # only the top byte of a u64
    assert sem.wait32(16, 1, 1.0, unless=(notifier, 8, 8)) == (False, 0, STEP)
    live.ffi.memmove(nbuf, b"\x00\x01", 2)                              # the second byte of a u8 pair
    assert sem.wait32(16, 1, 0.001, unless=(notifier, 0, 1)) == (False, 0, 3 * STEP)


# -- LiveMapping.fill and view ------------------------------------------------------------------

class Memcpy:
    def __init__(self):
        self.calls = []

    def memcpy(self, dst, src, n):
        self.calls.append(n)
        live.ffi.memmove(dst, src, n)
        return dst


def test_a_fill_copies_every_slice_to_its_place_and_records_a_digest_only_when_recording(monkeypatch):
    libc = Memcpy()
    monkeypatch.setattr(live, "libc", lambda: libc)
    n = slices.SLICE + 4096 + 3                     # two slices: the second at 8 MiB
    data = np.random.default_rng(47).integers(0, 256, n, dtype=np.uint8)
    kept = Kept()
    _, buf, m = _mapping(n + 16, label=STAGING, writer=kept)
    m.fill(16, data)
    assert _at(buf, 0, 16) == bytes(16) and _at(buf, 16, n) == data.tobytes()
    assert sorted(libc.calls) == [4099, 8 << 20]
    (rec,) = kept.records
    assert (rec.op, rec.label) == ("mem.fill", STAGING)
    assert rec.extra == {"offset": 16, "length": n, "digest": sampled_digest(memoryview(data))}
    assert rec.extra["digest"]


def test_a_fill_of_words_counts_bytes_and_without_a_recording_keeps_no_digest(monkeypatch):
    libc = Memcpy()
    monkeypatch.setattr(live, "libc", lambda: libc)
    shim = live.LiveShim()
    shim.rec = Keeping()
    buf, base = _memory(12)
    m = live.LiveMapping(shim, 8, base, 12, STAGING)
    m.fill(2, np.array([0x0102, 0x0304, 0x0506], dtype=np.uint16))     # 6 bytes, little-endian
    assert _at(buf, 0, 12) == b"\x00\x00\x02\x01\x04\x03\x06\x05\x00\x00\x00\x00"
    (rec,) = shim.rec.kept
    assert rec.extra == {"offset": 2, "length": 6, "digest": ""}
    with pytest.raises(IndexError):
        m.fill(8, np.zeros(3, np.uint16))                              # 6 bytes at 8: past 12


def test_a_view_is_the_memory_itself_and_keeps_word_runs_only_when_recording():
    kept = Kept()
    _, buf, m = _mapping(64, label=STAGING, writer=kept)
    words = np.array([5, 6, 7, 7, 7, 0, 1, 2], dtype=np.uint32)
    live.ffi.memmove(buf + 8, words.tobytes(), 32)
    block = m.view(8, 32)
    assert block.dtype == np.uint8 and block.tobytes() == words.tobytes()
    live.ffi.memmove(buf + 8, b"\xee", 1)
    assert block[0] == 0xEE                 # not a copy: the mapping's own bytes
    (rec,) = kept.records
    assert rec.op == "mem.view" and rec.extra == {"offset": 8, "length": 32, **word_runs(words.view(np.uint8))}
    assert "runs" in rec.extra

    shim = live.LiveShim()
    shim.rec = Keeping()
    buf2, base2 = _memory(16)
    live.LiveMapping(shim, 8, base2, 16, STAGING).view(4, 8)
    assert shim.rec.kept[0].extra == {"offset": 4, "length": 8}


# -- LiveShim ---------------------------------------------------------------------------------

def test_a_segment_is_noted_with_its_state_and_live_has_nothing_to_resume():
    kept = Kept()
    shim = live.LiveShim(kept)
    assert shim.mode == "live" and shim.header == {}
    assert shim.segment("runtime:open") == (None, True)
    assert shim.segment("ce:copy", state={"card": 0}) == (None, True)
    assert shim.end_segment() is None and shim.end_segment(abandoned=True) is None
    shim.note("driver", version="580.159.04")
    assert kept.notes == [("segment", {"key": "runtime:open", "state": None}),
                          ("segment", {"key": "ce:copy", "state": {"card": 0}}),
                          ("driver", {"version": "580.159.04"})]
    assert kept.closed == 0
    shim.finish()
    assert kept.closed == 1
    live.LiveShim().finish()                # no recording: nothing to close


def test_an_observation_is_recorded_under_its_label_and_returned():
    kept = Kept()
    shim = live.LiveShim(kept)
    value = [{"model": "NVIDIA H200", "bus": "0000:00:06.0"}]
    assert shim.observe("host:proc-gpus", lambda: value) is value
    (rec,) = kept.records
    assert (rec.seq, rec.op, rec.label, rec.extra) == (1, "observe", "host:proc-gpus", {"value": value})


class Libc:
    """open, close, mmap and munmap as the kernel answers them: a result, and errno when it fails."""

    def __init__(self, result=0, err=0):
        self.result, self.err, self.calls = result, err, []

    def _answer(self, *call):
        self.calls.append(call)
        live.ffi.errno = self.err
        return self.result

    def open(self, path, flags):
        return self._answer("open", path, flags)

    def close(self, fd):
        return self._answer("close", fd)

    def mmap(self, addr, length, prot, flags, fd, offset):
        self.calls.append(("mmap", addr, length, prot, flags, fd, offset))
        live.ffi.errno = self.err
        return live.ffi.cast("void *", self.result)

    def munmap(self, ptr, length):
        return self._answer("munmap", int(live.ffi.cast("uintptr_t", ptr)), length)


def test_an_open_passes_the_path_read_write_close_on_exec_and_records_the_fd(monkeypatch, clock):
    libc = Libc(result=5, err=errno.EIO)    # a stale errno: a call that succeeded has none
    monkeypatch.setattr(live, "libc", lambda: libc)
    kept = Kept()
    shim = live.LiveShim(kept)
    assert shim.open("/dev/nvidiactl", label=OPEN_LABEL) == 5
    assert libc.calls == [("open", b"/dev/nvidiactl", os.O_RDWR | os.O_CLOEXEC)]
    (rec,) = kept.records
    assert (rec.op, rec.label, rec.path, rec.result, rec.errno, rec.duration_ns) == \
        ("open", OPEN_LABEL, "/dev/nvidiactl", 5, 0, STEP)
    libc.result = 0                         # fd 0 is a descriptor too
    assert shim.open("/dev/nvidia0") == 0
    assert kept.records[-1].label == "open" and kept.records[-1].errno == 0


def test_an_open_that_fails_records_errno_and_raises_it(monkeypatch, clock):
    monkeypatch.setattr(live, "libc", lambda: Libc(result=-1, err=errno.ENOENT))
    kept = Kept()
    shim = live.LiveShim(kept)
    with pytest.raises(OSError) as e:
        shim.open("/dev/nvidia7", label="open:card0")
    assert (e.value.errno, e.value.strerror, e.value.filename) == (2, "No such file or directory", "/dev/nvidia7")
    (rec,) = kept.records
    assert (rec.label, rec.path, rec.result, rec.errno, rec.duration_ns) == ("open:card0", "/dev/nvidia7", -1, 2, STEP)


def test_a_close_records_its_fd_and_errno_only_when_it_failed(monkeypatch):
    libc = Libc(result=0, err=errno.EIO)
    monkeypatch.setattr(live, "libc", lambda: libc)
    kept = Kept()
    shim = live.LiveShim(kept)
    shim.close(21, label="close:ce:s0:doorbell")
    libc.result, libc.err = -1, errno.EBADF
    shim.close(99)
    assert libc.calls == [("close", 21), ("close", 99)]
    assert [(r.op, r.label, r.fd, r.result, r.errno) for r in kept.records] == \
        [("close", "close:ce:s0:doorbell", 21, 0, 0), ("close", "close", 99, -1, 9)]


def test_an_mmap_maps_shared_read_write_at_offset_zero_and_records_the_address(monkeypatch, clock):
    buf, base = _memory(64)
    libc = Libc(result=base, err=errno.EIO)
    monkeypatch.setattr(live, "libc", lambda: libc)
    kept = Kept()
    shim = live.LiveShim(kept)
    m = shim.mmap(8, 64, label=STAGING)
    (call,) = libc.calls
    assert call[0] == "mmap" and call[1] == live.ffi.NULL and call[2:] == (64, 0x3, 0x1, 8, 0)
    assert (m.shim, m.fd, m.base, m.length, m.label) == (shim, 8, base, 64, STAGING)
    (rec,) = kept.records
    assert (rec.op, rec.label, rec.fd, rec.result, rec.errno, rec.duration_ns, rec.extra) == \
        ("mmap", STAGING, 8, base, 0, STEP, {"length": 64})
    live.ffi.memmove(buf + 3, b"\x42", 1)
    assert m.read(3, 1) == b"\x42"          # the mapping reads the memory mmap gave

    libc.result, libc.err = 0, 0
    libc.calls.clear()
    shim.munmap(m)
    assert libc.calls == [("munmap", base, 64)]
    assert (kept.records[-1].op, kept.records[-1].label, kept.records[-1].fd, kept.records[-1].result) == \
        ("munmap", STAGING, 8, 0)
    libc.result = -1
    shim.munmap(m)
    assert kept.records[-1].result == -1


def test_an_mmap_that_fails_records_map_failed_and_errno_and_raises_it(monkeypatch, clock):
    monkeypatch.setattr(live, "libc", lambda: Libc(result=2**64 - 1, err=errno.ENOMEM))
    kept = Kept()
    shim = live.LiveShim(kept)
    with pytest.raises(OSError) as e:
        shim.mmap(9, 1 << 26, label="staging:card0:readback:cpu")
    assert (e.value.errno, e.value.strerror, e.value.filename) == \
        (12, "Cannot allocate memory", "mmap staging:card0:readback:cpu")
    (rec,) = kept.records
    assert (rec.fd, rec.result, rec.errno, rec.duration_ns, rec.extra) == (9, 2**64 - 1, 12, STEP, {"length": 1 << 26})


# -- LiveShim.ioctl -------------------------------------------------------------------------------

class Struct:
    """An ABI struct with a little-endian u32 status at +4 (as NVOS21's status sits)."""

    name = "NVOS21_PARAMETERS"

    def __init__(self, fields=("status",)):
        self.fields = fields

    def has(self, field):
        return field in self.fields

    def get(self, data, field):
        assert field in self.fields
        return int.from_bytes(data[4:8], "little")


class Ioctl:
    """ioctl as RM answers: writes `reply` over the top struct, `payload` over the params block."""

    def __init__(self, reply, rc=0, err=0, payload=None, into=None):
        self.reply, self.rc, self.err, self.payload, self.into, self.calls = reply, rc, err, payload, into, []

    def ioctl(self, fd, request, pointer):
        self.calls.append((fd, int(live.ffi.cast("unsigned long", request)), int(live.ffi.cast("uintptr_t", pointer))))
        live.ffi.memmove(live.ffi.cast("unsigned char *", pointer), self.reply, len(self.reply))
        if self.payload is not None:
            self.into.write(self.payload)
        live.ffi.errno = self.err
        return self.rc


REQUEST = 0xC020462B        # _IOWR('F', 0x2b, 32 bytes): NV_ESC_RM_CONTROL's request number


def test_an_ioctl_records_the_struct_before_and_after_and_rm_s_status(monkeypatch, clock):
    reply = bytes.fromhex("01000000" "1f000000")           # status 0x1f at +4
    libc = Ioctl(reply, err=errno.EIO)
    monkeypatch.setattr(live, "libc", lambda: libc)
    kept = Kept()
    shim = live.LiveShim(kept)
    top = shim.buffer(bytes.fromhex("aabbccdd" "00000000"))
    rec = shim.ioctl(5, REQUEST, top, label="alloc:p2p", escape=0x2B, struct=Struct())
    assert libc.calls == [(5, REQUEST, top.address)]
    assert rec is kept.records[0] and rec.seq == 1
    assert (rec.op, rec.label, rec.fd, rec.escape, rec.request_code, rec.struct) == \
        ("ioctl", "alloc:p2p", 5, 0x2B, REQUEST, "NVOS21_PARAMETERS")
    assert (rec.request, rec.reply, rec.result, rec.errno, rec.duration_ns) == \
        ("aabbccdd00000000", "010000001f000000", 0, 0, STEP)
    assert (rec.status, rec.status_name, rec.status_text) == (0x1F, "NV_ERR_INVALID_ARGUMENT", "Invalid argument to call")
    assert rec.payload is None
    assert top.read() == reply


def test_an_ioctl_reads_no_status_when_it_failed_or_is_told_there_is_none(monkeypatch):
    reply = bytes.fromhex("00000000" "1f000000")
    libc = Ioctl(reply, rc=-1, err=errno.EINVAL)
    monkeypatch.setattr(live, "libc", lambda: libc)
    shim = live.LiveShim()
    failed = shim.ioctl(5, REQUEST, shim.buffer(8), label="alloc:p2p", escape=0x2B, struct=Struct())
    assert (failed.result, failed.errno, failed.status, failed.status_name, failed.status_text) == (-1, 22, None, None, None)
    libc.rc, libc.err = 0, 0
    untold = shim.ioctl(5, REQUEST, shim.buffer(8), label="alloc:p2p", escape=0x2B, struct=Struct(), status_field=None)
    assert (untold.result, untold.status, untold.status_name) == (0, None, None)
    elsewhere = shim.ioctl(5, REQUEST, shim.buffer(8), label="alloc:p2p", escape=0x2B, struct=Struct(("params.status",)))
    assert elsewhere.status is None
    there = shim.ioctl(5, REQUEST, shim.buffer(8), label="alloc:p2p", escape=0x2B, struct=Struct(("params.status",)),
                       status_field="params.status")
    assert (there.status, there.status_name) == (0x1F, "NV_ERR_INVALID_ARGUMENT")


class Named:
    name = "NV2080_CTRL_GPU_GET_INFO_V2_PARAMS"


def test_an_ioctl_records_the_params_block_before_and_after(monkeypatch):
    shim = live.LiveShim()
    payload = shim.buffer(bytes.fromhex("0102030405060708"))
    libc = Ioctl(bytes(8), payload=bytes.fromhex("a1a2a3"), into=payload)
    monkeypatch.setattr(live, "libc", lambda: libc)
    rec = shim.ioctl(5, REQUEST, shim.buffer(8), label="alloc:p2p", escape=0x2A, struct=Struct(),
                     payload=payload, payload_struct=Named())
    assert (rec.payload.struct, rec.payload.request, rec.payload.reply) == \
        ("NV2080_CTRL_GPU_GET_INFO_V2_PARAMS", "0102030405060708", "a1a2a30405060708")
    assert (rec.status, rec.status_name) == (0, "NV_OK")


class Readings:
    """A clock that gives the readings it is handed, in order."""

    def __init__(self, *readings):
        self.readings = list(readings)

    def perf_counter_ns(self):
        return self.readings.pop(0)


def test_a_wait_s_deadline_is_its_timeout_in_whole_nanoseconds(monkeypatch):
    """0.9999999995 s is 999999999.5 ns: the deadline is 999999999 ns after the start. A reading
    at the deadline is not past it; the one a nanosecond later is."""
    _, buf, m = _mapping(16)
    monkeypatch.setattr(live, "time", Readings(0, 999_999_999, 1_000_000_000, 1_000_000_007))
    assert m.wait32(0, 1, 0.9999999995) == (False, 0, 1_000_000_007)
    monkeypatch.setattr(live, "time", Readings(0, 999_999_998, 999_999_999, 1_000_000_000, 1_000_000_011))
    assert m.wait32(0, 1, 0.9999999995) == (False, 0, 1_000_000_011)
