"""rm.health: each health control decoded field by field, from the bytes the real driver gave.

The replies are those RM gave on 1 x H200 (580.159.04) to rmpeer's own calls, kept in
docs/evidence/h200x1-20261201T0928Z-health-probe/nobody.json; the expected values are
NVML's account of the same machine at the same minute (nvidia-smi-q.txt there), an
independent source. A control RM refuses (NV_ERR_NOT_SUPPORTED) or that a release lacks is
recorded as such, never as a healthy value."""

import json
import re
from pathlib import Path

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.abi import status as status_of
from rmpeer.rm import health
from rmpeer.rm.client import RmClient
from rmpeer.shim.records import CallRecord, Payload
from rmpeer.shim.replay import ReplayBuffer

pytestmark = pytest.mark.offline
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261201T0928Z-health-probe"
PROBE = json.loads((EVIDENCE / "nobody.json").read_text())
SMI = (EVIDENCE / "nvidia-smi-q.txt").read_text()
NOT_SUPPORTED = 0x56   # matrices/nvstatus.yaml's NV_ERR_NOT_SUPPORTED


def smi(section: str, key: str) -> str:
    """A value of nvidia-smi -q: the first `key` line after the `section` line."""
    tail = SMI[SMI.index(section):]
    return re.search(rf"^\s*{re.escape(key)}\s*:\s*(.*?)\s*$", tail, re.M).group(1)


class RecordedReplies:
    """A shim that answers each health call with the reply bytes RM gave it on the real
    host (by label), and any other call with its request unchanged; `refuse` names labels
    answered with an RM status instead."""

    mode = "test"

    def __init__(self, refuse: dict | None = None):
        self.replies = {c["label"]: c["reply"] for c in PROBE["calls"]}
        self.refuse, self.sent = refuse or {}, []

    def buffer(self, data):
        return ReplayBuffer(data)

    def open(self, path, label=""):
        return 3

    def close(self, fd, label=""):
        pass

    def ioctl(self, fd, request, top, *, label, escape, struct, payload=None, payload_struct=None,
              status_field="status"):
        self.sent.append(label)
        code = self.refuse.get(label, 0)
        rec = CallRecord(len(self.sent), "ioctl", label=label, request=top.read().hex(), reply=top.read().hex())
        if payload is not None:
            sent = payload.read()
            reply = bytes.fromhex(self.replies[label]) if label in self.replies and not code else sent
            assert len(reply) == len(sent), f"{label}: the ABI's params size differs from the driver's reply"
            payload.write(reply)
            rec.payload = Payload(payload_struct.name, sent.hex(), reply.hex())
        st = status_of(code)
        rec.status, rec.status_name, rec.status_text = st.code, st.name, st.text
        return rec


def reader(shim=None, release: str | None = None):
    matrix = DriverMatrix()
    abi = matrix.abi(release) if release else matrix.abi_for_driver(PROBE["driver"])
    return health.Reader(RmClient(shim or RecordedReplies(), abi))


@pytest.fixture(scope="module")
def card():
    return reader().card(0, 0xA1000000)


def test_the_pcie_link_reads_as_nvml_reports_it(card):
    pcie = card["pcie"]
    assert pcie["status"] == "NV_OK"
    assert pcie["gen"] == int(smi("GPU Link Info", "Current"))
    assert pcie["max_gen"] == int(smi("GPU Link Info", "Max"))
    assert pcie["width"] == int(smi("Link Width", "Current").rstrip("x"))
    assert pcie["max_width"] == int(smi("Link Width", "Max").rstrip("x"))
    assert smi("GPU Link Info", "Host Max") == "N/A" and pcie["root_max_gen"] is None


