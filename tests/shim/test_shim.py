"""What the shim records and how structs, flags, digests and patterns read to a person."""

import gzip

import numpy as np
import pytest

from rmpeer.traffic import patterns
from rmpeer.abi import DriverMatrix
from rmpeer.shim.records import (FORMAT, CallRecord, Payload, TranscriptWriter, read_transcript, sampled_digest,
                                 word_runs, words_from_runs)

pytestmark = pytest.mark.offline
ABI = DriverMatrix().abi_for_driver("580.159.04")


def test_a_struct_packs_reads_and_renders_by_its_fields():
    st = ABI.struct("NVOS46_PARAMETERS")
    buf = st.pack(hClient=0xC1D00001, dmaOffset=0x4000000000, flags=0x208400, status=0x5E17E1A1)
    assert len(buf) == 64 and buf[48:56] == (0x4000000000).to_bytes(8, "little")
    assert st.get(buf, "dmaOffset") == 0x4000000000
    text = st.render(buf)
    assert "+48   dmaOffset" in text and "P2P_ENABLE=NOSLI" in text and "PAGE_SIZE=HUGE" in text


def test_differing_fields_name_the_field_and_skip_pointers():
    st = ABI.struct("NVOS54_PARAMETERS")
    a = st.pack(hClient=1, cmd=0x205, params=0x1000)
    b = st.pack(hClient=1, cmd=0x206, params=0x2000)
    assert [f.name for f in st.differing_fields(a, b)] == ["cmd"]
    assert "<-- recorded 0x206" in st.render(a, compare=b)


def test_repeated_structs_index_their_slots():
    arr = ABI.struct("nv_ioctl_card_info_t").repeated(3)
    assert arr.size == 3 * 72 and arr.field("2.minor_number").offset == 2 * 72 + arr.field("0.minor_number").offset


