"""Data patterns whose every 64-bit word says whose it is and where it belongs.

word = pattern seed (16 bits) | kind (4) | owner session (4) | spare (4) | word index (36)

So a read that lands on the wrong card, a stale page from an earlier run, or a
shifted offset each yields words that decode to something else, and the
decoding says what went wrong.
"""

from __future__ import annotations

import threading
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


def make(pattern_seed: int, kind: int, owner: int, length: int, *, first_word: int = 0,
         threads: bool = True) -> np.ndarray:
    """`length` bytes (a multiple of 8) of the pattern, as uint64 words. `threads`: slice by
    slice on the pool's threads; else in one pass on the caller's (Ahead's thread, which
    leaves the pool to the run)."""
    # the tag sits above every index bit, so tag | index == tag + index: one pass
    words = np.empty(length // 8, dtype=np.uint64)
    slices.count_up(words, tag(pattern_seed, kind, owner) + first_word, threads=threads)
    return words


def cached(pattern_seed: int, kind: int, owner: int, length: int) -> np.ndarray:
    """make(), kept: every layout of a run uses the same few patterns (read-only). One the run
    made ahead (ahead()) is waited for if its thread is making it, made here if not yet begun."""
    planned = _AHEAD.take((pattern_seed, kind, owner, length)) if _AHEAD is not None else None
    return planned if planned is not None else _kept(pattern_seed, kind, owner, length)


@lru_cache(maxsize=40)
def _kept(pattern_seed: int, kind: int, owner: int, length: int) -> np.ndarray:
    return _read_only(make(pattern_seed, kind, owner, length))


def _read_only(words: np.ndarray) -> np.ndarray:
    words.flags.writeable = False
    return words


class Ahead:
    """The patterns a run will compare against, made in its order on a thread of its own from
    the run's start. A fresh 64 MiB block costs about 4 ms of the kernel's page faults beside
    1.4 ms of writing the words (docs/evidence/h100x1-20261205T2214Z-beside): the full tier's
    32 cost about 0.17 s, which the thread spends while the run imports, opens RM and runs
    its first layouts. numpy's ufuncs and the kernel's faults let go of the GIL. A pattern
    the run asks for first is made by the run itself, once: each is claimed by one maker."""

    def __init__(self, keys):
        self._lock = threading.Lock()
        self._claimed: dict = {}      # key -> threading.Event, set when its words are there
        self._words: dict = {}
        self._keys = list(dict.fromkeys(keys))
        self._thread = threading.Thread(target=self._make_all, name="rmpeer-patterns", daemon=True)
        self._thread.start()

    def _claim(self, key):
        """(its event, whether the caller is to make it): the first to ask makes it."""
        with self._lock:
            if key in self._claimed:
                return self._claimed[key], False
            done = self._claimed[key] = threading.Event()
            return done, True

    def _make_all(self) -> None:
        for key in self._keys:
            done, mine = self._claim(key)
            if mine:
                try:
                    self._make(key, done, threads=False)
                except Exception:   # noqa: BLE001 - no memory, most likely: the run makes the rest as it asks
                    return

    def _make(self, key, done, *, threads: bool) -> None:
        try:
            self._words[key] = _read_only(make(*key, threads=threads))
        finally:
            done.set()        # a failure leaves no words: the asker makes them itself

    def take(self, key) -> np.ndarray | None:
        """The words of a planned pattern (waited for, or made here); None for one not planned."""
        if key not in self._keys:
            return None
        done, mine = self._claim(key)
        if mine:
            self._make(key, done, threads=True)
        else:
            done.wait()
        return self._words.get(key)


_AHEAD: Ahead | None = None


def ahead(keys) -> None:
    """From now on, the patterns at `keys` ((pattern seed, kind, owner, length), in the order
    the run will ask for them) are made on a thread of their own (Ahead); an earlier run's
    plan in this process is dropped."""
    global _AHEAD
    _AHEAD = Ahead(keys)


def run_keys(pattern_seed: int, cases) -> list:
    """(pattern seed, kind, owner, length) of each pattern a run's traffic compares against, in
    the order its layouts come: each session's own buffer pattern and write pattern."""
    return [(pattern_seed, kind, owner, case.extent)
            for case in cases for owner in range(len(case.layout.cards)) for kind in (KIND_BUFFER, KIND_WRITE)]


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
