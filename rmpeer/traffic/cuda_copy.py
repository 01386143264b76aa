"""CUDA's own peer copy, for `rmpeer bench` to compare with: torch `copy_` between cards
timed with CUDA events, run in a process of its own (python -m rmpeer.traffic.cuda_copy ARGS)."""

import json
import statistics
import sys

REPEATS = 5


def main() -> None:
    args = json.loads(sys.argv[1])
    import torch   # not a dependency of rmpeer: the GPU hosts have it

    cards = min(args["cards"], torch.cuda.device_count())
    copies = {}
    for n in args["sizes"]:
        buffers = [torch.empty(n, dtype=torch.uint8, device=f"cuda:{c}") for c in range(cards)]
        spare = [torch.empty(n, dtype=torch.uint8, device=f"cuda:{c}") for c in range(cards)]
        for src in range(cards):
            for dst in range(cards):
                target = spare[dst] if src == dst else buffers[dst]
                with torch.cuda.device(dst):
                    target.copy_(buffers[src])            # the first copy, kept apart
                    torch.cuda.synchronize(dst)
                    times = []
                    for _ in range(REPEATS):
                        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record()
                        target.copy_(buffers[src])
                        end.record()
                        end.synchronize()
                        times.append(start.elapsed_time(end) / 1e3)
                copies[f"{src}->{dst}:{n}"] = n / statistics.median(times) / 1e9
        del buffers, spare
        torch.cuda.empty_cache()
    print(json.dumps({"copies": copies, "torch": torch.__version__, "method": "torch copy_, CUDA events, median of "
                      f"{REPEATS} after one first copy, on the destination card's stream"}))


if __name__ == "__main__":
    main()
