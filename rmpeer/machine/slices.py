"""Work on a large block (64 MiB and more) cut into slices and handed to a few threads.

Every caller's work lets go of the GIL (numpy ufuncs, libc calls through cffi), so the
slices run on several cores at once: one thread moves or compares about 5-10 GB/s, and a
run moves and compares every byte of tens of such blocks.
"""

from __future__ import annotations

SLICE = 8 << 20      # bytes; items per slice = SLICE // item size
THREADS = 8
_POOL = None


def pool() -> "ThreadPoolExecutor":   # noqa: F821
    """The one pool of the process, started on first use (and its module imported then: with
    logging under it, about 7 ms of a start that a passive run never needs)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="rmpeer-slices")
    return _POOL


def each(work, total: int, size: int) -> list:
    """work(start, count) for every slice of `total` items, `size` at a time; the results
    in slice order. An exception in any slice is raised here."""
    if total <= size:
        return [work(0, total)]
    return list(pool().map(lambda at: work(at, min(size, total - at)), range(0, total, size)))
