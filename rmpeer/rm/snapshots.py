"""Who else holds the GPUs now, and this process's own video memory: read from /proc and
RM's own lists (rmpeer.machine.gpuprocs), each reading recorded, for rmpeer.judge.sharedhost
to judge.

Replays: every reading here is recorded (RM calls as calls, /proc facts through the shim's
observe) and taken only where the recording has it (rmpeer.shim.replay.recorded_next): a
recording made before these readings existed replays exactly as before, and the check then
falls back to what that recording can show (fail closed: a host-wide comparison, never a
pass by default).
"""

from __future__ import annotations

import os

from rmpeer.machine.gpuprocs import GET_PID_INFO, GET_PIDS, merged, rm_gpu_processes, rm_vidmem, scan_gpu_processes
from rmpeer.shim.replay import recorded_next


def snapshot_gpu_processes(shim, rm=None, subdevices: dict | None = None, *, label: str,
                           minor_to_card: dict | None = None) -> dict | None:
    """Who else holds the GPUs now: {'processes': [GpuProcess dicts], 'unreadable': [pids],
    'rm_errors': {card: why}}, recorded; None in a replay of a recording without it.
    With `rm` and `subdevices` ({card: subdevice handle}) RM's own list is asked too."""
    use_rm = rm is not None and bool(subdevices) and GET_PIDS in rm.abi.controls
    first = ("ioctl", f"{label}:pids:card{min(subdevices)}") if use_rm else ("observe", label)
    if not recorded_next(shim, *first):
        return None
    rm_scan = rm_gpu_processes(rm, subdevices, own_pid=-1, label=label) if use_rm else None

    def read():
        try:
            scan = scan_gpu_processes(minor_to_card=minor_to_card)
            if rm_scan is not None:   # RM listed every holder: this process is left out here
                for card in rm_scan.pids:
                    rm_scan.pids[card] = [p for p in rm_scan.pids[card] if p != os.getpid()]
            return {"processes": [p.as_dict() for p in merged(scan, rm_scan)], "unreadable": scan.unreadable,
                    "rm_errors": {str(c): e for c, e in (rm_scan.errors if rm_scan else {}).items()}}
        except OSError as exc:       # never a traceback: the reading says it failed
            return {"processes": [], "unreadable": [], "error": f"/proc could not be read: {exc}"}
    return shim.observe(label, read)


def snapshot_runtime(shim, rt, *, label: str, cards=None, with_rm: bool = True) -> dict | None:
    """snapshot_gpu_processes for an open Runtime: RM asked through the probe subdevice of
    each of `cards` (default: all), card numbers as RM numbers them."""
    cards = [c.index for c in rt.host.cards] if cards is None else list(cards)
    subdevices = {c: rt.host.probe_handles(c)[1] for c in cards} if with_rm else None
    return snapshot_gpu_processes(shim, rt.rm if with_rm else None, subdevices, label=label,
                                  minor_to_card={c.minor: c.index for c in rt.host.cards})


def own_vidmem(shim, rm, subdevices: dict, *, label: str) -> dict | None:
    """This process's video memory per card as RM counts it ({card: bytes}, a card RM
    refused is absent, its reason under 'errors'), recorded; None where the ABI lacks the
    control or a replay's recording lacks the reading. The pid goes through observe, so a
    replay sends RM the recorded run's pid, byte for byte."""
    if GET_PID_INFO not in rm.abi.controls or not subdevices:
        return None
    if not recorded_next(shim, "observe", f"{label}:pid"):
        return None
    pid = shim.observe(f"{label}:pid", os.getpid)
    out = {"bytes": {}, "errors": {}}
    for card, sub in sorted(subdevices.items()):
        sizes, why = rm_vidmem(rm, sub, [pid], label=f"{label}:card{card}")
        if why or pid not in sizes:
            out["errors"][card] = why or f"{GET_PID_INFO} gave no result for pid {pid}"
        else:
            out["bytes"][card] = sizes[pid]
    return out
