"""Tests that kill the mutants of rmpeer/render/health_calls.py (docs/mutation.md): reply bytes
packed by hand with `struct` into a stand-in ABI of known layout (a list at a known offset, its
count field, elements of 8 bytes, index constants and bit-field groups named here), each line
written out from those bytes, never taken from describe_lists."""

import struct

import pytest

from rmpeer.render.health_calls import describe_lists

pytestmark = pytest.mark.offline

BUS = "NV2080_CTRL_BUS_GET_INFO_V2_PARAMS"
GPU = "NV2080_CTRL_GPU_GET_INFO_V2_PARAMS"
ECC = "NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS"


class Field:
    def __init__(self, offset, size):
        self.offset, self.size = offset, size


class Struct:
    """Little-endian unsigned fields: name -> (offset, size)."""

    def __init__(self, size, fields):
        self.size, self.fields = size, fields

    def field(self, name):
        return Field(*self.fields[name])

    def get(self, raw, name):
        offset, size = self.fields[name]
        return int.from_bytes(raw[offset:offset + size], "little")

    def decode(self, raw):
        assert len(raw) == self.size, "an element is decoded from exactly its own bytes"
        return {name: int.from_bytes(raw[o:o + s], "little") for name, (o, s) in self.fields.items()}


class Bits:
    def __init__(self, name):
        self.name = name

    def describe(self, word):
        return f"{self.name.rsplit('_', 1)[-1]} of {word:#x}"


class Abi:
    def __init__(self, structs, constants=None, bitfields=()):
        self.structs, self.constants, self.bitfields = structs, constants or {}, set(bitfields)

    def struct(self, name):
        return self.structs[name]

    def bits(self, name):
        return Bits(name)


INFO = Struct(8, {"index": (0, 4), "data": (4, 4)})
CONSTANTS = {"NV2080_CTRL_BUS_INFO_INDEX_FLOAT": 7.0,                    # equal to 7, not an int: never a name
             "NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CTRL_STATUS": 7,
             "NV2080_CTRL_BUS_INFO_INDEX_PCIE_GPU_LINK_CAPS": 8,
             "NV2080_CTRL_BUS_INFO_INDEX_PCIE_ROOT_LINK_CAPS": 9,
             "NV2080_CTRL_BUS_INFO_INDEX_COHERENT_DMA_FLAGS": 10,
             "NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE": 42,
             "NV2080_CTRL_GPU_INFO_INDEX_ECID_LO32": 11,
             "NV2080_CTRL_GPU_INFO_GPU_SMC_MODE_DISABLED": 2,
             "NV2080_CTRL_GPU_INFO_GPU_SMC_MODE_ENABLED": 3,
             "OTHER_NV2080_CTRL_BUS_INFO_INDEX_X": 12}                   # the prefix not at the start
BITFIELDS = ("NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS", "NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP")


def params(count, elements, slots=4, at=8):
    """A params struct: 4 bytes of something, the count at 4, `slots` elements of 8 bytes from `at`."""
    raw = bytearray(at + slots * 8)
    struct.pack_into("<I", raw, 0, 0xdeadbeef)
    struct.pack_into("<I", raw, 4, count)
    for i, (index, data) in enumerate(elements):
        struct.pack_into("<II", raw, at + 8 * i, index, data)
    return bytes(raw)


def abi(name, slots=4, at=8, elem=INFO, count=True, **kw):
    elem_name = {BUS: "NV2080_CTRL_BUS_INFO", GPU: "NV2080_CTRL_GPU_INFO",
                 ECC: "NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS"}[name]
    fields = {{BUS: "busInfoList", GPU: "gpuInfoList", ECC: "units"}[name]: (at, slots * elem.size)}
    if count:
        fields[{BUS: "busInfoListSize", GPU: "gpuInfoListSize", ECC: "x"}[name]] = (4, 4)
    return Abi({name: Struct(at + slots * elem.size, fields), elem_name: elem}, CONSTANTS, **kw)


def test_each_bus_info_element_named_with_its_bits():
    raw = params(4, [(7, 0x11050000), (8, 0x10), (9, 0x4), (10, 0x3)])
    assert describe_lists(abi(BUS, bitfields=BITFIELDS), BUS, raw) == [
        "      [0] index 7 (PCIE_GPU_LINK_CTRL_STATUS) data 0x11050000 (STATUS of 0x11050000)",
        "      [1] index 8 (PCIE_GPU_LINK_CAPS) data 0x10 (CAP of 0x10)",
        "      [2] index 9 (PCIE_ROOT_LINK_CAPS) data 0x4 (CAP of 0x4)",
        "      [3] index 10 (COHERENT_DMA_FLAGS) data 0x3"]


def test_only_the_count_of_elements_and_never_past_the_list():
    raw = params(2, [(7, 1), (99, 0), (8, 2)], at=16)
    assert describe_lists(abi(BUS, at=16), BUS, raw, indent="> ") == [
        "> [0] index 7 (PCIE_GPU_LINK_CTRL_STATUS) data 0x1",                # no bit-field group in this ABI
        "> [1] index 99 (99) data 0x0"]
    raw = params(9, [(8, 5), (12, 6)], slots=2)
    assert describe_lists(abi(BUS, slots=2), BUS, raw) == ["      [0] index 8 (PCIE_GPU_LINK_CAPS) data 0x5",
                                                           "      [1] index 12 (12) data 0x6"]
    assert describe_lists(abi(BUS), BUS, params(0, [(7, 1)])) == []


def test_the_smc_mode_named_by_its_value():
    raw = params(3, [(42, 2), (42, 3), (42, 9), (11, 2)])
    assert describe_lists(abi(GPU, bitfields=BITFIELDS), GPU, raw) == [
        "      [0] index 42 (GPU_SMC_MODE) data 0x2 (DISABLED)",
        "      [1] index 42 (GPU_SMC_MODE) data 0x3 (ENABLED)",
        "      [2] index 42 (GPU_SMC_MODE) data 0x9 (?)"]
    assert describe_lists(abi(GPU, slots=2), GPU, params(4, [(11, 2), (7, 1)], slots=2))[0] == (
        "      [0] index 11 (ECID_LO32) data 0x2")


def test_ecc_units_each_supported_one_with_its_fields():
    unit = Struct(12, {"enabled": (0, 4), "supported": (4, 4), "dbe.count": (8, 4)})
    raw = bytearray(4 + 3 * 12)
    for i, (enabled, supported, dbe) in enumerate([(1, 1, 0), (0, 0, 5), (1, 2, 3)]):
        struct.pack_into("<III", raw, 4 + 12 * i, enabled, supported, dbe)
    assert describe_lists(abi(ECC, slots=3, at=4, elem=unit, count=False), ECC, bytes(raw), indent="  ") == [
        "  unit 0: enabled=1 supported=1 dbe.count=0",
        "  unit 2: enabled=1 supported=2 dbe.count=3"]


def test_nothing_for_another_struct_no_abi_or_a_struct_the_abi_lacks():
    raw = params(1, [(7, 1)])
    assert describe_lists(abi(BUS), GPU, raw) == []                            # GPU's structs not in it
    assert describe_lists(None, BUS, raw) == []
    assert describe_lists(abi(BUS), "NV2080_CTRL_BUS_INFO", raw) == []
    only_params = abi(BUS)
    del only_params.structs["NV2080_CTRL_BUS_INFO"]
    assert describe_lists(only_params, BUS, raw) == []
    only_elem = abi(BUS)
    del only_elem.structs[BUS]
    assert describe_lists(only_elem, BUS, raw) == []
