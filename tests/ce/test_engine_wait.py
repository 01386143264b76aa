"""A copy's wait ends when RM writes the channel's error notifier, not only at the timeout
(a faulted copy costs milliseconds, not the whole timeout), and a replay serves that wait as
recorded. Real host memory and the live shim's own polling: only the GPU is absent."""

import json
import threading
import time

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.shim.libc import address, ffi
from rmpeer.shim.live import LiveMapping, LiveShim
from rmpeer.shim.records import TranscriptWriter, FORMAT
from rmpeer.shim.replay import ReplayMismatch, ReplayShim
from rmpeer.traffic.peer import channel_layout

pytestmark = pytest.mark.offline
ABI = DriverMatrix().abi_for_driver("580.159.04")
STATUS = ABI.struct("NvNotification").field("status")   # nvgputypes.h: u16 at +14, written last
SLOT = channel_layout()["semaphore_slot_size"]   # where a copy's payload word sits
TIMEOUT_S = 5.0      # far longer than the 20 ms after which the test's "RM" writes


def _pages(shim, n=2):
    bufs = [ffi.new("unsigned char[]", 4096) for _ in range(n)]
    maps = [LiveMapping(shim, -1, address(b), 4096, label) for b, label in zip(bufs, ("ce:s0:semaphores:cpu", "ce:s0:error-notifier:cpu"))]
    return bufs, maps


def _later(action, delay_s=0.02):
    t = threading.Thread(target=lambda: (time.sleep(delay_s), action()))
    t.start()
    return t


def _live(tmp_path):
    path = tmp_path / "t.jsonl"
    return LiveShim(TranscriptWriter(path, {"format": FORMAT, "label": "wait"})), path


def test_the_error_notifier_ends_the_wait_before_the_timeout(tmp_path):
    shim, path = _live(tmp_path)
    bufs, (sem, notifier) = _pages(shim)
    status = ffi.cast("uint16_t *", ffi.cast("unsigned char *", bufs[1]) + STATUS.offset)
    writer = _later(lambda: status.__setitem__(0, 0xFFFF))
    arrived, seen, waited = sem.wait32(SLOT, 1, TIMEOUT_S, unless=(notifier, STATUS.offset, STATUS.width))
    writer.join()
    shim.finish()
    assert not arrived and seen == 0
    assert waited < TIMEOUT_S * 1e9, "the wait ran to its timeout although the notifier said error"
    rec = [json.loads(line) for line in path.read_text().splitlines() if '"mem.wait"' in line][0]
    assert rec["extra"]["unless"] == {"label": "ce:s0:error-notifier:cpu", "offset": STATUS.offset, "seen": 0xFFFF}


def test_a_copy_that_completes_is_seen_though_a_notifier_is_watched(tmp_path):
    shim, _ = _live(tmp_path)
    bufs, (sem, notifier) = _pages(shim)
    word = ffi.cast("uint32_t *", ffi.cast("unsigned char *", bufs[0]) + SLOT)
    writer = _later(lambda: word.__setitem__(0, 7))
    arrived, seen, _ = sem.wait32(SLOT, 7, TIMEOUT_S, unless=(notifier, STATUS.offset, STATUS.width))
    writer.join()
    shim.finish()
    assert arrived and seen == 7


def test_a_replay_serves_the_recorded_wait_and_checks_what_it_watched(tmp_path):
    shim, path = _live(tmp_path)
    bufs, (sem, notifier) = _pages(shim)
    ffi.cast("uint16_t *", ffi.cast("unsigned char *", bufs[1]) + STATUS.offset)[0] = 0xFFFF
    live = sem.wait32(SLOT, 1, TIMEOUT_S, unless=(notifier, STATUS.offset, STATUS.width))
    sem.wait32(SLOT, 1, TIMEOUT_S, unless=(notifier, STATUS.offset, STATUS.width))
    shim.finish()

    replay = ReplayShim(path)
    from rmpeer.shim.replay import ReplayMapping

    rsem = ReplayMapping(replay, -1, 0, 4096, "ce:s0:semaphores:cpu")
    rnote = ReplayMapping(replay, -1, 0, 4096, "ce:s0:error-notifier:cpu")
    assert rsem.wait32(SLOT, 1, TIMEOUT_S, unless=(rnote, STATUS.offset, STATUS.width)) == live
    with pytest.raises(ReplayMismatch, match="the wait watched ce:s0:error-notifier:cpu at 0x8, the recording ce:s0:error-notifier:cpu at 0xe"):
        rsem.wait32(SLOT, 1, TIMEOUT_S, unless=(rnote, 8, 4))


def test_mutant_a_wait_that_ignores_the_notifier_runs_to_its_timeout(tmp_path):
    """The first test's guard, against live.py with the notifier check taken out."""
    from source_mutation import mutated

    live = mutated("rmpeer.shim.live", "                if raised:", "                if False:")
    shim = live.LiveShim(TranscriptWriter(tmp_path / "m.jsonl", {"format": FORMAT, "label": "m"}))
    bufs = [ffi.new("unsigned char[]", 4096) for _ in range(2)]
    sem, notifier = (live.LiveMapping(shim, -1, address(b), 4096, n) for b, n in zip(bufs, ("ce:s0:semaphores:cpu", "ce:s0:error-notifier:cpu")))
    ffi.cast("uint16_t *", ffi.cast("unsigned char *", bufs[1]) + STATUS.offset)[0] = 0xFFFF
    short = 0.3
    arrived, _, waited = sem.wait32(SLOT, 1, short, unless=(notifier, STATUS.offset, STATUS.width))
    shim.finish()
    assert not arrived and waited >= short * 1e9, "the mutant should have waited out its timeout"
