"""A block read back compared with the words it should hold: every byte, fast, and any
difference told in a few bounded fields (first offset, how many bytes, a short excerpt)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rmpeer.machine import slices
from rmpeer.shim.libc import ffi, libc

# memcmp runs with the GIL released (cffi), so comparing in slices uses several cores:
# one thread compares about 7-10 GB/s, a 64 MiB block then costs 6-10 ms on its own. Slices
# of 4 MiB, twice as many as the pool's threads, keep them all busy to the end: a 64 MiB
# compare took 1.44 ms against 1.84 ms in 8 MiB slices on a lent 16-core host
# (tools/host_rates.py, docs/evidence/h100x1-20261205T1033Z-machinery).
COMPARE_SLICE = 4 << 20
EXCERPT_BYTES = 64


@dataclass(frozen=True)
class Mismatch:
    offset: int          # the first differing byte, rounded down to its 64-bit word
    actual: bytes        # EXCERPT_BYTES found there
    differing: int       # how many bytes differ in the whole block


def _as_bytes(block) -> np.ndarray:
    return np.frombuffer(memoryview(block).cast("B"), dtype=np.uint8)


def equal(actual, expected) -> bool:
    a, b = _as_bytes(actual), _as_bytes(expected)
    if a.size != b.size:
        return False
    pa, pb = ffi.cast("unsigned char *", ffi.from_buffer(a)), ffi.cast("unsigned char *", ffi.from_buffer(b))
    return all(r == 0 for r in slices.each(lambda at, n: libc().memcmp(pa + at, pb + at, n), a.size, COMPARE_SLICE))


def compare(actual, expected) -> Mismatch | None:
    """None when every byte of `actual` equals `expected`; else where and how much differs."""
    if equal(actual, expected):
        return None
    a, b = _as_bytes(actual), _as_bytes(expected)
    n = min(a.size, b.size)
    found = slices.each(lambda at, k: _differing(a[at:at + k], b[at:at + k], at), n, COMPARE_SLICE)
    first = min((f for f, _ in found if f is not None), default=n) & ~7
    return Mismatch(first, a[first:first + EXCERPT_BYTES].tobytes(), sum(c for _, c in found) + abs(a.size - b.size))


def _differing(a, b, at: int) -> tuple:
    """(the first differing byte's offset or None, how many differ) of one slice. Counted,
    never listed: a block that differs throughout would need 8 bytes of index per byte."""
    neq = a != b
    count = int(np.count_nonzero(neq))
    return (at + int(neq.argmax()) if count else None), count
