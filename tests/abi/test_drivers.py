"""drivers.yaml's numbers are checked at load, each against the field it is packed into, and
every escape rmpeer sends is numbered in every release: a broken value is a MatrixError
(exit 2) naming the file and the key, never a TypeError, an OverflowError or a request no
driver answers (hostile-input hunt F7)."""

import gzip
import json
import re
from pathlib import Path

import pytest
import yaml
from damaged_matrix import write_damaged

from rmpeer.abi import DriverMatrix
from rmpeer.errors import EXIT_CONFIG, MatrixError
from rmpeer.tables.load import MATRICES

pytestmark = pytest.mark.offline
REAL = yaml.safe_load((MATRICES / "drivers.yaml").read_text())
HUGE = 10**30


def _damaged(tmp_path, keys, value):
    path = write_damaged(tmp_path / "drivers.yaml", REAL, keys, value)
    return path


ESCAPE = ["releases", 0, "escapes", "NV_ESC_RM_ALLOC"]
CMD = ["releases", 0, "controls", "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", "cmd"]
NVOS64 = ["releases", 0, "structs", "NVOS64_PARAMETERS"]
PARAMS = ["releases", 0, "structs", "NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS"]
EMPTY = ["releases", 0, "structs", "EMPTY"]
WRITE_ONLY = ["releases", 0, "bitfields", "NVOS33_FLAGS", "ACCESS", "values", "WRITE_ONLY"]
QUERY = ["releases", 0, "constants", "NV_RM_API_VERSION_CMD_QUERY"]
GRCE = ["releases", 0, "constants", "NV2080_CTRL_CE_CAPS_CE_GRCE"]
CASES = [
    (ESCAPE, "x", "release 535.43.02: escape NV_ESC_RM_ALLOC: must be a whole number from 0 to 0xff, found 'x'"),
    (ESCAPE, None, "escape NV_ESC_RM_ALLOC: must be a whole number from 0 to 0xff, found None"),
    (ESCAPE, [1], "escape NV_ESC_RM_ALLOC: must be a whole number from 0 to 0xff, found [1]"),
    (ESCAPE, -1, "escape NV_ESC_RM_ALLOC: must be a whole number from 0 to 0xff, found -1"),
    (ESCAPE, HUGE, f"escape NV_ESC_RM_ALLOC: must be a whole number from 0 to 0xff, found {HUGE}"),
    (ESCAPE, KeyError, "release 535.43.02: escapes: missing NV_ESC_RM_ALLOC, which rmpeer sends"),
    (["ioctl_encoding", "size_shift"], -1, "ioctl_encoding.size_shift: must be a whole number from 0 to 0x1f"),
    (["ioctl_encoding", "size_shift"], HUGE, "ioctl_encoding.size_shift: must be a whole number from 0 to 0x1f"),
    (["ioctl_encoding", "dir_shift"], 8, "ioctl_encoding.type_shift: 8 is the shift of another slot too"),
    (["ioctl_encoding", "magic"], -1, "ioctl_encoding.magic: must be a whole number from 0 to 0xff, found -1"),
    (["ioctl_encoding", "magic"], HUGE, "ioctl_encoding.magic: must be a whole number from 0 to 0xff"),
    (["ioctl_encoding", "dir_read"], 4, "ioctl_encoding.dir_read: must be a whole number from 0 to 0x3, found 4"),
    (CMD, -1, "control NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2.cmd: must be a whole number from 0 to 0xffffffff"),
    (CMD, HUGE, "control NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2.cmd: must be a whole number from 0 to 0xffffffff"),
    (["releases", 0, "classes", "NV01_ROOT_CLIENT"], -1,
     "class NV01_ROOT_CLIENT: must be a whole number from 0 to 0xffffffff, found -1"),
    (NVOS64 + ["size"], 16384, "release 535.43.02: struct NVOS64_PARAMETERS.size: 16384 bytes: "
     "more than the 14-bit size slot of the NV_ESC_RM_ALLOC request holds (at most 16383)"),
    (["releases", 0, "constants", "NV_MAX_DEVICES"], 10**7, "release 535.43.02: constant NV_MAX_DEVICES: must be "
     "a whole number from 0 to 0x3fff, found 10000000"),
    (["releases", 0, "constants", "NV_MAX_DEVICES"], 228, "release 535.43.02: constant NV_MAX_DEVICES: 228 x 72 "
     "bytes of nv_ioctl_card_info_t: more than the 14-bit size slot of the NV_ESC_CARD_INFO request holds"),
    (["releases", 0, "constants", "NV_MAX_DEVICES"], KeyError, "constant NV_MAX_DEVICES: must be a whole number "
     "from 0 to 0x3fff, found None"),
    (NVOS64, KeyError, "release 535.43.02: structs: missing NVOS64_PARAMETERS, which rmpeer sends with "
     "NV_ESC_RM_ALLOC"),
    (NVOS64 + ["size"], 10**13, "release 535.43.02: struct NVOS64_PARAMETERS.size: must be a whole number of bytes "
     "from 0 to 1048576 (max_params_size), found 10000000000000"),
    (NVOS64 + ["size"], 49, "release 535.43.02: struct NVOS64_PARAMETERS.size: 49 is not a multiple of 8, the "
     "width of its widest member"),
    (EMPTY, {"size": -8, "fields": {}}, "struct EMPTY.size: must be a whole number of bytes from 0 to 1048576 "
     "(max_params_size), found -8"),
    (PARAMS + ["size"], 1 << 32, "struct NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS.size: must be a whole number of "
     "bytes from 0 to 1048576 (max_params_size), found 4294967296"),
    (["max_params_size"], -1, "max_params_size: must be a whole number from 0 to 0xffffffff, found -1"),
    (["max_params_size"], KeyError, "file: missing key 'max_params_size'"),
    (WRITE_ONLY, 4, "release 535.43.02: bitfield NVOS33_FLAGS.ACCESS.values.WRITE_ONLY: must be a whole number "
     "from 0 to 0x3, found 4"),
    (WRITE_ONLY, -1, "bitfield NVOS33_FLAGS.ACCESS.values.WRITE_ONLY: must be a whole number from 0 to 0x3, found -1"),
    (WRITE_ONLY, "x", "bitfield NVOS33_FLAGS.ACCESS.values.WRITE_ONLY: must be a whole number from 0 to 0x3"),
    (WRITE_ONLY, None, "bitfield NVOS33_FLAGS.ACCESS.values.WRITE_ONLY: must be a whole number from 0 to 0x3"),
    (WRITE_ONLY[:-1] + [True], 1, "bitfield NVOS33_FLAGS.ACCESS.values: value name True is not text (YAML reads "
     "an unquoted TRUE, NO or 16 as a bool or a number: quote it)"),
    (QUERY, 1 << 40, "release 535.43.02: constant NV_RM_API_VERSION_CMD_QUERY: must be a whole number from 0 to "
     "0xffffffff, found 1099511627776"),
    (QUERY, -1, "constant NV_RM_API_VERSION_CMD_QUERY: must be a whole number from 0 to 0xffffffff, found -1"),
    (QUERY, "x", "constant NV_RM_API_VERSION_CMD_QUERY: must be a whole number from 0 to 0xffffffff, found 'x'"),
    (QUERY, [1], "constant NV_RM_API_VERSION_CMD_QUERY: must be a whole number from 0 to 0xffffffff, found [1]"),
    (GRCE + ["mask"], 0x100, "constant NV2080_CTRL_CE_CAPS_CE_GRCE.mask: must be a whole number from 0 to 0xff"),
    (GRCE + ["byte"], -1, "constant NV2080_CTRL_CE_CAPS_CE_GRCE.byte: must be a whole number from 0 to 0xffffffff"),
    (GRCE, {"byte": 0}, "constant NV2080_CTRL_CE_CAPS_CE_GRCE: must be a number or {byte, mask}, found keys "
     "\"['byte']\""),
    (["releases", 0, "constants", "NV2080_CTRL_GPU_ECC_UNIT_COUNT"], 2**31, "release 535.43.02: constant "
     "NV2080_CTRL_GPU_ECC_UNIT_COUNT: 2147483648 elements of 40 bytes do not fit "
     "NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS.units (960 bytes)"),
    (["releases", 4, "constants", "NV2080_CTRL_MAX_CES"], 2**32 - 1, "release 545.23.06: constant NV2080_CTRL_MAX_CES: "
     "4294967295 elements of 2 bytes do not fit NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS.capsTbl (128 bytes)"),
    (["releases", 0, "constants", "NV2080_CTRL_CE_CAPS_TBL_SIZE"], 0, "constant NV2080_CTRL_CE_CAPS_TBL_SIZE: must be a "
     "number of bytes of at least 1 (a row of NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS.capsTbl), found 0"),
    (["releases", 0, "constants", "NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT"], 951, "constant NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT: "
     "951 elements of 4 bytes do not fit NV2080_CTRL_GPU_GET_PIDS_PARAMS.pidTbl (3800 bytes)"),
    (["releases"], "x", "file.releases: must be list, found 'x'"),
    (["releases"], 1, "file.releases: must be list, found 1"),
    (["releases"], [1], "releases[0]: must be a mapping, found int"),
]


