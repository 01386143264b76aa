"""Data patterns whose every 64-bit word says whose it is and where it belongs.

word = pattern seed (16 bits) | kind (4) | owner session (4) | spare (4) | word index (36)

So a read that lands on the wrong card, a stale page from an earlier run, or a
shifted offset each yields words that decode to something else, and the
decoding says what went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rmpeer.machine import slices

KIND_BUFFER = 1      # what session t's buffer holds: read through window(t)
KIND_WRITE = 2       # what session s writes into others' buffers through their windows
KIND_NAMES = {KIND_BUFFER: "buffer", KIND_WRITE: "write"}
_INDEX_BITS = 36


def tag(pattern_seed: int, kind: int, owner: int) -> int:
    return (pattern_seed & 0xFFFF) << 48 | (kind & 0xF) << 44 | (owner & 0xF) << 40


def make(pattern_seed: int, kind: int, owner: int, length: int, *, first_word: int = 0) -> np.ndarray:
    """`length` bytes (a multiple of 8) of the pattern, as uint64 words."""
    # the tag sits above every index bit, so tag | index == tag + index: one pass
    n = length // 8
    # counting words plus the tag (arange itself is slow past 2**63), slice by slice on
    # several threads
    index, mark = counting(first_word + n)[first_word:], np.uint64(tag(pattern_seed, kind, owner))
    words = np.empty(n, dtype=np.uint64)
    slices.each(lambda at, k: np.add(index[at:at + k], mark, out=words[at:at + k]), n, slices.SLICE // 8)
    return words


_COUNTING = np.zeros(0, dtype=np.uint64)


def counting(n: int) -> np.ndarray:
    """0, 1, ..., n-1 as uint64 words, made once for the largest n asked (read-only): the
    index part of every pattern."""
    global _COUNTING
    if _COUNTING.size < n:
        _COUNTING = np.arange(n, dtype=np.uint64)
        _COUNTING.flags.writeable = False
    return _COUNTING[:n]


@lru_cache(maxsize=40)
def cached(pattern_seed: int, kind: int, owner: int, length: int) -> np.ndarray:
    """make(), kept: every layout of a run uses the same few patterns (read-only)."""
    words = make(pattern_seed, kind, owner, length)
    words.flags.writeable = False
    return words


@dataclass(frozen=True)
class Word:
    pattern_seed: int
    kind: int
    owner: int
    index: int

    @classmethod
    def decode(cls, word: int) -> "Word":
        return cls(word >> 48 & 0xFFFF, word >> 44 & 0xF, word >> 40 & 0xF, word & ((1 << _INDEX_BITS) - 1))

    def describe(self, cards=None) -> str:
        kind = KIND_NAMES.get(self.kind, f"kind {self.kind}")
        where = f" (card {cards[self.owner]})" if cards is not None and self.owner < len(cards) else ""
        return f"{kind} pattern of session {self.owner}{where}, pattern seed {self.pattern_seed:#06x}, word {self.index}"


# What a mismatching word says went wrong, one cause per kind of fault: every block a fault
# spoils says the same cause, so the judge says the fault once (Finding.cause).
WRONG_MEMORY = "wrong memory: another session's pattern where the session's own belongs"
STALE = "stale data: a pattern of another run (another pattern seed)"
UNRECOGNISED = "data this suite never wrote"
SHIFTED = "shifted: the session's own pattern at another offset"
NO_DATA = "no data read back"


def explain(actual: bytes, offset: int, *, pattern_seed: int, kind: int, owner: int, cards) -> str:
    """What a mismatching word at byte `offset` actually is, in words a person can act on."""
    return diagnose(actual, offset, pattern_seed=pattern_seed, kind=kind, owner=owner, cards=cards)[1]


def diagnose(actual: bytes, offset: int, *, pattern_seed: int, kind: int, owner: int, cards) -> tuple[str, str]:
    """(the cause, shared by every block the same fault spoils; what this word is, in words)."""
    if len(actual) < 8:
        return NO_DATA, "no data"
    got = Word.decode(int.from_bytes(actual[:8], "little"))
    want = Word(pattern_seed & 0xFFFF, kind, owner, offset // 8)
    if got == want:
        return "", "matches"
    if got.pattern_seed != want.pattern_seed and got.kind in KIND_NAMES:
        return STALE, f"stale data from another run: found the {got.describe(cards)}"
    if got.kind not in KIND_NAMES:
        return UNRECOGNISED, (f"unrecognised data {int.from_bytes(actual[:8], 'little'):#018x} "
                              "(never written by this suite)")
    if (got.kind, got.owner) != (want.kind, want.owner):
        return WRONG_MEMORY, f"wrong memory: found the {got.describe(cards)} where the {want.describe(cards)} belongs"
    return SHIFTED, f"shifted: word {want.index} holds word {got.index} ({(got.index - want.index) * 8:+#x} bytes)"
