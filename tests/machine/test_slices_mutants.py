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
