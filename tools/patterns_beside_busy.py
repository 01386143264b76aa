"""How long the patterns' thread (patterns.Ahead) takes to make N patterns of 64 MiB while
the run's thread is busy in Python, as it is while it drives RM and polls a semaphore
(rmpeer/shim/live.py wait32). A numpy call lets go of the GIL; taking it back beside a busy
thread waits up to Python's switch interval (5 ms). A pattern made in 256 chunks of its own
calls (4a4fee9) took about 1.3 s each here; made as the rows of one view (slices.count_up),
about 40 ms, as a single add did. Measured, never asserted.

    python tools/patterns_beside_busy.py [N]      (from a checkout; N defaults to 8)
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rmpeer.traffic import patterns  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", nargs="?", type=int, default=8, help="patterns to make (default 8)")
    count = parser.parse_args().count
    stop = threading.Event()

    def busy() -> None:      # Python bytecode without a pause, as a polling loop is
        while not stop.is_set():
            time.perf_counter_ns()

    beside = threading.Thread(target=busy, daemon=True)
    beside.start()
    started = time.perf_counter()
    for owner in range(count):
        patterns.make(0x1234, patterns.KIND_BUFFER, owner % 16, 64 << 20, threads=False)
    took = time.perf_counter() - started
    stop.set()
    beside.join()
    print(f"{count} patterns of 64 MiB beside a busy thread: {took * 1000:.0f} ms "
          f"({took * 1000 / count:.1f} ms each; switch interval {sys.getswitchinterval() * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
