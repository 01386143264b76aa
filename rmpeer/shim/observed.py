"""The kinds of the values a recording observed outside RM (`shim.observe`: /proc, the
kernel log, nvidia-smi, this process's pid), by label.

A replay hands each observed value to the code that read it live, which takes it as that
code's own reader made it. A recording is input: a string where the recorder wrote MHz, a
list where it wrote a mapping, a pid no kernel gives, is refused in one line as the
recording's fault (TranscriptError, exit 2) before the replay starts, never met inside a
check as an internal error (exit 5).

The kinds are written from the readers that make each value: rm.host.read_proc_gpus,
run.fitness.clocks_now (machine.nvml, or nvml_clocks), machine.xids (XidWatcher.stop and parse_xid), run.passive.xids_since
and rm.snapshots.snapshot_gpu_processes. A field a reader may leave out may be absent; a
field no reader writes is left alone (nothing reads it)."""

from __future__ import annotations

import re
from dataclasses import dataclass

INT64 = 1 << 63
PID_LIMIT = 1 << 22          # the kernel's PID_MAX_LIMIT on 64 bits (include/linux/threads.h)


@dataclass(frozen=True)
class Count:
    """A whole number in [0, limit)."""
    limit: int = INT64


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class Record:
    """A mapping with these fields, of which `required` must be there (their readers index
    them); the others may be left out."""
    fields: dict
    required: tuple = ()


@dataclass(frozen=True)
class MapOf:
    """A mapping whose keys match `key` (a regular expression) and whose values are `value`."""
    value: object
    key: str = r".*"


CARD_KEY = r"\d{1,4}"
NUMBER = Count()
PID = Count(PID_LIMIT)
MHZ = (Count(1 << 20), None)     # nvidia-smi's "N/A" is read as None

MILLIWATTS = (Count(1 << 40), None)
CLOCKS = {"gpus": MapOf({"graphics_mhz": MHZ, "sm_mhz": MHZ, "memory_mhz": MHZ, "pstate": str,
                         "max_graphics_mhz": MHZ, "event_mask": (Count(1 << 64), None),
                         "power_mw": MILLIWATTS, "power_limit_mw": MILLIWATTS}),
          "reason": str, "limits_reason": str, "source": str, "library_reason": str}
PROC_GPUS = ListOf(Record({"model": str, "uuid": str, "bus": str, "vbios": str},
                          required=("model", "uuid", "bus")))
XID = Record({"pci": str, "xid": NUMBER, "text": str, "seq": NUMBER, "gpu_instance": NUMBER,
              "compute_instance": NUMBER}, required=("pci", "xid", "text"))
XIDS = {"readable": bool, "source": (str, None), "reason": (str, None), "complete": bool, "boot_id": (str, None),
        "last_seq": (NUMBER, None), "since": str, "xids": ListOf(XID)}
XIDS_OR_NONE = (XIDS, None)      # None: the run had no watcher to stop
PROCESS = Record({"pid": PID, "command": str, "cards": ListOf(NUMBER), "driver": bool, "minors": ListOf(NUMBER),
                  "source": str, "vidmem": MapOf(NUMBER, CARD_KEY)}, required=("pid",))
PROCESSES = {"processes": ListOf(PROCESS), "unreadable": ListOf(PID), "rm_errors": MapOf(str, CARD_KEY),
             "error": str}

# (how the label starts, how it ends, the kind): the first row that fits is the label's
KINDS = (
    ("host:clocks:", "", CLOCKS),
    ("host:proc-gpus", "", PROC_GPUS),
    ("host:xids", "", XIDS_OR_NONE),
    ("", ":pid", PID),
    ("gpu-processes:", "", PROCESSES),
    ("teardown:gpu-processes", "", PROCESSES),
)


def kind_of(label: str):
    """The kind the recorder writes under `label`; None for a label it never writes (the
    replay then finds no reader asking for it)."""
    for head, tail, kind in KINDS:
        if label.startswith(head) and label.endswith(tail):
            return kind
    return None


def misfit(value, kind, where: str = "its value") -> str:
    """'' when `value` is of `kind`; else the first place that is not, in words."""
    if isinstance(kind, tuple):
        if any(not misfit(value, k, where) for k in kind):
            return ""
        return misfit(value, kind[0], where)
    if kind is None:
        return "" if value is None else f"{where} is {_shown(value)}, not null"
    if kind is bool:
        return "" if isinstance(value, bool) else f"{where} is {_shown(value)}, not true or false"
    if kind is str:
        return "" if isinstance(value, str) else f"{where} is {_shown(value)}, not text"
    if isinstance(kind, Count):
        whole = isinstance(value, int) and not isinstance(value, bool)
        return "" if whole and 0 <= value < kind.limit else \
            f"{where} is {_shown(value)}, not a whole number under {kind.limit}"
    if isinstance(kind, ListOf):
        if not isinstance(value, list):
            return f"{where} is {_shown(value)}, not a list"
        return next((m for i, v in enumerate(value) if (m := misfit(v, kind.item, f"{where}[{i}]"))), "")
    if not isinstance(value, dict):
        return f"{where} is {_shown(value)}, not a mapping"
    if isinstance(kind, MapOf):
        for k, v in value.items():
            if not re.fullmatch(kind.key, k):
                return f"{where} has the key {_shown(k)}, not of the recorder's keys"
            if m := misfit(v, kind.value, f"{where}[{k[:40]!r}]"):
                return m
        return ""
    fields, required = (kind.fields, kind.required) if isinstance(kind, Record) else (kind, ())
    missing = [k for k in required if k not in value]
    if missing:
        return f"{where} has no {missing[0]!r}"
    return next((m for k, sub in fields.items() if k in value
                 if (m := misfit(value[k], sub, f"{where}[{k!r}]"))), "")


def _shown(value) -> str:
    return repr(str(value)[:40]) if not isinstance(value, (int, float)) else str(value)[:40]