def test_transcripts_round_trip_gzip(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    w = TranscriptWriter(path, {"format": FORMAT, "label": "x"})
    w.note("segment", key="setup:one", state=None)
    w.write(CallRecord(1, "ioctl", label="alloc:p2p", escape=0x2B, request="00", reply="01",
                       payload=Payload("NV503B_ALLOC_PARAMETERS", "aa", "bb"), status=0x1F,
                       status_name="NV_ERR_INVALID_ARGUMENT"))
    w.close()
    assert gzip.open(path).read().count(b"\n") == 4, "header, note, record, end line"
    header, lines = read_transcript(path)
    assert header["label"] == "x" and lines[0]["key"] == "setup:one"
    assert lines[-1]["note"] == "end"
    rec = lines[1]
    assert rec.payload.struct == "NV503B_ALLOC_PARAMETERS" and rec.status_name == "NV_ERR_INVALID_ARGUMENT"


def test_a_transcript_of_another_format_is_refused(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"header": {"format": "other"}}\n')
    with pytest.raises(ValueError, match="not an rmpeer-transcript"):
        read_transcript(path)


def test_the_sampled_digest_sees_length_first_and_last_words():
    base = patterns.make(7, patterns.KIND_BUFFER, 1, 1 << 24)
    d = sampled_digest(base)
    for at in (0, base.size - 1):
        changed = base.copy()
        changed[at] ^= np.uint64(1)
        assert sampled_digest(changed) != d
    assert sampled_digest(base[:-1]) != d
    assert sampled_digest(base.copy()) == d


def test_patterns_say_what_a_wrong_word_is():
    cards = (0, 1)
    want = patterns.make(0x1234, patterns.KIND_BUFFER, 1, 4096)
    own = patterns.make(0x1234, patterns.KIND_BUFFER, 0, 4096)
    stale = patterns.make(0x9999, patterns.KIND_BUFFER, 1, 4096)
    explain = lambda got, at=0: patterns.explain(got.view("u1")[at:at + 8].tobytes(), at, pattern_seed=0x1234,
                                                  kind=patterns.KIND_BUFFER, owner=1, cards=cards)
    assert explain(want) == "matches"
    assert "wrong memory" in explain(own) and "session 0 (card 0)" in explain(own)
    assert "stale data" in explain(stale)
    shifted = np.roll(want, 1)
    assert "shifted: word 1 holds word 0" in explain(shifted, 8)
    assert "unrecognised" in explain(np.zeros(512, dtype=np.uint64))
    assert len({int(w) for w in want}) == want.size, "every word is distinct"


@pytest.mark.parametrize("blocks", [
    [(0x1234_1000_0000_0000, 1 << 17)],                                # one pattern: one run
    [(0x1234_1000_0000_0000, 1000), (0x1234_1100_0000_0000, 7), (0x1234_1000_0000_03EF, 1 << 16)],
    [(5, 1), (5, 1), (9, 3)],                                         # repeated and short runs
])
def test_word_runs_rebuild_every_byte(blocks):
    """A read-back kept as word runs rebuilds exactly, so a replay compares the same bytes."""
    words = np.concatenate([np.arange(v, v + n, dtype=np.uint64) for v, n in blocks])
    kept = word_runs(words)
    assert kept["complete"] and len(kept["runs"]) == len(blocks)
    assert np.array_equal(words_from_runs(kept["runs"], words.nbytes), words)


def test_word_runs_of_data_the_suite_never_wrote_keep_only_a_bounded_prefix():
    noise = np.random.default_rng(1).integers(0, 2**63, 4096, dtype=np.uint64)
    kept = word_runs(noise)
    assert not kept["complete"] and len(kept["runs"]) <= 64
    rebuilt = words_from_runs(kept["runs"], noise.nbytes)
    assert np.array_equal(rebuilt[:len(kept["runs"])], noise[:len(kept["runs"])])
    assert not np.array_equal(rebuilt, noise), "what was not kept cannot match by accident"


# -- issue 27: values fixed by a recording, not by the code that makes them -------------------

QUICK = "h200x2-20261130T005408Z.jsonl.gz"    # `certify --quick --record` on 2 x H200 (README there)


def test_the_sampled_digest_of_a_pattern_is_the_one_the_h200s_recorded():
    """Session 0's buffer pattern (64 MiB, pattern_seed 13019 of the recording's header) digests
    to what the live run recorded when it filled it on card 0 (seq 165, crc32s:f52a0900); session
    1's write pattern to seq 203's. A replay matches fills by this digest alone."""
    from rmpeer.paths import transcripts_dir

    header, lines = read_transcript(transcripts_dir() / QUICK)
    recorded = {r.seq: r.extra["digest"] for r in lines if not isinstance(r, dict) and r.op == "mem.fill"}
    assert header["run"]["pattern_seed"] == 13019 and recorded[165] == "crc32s:f52a0900"
    assert sampled_digest(patterns.make(13019, patterns.KIND_BUFFER, 0, 64 << 20)) == "crc32s:f52a0900"
    assert sampled_digest(patterns.make(13019, patterns.KIND_WRITE, 1, 64 << 20)) == recorded[203] == "crc32s:5c92f770"


def test_a_replayed_cpu_write_is_compared_whole():
    """Row 15: the recording's pushbuffer write (seq 166, 92 bytes at 0x20000 of s0's control
    mapping) replays as recorded; the same write with byte 12 changed is a mismatch naming the call."""
    from rmpeer.errors import ReplayMismatch
    from rmpeer.paths import transcripts_dir
    from rmpeer.shim.replay import ReplayMapping, ReplayShim

    shim = ReplayShim(transcripts_dir() / QUICK)
    at = next(i for i, r in enumerate(shim.lines) if not isinstance(r, dict) and r.seq == 166)
    rec = shim.lines[at]
    assert (rec.op, rec.extra["offset"], len(rec.request) // 2) == ("mem.write", 0x20000, 92)
    data = bytearray.fromhex(rec.request)
    mapping = ReplayMapping(shim, rec.fd, 0, 1 << 20, rec.label)
    shim.pos = at
    mapping.write(0x20000, bytes(data))
    data[12] ^= 0xFF
    shim.pos = at
    with pytest.raises(ReplayMismatch, match=r"call 166 \(ce:s0:control:cpu\): wrote "):
        mapping.write(0x20000, bytes(data))


def test_a_live_observation_keeps_its_label(tmp_path):
    """Row 16: what LiveShim.observe read is recorded under its label: a replay finds it by it."""
    from rmpeer.shim.live import LiveShim

    path = tmp_path / "o.jsonl"
    shim = LiveShim(TranscriptWriter(path, {"format": FORMAT, "label": "o"}))
    value = {"readable": True, "xids": []}
    assert shim.observe("host:xids", lambda: value) == value
    shim.finish()
    _, lines = read_transcript(path)
    observed = [r for r in lines if not isinstance(r, dict) and r.op == "observe"]
    assert [(r.label, r.extra["value"]) for r in observed] == [("host:xids", value)]


def _served(op: str):
    """A replay of the quick recording standing at its first `op` call, and that call."""
    from rmpeer.paths import transcripts_dir
    from rmpeer.shim.replay import ReplayShim

    shim = ReplayShim(transcripts_dir() / QUICK)
    at = next(i for i, r in enumerate(shim.lines) if not isinstance(r, dict) and r.op == op)
    shim.pos = at
    return shim, shim.lines[at]


def _call(op, shim, rec, change: bool):
    """The call the live run made, as recorded, or with one value changed."""
    from rmpeer.shim.replay import ReplayMapping

    mapping = ReplayMapping(shim, rec.fd, 0, 1 << 27, rec.label)
    if op == "open":
        return shim.open("/dev/nvidia7" if change else rec.path, label=rec.label)
    if op == "mmap":
        return shim.mmap(rec.fd, rec.extra["length"] + (4096 if change else 0), label=rec.label)
    if op == "mem.wait":
        return mapping.wait32(rec.extra["offset"], rec.extra["want"] + change, 1.0)
    if op == "mem.view":
        return mapping.view(rec.extra["offset"], rec.extra["length"] - (8 if change else 0))
    return mapping.write(rec.extra.get("offset", 0) + (4 if change else 0), bytes.fromhex(rec.request))


@pytest.mark.parametrize("op, message", [
    ("open", "the run made open(/dev/nvidia7) (open:nvidiactl:version) where the recording has open"),
    ("mmap", "the run made mmap of 0x4001000 bytes"),
    ("mem.wait", "): waited for 0x2, the recording for 0x1"),
    ("mem.view", "): read back 0x3fffff8 bytes, the recording 0x4000000"),
    ("mem.write", "): a write at offset 0x4, the recording at 0x0"),
], ids=["open", "mmap", "wait", "view", "write"])
def test_a_replay_refuses_a_call_that_differs_from_the_recording(op, message):
    """Each call kind of the quick recording (its first open, mmap, semaphore wait, read-back
    and CPU write): served as recorded, and refused, naming both values, when one differs."""
    from rmpeer.errors import ReplayMismatch

    shim, rec = _served(op)
    _call(op, shim, rec, change=False)
    shim.pos = shim.lines.index(rec)
    with pytest.raises(ReplayMismatch) as refused:
        _call(op, shim, rec, change=True)
    assert message in str(refused.value)
