"""A process that holds a GPU, as a run saw it (rmpeer.machine.gpuprocs scans /proc and asks
RM; the shared-host rules, rmpeer.judge.sharedhost, weigh them). A run's result and its
recordings hold them as dicts (as_dict, from_dict)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    command: str
    cards: tuple = ()           # the suite's card indices it holds
    driver: bool = False        # holds /dev/nvidiactl or /dev/nvidia-uvm
    minors: tuple = ()          # /dev/nvidia<minor> it holds (a minor no card has stays here only)
    source: str = "proc"        # proc, rm or proc+rm
    vidmem: dict = field(default_factory=dict)   # card -> bytes RM attributes to it (GET_PID_INFO)

    def describe(self) -> str:
        held = (f"card {', '.join(map(str, self.cards))}" if len(self.cards) == 1 else
                f"cards {', '.join(map(str, self.cards))}" if self.cards else "the driver")
        return f"pid {self.pid} ({self.command}) on {held}"

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cards"], d["minors"] = list(self.cards), list(self.minors)
        d["vidmem"] = {str(k): v for k, v in self.vidmem.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "GpuProcess":
        return cls(pid=int(d["pid"]), command=d.get("command", ""), cards=tuple(d.get("cards", ())),
                   driver=bool(d.get("driver")), minors=tuple(d.get("minors", ())),
                   source=d.get("source", "proc"),
                   vidmem={int(k): int(v) for k, v in (d.get("vidmem") or {}).items()})
