"""rmpeer.machine.nvml: NVML in rmpeer's own process. No GPU here, so no real NVML: a
stand-in libnvidia-ml, built by the test from the C below with the machine's compiler (the test
skips, saying so, where there is none), is loaded by path and called through the same
declarations (rmpeer/machine/nvml_calls.py). It answers for one card, 00000000:00:06.0, with
the figures of the stand-in nvidia-smi of tests/run/test_nvml_clocks.py (an H200 under a
power-capped load), so that both readers are held to one reading. The real library answered
the same calls on a lent H200 (docs/evidence/h200x1-20261205T1938Z-pipwheel, the NVML
reading beside nvidia-smi's)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from rmpeer.machine.nvml import Nvml, bus_id
from rmpeer.run.fitness import clocks_now
from rmpeer.tables.nvml import load_nvml

pytestmark = pytest.mark.offline

# nvml.h's values the stand-in answers with (NVML_SUCCESS 0, NVML_ERROR_NOT_FOUND 6,
# NVML_ERROR_DRIVER_NOT_LOADED 9; nvmlClockType_t GRAPHICS 0, SM 1, MEM 2)
STAND_IN = r"""
typedef struct nvmlDevice_st *nvmlDevice_t;
static int inits, shutdowns;
static struct nvmlDevice_st { int card; } card0;
int stand_in_shutdowns(void) { return shutdowns; }
int nvmlInit_v2(void) { inits++; return INIT_RESULT; }
int nvmlShutdown(void) { shutdowns++; return 0; }
const char *nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : r == 6 ? "Not Found" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { *d = &card0; return i == 0 ? 0 : 2; }
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d) {
    const char *want = "00000000:00:06.0";
    for (int i = 0; want[i] || bus[i]; i++) if (want[i] != bus[i]) return 6;
    *d = &card0; return 0;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
    if (type == 0 || type == 1) { *mhz = 1755; return 0; }
    if (type == 2) { *mhz = 3201; return 0; }
    return 2;
}
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) { *mhz = type == 0 ? 1980 : 3201; return 0; }
int nvmlDeviceGetPerformanceState(nvmlDevice_t d, int *p) { *p = PSTATE; return 0; }
int EVENT_CALL(nvmlDevice_t d, unsigned long long *mask) { *mask = 0x4; return 0; }
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) { *mw = 698520; return 0; }
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw) { return 3; }
"""
BUSY = {"graphics_mhz": 1755, "sm_mhz": 1755, "memory_mhz": 3201, "pstate": "P0", "max_graphics_mhz": 1980,
        "event_mask": 0x4, "power_mw": 698520, "power_limit_mw": None}


def stand_in(tmp_path, *, init=0, pstate=0, event_call="nvmlDeviceGetCurrentClocksEventReasons") -> dict:
    """The matrices' library entry, its file the stand-in built from STAND_IN."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this machine to build the stand-in libnvidia-ml")
    tmp_path.mkdir(parents=True, exist_ok=True)
    source, built = tmp_path / "nvml.c", tmp_path / "libnvidia-ml.so.1"
    source.write_text(STAND_IN)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(built), str(source), f"-DINIT_RESULT={init}",
                    f"-DPSTATE={pstate}", f"-DEVENT_CALL={event_call}"], check=True, timeout=60)
    return {**load_nvml()["library"], "file": str(built)}


def test_a_card_read_in_this_process_reads_as_nvidia_smi_reads_it(tmp_path):
    nvml = Nvml(stand_in(tmp_path))
    try:
        got = nvml.read(["0000:00:06.0"])
    finally:
        nvml.close()
    assert got == {"gpus": {"0000:00:06.0": BUSY}, "source": "NVML"}


