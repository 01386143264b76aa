"""The slices (rmpeer/machine/slices.py): every item of a block worked once, in slice order,
on the pool's THREADS threads. Written to kill the mutants mutmut left alive
(docs/mutation.md); the expected values are counted by hand in the comments."""

from __future__ import annotations

import threading

import pytest

from rmpeer.machine import slices

pytestmark = pytest.mark.offline


@pytest.mark.parametrize("total,size,want", [
    (10, 4, [(0, 4), (4, 4), (8, 2)]),        # 4 + 4 + the 2 left over
    (12, 4, [(0, 4), (4, 4), (8, 4)]),        # no partial slice
    (4, 4, [(0, 4)]),                          # one slice exactly
    (3, 4, [(0, 3)]),                          # less than one slice
    (0, 4, [(0, 0)]),                          # nothing: one empty call
])
def test_each_works_every_item_once_in_slice_order(total, size, want):
    assert slices.each(lambda at, n: (at, n), total, size) == want


def test_an_exception_in_any_slice_is_raised_to_the_caller():
    def work(at, n):
        if at == 8:
            raise ZeroDivisionError(f"slice at {at}")
        return at

    with pytest.raises(ZeroDivisionError, match="slice at 8"):
        slices.each(work, 10, 4)


def test_the_slices_run_on_THREADS_threads_at_once():
    """THREADS (8) slices at a time, each on a thread of the one pool: 4 x THREADS slices that
    each wait until THREADS of them have arrived (a barrier of THREADS) all finish, on exactly
    THREADS distinct threads. Fewer threads could never fill the barrier (it breaks after its
    safety timeout and the slice raises); more would spread the slices over more threads."""
    barrier = threading.Barrier(slices.THREADS, timeout=60)
    seen = set()

    def work(at, n):
        seen.add(threading.get_ident())
        barrier.wait()
        return at

    got = slices.each(work, 4 * slices.THREADS, 1)
    assert got == list(range(4 * slices.THREADS))
    assert len(seen) == slices.THREADS == 8
    assert threading.get_ident() not in seen, "the caller waits; the pool's threads work"
    assert slices.pool() is slices.pool(), "one pool for the process"


# count_up: word i of the block is first + i, modulo 2**64 (the patterns' index part, and the
# read-back a replay rebuilds from its runs). Expected words are Python's integers, never numpy's.
CHUNK = slices.CHUNK
SENTINEL = 0x5A5A_5A5A_5A5A_5A5A    # a word count_up never writes here: a word left unwritten shows


@pytest.mark.parametrize("n", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5])
@pytest.mark.parametrize("threads", [False, True])
def test_count_up_writes_every_word_first_plus_its_index(n, threads):
    import numpy as np

    first = 0xABCD_2500_0000_0007
    out = np.full(n, SENTINEL, dtype=np.uint64)
    slices.count_up(out, first, threads=threads)
    assert [int(w) for w in out] == [first + i for i in range(n)]


@pytest.mark.parametrize("threads", [False, True])
def test_count_up_wraps_past_2_64_across_slices_and_chunks(threads):
    """Two slices and a partial third (SLICE // 8 words each), a partial last chunk, and a
    first word 5 below 2**64: words 5 on are 0, 1, 2, ..."""
    import numpy as np

    n = 2 * (slices.SLICE // 8) + CHUNK + 3
    first = (1 << 64) - 5
    out = np.full(n, SENTINEL, dtype=np.uint64)
    slices.count_up(out, first, threads=threads)
    ends = [*range(0, 8), *range(CHUNK - 2, CHUNK + 2), *range(slices.SLICE // 8 - 2, slices.SLICE // 8 + 2),
            *range(n - CHUNK - 4, n)]
    assert [int(out[i]) for i in ends] == [(first + i) % (1 << 64) for i in ends]
    assert int(out[8 + 3]) == 6     # first + 11 - 2**64
    # every word, against a sum made by another route than count_up's chunks
    assert np.array_equal(out, np.arange(n, dtype=np.uint64) + np.uint64(first))


def test_the_counting_words_are_read_only():
    """The small counting array is the first chunk of every later count_up, made once: a caller
    that could write into it would spoil every pattern and read-back made after."""
    import numpy as np

    slices.count_up(np.empty(4, dtype=np.uint64), 0)
    index = slices._counting(64)
    assert [int(w) for w in index[:4]] == [0, 1, 2, 3] and int(index[63]) == 63
    with pytest.raises(ValueError):
        index[0] = 7


def test_count_up_refuses_a_block_that_is_not_contiguous():
    """Its whole chunks are written as the rows of one view of the block: a strided block
    would be reshaped into a copy, and the words written into the copy lost."""
    import numpy as np

    block = np.zeros(4 * CHUNK, dtype=np.uint64)
    with pytest.raises(ValueError, match="contiguous"):
        slices.count_up(block[::2], 7)
    assert not block.any(), "nothing written"
