"""Who else holds the GPUs: a /proc tree built in tmp_path, and RM's per-card process list
answered by a stand-in for the kernel that reads and writes the structs of drivers.yaml."""

import os

import pytest

from rmpeer.abi import DriverMatrix, status
from rmpeer.machine.gpuprocs import (GET_PID_INFO, GET_PIDS, ProcScan, card_minors, merged, other_gpu_processes,
                                     rm_gpu_processes, scan_gpu_processes)
from rmpeer.model.processes import GpuProcess
from rmpeer.rm.client import RmClient
from rmpeer.shim.records import CallRecord, Payload
from rmpeer.shim.replay import ReplayBuffer

pytestmark = pytest.mark.offline
ABI = DriverMatrix().abi_for_driver("580.95.05")
NV_ERR_NOT_SUPPORTED = next(c for c in range(0, 0x100) if status(c).name == "NV_ERR_NOT_SUPPORTED")


def fake_proc(root, procs, gpus):
    """procs: {pid: (argv, [fd targets])}; gpus: {bus: minor}, written as the driver does."""
    for bus, minor in gpus.items():
        d = root / "driver" / "nvidia" / "gpus" / bus
        d.mkdir(parents=True)
        (d / "information").write_text(f"Model: \t\t NVIDIA H200\nBus Location: \t {bus}\n"
                                       f"Device Minor: \t {minor}\nGPU Excluded:\t No\n")
    for pid, (argv, targets) in procs.items():
        fd = root / str(pid) / "fd"
        fd.mkdir(parents=True)
        (root / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (root / str(pid) / "comm").write_text(argv[0].rsplit("/", 1)[-1][:15] + "\n")
        for n, target in enumerate(targets):
            os.symlink(target, fd / str(n))
    (root / "self").mkdir(exist_ok=True)      # not a pid: ignored
    return root


@pytest.fixture
def proc(tmp_path):
    # minors deliberately out of bus order: card numbers follow the bus, not the minor
    return fake_proc(tmp_path, {
        100: (["python", "train.py"], ["/dev/null", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia1",
                                       "/dev/nvidia0", "pipe:[1]"]),
        200: (["nvidia-smi", "-l"], ["/dev/nvidiactl", "/dev/nvidia1"]),
        300: (["bash"], ["/dev/pts/0", "/dev/null"]),
        400: (["uvm-only"], ["/dev/nvidia-uvm"]),
        500: (["rmpeer", "certify"], ["/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1"]),
    }, {"0000:19:00.0": 1, "0000:3b:00.0": 0})


def test_minors_map_to_cards_in_bus_order(proc):
    assert card_minors(proc) == {1: 0, 0: 1}


def test_the_processes_holding_cards_or_the_driver_are_listed_with_their_cards(proc):
    got = {p.pid: p for p in other_gpu_processes(proc, exclude={500})}
    assert sorted(got) == [100, 200, 400]
    assert got[100] == GpuProcess(100, "python train.py", (0, 1), True, (0, 1))
    assert got[200].cards == (0,) and got[200].minors == (1,) and got[200].command == "nvidia-smi -l"
    assert got[400].cards == () and got[400].driver and got[400].describe() == "pid 400 (uvm-only) on the driver"
    assert got[100].describe() == "pid 100 (python train.py) on cards 0, 1"


def test_this_process_is_left_out_by_default(tmp_path):
    me = os.getpid()
    root = fake_proc(tmp_path, {me: (["me"], ["/dev/nvidiactl"]), me + 1: (["other"], ["/dev/nvidia0"])},
                     {"0000:01:00.0": 0})
    assert [p.pid for p in other_gpu_processes(root)] == [me + 1]


def test_a_caller_with_rm_cards_maps_minors_its_way(proc):
    got = {p.pid: p.cards for p in other_gpu_processes(proc, exclude=(), minor_to_card={0: 5, 1: 6})}
    assert got[100] == (5, 6) and got[500] == (5, 6) and got[200] == (6,)


def test_a_process_whose_fds_cannot_be_read_is_listed_as_unreadable(proc, monkeypatch):
    import rmpeer.machine.gpuprocs as gp

    real = gp._targets

    def targets(fd_dir):
        if fd_dir.parent.name == "200":       # another user's process, seen by a non-root run
            raise PermissionError(13, "Permission denied", str(fd_dir))
        return real(fd_dir)
    monkeypatch.setattr(gp, "_targets", targets)
    scan = scan_gpu_processes(proc, exclude=())
    assert scan.unreadable == [200] and 200 not in [p.pid for p in scan.processes]


def test_a_round_trip_through_a_dict_keeps_everything(proc):
    for p in other_gpu_processes(proc, exclude=()):
        assert GpuProcess.from_dict(p.as_dict()) == p


# ---- RM's account, through a real RmClient and a stand-in kernel ---------------------------

class StandInKernel:
    """Answers the client's ioctls the way RM would for this table: {card's subdevice
    handle: {pid: vidmem bytes}}; `refuse`: controls answered NV_ERR_NOT_SUPPORTED."""

    mode = "stand-in"

    def __init__(self, abi, holders, refuse=()):
        self.abi, self.holders, self.refuse, self.calls = abi, holders, set(refuse), []

    def buffer(self, data):
        return ReplayBuffer(data)

    def open(self, path, *, label="open"):
        return 3

    def close(self, fd, *, label="close"):
        pass

    def ioctl(self, fd, request, top, *, label, escape, struct, payload=None, payload_struct=None,
              status_field="status"):
        abi, req = self.abi, top.read()
        rec = CallRecord(len(self.calls) + 1, "ioctl", label=label, escape=escape, struct=struct.name,
                         request=req.hex(), status=0, status_name="NV_OK")
        self.calls.append(rec)
        reply, code = bytearray(req), 0
        if escape == abi.escape("NV_ESC_RM_ALLOC") and struct.get(req, "hClass") == abi.cls("NV01_ROOT_CLIENT"):
            struct.set(reply, "hObjectNew", 0xC1D00001)
        elif escape == abi.escape("NV_ESC_RM_CONTROL"):
            cmd, obj = struct.get(req, "cmd"), struct.get(req, "hObject")
            name = next(n for n in (GET_PIDS, GET_PID_INFO) if abi.control(n)[0] == cmd)
            params = bytearray(payload.read())
            if name in self.refuse:
                code = NV_ERR_NOT_SUPPORTED
            elif name == GET_PIDS:
                assert payload_struct.get(params, "idType") == abi.const("NV2080_CTRL_GPU_GET_PIDS_ID_TYPE_CLASS")
                assert payload_struct.get(params, "id") == abi.cls("NV20_SUBDEVICE_0")
                pids = sorted(self.holders[obj])
                payload_struct.set(params, "pidTblCount", len(pids))
                payload_struct.set(params, "pidTbl", pids)
            else:
                elem = abi.struct("NV2080_CTRL_GPU_PID_INFO")
                base = payload_struct.field("pidInfoList").offset
                for i in range(payload_struct.get(params, "pidInfoListCount")):
                    at = base + i * elem.size
                    one = bytearray(params[at:at + elem.size])
                    pid = elem.get(one, "pid")
                    assert elem.get(one, "index") == abi.const("NV2080_CTRL_GPU_PID_INFO_INDEX_VIDEO_MEMORY_USAGE")
                    if pid in self.holders[obj]:
                        elem.set(one, "data.vidMemUsage.memPrivate", self.holders[obj][pid])
                    else:
                        elem.set(one, "result", NV_ERR_NOT_SUPPORTED)
                    params[at:at + elem.size] = one
            payload.write(bytes(params))
            rec.payload = Payload(payload_struct.name, "", bytes(params).hex())
        struct.set(reply, status_field, code) if status_field and struct.has(status_field) else None
        rec.reply, rec.status, rec.status_name = bytes(reply).hex(), code, status(code).name
        return rec


def test_rm_lists_each_cards_processes_and_their_video_memory_leaving_this_one_out():
    me = os.getpid()
    kernel = StandInKernel(ABI, {0xE1: {me: 64 << 20, 4242: 512 << 20}, 0xE2: {4242: 1 << 30, 77: 0}})
    scan = rm_gpu_processes(RmClient(kernel, ABI), {0: 0xE1, 1: 0xE2}, label="probe")
    assert scan.pids == {0: [4242], 1: [77, 4242]} and scan.errors == {}
    assert scan.vidmem == {0: {4242: 512 << 20}, 1: {77: 0, 4242: 1 << 30}}
    assert [c.label for c in kernel.calls[1:]] == ["probe:pids:card0", "probe:vidmem:card0",
                                                   "probe:pids:card1", "probe:vidmem:card1"]


@pytest.mark.parametrize("refused", [GET_PIDS, GET_PID_INFO])
def test_a_refusal_is_reported_not_raised(refused):
    kernel = StandInKernel(ABI, {0xE1: {4242: 1 << 20}}, refuse={refused})
    scan = rm_gpu_processes(RmClient(kernel, ABI), {0: 0xE1}, own_pid=1)
    assert scan.errors == {0: f"{refused}: NV_ERR_NOT_SUPPORTED"}
    assert scan.pids == ({0: [4242]} if refused == GET_PID_INFO else {})


def test_rm_adds_the_processes_proc_could_not_show(proc):
    kernel = StandInKernel(ABI, {0xE1: {100: 8 << 20, 999: 2 << 20}})
    rm_scan = rm_gpu_processes(RmClient(kernel, ABI), {0: 0xE1}, own_pid=1)
    both = {p.pid: p for p in merged(ProcScan([p for p in other_gpu_processes(proc, exclude=())]), rm_scan, proc)}
    assert both[100].source == "proc+rm" and both[100].vidmem == {0: 8 << 20} and both[100].cards == (0, 1)
    assert both[999].source == "rm" and both[999].cards == (0,) and both[999].command == "command unknown"
