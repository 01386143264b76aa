"""The other processes that hold this host's GPUs: pid, command, cards.

Two independent accounts:
- /proc: a process holds a card when one of its file descriptors is /dev/nvidiaN (N is
  the card's device minor, which /proc/driver/nvidia/gpus/*/information states as "Device
  Minor"); /dev/nvidiactl and /dev/nvidia-uvm mean it holds the driver (an RM client, or
  CUDA's unified memory). Other users' fd folders are readable only by root: those pids are
  listed as unreadable, never silently taken as idle.
- RM: NV2080_CTRL_CMD_GPU_GET_PIDS lists, per card, the pids whose RM clients hold a
  subdevice of it, and NV2080_CTRL_CMD_GPU_GET_PID_INFO their video memory. It sees RM
  clients whatever /proc permissions are, in this pid namespace. Made through the shim
  (recorded, replayable); a refusal is kept as the reason, never raised.

This process is left out of both (its own clients are what the run is judging).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.model.processes import GpuProcess

CARD_NODE = re.compile(r"^/dev/nvidia(\d+)$")
DRIVER_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")
GET_PIDS = "NV2080_CTRL_CMD_GPU_GET_PIDS"
GET_PID_INFO = "NV2080_CTRL_CMD_GPU_GET_PID_INFO"


@dataclass
class ProcScan:
    processes: list = field(default_factory=list)    # [GpuProcess]
    unreadable: list = field(default_factory=list)   # pids whose fds this user may not read


def card_minors(proc_root: str | os.PathLike = "/proc") -> dict[int, int]:
    """{device minor: card index}: cards numbered in PCI bus order, as the driver lists them;
    a caller with RM's own card list passes {card.minor: card.index} instead."""
    base = Path(proc_root) / "driver" / "nvidia" / "gpus"
    found = []
    for info in sorted(base.glob("*/information")):
        try:
            text = info.read_text(errors="replace")
        except OSError:
            continue
        m = re.search(r"^Device Minor:\s*(\d+)\s*$", text, re.M)
        if m:
            found.append((info.parent.name, int(m.group(1))))
    return {minor: index for index, (_, minor) in enumerate(sorted(found))}


def command_of(pid: int, proc_root: str | os.PathLike = "/proc") -> str:
    """The command line (world-readable), else the short name, else a plain statement."""
    base = Path(proc_root) / str(pid)
    try:
        raw = (base / "cmdline").read_bytes()
        text = " ".join(p.decode(errors="replace") for p in raw.split(b"\0") if p)
        if text:
            return text[:200]
    except OSError:
        pass
    try:
        return (base / "comm").read_text(errors="replace").strip()[:200] or "command unknown"
    except OSError:
        return "command unknown"


def _targets(fd_dir: Path) -> list[str]:
    out = []
    for entry in fd_dir.iterdir():
        try:
            out.append(os.readlink(entry))
        except OSError:
            continue          # closed while we looked
    return out


def scan_gpu_processes(proc_root: str | os.PathLike = "/proc", *, exclude=None,
                       minor_to_card: dict | None = None) -> ProcScan:
    """Every process but `exclude` (default: this one) with a GPU device node open."""
    root = Path(proc_root)
    skip = {os.getpid()} if exclude is None else set(exclude)
    cards_of = card_minors(root) if minor_to_card is None else minor_to_card
    scan = ProcScan()
    for entry in sorted(root.iterdir(), key=lambda p: (len(p.name), p.name)):
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        pid = int(entry.name)
        try:
            targets = _targets(entry / "fd")
        except PermissionError:
            scan.unreadable.append(pid)
            continue
        except OSError:
            continue          # exited while we looked
        minors = sorted({int(m.group(1)) for t in targets if (m := CARD_NODE.match(t))})
        driver = any(t in DRIVER_NODES for t in targets)
        if not minors and not driver:
            continue
        cards = tuple(sorted(cards_of[m] for m in minors if m in cards_of))
        scan.processes.append(GpuProcess(pid, command_of(pid, root), cards, driver, tuple(minors)))
    return scan


def other_gpu_processes(proc_root: str | os.PathLike = "/proc", *, exclude=None,
                        minor_to_card: dict | None = None) -> list[GpuProcess]:
    """The processes other than this one that hold a GPU or the driver (from /proc)."""
    return scan_gpu_processes(proc_root, exclude=exclude, minor_to_card=minor_to_card).processes


# ---- RM's account ---------------------------------------------------------------------

