"""rmpeer.tables.nvml: matrices/nvml.yaml (NVML's library and calls, the nvidia-smi fields read
where it will not start, and NVML's clock-event reasons) is checked at load; the values and the
reasons' bits are nvml.h's."""

import pytest
import yaml
from damaged_matrix import write_damaged

from rmpeer.errors import EXIT_CONFIG, MatrixError
from rmpeer.tables.load import MATRICES
from rmpeer.tables.nvml import clock_events, load_nvml

pytestmark = pytest.mark.offline
REAL = yaml.safe_load((MATRICES / "nvml.yaml").read_text())
R = ["clock_event_reasons"]

# nvml.h (NVML API reference, "Clocks Event Reasons"): nvmlClocksEventReason* = these bits
NVML_H = {"gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4, "hw_slowdown": 0x8,
          "sync_boost": 0x10, "sw_thermal_slowdown": 0x20, "hw_thermal_slowdown": 0x40,
          "hw_power_brake_slowdown": 0x80, "display_clock_setting": 0x100}

CASES = [
    (["query"], KeyError, "file: missing key 'query'"),
    (["query", "limits"], [], "query.limits: must be dict, found []"),
    (["query", "base", "graphics_mhz"], "clocks.gr,clocks.sm", "query.base.graphics_mhz: must be one nvidia-smi field name"),
    (["query", "base", "graphics_mhz"], KeyError, "query.base: missing key 'graphics_mhz'"),
    (["query", "limits", "fan"], "fan.speed", "query.limits.fan: unknown key (known: max_graphics_mhz, event_mask, "
                                               "power_mw, power_limit_mw)"),
    (["query", "extra"], ["x"], "query.extra: unknown key (known: base, limits)"),
    (R + ["sw_power_cap", "bit"], 0x6, "clock_event_reasons.sw_power_cap.bit: must be one bit no other reason has"),
    (R + ["sw_power_cap", "bit"], 0x1, "clock_event_reasons.sw_power_cap.bit: must be one bit no other reason has"),
    (R + ["sw_power_cap", "bit"], 1 << 64, "clock_event_reasons.sw_power_cap.bit: must be a whole number from 0 to"),
    (R + ["sw_power_cap", "kind"], "fine", "clock_event_reasons.sw_power_cap.kind: must be one of cap, slowdown, setting"),
    (R + ["sw_power_cap", "txt"], "x", "clock_event_reasons.sw_power_cap.txt: unknown key (known: bit, kind, text)"),
    (R + ["hw_slowdown"], 8, "clock_event_reasons.hw_slowdown: must be a mapping of bit, kind, text, found 8"),
    (["library", "file"], "/usr/lib/libnvidia-ml.so.1", "library.file: must be the library's file name"),
    (["library", "success"], -1, "library.success: must be a whole number from 0 to"),
    (["library", "clock_types", "sm_mhz"], KeyError, "library.clock_types: missing key 'sm_mhz'"),
    (["library", "clock_types", "video_mhz"], 3, "library.clock_types.video_mhz: unknown key"),
    (["library", "event_reasons"], ["nvmlDeviceGet Reasons"], "library.event_reasons: must be a list of NVML call names"),
    (["library", "event_reasons"], [], "library.event_reasons: must be a list of NVML call names"),
]

# nvml.h: nvmlClockType_t NVML_CLOCK_GRAPHICS 0, NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2; NVML_SUCCESS 0;
# NVML_PSTATE_UNKNOWN 32
NVML_H_LIBRARY = {"success": 0, "pstate_unknown": 32,
                  "clock_types": {"graphics_mhz": 0, "sm_mhz": 1, "memory_mhz": 2, "max_graphics_mhz": 0}}


@pytest.mark.parametrize("keys, value, message", CASES,
                         ids=[f"{'.'.join(k)}={'deleted' if v is KeyError else v!r}" for k, v, _ in CASES])
def test_a_broken_nvml_matrix_is_refused_naming_the_key(tmp_path, keys, value, message):
    path = write_damaged(tmp_path / "nvml.yaml", REAL, keys, value)
    with pytest.raises(MatrixError) as caught:
        load_nvml(path)
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: {message}"), str(caught.value)


def test_the_librarys_values_are_nvml_h_s():
    library = load_nvml()["library"]
    assert {k: library[k] for k in NVML_H_LIBRARY} == NVML_H_LIBRARY
    assert library["file"] == "libnvidia-ml.so.1"


def test_the_reasons_bits_are_nvml_h_s():
    table = load_nvml()["clock_event_reasons"]
    assert {name: entry["bit"] for name, entry in table.items()} == NVML_H


def test_only_the_power_cap_is_what_the_card_can_reach_and_the_slowdowns_are_faults():
    table = load_nvml()["clock_event_reasons"]
    assert [n for n, e in table.items() if e["kind"] == "cap"] == ["sw_power_cap"]
    assert sorted(n for n, e in table.items() if e["kind"] == "slowdown") == [
        "hw_power_brake_slowdown", "hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown"]


def test_a_mask_decodes_to_its_reasons_in_bit_order_keeping_an_unnamed_bit():
    events = clock_events(0x40 | 0x4 | 0x1000, load_nvml())
    assert [(e["reason"], e["kind"]) for e in events] == [
        ("sw_power_cap", "cap"), ("hw_thermal_slowdown", "slowdown"), ("0x1000", "unknown")]
    assert clock_events(0, load_nvml()) == []
