"""What the host side of a check costs on this machine, part by part (issue 46): comparing a
64 MiB block, making a pattern, and writing a report's many small files, each at a few
thread counts and slice sizes. A benchmark, run by hand or by tools/evidence/machinery.sh on a
lent host; no test times anything.

    python tools/host_rates.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rmpeer.machine import slices  # noqa: E402
from rmpeer.safewrite import write_file  # noqa: E402
from rmpeer.traffic import bytecheck, patterns  # noqa: E402

BLOCK = 64 << 20


def _ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def _with_pool(threads: int, slice_bytes: int):
    """slices' pool and slice size as given (the caller restores its own); the pool this
    replaces, if it made it, shut down."""
    if slices._POOL is not None and getattr(slices._POOL, "made_here", False):
        slices._POOL.shutdown()
    slices._POOL = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
    if slices._POOL is not None:
        slices._POOL.made_here = True
    slices.THREADS, slices.SLICE = threads, slice_bytes
    bytecheck.COMPARE_SLICE = slice_bytes if threads > 1 else BLOCK


def compare_rates(repeat: int) -> list:
    have = patterns.make(7, patterns.KIND_BUFFER, 3, BLOCK)
    want = patterns.make(7, patterns.KIND_BUFFER, 3, BLOCK)
    saved = slices._POOL, slices.THREADS, slices.SLICE, bytecheck.COMPARE_SLICE
    rows = []
    try:
        for threads in (1, 2, 4, 8, 16):
            for slice_mib in ((64,) if threads == 1 else (2, 4, 8)):
                _with_pool(threads, slice_mib << 20)
                assert bytecheck.equal(have, want)
                ms = _ms(lambda: bytecheck.equal(have, want), repeat)
                make = _ms(lambda: patterns.make(9, patterns.KIND_WRITE, 5, BLOCK), max(3, repeat // 3))
                rows.append(f"compare 64 MiB  threads {threads:2d}  slice {slice_mib:2d} MiB  {ms:6.2f} ms "
                            f"({BLOCK / ms / 1e6:5.1f} GB/s)   make a pattern {make:6.2f} ms")
    finally:
        _with_pool(1, BLOCK)
        slices._POOL, slices.THREADS, slices.SLICE, bytecheck.COMPARE_SLICE = saved
    return rows


def _direct(folder_fd: int, name: str, data: bytes) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder_fd)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def file_rates(files: int, where: str | None) -> list:
    body = b'{"name": "a check", "status": "passed"}' * 20
    rows = []
    for way in ("write_file", "direct", "direct x8 threads"):
        with tempfile.TemporaryDirectory(dir=where) as d:
            t = time.perf_counter()
            if way == "write_file":
                for i in range(files):
                    write_file(Path(d) / f"{i}-result.json", body, durable=False)
            else:
                folder = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
                try:
                    if way == "direct":
                        for i in range(files):
                            _direct(folder, f"{i}-result.json", body)
                    else:
                        with ThreadPoolExecutor(8) as pool:
                            list(pool.map(lambda i: _direct(folder, f"{i}-result.json", body), range(files)))
                finally:
                    os.close(folder)
            rows.append(f"{files} report files in {d.rsplit('/', 1)[0]}: {way:18s} "
                        f"{(time.perf_counter() - t) * 1e3:7.1f} ms")
    return rows


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--files", type=int, default=1132, help="as many as a 1-card full run's report (1132)")
    ap.add_argument("--where", action="append", default=None, help="a folder to write the files in (repeatable)")
    args = ap.parse_args(argv)
    print(f"host rates: {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    for row in compare_rates(args.repeat):
        print(row)
    for where in args.where or [None]:
        for row in file_rates(args.files, where):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