def test_the_run_reads_through_nvml_in_this_process_and_asks_no_nvidia_smi(tmp_path, monkeypatch):
    """rmpeer.run.fitness.clocks_now: where NVML started here, no nvidia-smi is asked (here
    there is none on the path: a reading through it would say so)."""
    library = stand_in(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    nvml = Nvml(library)
    try:
        assert clocks_now(nvml, ["0000:00:06.0"]) == {"gpus": {"0000:00:06.0": BUSY}, "source": "NVML"}
    finally:
        nvml.close()


def test_a_driver_with_the_older_name_of_the_event_reasons_call_is_read_by_it(tmp_path):
    nvml = Nvml(stand_in(tmp_path, event_call="nvmlDeviceGetCurrentClocksThrottleReasons"))
    try:
        assert nvml.read(["0000:00:06.0"])["gpus"]["0000:00:06.0"]["event_mask"] == 0x4
    finally:
        nvml.close()


def test_an_unknown_pstate_is_left_out_and_a_card_nvml_does_not_know_is_named(tmp_path):
    nvml = Nvml(stand_in(tmp_path, pstate=32))        # NVML_PSTATE_UNKNOWN
    try:
        got = nvml.read(["0000:00:06.0", "0000:1b:00.0"])
    finally:
        nvml.close()
    assert "pstate" not in got["gpus"]["0000:00:06.0"]
    assert set(got["gpus"]) == {"0000:00:06.0"}
    assert got["reason"] == "nvmlDeviceGetHandleByPciBusId_v2: 0000:1b:00.0: Not Found (6)"


def test_nvml_that_will_not_start_is_read_through_nvidia_smi_saying_why(tmp_path, monkeypatch):
    """clocks_now: NVML refused its start here; an nvidia-smi process is asked instead (here
    one that is not there), and the reading says why NVML was not read in this process."""
    library = stand_in(tmp_path, init=9)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    nvml = Nvml(library)
    try:
        assert nvml.read(["0000:00:06.0"]) is None
        assert nvml.why == "nvmlInit_v2: Driver Not Loaded (9)"
        assert clocks_now(nvml, ["0000:00:06.0"]) == {"reason": "nvidia-smi not found",
                                                      "library_reason": "nvmlInit_v2: Driver Not Loaded (9)"}
    finally:
        nvml.close()


def test_a_card_nvml_here_does_not_know_is_read_through_nvidia_smi(tmp_path, monkeypatch):
    """clocks_now: one of the run's cards unknown to NVML in this process (its address spelt
    otherwise, a card it does not see): the whole reading is nvidia-smi's, saying why."""
    library = stand_in(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    nvml = Nvml(library)
    try:
        assert clocks_now(nvml, ["0000:00:06.0", "0000:1b:00.0"]) == {
            "reason": "nvidia-smi not found",
            "library_reason": "nvmlDeviceGetHandleByPciBusId_v2: 0000:1b:00.0: Not Found (6)"}
    finally:
        nvml.close()


def test_no_library_says_which_file(tmp_path):
    nvml = Nvml({**load_nvml()["library"], "file": str(tmp_path / "libnvidia-ml.so.1")})
    assert nvml.read(["0000:00:06.0"]) is None
    assert nvml.why.startswith(f"{tmp_path / 'libnvidia-ml.so.1'}: ")
    nvml.close()


def test_close_ends_nvml_once_and_nothing_is_read_after_it(tmp_path):
    nvml = Nvml(stand_in(tmp_path))
    assert nvml.read(["0000:00:06.0"]) is not None
    nvml.close()
    nvml.close()
    assert _shutdowns(nvml) == 1
    assert nvml.read(["0000:00:06.0"]) is None


def _shutdowns(nvml) -> int:
    """The stand-in's own count (a call the declarations do not name, looked up by a second ffi)."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("int stand_in_shutdowns(void);")
    return ffi.dlopen(nvml.library["file"]).stand_in_shutdowns()


@pytest.mark.parametrize("spelling", ["0000:1b:00.0", "00000000:1B:00.0", "1b:00.0"])
def test_a_pci_address_is_spelt_as_nvml_spells_it(spelling):
    assert bus_id(spelling) == "00000000:1B:00.0"



FROM_WHEEL = bool(os.environ.get("RMPEER_CI_WHEEL"))    # .ci/run: the installed wheel is under test


def _built() -> bool:
    try:
        import rmpeer.machine._nvml_ffi  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not (FROM_WHEEL or _built()),
                    reason="a checkout parses NVML's declarations on NVML's thread; the module setup.py builds is "
                           "in the wheel, which CI installs and tests (RMPEER_CI_WHEEL=1)")
def test_the_wheel_declares_nvmls_calls_and_loads_them_without_a_c_parser(tmp_path):
    """The module setup.py builds loads with no C parser (pycparser's parse is about 17 ms,
    more than NVML's own start) and declares each call as nvml_calls.py does."""
    import re
    import sys

    import cffi

    from rmpeer.machine.nvml_calls import DECLARATIONS

    done = subprocess.run([sys.executable, "-P", "-c", "import sys, rmpeer.machine.nvml as n; n._ffi(); "
                           "print('pycparser' in sys.modules)"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["False"], done.stdout + done.stderr
    from rmpeer.machine._nvml_ffi import ffi as built

    parsed = cffi.FFI()
    parsed.cdef(DECLARATIONS)
    library = stand_in(tmp_path)["file"]
    ours, theirs = built.dlopen(library), parsed.dlopen(library)
    names = [n for n in re.findall(r"(nvml\w+)\(", DECLARATIONS) if n != "nvmlDeviceGetCurrentClocksThrottleReasons"]
    assert len(names) == 12        # the stand-in answers the event reasons by the newer name only
    for name in names:
        assert str(built.typeof(getattr(ours, name))) == str(parsed.typeof(getattr(theirs, name))), name


class _Shim:
    mode = "live"

    def observe(self, label, read):
        return read()


class _Host:
    cards = [type("Card", (), {"index": 0, "pci": "0000:00:06.0"})()]

    def probe_handles(self, card):
        return (0xD00, 0xE00)


def test_a_certificates_reading_says_where_its_mhz_came_from_and_why(tmp_path, monkeypatch):
    """Fitness.read_clocks, what the certificate keeps of a reading: mhz_source "NVML" where
    NVML answered in this process; where it would not start, "NVML (nvidia-smi)" and the
    reason (library_reason), so that a reader of the certificate sees why without the
    recording. RM's part of the reading (P-state, reasons) is not what is tested here."""
    from rmpeer.run import fitness

    monkeypatch.setattr(fitness, "read_clocks", lambda rm, sub: {"pstate": "P0", "reasons": 0})
    libraries = {init: stand_in(tmp_path / str(init), init=init) for init in (0, 9)}
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))      # no nvidia-smi: a reading through it says so
    runtime = type("Runtime", (), {"shim": _Shim(), "host": _Host(), "rm": None})()
    for init, source, why in ((0, "NVML", None), (9, "NVML (nvidia-smi)", "nvmlInit_v2: Driver Not Loaded (9)")):
        nvml = Nvml(libraries[init])
        try:
            got = fitness.Fitness(runtime, boost=False, layout=None, clocks_source=nvml).read_clocks("idle")[0]
        finally:
            nvml.close()
        assert (got["mhz_source"], got.get("library_reason")) == (source, why)
        assert got["graphics_mhz"] == (1755 if init == 0 else None)