@dataclass
class RmScan:
    pids: dict = field(default_factory=dict)      # card -> [pid] with a subdevice of it (this one left out)
    vidmem: dict = field(default_factory=dict)    # card -> {pid: bytes}
    errors: dict = field(default_factory=dict)    # card -> why RM gave no list (or no sizes)

    def as_dict(self) -> dict:
        return {"pids": {str(c): p for c, p in self.pids.items()},
                "vidmem": {str(c): {str(p): b for p, b in v.items()} for c, v in self.vidmem.items()},
                "errors": {str(c): e for c, e in self.errors.items()}}


def _missing(abi, *names) -> str | None:
    lacking = [n for n in names if n not in abi.controls]
    return f"{', '.join(lacking)} is not in the ABI of {abi.release}" if lacking else None


def rm_pids(rm, subdevice: int, *, label: str) -> tuple[list[int], str | None]:
    """The pids RM lists as holding a subdevice of this card: (pids, why not)."""
    abi = rm.abi
    why = _missing(abi, GET_PIDS)
    if why:
        return [], why
    reply = rm.control(subdevice, GET_PIDS, check=False, label=label,
                       idType=abi.const("NV2080_CTRL_GPU_GET_PIDS_ID_TYPE_CLASS"),
                       id=abi.cls("NV20_SUBDEVICE_0"))
    failed = reply["_record"].refused
    if failed:
        return [], f"{GET_PIDS}: {failed}"
    count = min(reply["pidTblCount"], abi.const("NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT"))
    return sorted(set(reply["pidTbl"][:count])), None


def rm_vidmem(rm, subdevice: int, pids: list[int], *, label: str) -> tuple[dict, str | None]:
    """{pid: bytes of video memory RM attributes to it on this card} (private + shared owned),
    and why not. A pid RM reports no result for is left out of the dict."""
    abi = rm.abi
    why = _missing(abi, GET_PID_INFO)
    if why or not pids:
        return {}, why
    params = abi.struct("NV2080_CTRL_GPU_GET_PID_INFO_PARAMS")
    elem = abi.struct("NV2080_CTRL_GPU_PID_INFO")
    pids = pids[: abi.const("NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT")]
    raw = params.pack(pidInfoListCount=len(pids))
    base = params.field("pidInfoList").offset
    index = abi.const("NV2080_CTRL_GPU_PID_INFO_INDEX_VIDEO_MEMORY_USAGE")
    for i, pid in enumerate(pids):
        raw[base + i * elem.size: base + (i + 1) * elem.size] = elem.pack(pid=pid, index=index)
    reply = rm.control(subdevice, GET_PID_INFO, check=False, label=label, payload=bytes(raw))
    failed = reply["_record"].refused
    if failed:
        return {}, f"{GET_PID_INFO}: {failed}"
    out, back = {}, reply["_raw"]
    for i in range(len(pids)):
        e = elem.decode(back[base + i * elem.size: base + (i + 1) * elem.size])
        if e["result"] == 0:
            out[e["pid"]] = e["data.vidMemUsage.memPrivate"] + e["data.vidMemUsage.memSharedOwned"]
    return out, None


def rm_gpu_processes(rm, subdevices: dict, *, own_pid: int | None = None, label: str = "gpu-processes") -> RmScan:
    """RM's account of who holds each card: subdevices is {card index: a subdevice handle of
    this client on that card}. Never raises for a refusal: the reason is in .errors."""
    me = os.getpid() if own_pid is None else own_pid
    scan = RmScan()
    for card, sub in sorted(subdevices.items()):
        pids, why = rm_pids(rm, sub, label=f"{label}:pids:card{card}")
        if why:
            scan.errors[card] = why
            continue
        scan.pids[card] = [p for p in pids if p != me]
        sizes, why = rm_vidmem(rm, sub, scan.pids[card], label=f"{label}:vidmem:card{card}")
        scan.vidmem[card] = sizes
        if why:
            scan.errors[card] = why
    return scan


def merged(scan: ProcScan, rm_scan: RmScan | None = None, proc_root: str | os.PathLike = "/proc") -> list[GpuProcess]:
    """One list from both accounts, by pid: RM adds pids /proc could not show (other users'
    processes when not root) and the video memory each holds."""
    by_pid = {p.pid: p for p in scan.processes}
    for card, pids in sorted((rm_scan.pids if rm_scan else {}).items()):
        for pid in pids:
            p = by_pid.get(pid) or GpuProcess(pid, command_of(pid, proc_root), source="rm")
            cards = tuple(sorted(set(p.cards) | {card}))
            source = p.source if "rm" in p.source else f"{p.source}+rm"
            size = rm_scan.vidmem.get(card, {}).get(pid)
            vidmem = {**p.vidmem, **({card: size} if size is not None else {})}
            by_pid[pid] = GpuProcess(pid, p.command, cards, p.driver, p.minors, source, vidmem)
    return [by_pid[pid] for pid in sorted(by_pid)]
