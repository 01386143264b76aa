"""A job for the passive tier's "safe while a job runs" evidence: bf16 matmuls on every GPU
for a while, reporting each GPU's TFLOP/s per one-second window (JSON on stdout).

    python tools/matmul_load.py --seconds 30 > load.json            # alone
    python tools/matmul_load.py --seconds 30 > load-passive.json &   # with passive runs beside it
    sleep 5; for i in 1 2 3 4 5; do rmpeer certify --tier passive --output /tmp/p$i; sleep 3; done; wait

Needs torch with CUDA (as rmpeer bench's CUDA comparison does); it is not part of rmpeer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time


def load(device: int, seconds: float, n: int, out: dict) -> None:
    import torch

    torch.cuda.set_device(device)
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16)
    flop = 2 * n ** 3
    windows, end = [], time.time() + seconds
    while time.time() < end:
        start, count = time.time(), 0
        while time.time() - start < 1.0:
            for _ in range(10):
                a @ b
            torch.cuda.synchronize(device)
            count += 10
        windows.append({"t": round(start, 3), "tflops": round(count * flop / (time.time() - start) / 1e12, 1)})
    out[device] = windows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--size", type=int, default=8192)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("matmul_load: needs torch with CUDA (pip install torch), on a GPU host", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("matmul_load: torch sees no CUDA GPU on this host", file=sys.stderr)
        return 3
    out: dict = {}
    threads = [threading.Thread(target=load, args=(d, args.seconds, args.size, out))
               for d in range(torch.cuda.device_count())]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"size": args.size, "per_gpu": {
        d: {"median_tflops": statistics.median(w["tflops"] for w in ws), "min_tflops": min(w["tflops"] for w in ws),
            "windows": ws} for d, ws in sorted(out.items())}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
