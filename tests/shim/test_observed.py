"""rmpeer.shim.observed and the call record's number bounds: what a recording observed
outside RM (clocks, /proc's GPUs, the kernel log, the GPU processes, this process's pid)
must be of the kind its live reader writes, and an errno or a result must be one a kernel
gives. Recordings derived from a committed one (fixtures/transcripts, the newest 1 x H200
one) with one observed value or one number changed, listed in CHANGED, are refused in one
line (exit 2) naming the label; before this check each was an internal error (exit 5) in
the middle of the replay. The live readers' own values (made here, from this machine and
from files written here) fit the kinds, and so does every committed recording."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from rmpeer.machine.xids import XidWatcher
from rmpeer.paths import transcripts_dir
from rmpeer.rm.host import read_proc_gpus
from rmpeer.rm.snapshots import snapshot_gpu_processes
from rmpeer.run.fitness import nvml_clocks
from rmpeer.run.passive import xids_since
from rmpeer.run.targets import committed_transcripts
from rmpeer.shim.live import LiveShim
from rmpeer.shim.observed import kind_of, misfit
from rmpeer.shim.records import read_transcript

pytestmark = pytest.mark.offline
ONE = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[-1]      # the newest: it observes every label

# (case, the label (or op) changed, the field, the value written there)
CHANGED = [
    ("clocks-text", "host:clocks:idle", "value", "zzz"),
    ("clocks-mhz-text", "host:clocks:boosted", "value", {"gpus": {"0000:00:06.0": {"graphics_mhz": "fast"}}}),
    ("proc-gpus-mapping", "host:proc-gpus", "value", {"a": 1}),
    ("processes-list", "gpu-processes:before", "value", [1, 2]),
    ("process-pid-huge", "gpu-processes:before", "value",
     {"processes": [{"pid": 1 << 40, "command": "x"}], "unreadable": [], "rm_errors": {}}),
    ("process-vidmem-card-text", "gpu-processes:before", "value",
     {"processes": [{"pid": 7, "vidmem": {"x": 1}}], "unreadable": [], "rm_errors": {}}),
    ("pid-text", "teardown:own:before:pid", "value", "x"),
    ("xid-without-pci", "host:xids", "value", {"readable": True, "source": "kmsg", "reason": None, "xids": [{}]}),
    ("proc-gpu-without-bus", "host:proc-gpus", "value", [{"model": "NVIDIA H200", "uuid": "GPU-1"}]),
    ("ioctl-errno-huge", "ioctl", "errno", 10 ** 20),
    ("open-errno-huge", "open", "errno", 4096),
    ("ioctl-result-huge", "ioctl", "result", 10 ** 30),
]


def lines_of(path) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def derived(tmp_path, case, where, field, value):
    lines = lines_of(ONE)
    line = next(d for d in lines if d.get("op") == where or (d.get("op") == "observe" and d.get("label") == where))
    if field == "value":
        line["extra"]["value"] = value
    else:
        line[field] = value
        if line["op"] == "open" and field == "errno":
            line["result"] = -1          # a failed open, as the recorder writes one
    path = tmp_path / f"{ONE.name.split('.')[0]}-{case}.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(d) + "\n" for d in lines).encode()))
    return path


@pytest.mark.parametrize("case,where,field,value", CHANGED, ids=[c[0] for c in CHANGED])
def test_a_recording_with_a_value_of_another_kind_is_refused_in_one_line(tmp_path, case, where, field, value):
    path = derived(tmp_path, case, where, field, value)
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(tmp_path / "host.key"), RMPEER_STATE_DIR=str(tmp_path / "s"))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(path), "--tier", "quick",
                           "--output", str(tmp_path / "o")], capture_output=True, text=True, timeout=120, env=env)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "internal error" not in said and "Traceback" not in said
    assert "cannot be replayed" in said and (where in said or field in said), said


@pytest.mark.parametrize("path", committed_transcripts(), ids=lambda p: p.rsplit("/", 1)[-1])
def test_every_committed_recording_observed_values_of_the_recorders_kinds(path):
    observed = [d for d in lines_of(path) if d.get("op") == "observe"]
    assert observed and all(kind_of(d["label"]) is not None for d in observed)
    assert [misfit(d["extra"].get("value"), kind_of(d["label"])) for d in observed] == [""] * len(observed)
    read_transcript(path)          # and the reader takes it whole


def no_dmesg():
    raise OSError(1, "Operation not permitted")      # a user's dmesg under kernel.dmesg_restrict


def test_the_live_readers_write_values_of_their_kinds(tmp_path):
    gpus = tmp_path / "gpus" / "0000:00:06.0"
    gpus.mkdir(parents=True)
    (gpus / "information").write_text("Model: \t NVIDIA H200\nGPU UUID: \t GPU-1\nBus Location: \t 0000:00:06.0\n"
                                      "Video BIOS: \t 96.00.a5.00.1a\n")
    made = {"host:proc-gpus": read_proc_gpus(str(tmp_path / "gpus")),
            "host:clocks:idle": nvml_clocks(),
            "host:xids": xids_since(None, kmsg=str(tmp_path / "no-kmsg")),
            "teardown:own:before:pid": os.getpid()}
    made["host:xids:dmesg"] = XidWatcher(kmsg=str(tmp_path / "no-kmsg"), dmesg=lambda: "").start().stop()
    made["host:xids:neither"] = XidWatcher(kmsg=str(tmp_path / "no-kmsg"), dmesg=no_dmesg).start().stop()
    made["gpu-processes:before"] = snapshot_gpu_processes(LiveShim(), label="gpu-processes:before")
    for label, value in made.items():
        kind = kind_of(label.removesuffix(":dmesg").removesuffix(":neither"))
        assert misfit(value, kind) == "", (label, value)


def test_a_misfit_names_the_first_place_that_is_not_of_its_kind():
    kind = kind_of("host:clocks:idle")
    assert misfit({"gpus": {"b": {"graphics_mhz": None, "pstate": "P0"}}}, kind) == ""
    assert misfit({"gpus": {"b": {"graphics_mhz": True}}}, kind) == \
        "its value['gpus']['b']['graphics_mhz'] is True, not a whole number under 1048576"
    assert kind_of("an unknown label") is None
