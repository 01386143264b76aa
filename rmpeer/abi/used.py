"""What rmpeer sends to RM and reads back by size, checked in every release of drivers.yaml
before a run (DriverMatrix.check_sends): a size or a count the request or the reply cannot
hold was found mid-run, as a request no driver answers or a loop over billions of elements."""

from __future__ import annotations

from rmpeer.abi.structs import TYPE_BYTES
from rmpeer.errors import MatrixError, quoted
from rmpeer.tables.load import require_below

# The struct each escape is sent with, whose size the request's size slot (_IOC_SIZE) carries,
# and the constant that counts it where the request carries an array of it (NV_ESC_CARD_INFO:
# one slot per device). tests/abi/test_drivers.py checks it against the committed recordings.
SENT_WITH = {"NV_ESC_CARD_INFO": ("nv_ioctl_card_info_t", "NV_MAX_DEVICES"),
             "NV_ESC_REGISTER_FD": ("nv_ioctl_register_fd_t", None),
             "NV_ESC_CHECK_VERSION_STR": ("nv_ioctl_rm_api_version_t", None),
             "NV_ESC_RM_ALLOC": ("NVOS64_PARAMETERS", None), "NV_ESC_RM_FREE": ("NVOS00_PARAMETERS", None),
             "NV_ESC_RM_CONTROL": ("NVOS54_PARAMETERS", None),
             "NV_ESC_RM_MAP_MEMORY": ("nv_ioctl_nvos33_parameters_with_fd", None),
             "NV_ESC_RM_MAP_MEMORY_DMA": ("NVOS46_PARAMETERS", None)}
# The constants rmpeer.rm and rmpeer.machine loop over or cut a list by, each with the array
# of a params struct it counts and what one element is (a struct, a constant of bytes, or None:
# the array's own type). A count its array cannot hold read or wrote past it (ECC_UNIT_COUNT
# 2**31: a MemoryError after 40 s of decoding; MAX_CES 2**32 - 1: a loop of four billion).
COUNTS = {"NV2080_CTRL_GPU_ECC_UNIT_COUNT": ("NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS", "units",
                                             "NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS"),
          # the caps table's rows: MAX_CES of them from 545 on, MAX_PCES in 535's headers (rmpeer.rm.host
          # reads as many rows as the table holds, each NV2080_CTRL_CE_CAPS_TBL_SIZE bytes)
          "NV2080_CTRL_MAX_CES": ("NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS", "capsTbl", "NV2080_CTRL_CE_CAPS_TBL_SIZE"),
          "NV2080_CTRL_MAX_PCES": ("NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS", "capsTbl", "NV2080_CTRL_CE_CAPS_TBL_SIZE"),
          "NV2080_CTRL_PERF_CLK_MAX_DOMAINS": ("NV2080_CTRL_PERF_GET_LEVEL_INFO_V2_PARAMS", "perfGetClkInfoList",
                                               "NV2080_CTRL_PERF_GET_CLK_INFO"),
          "NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT": ("NV2080_CTRL_GPU_GET_PIDS_PARAMS", "pidTbl", None),
          "NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT": ("NV2080_CTRL_GPU_GET_PID_INFO_PARAMS", "pidInfoList",
                                                     "NV2080_CTRL_GPU_PID_INFO")}


def check_sent_sizes(path, release, merged, size_bits) -> None:
    """The struct each escape is sent with fits the request's size slot: a larger size would
    spill into the direction bits and make a request no driver answers."""
    limit = 1 << size_bits
    for escape, (name, count_name) in SENT_WITH.items():
        spec = merged["structs"].get(name)
        if spec is None:
            raise MatrixError(path, f"release {release}: structs", f"missing {name}, which rmpeer sends with {escape}")
        count, what = 1, f"struct {name}.size"
        if count_name is not None:
            count, what = merged["constants"].get(count_name), f"constant {count_name}"
            require_below(path, f"release {release}: {what}", count, limit)
        if spec["size"] * count >= limit:
            shown = f"{spec['size']} bytes" if count_name is None else f"{count} x {spec['size']} bytes of {name}"
            raise MatrixError(path, f"release {release}: {what}", f"{shown}: more than the {size_bits}-bit size "
                              f"slot of the {escape} request holds (at most {limit - 1})")


def check_counts(path, release, merged) -> None:
    """Each count of COUNTS fits the array it counts, where the release has both (a release
    without one of them has no such call to make)."""
    structs, constants = merged["structs"], merged["constants"]
    for name, (params, array, element) in COUNTS.items():
        fields = (structs.get(params) or {}).get("fields") or {}
        if name not in constants or array not in fields:
            continue
        _, kind, n = (fields[array] + [1])[:3]
        each = TYPE_BYTES[kind] if element is None else (structs[element]["size"] if element in structs
                                                     else constants.get(element))
        if each is None:
            continue
        if not isinstance(each, int) or each < 1:     # a row of no byte: the count alone bounds the loop
            raise MatrixError(path, f"release {release}: constant {element}", f"must be a number of bytes "
                              f"of at least 1 (a row of {params}.{array}), found {quoted(each)}")
        count = constants[name]
        if not isinstance(count, int) or count * each > TYPE_BYTES[kind] * n:
            raise MatrixError(path, f"release {release}: constant {name}", f"{quoted(count)} elements of {each} "
                              f"bytes do not fit {params}.{array} ({TYPE_BYTES[kind] * n} bytes)")