def test_ecc_remapped_rows_reset_recovery_and_mig_read_as_nvml_reports_them(card):
    assert card["ecc"]["enabled"] is (smi("ECC Mode", "Current") == "Enabled")
    assert card["ecc"]["dbe"] == int(smi("ECC Errors", "DRAM Uncorrectable"))
    assert card["ecc"]["sbe"] == int(smi("ECC Errors", "DRAM Correctable"))
    assert card["ecc"]["uncorrectable"] == "FALSE" and card["ecc"]["fatal_poison"] is False
    rows = card["remapped_rows"]
    assert rows["pending"] is (smi("Remapped Rows", "Pending") == "Yes")
    assert rows["failure"] is (smi("Remapped Rows", "Remapping Failure Occurred") == "Yes")
    assert rows["rows"] == int(smi("Remapped Rows", "Correctable Error")) + int(smi("Remapped Rows", "Uncorrectable Error"))
    assert card["recovery"]["action"] == smi("GPU Recovery Action", "GPU Recovery Action").upper()
    assert card["mig"]["mode"] == smi("MIG Mode", "Current").upper()
    assert card["reset"] == {"status": "NV_OK", "required": False}
    assert card["drain"] == {"status": "NV_OK", "recommended": False}


def test_the_fabric_reads_as_absent_on_a_host_without_nvswitch(card):
    probe = card["fabric_probe"]
    assert smi("Fabric", "State") == "N/A" and probe["state"] == "UNSUPPORTED"
    assert smi("Health", "Summary") == "N/A" and probe["health_summary"] == "NOT_SUPPORTED"
    assert probe["health_mask"]["DEGRADED_BW"] == "NOT_SUPPORTED"
    assert reader().fabric() == {"status": "NV_OK", "state": "SKIP"}


def test_the_cc_object_is_allocated_read_and_freed():
    shim = RecordedReplies()
    cc = reader(shim).confidential_compute()
    assert cc["feature"] == "DISABLED" and cc["gpus"] == "HCC" and cc["cpu"] == "NONE"
    assert shim.sent == ["alloc:client", "health:cc-object", "health:cc-caps",
                         "health:cc-object:free"]


def test_a_control_rm_refuses_is_recorded_as_refused_never_as_healthy():
    shim = RecordedReplies(refuse={"health:remapped-rows:card0": NOT_SUPPORTED, "health:pcie:card0": NOT_SUPPORTED,
                                   "health:cc-object": NOT_SUPPORTED})
    r = reader(shim)
    card = r.card(0, 0xA1000000)
    assert card["remapped_rows"]["status"] == "NV_ERR_NOT_SUPPORTED" and "pending" not in card["remapped_rows"]
    assert card["pcie"]["status"] == "NV_ERR_NOT_SUPPORTED"
    assert (card["pcie"]["gen"], card["pcie"]["width"], card["pcie"]["max_gen"], card["pcie"]["max_width"]) == (
        None, None, None, None)
    assert r.confidential_compute()["status"] == "NV_ERR_NOT_SUPPORTED"
    assert "health:cc-caps" not in shim.sent and "health:cc-object:free" not in shim.sent


def test_a_release_without_the_control_says_so_and_sends_nothing():
    shim = RecordedReplies()
    fact = reader(shim, "535.43.02").recovery(0xA1000000, 0)   # GET_RECOVERY_ACTION appears at 565.57.01
    assert fact["status"] == "absent" and "535.43.02" in fact["reason"]
    assert "health:recovery:card0" not in shim.sent


def test_the_pcie_decode_fails_when_a_bit_field_is_read_wrong(monkeypatch):
    """The decode reads width from bits 25:20 (ctrl2080bus.h); a mutant reading the speed's
    bits for it is caught by NVML's figures."""
    from source_mutation import mutated

    broken = mutated("rmpeer.rm.health", 'out["width"] = _lanes(status.fields["LINK_WIDTH"]',
                     'out["width"] = _lanes(status.fields["LINK_SPEED"]')
    abi = DriverMatrix().abi_for_driver(PROBE["driver"])
    pcie = broken.Reader(RmClient(RecordedReplies(), abi)).pcie(0xA1000000, 0)
    assert pcie["width"] != int(smi("Link Width", "Current").rstrip("x"))


def test_the_remap_decode_fails_when_pending_reads_the_failure_bit():
    from source_mutation import mutated

    broken = mutated("rmpeer.rm.health", 'flags.value_of(reply["flags"], "PENDING")',
                     'flags.value_of(reply["flags"] | 1, "PENDING")')
    abi = DriverMatrix().abi_for_driver(PROBE["driver"])
    rows = broken.Reader(RmClient(RecordedReplies(), abi)).remapped_rows(0xA1000000, 0)
    assert rows["pending"] is not (smi("Remapped Rows", "Pending") == "Yes")
