"""How long 1132 small files (a full run's Allure results) take to create in a fresh folder, on
one thread against two and four (issue 46): whether writing a report's results on several
threads would gain anything on a host's file system. Creates in one folder take the folder's
lock, so threads may only add contention. On the H200 of 2026-12-06 (ext4): one thread 21 ms,
two or four 57-61 ms (docs/evidence/h200x1-20261206T0354Z-final/).

    python3 tools/probe_files.py [FOLDER]      (default /tmp; its probe-files-N folders are removed after)
"""

import argparse
import json
import os
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

FILES, TRIALS, THREADS = 1132, 5, (1, 2, 4)
FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def create(folder_fd: int, name: str, text: str) -> None:
    fd = os.open(name, FLAGS, 0o644, dir_fd=folder_fd)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def trial(folder: str, threads: int, entries: list) -> float:
    """ms to create every entry's file in a fresh `folder` on `threads` threads."""
    shutil.rmtree(folder, ignore_errors=True)
    os.mkdir(folder)
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        start = time.perf_counter()
        if threads == 1:
            for i, text in enumerate(entries):
                create(folder_fd, f"{i}-result.json", text)
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(lambda item: create(folder_fd, f"{item[0]}-result.json", item[1]), enumerate(entries)))
        return (time.perf_counter() - start) * 1000
    finally:
        os.close(folder_fd)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default="/tmp", help="where the probe's folders go (default /tmp)")
    root = ap.parse_args().folder
    entries = [json.dumps({"uuid": f"{i:032x}", "name": "x" * 200, "labels": [{"name": "a", "value": "b"}] * 20})
               for i in range(FILES)]
    times: dict = {}
    try:
        for _ in range(TRIALS):             # the thread counts interleaved: no count always first
            for threads in THREADS:
                times.setdefault(threads, []).append(trial(f"{root}/probe-files-{threads}", threads, entries))
    finally:
        for threads in THREADS:
            shutil.rmtree(f"{root}/probe-files-{threads}", ignore_errors=True)
    for threads, ms in times.items():
        print(f"probe-files: {root}: {threads} thread(s): median {statistics.median(ms):.1f} ms "
              f"(min {min(ms):.1f}, max {max(ms):.1f})")


if __name__ == "__main__":
    main()
