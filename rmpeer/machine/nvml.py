"""NVML in rmpeer's own process: each card's clocks, P-state, maximum graphics clock,
clock-event reasons and power, read in about a millisecond, where an nvidia-smi process takes
30-100 ms every time to start NVML (docs/evidence/h200x1-20261205T1938Z-pipwheel: three of
them waited for in every quick and full run, one in every passive run).

An Nvml loads the library and starts NVML on a thread of its own as it is made: that start
(about 10 ms, with each card's first attach) runs beside the run's imports and RM's open, and
read() waits for it. Where the library cannot be loaded, NVML will not start, or its start has
not ended within START_TIMEOUT_S, `why` says so and read() returns None: the caller reads
through nvidia-smi instead (rmpeer.run.fitness). close() ends NVML once its start has ended.

The calls and what they return are matrices/nvml.yaml's `library` (their C declarations:
rmpeer/machine/nvml_calls.py). NVML's clients in this process hold no video memory; this
process is never one of the GPUs' other processes (rmpeer.machine.gpuprocs leaves it out)."""

from __future__ import annotations

import threading

from rmpeer.machine.nvml_calls import DECLARATIONS
from rmpeer.model.selection import pci_key

START_TIMEOUT_S = 20      # as long as an nvidia-smi reading may take (rmpeer.run.fitness.SMI_TIMEOUT_S)
SOURCE = "NVML"           # a reading's "source": in this process (nvidia-smi's readings say none)


def _ffi():
    """The declarations parsed when the wheel was built (setup.py), else parsed now (a checkout)."""
    try:
        from rmpeer.machine._nvml_ffi import ffi
    except ImportError:
        import cffi

        ffi = cffi.FFI()
        ffi.cdef(DECLARATIONS)
    return ffi


def bus_id(pci: str) -> str:
    """A PCI address as NVML spells it (00000000:1B:00.0), from any usual spelling."""
    key = pci_key(pci)
    if key is None:
        raise ValueError(f"{pci!r} is not a PCI address")
    domain, bus, slot, function = key
    return f"{domain:08X}:{bus:02X}:{slot:02X}.{function:X}"


class Nvml:
    def __init__(self, library: dict):
        self.library, self.why = library, ""
        self.ffi = self.lib = None
        self.closed = False
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._start, name="rmpeer-nvml", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            ffi = _ffi()
            lib = ffi.dlopen(self.library["file"])
            rc = lib.nvmlInit_v2()
            if rc != self.library["success"]:
                self.why = f"nvmlInit_v2: {_error(ffi, lib, rc)}"
                return
            self.ffi, self.lib = ffi, lib
            count, handle = ffi.new("unsigned int *"), ffi.new("nvmlDevice_t *")
            if lib.nvmlDeviceGetCount_v2(count) == self.library["success"]:
                for index in range(count[0]):      # each card attached now, not at its first reading
                    lib.nvmlDeviceGetHandleByIndex_v2(index, handle)
        except Exception as exc:   # noqa: BLE001 - no library (OSError), a call it lacks (AttributeError): said, then nvidia-smi
            self.why = f"{self.library['file']}: {exc}"
        finally:
            self._started.set()

    def started(self) -> bool:
        """Whether NVML started here: its start waited for (at most START_TIMEOUT_S), and
        not closed since."""
        if not self._started.wait(START_TIMEOUT_S):
            self.why = self.why or f"NVML had not started after {START_TIMEOUT_S} s"
        return self.lib is not None and self._started.is_set() and not self.closed

    def read(self, pcis) -> dict | None:
        """{"gpus": {pci: reading}, "source": "NVML"} for the cards at `pcis` (a reading as
        rmpeer.run.fitness.nvml_clocks makes one, None for what the card does not report),
        "reason" naming a card NVML does not know; None when NVML is not available (`why`)."""
        if not self.started():
            return None
        ffi, lib, ok = self.ffi, self.lib, self.library["success"]
        gpus, unknown = {}, []
        handle = ffi.new("nvmlDevice_t *")
        for pci in pcis:
            rc = lib.nvmlDeviceGetHandleByPciBusId_v2(bus_id(pci).encode(), handle)
            if rc != ok:
                unknown.append(f"{pci}: {_error(ffi, lib, rc)}")
                continue
            gpus[pci[-12:].lower()] = self._card(handle[0])
        out = {"gpus": gpus, "source": SOURCE}
        if unknown:
            out["reason"] = "nvmlDeviceGetHandleByPciBusId_v2: " + "; ".join(unknown)
        return out

    def _card(self, device) -> dict:
        ffi, lib, table = self.ffi, self.lib, self.library
        ok, types = table["success"], table["clock_types"]
        word, wide, number = ffi.new("unsigned int *"), ffi.new("unsigned long long *"), ffi.new("int *")

        def got(rc, cell):
            return cell[0] if rc == ok else None       # anything else reads as nvidia-smi's "[N/A]"
        reading = {clock: got(lib.nvmlDeviceGetClockInfo(device, types[clock], word), word)
                   for clock in ("graphics_mhz", "sm_mhz", "memory_mhz")}
        state = got(lib.nvmlDeviceGetPerformanceState(device, number), number)
        if state is not None and state != table["pstate_unknown"]:
            reading["pstate"] = f"P{state}"       # as nvidia-smi prints it (RM's own P-state is the one judged)
        reading["max_graphics_mhz"] = got(lib.nvmlDeviceGetMaxClockInfo(device, types["max_graphics_mhz"], word), word)
        reading["event_mask"] = None
        for name in table["event_reasons"]:          # the newer driver's name, then the older one's
            try:
                call = getattr(lib, name)
            except (AttributeError, getattr(ffi, "error", AttributeError)):   # not in this library (a wheel's ffi: ffi.error)
                continue
            reading["event_mask"] = got(call(device, wide), wide)
            break
        reading["power_mw"] = got(lib.nvmlDeviceGetPowerUsage(device, word), word)
        reading["power_limit_mw"] = got(lib.nvmlDeviceGetEnforcedPowerLimit(device, word), word)
        return reading

    def close(self) -> None:
        """NVML ended in this process, once its start has ended (a start that never ends, on a
        host whose driver hangs, is left to the process's exit)."""
        if self.closed:
            return
        self.closed = True
        if self._started.wait(START_TIMEOUT_S) and self.lib is not None:
            self.lib.nvmlShutdown()


def _error(ffi, lib, rc: int) -> str:
    try:
        return f"{ffi.string(lib.nvmlErrorString(rc)).decode(errors='replace')} ({rc})"
    except Exception:   # noqa: BLE001 - a library without nvmlErrorString: the number alone
        return f"NVML error {rc}"
