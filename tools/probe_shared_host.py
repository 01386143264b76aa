#!/usr/bin/env python3
"""Hardware probe: which other processes hold this host's GPUs, seen from /proc and from RM.

Lists the processes with /dev/nvidia* open (rmpeer.machine.gpuprocs, /proc/*/fd), then opens the
host the way rmpeer does (one RM client, the probe subdevice of every card) and asks RM,
card by card, NV2080_CTRL_CMD_GPU_GET_PIDS (pids with a subdevice on the card) and
NV2080_CTRL_CMD_GPU_GET_PID_INFO (their video memory), this process included, so that the
per-process figure the teardown check relies on can be seen working. Prints one JSON
document; every step is caught on its own and reported as an error in the JSON, and the RM
client is always freed.

    PYTHONPATH=$PWD python3 tools/probe_shared_host.py [OUT.json]

Run it once on an idle host and once while another process holds CUDA contexts, e.g.
    python3 -c "import torch,time; [torch.zeros(1, device=f'cuda:{i}') for i in range(2)]; time.sleep(600)" &
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback


def _error(exc: BaseException) -> dict:
    return {"error": f"{type(exc).__name__}: {exc}", "where": traceback.format_exc(limit=3).splitlines()[-3:]}


def _proc(out: dict) -> None:
    from rmpeer.machine.gpuprocs import card_minors, scan_gpu_processes

    out["proc_minors_to_cards"] = {str(k): v for k, v in card_minors().items()}
    scan = scan_gpu_processes()
    out["proc"] = {"processes": [p.as_dict() for p in scan.processes], "unreadable_count": len(scan.unreadable)}


def _rm(out: dict) -> None:
    from rmpeer.machine.gpuprocs import merged, rm_gpu_processes, rm_vidmem, scan_gpu_processes
    from rmpeer.rm.open import Runtime
    from rmpeer.shim.live import LiveShim

    rt = Runtime(LiveShim())
    out["driver"] = {"version": rt.facts.driver_version, "abi": rt.abi.release}
    try:
        rt.open()
        cards = {c.index: rt.host.probe_handles(c.index)[1] for c in rt.host.cards}
        out["cards"] = [{"index": c.index, "minor": c.minor, "pci": c.pci, "name": c.name} for c in rt.host.cards]
        scan = rm_gpu_processes(rt.rm, cards, own_pid=-1, label="probe:gpu-processes")   # ours kept
        out["rm"] = scan.as_dict()
        own = {}
        for card, sub in cards.items():
            sizes, why = rm_vidmem(rt.rm, sub, [os.getpid()], label=f"probe:own-vidmem:card{card}")
            own[str(card)] = {"bytes": sizes.get(os.getpid()), "why_not": why}
        out["own_vidmem"] = {"pid": os.getpid(), "cards": own}
        for card in scan.pids:
            scan.pids[card] = [p for p in scan.pids[card] if p != os.getpid()]
        procs = merged(scan_gpu_processes(minor_to_card={c.minor: c.index for c in rt.host.cards}), scan)
        out["merged"] = [p.as_dict() for p in procs]
    finally:
        rt.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", metavar="OUT.json", help="also write the JSON document here")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)     # an option (--help) is not the file to write
        return 0 if sys.argv[1:] in (["-h"], ["--help"]) else 2
    out: dict = {"pid": os.getpid(), "uid": os.getuid()}
    for name, step in (("proc", _proc), ("rm", _rm)):
        try:
            step(out)
        except BaseException as exc:      # a probe reports, it never stops half way
            out.setdefault("errors", {})[name] = _error(exc)
    text = json.dumps(out, indent=2, sort_keys=True)
    print(text)
    if args.out:
        try:
            with open(args.out, "w") as f:
                f.write(text + "\n")
        except OSError as exc:
            print(json.dumps({"error": f"could not write {args.out}: {exc}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