@pytest.mark.parametrize("keys, value, message", CASES,
                         ids=[f"{'.'.join(map(str, k))}={'deleted' if v is KeyError else v!r}"[:60]
                              for k, v, _ in CASES])
def test_a_broken_number_is_refused_naming_the_file_and_key(tmp_path, keys, value, message):
    path = _damaged(tmp_path, keys, value)
    with pytest.raises(MatrixError) as caught:
        DriverMatrix(path).check_sends()
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_escapes_checked_are_the_ones_rmpeer_sends():
    """ESCAPES_USED is the list of NV_ESC_* names rmpeer.rm passes to the ABI."""
    from rmpeer.abi.drivers import ESCAPES_USED

    rm = Path(__file__).parents[2] / "rmpeer" / "rm"
    sent = {name for f in rm.glob("*.py") for name in re.findall(r'"(NV_ESC_\w+)"', f.read_text())}
    assert sent == set(ESCAPES_USED)


def test_the_shipped_matrix_loads_and_builds_the_measured_request():
    matrix = DriverMatrix()
    abi = matrix.abi(matrix.releases[-1])
    assert matrix.slot_bits == {"nr": 8, "type": 8, "size": 14, "dir": 2}
    assert abi.ioctl_request(abi.escape("NV_ESC_CHECK_VERSION_STR"), 0x48) == 0xc04846d2


