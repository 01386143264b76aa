"""matrices/channel.yaml: rmpeer's own layout of each session's copy-engine channel, shape-checked
at load so that a wrong value is named there, not met as a TypeError or a wrong write mid-run."""

from __future__ import annotations

from pathlib import Path

from rmpeer.errors import MatrixError, quoted
from rmpeer.tables.load import MATRICES, load_yaml, positive_finite, require

WORD, ADDRESS = 1 << 32, 1 << 64     # what a pushbuffer word and a GPU address or size hold
# key -> (least value, the bound it stays below): what rmpeer.ce.engine does with each
SIZES = {
    "control_block_size": (1, ADDRESS), "semaphore_size": (1, ADDRESS), "notifier_size": (1, ADDRESS),
    "usermode_map_size": (1, ADDRESS),
    "ring_offset": (0, ADDRESS), "userd_offset": (0, ADDRESS), "pushbuffer_offset": (0, ADDRESS),
    "ring_entries": (1, WORD),             # gpFifoEntries, and the ring's modulus
    "semaphore_slot_size": (1, WORD), "semaphore_timestamp_offset": (0, WORD),
    "copy_subchannel": (0, WORD), "pushbuffer_align": (1, WORD),   # a divisor of the cursor
    "max_copy_bytes": (1, WORD),           # one LINE_LENGTH_IN word per chunk; 0 would never end
}
LAUNCHES = ("launch_copy", "launch_release")   # LAUNCH_DMA field -> value name, composed per copy
# timeout_s: how long the host polls for a copy before it is a fault (NOT CERTIFIED). Below a
# second a healthy copy on a loaded host (the poller descheduled) reads as a fault; from the
# quick tier's 60 s default deadline up (rmpeer.machine.deadline.DEFAULT_S; tables/ may not
# import it, tests/tables/test_channel.py keeps the two in step) the deadline ends the run
# before a hung engine is judged, and past a float's range the live wait's int(timeout_s * 1e9)
# is an OverflowError at the first copy.
TIMEOUT_S = (1.0, 60.0)      # [least, below]
# The semaphore slots rmpeer.traffic releases into: a copy's start and end (0, 1), the first
# chained copy's start (2) and the gate (3); tests/tables/test_channel.py keeps it in step.
SEMAPHORE_SLOTS = 4
TIMESTAMP_BYTES = 8          # the GPU time a four-word release writes is 64 bits
KEYS = (*SIZES, "timeout_s", *LAUNCHES)


def channel_path() -> Path:
    return MATRICES / "channel.yaml"


def load_channel(path: Path | None = None, *, notifier_bytes: int | None = None) -> dict:
    """channel.yaml's `channel` mapping, every key the engine reads present and in range
    (callers must not change what comes back: the parsed file is shared). notifier_bytes:
    the largest NvNotification of drivers.yaml's releases, which the error notifier holds
    (tables/ sits below abi/: the spec passes it)."""
    path = Path(path or channel_path())
    channel = require(path, "file", load_yaml(path), "channel", dict)
    unknown = [key for key in channel if key not in KEYS]
    if unknown:     # a typo of a key the engine reads is no key it reads
        raise MatrixError(path, f"channel.{unknown[0]}", f"unknown key (known: {', '.join(KEYS)})")
    for key, (least, bound) in SIZES.items():
        value = require(path, "channel", channel, key, int)
        if not least <= value < bound:
            raise MatrixError(path, f"channel.{key}", f"must be an integer from {least} to "
                              f"2**{bound.bit_length() - 1} - 1, found {quoted(value)}")
    for key in ("ring_offset", "userd_offset", "pushbuffer_offset"):    # all in the control block
        if channel[key] >= channel["control_block_size"]:
            raise MatrixError(path, f"channel.{key}", f"{channel[key]:#x} is past the control block "
                              f"(control_block_size {channel['control_block_size']:#x})")
    if channel["semaphore_timestamp_offset"] + TIMESTAMP_BYTES > channel["semaphore_slot_size"]:
        raise MatrixError(path, "channel.semaphore_timestamp_offset", f"the {TIMESTAMP_BYTES}-byte timestamp at "
                          f"{channel['semaphore_timestamp_offset']} must be inside a semaphore slot "
                          f"(semaphore_slot_size {channel['semaphore_slot_size']})")
    if SEMAPHORE_SLOTS * channel["semaphore_slot_size"] > channel["semaphore_size"]:   # read past the mapping
        raise MatrixError(path, "channel.semaphore_slot_size", f"{SEMAPHORE_SLOTS} slots of "
                          f"{channel['semaphore_slot_size']:#x} bytes do not fit semaphore_size "
                          f"{channel['semaphore_size']:#x}")
    if notifier_bytes is not None and channel["notifier_size"] < notifier_bytes:
        # RM writes a fault's NvNotification there, and the engine clears and reads one: a
        # smaller mapping is written and read past its end
        raise MatrixError(path, "channel.notifier_size", f"{channel['notifier_size']:#x} bytes do not hold the "
                          f"error notifier's NvNotification ({notifier_bytes} bytes in drivers.yaml)")
    timeout = require(path, "channel", channel, "timeout_s", (int, float))
    least, below = TIMEOUT_S
    if not positive_finite(timeout) or not least <= timeout < below:
        raise MatrixError(path, "channel.timeout_s", f"must be a number of seconds from {least:g} to below "
                          f"{below:g}, found {quoted(timeout)}")
    for key in LAUNCHES:
        fields = require(path, "channel", channel, key, dict)
        if not all(isinstance(k, str) and isinstance(v, (str, int)) and not isinstance(v, bool)
                   for k, v in fields.items()):
            raise MatrixError(path, f"channel.{key}", f"must map LAUNCH_DMA field names to values, "
                              f"found {quoted(fields)}")
    return channel
