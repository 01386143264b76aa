"""Work on a large block (64 MiB and more) cut into slices and handed to a few threads.

Every caller's work lets go of the GIL (numpy ufuncs, libc calls through cffi), so the
slices run on several cores at once: one thread moves or compares about 5-10 GB/s, and a
run moves and compares every byte of tens of such blocks.
"""

from __future__ import annotations

SLICE = 8 << 20      # bytes; items per slice = SLICE // item size
THREADS = 8
CHUNK = 1 << 15      # 64-bit words (256 KiB): the first chunk of a counted block, kept in cache
_POOL = None
_COUNTING = None


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


def count_up(out, first: int, *, threads: bool = False) -> None:
    """out[i] = first + i (mod 2**64), for a C-contiguous block of uint64 words (a pattern, a
    read-back a replay rebuilds). The first chunk is a small counting array plus `first`;
    every later chunk is that chunk plus its offset, read from the cache: the block is only
    written, where adding a counting array of its own size read 64 MiB more per 64 MiB block
    (numpy's arange is slow past 2**63). `threads`: slice by slice on the pool's threads."""
    import numpy as np

    if not out.flags.c_contiguous:
        raise ValueError("count_up writes a contiguous block (its chunks are rows of one view)")
    head = out[:CHUNK]
    np.add(_counting(head.size), np.uint64(first % (1 << 64)), out=head)
    left = out.size - head.size
    if left <= 0:
        return
    if threads:
        each(lambda at, k: _from_head(out, head.size + at, head.size + at + k), left, SLICE // 8)
    else:
        _from_head(out, head.size, out.size)


def _from_head(out, lo: int, hi: int) -> None:
    """out[lo:hi] = out[:CHUNK] + offset, lo a multiple of CHUNK: the whole chunks as the rows
    of one view in one ufunc call (one release of the GIL, not one a chunk: a thread beside a
    busy one waits up to Python's switch interval to take it back), then the partial one."""
    import numpy as np

    head, whole = out[:CHUNK], (hi - lo) // CHUNK
    if whole:
        starts = np.arange(lo, lo + whole * CHUNK, CHUNK, dtype=np.uint64)
        np.add(head, starts[:, None], out=out[lo:lo + whole * CHUNK].reshape(whole, CHUNK))
    tail = lo + whole * CHUNK
    if tail < hi:
        np.add(head[:hi - tail], np.uint64(tail), out=out[tail:hi])


def _counting(n: int):
    """0, 1, ..., n-1 (n <= CHUNK) as uint64 words, made once (read-only)."""
    import numpy as np

    global _COUNTING
    if _COUNTING is None:
        _COUNTING = np.arange(CHUNK, dtype=np.uint64)
        _COUNTING.flags.writeable = False
    return _COUNTING[:n]
