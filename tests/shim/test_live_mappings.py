"""The live shim's CPU mappings, run in CI on real recorded memory (issue 47, item 6): a
stand-in for libc's mmap hands rmpeer.shim.live.LiveShim a plain buffer; the memory a real
host's run found there (a semaphore's value, the words of a read-back, a notifier) is put at
each recorded offset; and the live mapping's own code then writes, reads, waits and reads back
as on the H200 host. What it records must be what the host's run recorded, and what it wrote
must be in the buffer where the recording says it wrote it.

test_live_replies.py does the same for the ioctls. Together they run every path by which the
live shim reads what RM and the engines give it, which CI cannot open."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from rmpeer.shim import live
from rmpeer.shim.records import read_transcript, words_from_runs
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
RECORDINGS = sorted(p for p in transcripts_dir().rglob("*.jsonl.gz") if "derived" not in p.parts)
EACH = 3            # of each op on each mapping label: the first few (a full run holds ~9000 waits)


class MapStandIn:
    """libc as the live mapping calls it: mmap gives a zeroed buffer, memcpy copies."""

    def __init__(self):
        self.buffers = {}

    def mmap(self, addr, length, prot, flags, fd, offset):
        buf = live.ffi.new("unsigned char[]", length)
        base = int(live.ffi.cast("uintptr_t", buf))
        self.buffers[base] = buf
        return live.ffi.cast("void *", buf)

    def munmap(self, ptr, length):
        return 0 if self.buffers.pop(int(live.ffi.cast("uintptr_t", ptr)), None) is not None else -1

    def memcpy(self, dst, src, n):
        live.ffi.memmove(dst, src, n)
        return dst


class Kept:
    """A recording's writer that keeps the records (the live mapping keeps a read-back's word
    runs only while recording)."""

    def __init__(self):
        self.records = []

    def write(self, record):
        self.records.append(record)

    def note(self, kind, **data):
        pass


def mapped_ops(path) -> list:
    """[(mmap record, [its first EACH mem.* records of each op])] of a recording."""
    _, lines = read_transcript(path)
    open_maps, out = {}, []
    for rec in (x for x in lines if not isinstance(x, dict)):
        if rec.op == "mmap" and not rec.errno:
            open_maps[rec.label] = (rec, [], Counter())
            out.append(open_maps[rec.label][:2])
        elif rec.op == "munmap":
            open_maps.pop(rec.label, None)
        elif rec.op.startswith("mem.") and rec.label in open_maps:
            _, ops, seen = open_maps[rec.label]
            seen[rec.op] += 1
            if seen[rec.op] <= EACH:
                ops.append(rec)
    # one mapping of each label kind (sessions and cards repeat the same code)
    kinds, picked = set(), []
    for mmap, ops in out:
        kind = (mmap.label.split(":")[0], mmap.label.split(":")[-1], tuple(sorted({o.op for o in ops})))
        if ops and kind not in kinds:
            kinds.add(kind)
            picked.append((mmap, ops))
    return picked


def _bytes_at(buf, offset, n) -> bytes:
    return bytes(live.ffi.buffer(buf + offset, n))


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_the_live_mappings_read_and_write_every_recorded_place_as_the_host_s_run_did(path, monkeypatch):
    stand_in = MapStandIn()
    monkeypatch.setattr(live, "libc", lambda: stand_in)
    done = Counter()
    for mmap, ops in mapped_ops(path):
        kept = Kept()
        shim = live.LiveShim(kept)
        mapping = shim.mmap(mmap.fd, mmap.extra["length"], label=mmap.label)
        buf = stand_in.buffers[mapping.base]
        for rec in ops:
            at = rec.extra["offset"]
            if rec.op == "mem.write":
                data = bytes.fromhex(rec.request)
                mapping.write(at, data)
                assert _bytes_at(buf, at, len(data)) == data, (rec.seq, rec.label)
                assert kept.records[-1].request == rec.request
            elif rec.op == "mem.read":
                reply = bytes.fromhex(rec.reply)
                live.ffi.memmove(buf + at, reply, len(reply))            # what the host's memory held
                assert mapping.read(at, rec.extra["length"]) == reply and kept.records[-1].reply == rec.reply
            elif rec.op == "mem.wait":
                live.ffi.memmove(buf + at, int(rec.extra["seen"]).to_bytes(4, "little"), 4)
                want = rec.extra["want"]
                arrived, seen, _ = mapping.wait32(at, want, 0.001)
                assert (arrived, seen) == (bool(rec.result), rec.extra["seen"]), (rec.seq, rec.label)
                assert kept.records[-1].extra["seen"] == rec.extra["seen"] and kept.records[-1].result == rec.result
            elif rec.op == "mem.view":
                n = rec.extra["length"]
                held = words_from_runs(rec.extra["runs"], n).view(np.uint8)
                live.ffi.memmove(buf + at, held.tobytes(), n)
                block = mapping.view(at, n)
                assert np.array_equal(block, held), (rec.seq, rec.label)
                if rec.extra.get("complete"):
                    assert kept.records[-1].extra["runs"] == rec.extra["runs"], (rec.seq, rec.label)
            elif rec.op == "mem.fill":
                # the pattern's bytes are not recorded (a digest is): any bytes of its length
                data = np.random.default_rng(rec.seq).integers(0, 256, rec.extra["length"], dtype=np.uint8)
                mapping.fill(at, data)
                assert _bytes_at(buf, at, data.size) == data.tobytes(), (rec.seq, rec.label)
                assert kept.records[-1].extra["length"] == rec.extra["length"]
            assert (kept.records[-1].op, kept.records[-1].label, kept.records[-1].extra["offset"]) == \
                (rec.op, rec.label, at)
            done[rec.op] += 1
        shim.munmap(mapping)
        assert mapping.base not in stand_in.buffers
    assert done["mem.write"] and done["mem.wait"] + done["mem.view"] or "passive" in path.parts, done
