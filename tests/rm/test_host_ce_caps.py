"""The copy engines' caps table (NV2080_CTRL_CMD_CE_GET_ALL_CAPS) read in every release's
layout: 535's headers size it [NV2080_CTRL_MAX_PCES][NV2080_CTRL_CE_CAPS_TBL_SIZE] (32 rows
of 2 bytes) and have no NV2080_CTRL_MAX_CES; from 545 it is [NV2080_CTRL_MAX_CES][...] (64
rows). The expected rows and names are the headers' (ctrl/ctrl2080/ctrl2080ce.h at each tag),
not the reader's."""

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.model.host import Card
from rmpeer.rm.host import Host
from rmpeer.shim.records import CallRecord

pytestmark = pytest.mark.offline


class _Rm:
    """The two controls Host._ce makes, answered as RM would: the caps table given, no PCE mask."""

    def __init__(self, abi, table: bytes, present: int):
        self.abi, self.table, self.present = abi, table, present

    def control(self, handle, name, *, label, check=True, **fields):
        if name == "NV2080_CTRL_CMD_CE_GET_ALL_CAPS":
            return {"capsTbl": self.table, "present": self.present}
        return {"pceMask": 0x3, "_record": CallRecord(0, "ioctl", status=0, status_name="NV_OK")}


def _read(release: str, rows: int, present: dict) -> dict:
    """Card.ce_caps after Host._ce on `release`, with each present LCE's row set as given."""
    table = bytearray(rows * 2)
    for lce, (byte0, byte1) in present.items():
        table[2 * lce:2 * lce + 2] = bytes((byte0, byte1))
    host = Host.__new__(Host)
    host.rm = _Rm(DriverMatrix().abi(release), bytes(table), sum(1 << lce for lce in present))
    card = Card(0, 0, 0x100, "0000:1b:00.0", 0x2335, 0, "NVIDIA H200", "GPU-x")
    host._ce(card, 0xBEEF)
    return card.ce_caps


def test_a_535_caps_table_is_read_without_max_ces():
    """535.43.02: 32 rows; before, the read asked for NV2080_CTRL_MAX_CES (a KeyError, exit 5
    on every live open of a 535 driver)."""
    abi = DriverMatrix().abi("535.43.02")
    assert "NV2080_CTRL_MAX_CES" not in abi.constants and abi.const("NV2080_CTRL_MAX_PCES") == 32
    # CE_P2P is byte 0 mask 0x40; CE_SUPPORTS_NONPIPELINED_BL byte 1 mask 0x01 (ctrl2080ce.h)
    caps = _read("535.43.02", 32, {0: (0x40, 0x00), 9: (0x00, 0x01)})
    assert caps == {0: ["CE_P2P"], 9: ["CE_SUPPORTS_NONPIPELINED_BL"]}


def test_a_580_caps_table_reads_its_64_rows():
    abi = DriverMatrix().abi("580.65.06")
    assert abi.const("NV2080_CTRL_MAX_CES") == 64
    caps = _read("580.65.06", 64, {2: (0x40, 0x01)})
    assert caps == {2: ["CE_P2P", "CE_SUPPORTS_NONPIPELINED_BL"]}
