"""rmpeer.run.fitness.nvml_clocks: the clocks and, in the same call, what the card may reach
(its maximum graphics clock, NVML's clock-event reasons, power draw and limit), read from
nvidia-smi's CSV by the field names of matrices/nvml.yaml; an nvidia-smi that refuses the
limit fields is asked the clocks alone and says so. No GPU here: a stand-in nvidia-smi on PATH
prints lines of the shape `--format=csv,noheader,nounits` gives (the reasons a hex mask, "[N/A]"
for a value the card does not report); the figures are an H200's under a power-capped load, as
an example, not a recording."""

import os
import stat

import pytest

from rmpeer.run.fitness import nvml_clocks

pytestmark = pytest.mark.offline

# nvidia-smi --query-gpu=pci.bus_id,clocks.gr,clocks.sm,clocks.mem,pstate,clocks.max.gr,
#   clocks_event_reasons.active,power.draw,enforced.power.limit --format=csv,noheader,nounits
BUSY = "00000000:00:06.0, 1755, 1755, 3201, P0, 1980, 0x0000000000000004, 698.52, 700.00"
OLD_SMI_REFUSAL = 'Field "clocks_event_reasons.active" is not a valid field to query.'


def _stand_in(tmp_path, monkeypatch, script: str):
    folder = tmp_path / "bin"
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + script)
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp_path / "args").touch()
    return tmp_path / "args"


def test_one_call_reads_the_clocks_and_what_holds_them(tmp_path, monkeypatch):
    args = _stand_in(tmp_path, monkeypatch, f'echo "$@" >> "{tmp_path}/args"\necho "{BUSY}"\n')
    got = nvml_clocks()
    assert got == {"gpus": {"0000:00:06.0": {
        "graphics_mhz": 1755, "sm_mhz": 1755, "memory_mhz": 3201, "pstate": "P0", "max_graphics_mhz": 1980,
        "event_mask": 0x4, "power_mw": 698520, "power_limit_mw": 700000}}}
    calls = args.read_text().splitlines()
    assert calls == ["--query-gpu=pci.bus_id,clocks.gr,clocks.sm,clocks.mem,pstate,clocks.max.gr,"
                     "clocks_event_reasons.active,power.draw,enforced.power.limit --format=csv,noheader,nounits"]


def test_an_nvidia_smi_without_the_limit_fields_gives_the_clocks_alone_and_why(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, f'case "$1" in *clocks_event_reasons*) echo \'{OLD_SMI_REFUSAL}\'; exit 2;; esac\n'
                                      'echo "00000000:00:06.0, 345, 345, 3201, P0"\n')
    got = nvml_clocks()
    assert got["gpus"] == {"0000:00:06.0": {"graphics_mhz": 345, "sm_mhz": 345, "memory_mhz": 3201, "pstate": "P0"}}
    assert got["limits_reason"] == f"nvidia-smi exit 2: {OLD_SMI_REFUSAL}"


def test_n_a_fields_are_none_not_numbers(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, 'echo "00000000:00:06.0, 345, 345, 3201, P0, [N/A], [N/A], [N/A], [N/A]"\n')
    reading = nvml_clocks()["gpus"]["0000:00:06.0"]
    assert reading["max_graphics_mhz"] is None and reading["event_mask"] is None
    assert reading["power_mw"] is None and reading["power_limit_mw"] is None


def test_an_nvidia_smi_that_fails_both_ways_is_a_reason(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, 'echo "NVIDIA-SMI has failed" >&2; exit 9\n')
    assert nvml_clocks() == {"reason": "nvidia-smi exit 9: NVIDIA-SMI has failed"}


@pytest.mark.parametrize("mask", ["-0x1", "0x10000000000000000", "0xzz"])
def test_a_mask_that_is_no_64_bit_word_is_not_read(tmp_path, monkeypatch, mask):
    """Python reads "-0x1" as a number with every bit set: taken as it is, it would name every
    reason, thermal slowdowns included, and degrade the host on a misprint."""
    _stand_in(tmp_path, monkeypatch, f'echo "00000000:00:06.0, 1980, 1980, 3201, P0, 1980, {mask}, 100.0, 700.0"\n')
    assert nvml_clocks()["gpus"]["0000:00:06.0"]["event_mask"] is None


@pytest.mark.parametrize("watts", ["inf", "nan", "-5.0", "1e300"])
def test_a_power_that_is_no_figure_is_not_read(tmp_path, monkeypatch, watts):
    _stand_in(tmp_path, monkeypatch, f'echo "00000000:00:06.0, 1980, 1980, 3201, P0, 1980, 0x4, {watts}, 700.0"\n')
    reading = nvml_clocks()["gpus"]["0000:00:06.0"]
    assert reading["power_mw"] is None and reading["power_limit_mw"] == 700000


def test_a_started_reading_is_the_one_read_later(tmp_path, monkeypatch):
    """start_smi() runs nvidia-smi at once; nvml_clocks(started) reads that process's answer
    and asks nvidia-smi nothing more."""
    import time

    from rmpeer.run.fitness import start_smi

    args = _stand_in(tmp_path, monkeypatch, f'echo "$@" >> "{tmp_path}/args"\necho "{BUSY}"\n')
    started = start_smi()
    for _ in range(600):                         # the stand-in has run (its one call is logged)
        if args.read_text():
            break
        time.sleep(0.05)
    assert len(args.read_text().splitlines()) == 1
    assert nvml_clocks(started)["gpus"]["0000:00:06.0"]["graphics_mhz"] == 1755
    assert len(args.read_text().splitlines()) == 1, "the started reading was read, not a new one"


def test_a_started_reading_never_read_is_ended(tmp_path, monkeypatch):
    """Ended even where a child of it holds its output open: cancel() waits for the process,
    never for its pipes' end (a run's clean-up at a signal must not wait on them)."""
    import signal
    import threading
    import time

    from rmpeer.run.fitness import start_smi

    child = tmp_path / "child.pid"
    _stand_in(tmp_path, monkeypatch, f'sleep 60 &\necho $! > "{child}"\nwait\n')
    started = start_smi()
    try:
        for _ in range(600):                     # the child that holds the pipes has started
            if child.is_file() and child.read_text().strip():
                break
            time.sleep(0.05)
        ended = threading.Thread(target=started.cancel, daemon=True)
        ended.start()
        ended.join(20)                           # a bound on a hang, not a timing: the child sleeps 60 s
        assert not ended.is_alive(), "cancel() waited for the pipes a child of nvidia-smi holds"
        assert started.proc.returncode is not None, "no nvidia-smi is left running"
    finally:
        if child.is_file() and child.read_text().strip():
            try:
                os.kill(int(child.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_without_nvidia_smi_a_started_reading_is_the_reason(tmp_path, monkeypatch):
    from rmpeer.run.fitness import start_smi

    monkeypatch.setenv("PATH", str(tmp_path))
    assert nvml_clocks(start_smi()) == {"reason": "nvidia-smi not found"}
