"""`rmpeer show --calls`: the {index, data} lists and unit arrays of the health controls,
element by element, each index and data word named through the matrix (the struct itself
shows those lists as one byte block)."""

from __future__ import annotations

# params struct -> (list field, element struct, count field or None, index constant prefix)
LISTS = {
    "NV2080_CTRL_BUS_GET_INFO_V2_PARAMS": ("busInfoList", "NV2080_CTRL_BUS_INFO", "busInfoListSize",
                                           "NV2080_CTRL_BUS_INFO_INDEX_"),
    "NV2080_CTRL_GPU_GET_INFO_V2_PARAMS": ("gpuInfoList", "NV2080_CTRL_GPU_INFO", "gpuInfoListSize",
                                           "NV2080_CTRL_GPU_INFO_INDEX_"),
    "NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS": ("units", "NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS", None, None),
}
# index name -> the bit-field group its data word is (ctrl2080bus.h's formats)
DATA_BITS = {"PCIE_GPU_LINK_CTRL_STATUS": "NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS",
             "PCIE_GPU_LINK_CAPS": "NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP",
             "PCIE_ROOT_LINK_CAPS": "NV2080_CTRL_BUS_INFO_PCIE_LINK_CAP"}
DATA_VALUES = {"GPU_SMC_MODE": "NV2080_CTRL_GPU_INFO_GPU_SMC_MODE_"}


def _name(abi, prefix: str, value: int) -> str | None:
    return next((n[len(prefix):] for n, v in abi.constants.items()
                 if n.startswith(prefix) and v == value and isinstance(v, int)), None)


def describe_lists(abi, struct_name: str, raw: bytes, indent: str = "      ") -> list[str]:
    if struct_name not in LISTS or abi is None:
        return []
    field, elem_name, count_field, index_prefix = LISTS[struct_name]
    if elem_name not in abi.structs or struct_name not in abi.structs:
        return []
    st, elem = abi.struct(struct_name), abi.struct(elem_name)
    base = st.field(field).offset
    slots = st.field(field).size // elem.size
    count = min(st.get(raw, count_field), slots) if count_field else slots
    out = []
    for i in range(count):
        e = elem.decode(raw[base + i * elem.size:base + (i + 1) * elem.size])
        if index_prefix:
            index = _name(abi, index_prefix, e["index"]) or str(e["index"])
            words = f"{e['data']:#x}"
            if index in DATA_BITS and DATA_BITS[index] in abi.bitfields:
                words += f" ({abi.bits(DATA_BITS[index]).describe(e['data'])})"
            elif index in DATA_VALUES:
                words += f" ({_name(abi, DATA_VALUES[index], e['data']) or '?'})"
            out.append(f"{indent}[{i}] index {e['index']} ({index}) data {words}")
        elif e.get("supported"):
            out.append(f"{indent}unit {i}: " + " ".join(f"{k}={v}" for k, v in e.items()))
    return out
