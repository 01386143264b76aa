"""matrices/nvml.yaml: what rmpeer reads of NVML beside RM (in its own process, else through
nvidia-smi's fields), and NVML's clock-event reasons (their bits and what each means to the
boost check), checked at load."""

from __future__ import annotations

from pathlib import Path

from rmpeer.errors import MatrixError, quoted
from rmpeer.tables.load import MATRICES, load_yaml, only_known, require, require_below

FILE_KEYS = ("schema", "query", "library", "clock_event_reasons")
QUERY_KEYS = ("base", "limits")
# what rmpeer reads from each field (rmpeer.run.fitness.nvml_clocks)
READS = {"base": ("pci", "graphics_mhz", "sm_mhz", "memory_mhz", "pstate"),
         "limits": ("max_graphics_mhz", "event_mask", "power_mw", "power_limit_mw")}
LIBRARY_KEYS = ("file", "success", "pstate_unknown", "clock_types", "event_reasons")
CLOCKS = ("graphics_mhz", "sm_mhz", "memory_mhz", "max_graphics_mhz")     # what rmpeer.machine.nvml reads by type
REASON_KEYS = ("bit", "kind", "text")
KINDS = ("cap", "slowdown", "setting")
MASK_BITS = 64              # nvmlDeviceGetCurrentClocksEventReasons: an unsigned long long


def load_nvml(path: Path | None = None) -> dict:
    """nvml.yaml, every field and reason well formed (callers must not change what comes back)."""
    path = Path(path or MATRICES / "nvml.yaml")
    data = load_yaml(path)
    only_known(path, "file", data, FILE_KEYS)
    query = require(path, "file", data, "query", dict)
    only_known(path, "query", query, QUERY_KEYS)
    for key in QUERY_KEYS:
        fields = require(path, "query", query, key, dict)
        only_known(path, f"query.{key}", fields, READS[key])
        for read in READS[key]:
            field = require(path, f"query.{key}", fields, read, str)
            if not field or "," in field or field.strip() != field:
                raise MatrixError(path, f"query.{key}.{read}", f"must be one nvidia-smi field name, found {quoted(field)}")
    _check_library(path, require(path, "file", data, "library", dict))
    bits = set()
    for name, entry in require(path, "file", data, "clock_event_reasons", dict).items():
        at = f"clock_event_reasons.{name}"
        if not isinstance(entry, dict):
            raise MatrixError(path, at, f"must be a mapping of {', '.join(REASON_KEYS)}, found {quoted(entry)}")
        only_known(path, at, entry, REASON_KEYS)
        bit = require_below(path, f"{at}.bit", require(path, at, entry, "bit", int), 1 << MASK_BITS)
        if bit <= 0 or bit & (bit - 1) or bit in bits:
            raise MatrixError(path, f"{at}.bit", f"must be one bit no other reason has, found {quoted(bit)}")
        bits.add(bit)
        if require(path, at, entry, "kind", str) not in KINDS:
            raise MatrixError(path, f"{at}.kind", f"must be one of {', '.join(KINDS)}, found {quoted(entry['kind'])}")
        require(path, at, entry, "text", str)
    return data


def _check_library(path, library: dict) -> None:
    only_known(path, "library", library, LIBRARY_KEYS)
    file = require(path, "library", library, "file", str)
    if not file or "/" in file:
        raise MatrixError(path, "library.file", f"must be the library's file name (the loader finds it), found {quoted(file)}")
    for key in ("success", "pstate_unknown"):
        require_below(path, f"library.{key}", require(path, "library", library, key, int), 1 << 31)
    types = require(path, "library", library, "clock_types", dict)
    only_known(path, "library.clock_types", types, CLOCKS)
    for clock in CLOCKS:
        require_below(path, f"library.clock_types.{clock}", require(path, "library.clock_types", types, clock, int), 1 << 31)
    calls = require(path, "library", library, "event_reasons", list)
    if not calls or not all(isinstance(c, str) and c.isidentifier() for c in calls):
        raise MatrixError(path, "library.event_reasons", f"must be a list of NVML call names, found {quoted(calls)}")


def clock_events(mask: int, table: dict) -> list[dict]:
    """The active reasons of an event mask: [{reason, kind, text}], in bit order; a bit the
    table does not name is kept as kind 'unknown' (never dropped: a newer driver's reason)."""
    out, named = [], 0
    for name, entry in sorted(table["clock_event_reasons"].items(), key=lambda kv: kv[1]["bit"]):
        named |= entry["bit"]
        if mask & entry["bit"]:
            out.append({"reason": name, "kind": entry["kind"], "text": entry["text"]})
    if mask & ~named:
        out.append({"reason": f"{mask & ~named:#x}", "kind": "unknown", "text": f"reason bits {mask & ~named:#x}"})
    return out
