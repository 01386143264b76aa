"""A struct field reads and writes its bytes at its own offset, little-endian, signed only for
i32, and arrays element by element (rmpeer/abi/structs.py, whose widths and signedness are the C
language's). Expected bytes are written out here, not computed by the code under test."""

import pytest

from rmpeer.abi.structs import Field, Struct

pytestmark = pytest.mark.offline

S = Struct("S", 24, {"status": Field("status", 0, "u32"), "delta": Field("delta", 4, "i32"),
                     "handles": Field("handles", 8, "u16", 3), "name": Field("name", 14, "char", 2),
                     "address": Field("address", 16, "ptr")})


def test_each_field_reads_its_own_bytes():
    buf = bytes.fromhex("feffffff" "feffffff" "01000200 0300" "4142" "0800000000000010")
    assert S.decode(buf) == {"status": 0xFFFFFFFE, "delta": -2, "handles": [1, 2, 3], "name": b"AB",
                             "address": 0x1000000000000008}


def test_each_field_writes_its_own_bytes():
    buf = S.pack(status=5, delta=-3, handles=[7, 8], name=b"Z", address=0x0102030405060708)
    assert bytes(buf).hex() == "05000000" "fdffffff" "070008000000" "5a00" "0807060504030201"
    S.set(buf, "delta", 1)
    S.set(buf, "handles", [9])
    assert bytes(buf).hex() == "05000000" "01000000" "090008000000" "5a00" "0807060504030201"
    with pytest.raises(ValueError):
        S.set(buf, "handles", [1, 2, 3, 4])
    with pytest.raises(OverflowError):
        S.set(buf, "status", -1)
