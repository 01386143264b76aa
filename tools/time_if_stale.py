"""Times the fast path of `rmpeer certify --if-stale` (budget: 0.5 s): a new interpreter
imports rmpeer.run.freshness (and the rules, rmpeer.judge.freshness) and checks a certificate, as certify's first step will.

    python tools/time_if_stale.py CERTIFICATE [--tier quick] [--runs 5] [--root /]

Prints each run's wall time (process start to exit), the median, min and max, whether the
certificate held, and whether pytest, numpy, cffi or the RM shim were imported (they must
not be). A measurement, not a test: the machine's load decides the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = """
import json, sys, time
t0 = time.perf_counter()
from rmpeer.run.freshness import check_fresh
ok, reasons = check_fresh(sys.argv[1], sys.argv[2], root=sys.argv[3])
heavy = sorted(m for m in ("pytest", "numpy", "cffi", "_cffi_backend", "rmpeer.shim.live", "rmpeer.rm.open")
               if m in sys.modules)
print(json.dumps({"ok": ok, "reasons": reasons, "in_process_s": time.perf_counter() - t0, "heavy": heavy}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("certificate")
    ap.add_argument("--tier", default="quick")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--root", default="/")
    args = ap.parse_args()
    walls, last = [], None
    for _ in range(args.runs):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CHILD, args.certificate, args.tier, args.root],
                              capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return 1
        last = json.loads(done.stdout)
        print(f"  wall {walls[-1]:.3f} s (in process {last['in_process_s']:.3f} s) holds={last['ok']}")
    print(json.dumps({"runs": len(walls), "median_s": round(statistics.median(walls), 3),
                      "min_s": round(min(walls), 3), "max_s": round(max(walls), 3), "holds": last["ok"],
                      "reasons": last["reasons"], "heavy_imports": last["heavy"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