def test_each_escape_is_sent_with_the_struct_the_recordings_show():
    """SENT_WITH names the struct (and the count of it) each escape carries, as every committed
    recording's ioctls do: the size checked is the size sent."""
    from rmpeer.abi.drivers import ESCAPES_USED
    from rmpeer.abi.used import SENT_WITH
    from rmpeer.paths import transcripts_dir

    matrix, seen = DriverMatrix(), set()
    for path in sorted(transcripts_dir().glob("**/*.jsonl.gz")):
        lines = [json.loads(line) for line in gzip.open(path, "rt")]
        driver = re.search(r"  (\d+\.\d+\.\d+)  ", lines[0]["header"]["driver_text"]).group(1)
        abi = matrix.abi_for_driver(driver)
        escapes = {number: name for name, number in abi.escapes.items()}
        for rec in (r for r in lines if r.get("op") == "ioctl"):
            name, count = SENT_WITH[escapes[rec["escape"]]]
            struct = abi.struct(name) if count is None else abi.struct(name).repeated(abi.const(count))
            assert (rec["struct"], rec["request_code"]) == (struct.name, abi.ioctl_request(rec["escape"], struct.size))
            seen.add(escapes[rec["escape"]])
    assert seen == set(SENT_WITH) == set(ESCAPES_USED)


def test_each_count_is_paired_with_the_array_it_counts():
    """COUNTS pairs each constant with its array: in every shipped release that has both, the
    count of elements fills the array exactly, as the header declares it (array[COUNT])."""
    from rmpeer.abi.structs import TYPE_BYTES
    from rmpeer.abi.used import COUNTS

    matrix, checked = DriverMatrix(), set()
    for release in matrix.releases:
        merged = matrix.merged(release)
        structs, constants = merged["structs"], merged["constants"]
        for name, (params, array, element) in COUNTS.items():
            field = (structs.get(params) or {}).get("fields", {}).get(array)
            # the caps table is declared capsTbl[NV2080_CTRL_MAX_CES][...] from 545.23.06 on, and
            # [NV2080_CTRL_MAX_PCES][...] before (ctrl2080ce.h at each tag): MAX_PCES sizes 535's alone
            sized_by_another = name == "NV2080_CTRL_MAX_PCES" and "NV2080_CTRL_MAX_CES" in constants
            if name in constants and field and not sized_by_another:
                each = TYPE_BYTES[field[1]] if element is None else (structs[element]["size"] if element in structs
                                                                 else constants[element])
                assert constants[name] * each == TYPE_BYTES[field[1]] * (field + [1])[2], (release, name)
                checked.add(name)
    assert checked == set(COUNTS)
