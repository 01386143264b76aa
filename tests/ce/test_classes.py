"""engines.yaml is checked whole at load: every class a generation names, every method rmpeer
pushes, each number a 32-bit whole number and each method one a channel can push. A broken
file is a MatrixError (exit 2) naming the file and the key, never a crash or a replay
mismatch in the run (hostile-input hunt F8)."""

import ast
import re
from pathlib import Path

import pytest
import yaml
from damaged_matrix import write_damaged

from rmpeer.ce.classes import check_channel, load_engines
from rmpeer.errors import EXIT_CONFIG, MatrixError
from rmpeer.tables.load import MATRICES

pytestmark = pytest.mark.offline
REAL = yaml.safe_load((MATRICES / "engines.yaml").read_text())
COPY = ["classes", "HOPPER_DMA_COPY_A"]
SEMA = [*COPY, "methods", "SET_SEMAPHORE_A"]
GPFIFO = ["classes", "HOPPER_CHANNEL_GPFIFO_A"]
CASES = [
    (["generations", "hopper"], "x", "generation hopper: must be a mapping, found str"),
    (["generations", "hopper"], None, "generation hopper: must be a mapping, found NoneType"),
    (["generations", "hopper"], KeyError, "generations: missing hopper, which rmpeer drives"),
    (["generations", "hopper", "copy"], "x", "generation hopper.copy: class 'x' is not described under classes"),
    (["generations", "hopper", "copy"], None, "generation hopper.copy: must be str, found None"),
    (["generations", "hopper", "copy"], -1, "generation hopper.copy: must be str, found -1"),
    (["generations", "hopper", "copy"], KeyError, "generation hopper: missing key 'copy'"),
    (COPY, "x", "class HOPPER_DMA_COPY_A: must be a mapping, found str"),
    ([*COPY, "methods"], "x", "class HOPPER_DMA_COPY_A.methods: must be dict, found 'x'"),
    ([*COPY, "methods"], KeyError, "class HOPPER_DMA_COPY_A.methods: missing SET_SEMAPHORE_A, LAUNCH_DMA"),
    (SEMA, "x", "class HOPPER_DMA_COPY_A.methods.SET_SEMAPHORE_A: must be a whole number from 0 to 0xffffffff"),
    (SEMA, -1, "class HOPPER_DMA_COPY_A.methods.SET_SEMAPHORE_A: must be a whole number from 0 to 0xffffffff"),
    (SEMA, 10**30, "class HOPPER_DMA_COPY_A.methods.SET_SEMAPHORE_A: must be a whole number from 0 to 0xffffffff"),
    (SEMA, KeyError, "class HOPPER_DMA_COPY_A.methods: missing SET_SEMAPHORE_A, which rmpeer pushes "
                     "(hopper's copy class)"),
    (SEMA, 0x10000, "class HOPPER_DMA_COPY_A.methods.SET_SEMAPHORE_A: 0x10000 is not a method offset a channel "
                    "can push (a multiple of 4 below 0x4000"),
    (SEMA, 0x242, "SET_SEMAPHORE_A: 0x242 is not a method offset a channel can push"),
    ([*COPY, "bitfields", "LAUNCH_DMA"], "x", "class HOPPER_DMA_COPY_A.bitfields.LAUNCH_DMA: must be dict, found 'x'"),
    ([*COPY, "bitfields", "LAUNCH_DMA", "DATA_TRANSFER_TYPE", "values", "NON_PIPELINED"], 4,
     "class HOPPER_DMA_COPY_A.bitfields.LAUNCH_DMA.DATA_TRANSFER_TYPE.values.NON_PIPELINED: must be a whole number "
     "from 0 to 0x3, found 4"),
    ([*COPY, "bitfields", "LAUNCH_DMA", "DATA_TRANSFER_TYPE", "values", "NON_PIPELINED"], "x",
     "class HOPPER_DMA_COPY_A.bitfields.LAUNCH_DMA.DATA_TRANSFER_TYPE.values.NON_PIPELINED: must be a whole number "
     "from 0 to 0x3, found 'x'"),
    (["classes", "HOPPER_USERMODE_A", "registers", "NOTIFY_CHANNEL_PENDING"], KeyError,
     "class HOPPER_USERMODE_A.registers: missing NOTIFY_CHANNEL_PENDING, which rmpeer reads (hopper's usermode class)"),
    ([*GPFIFO, "userd", "GPPut"], KeyError, "class HOPPER_CHANNEL_GPFIFO_A.userd: missing GPPut, which rmpeer reads"),
    ([*GPFIFO, "constants", "GP_ENTRY__SIZE"], KeyError,
     "class HOPPER_CHANNEL_GPFIFO_A.constants: missing GP_ENTRY__SIZE, which rmpeer reads"),
    ([*GPFIFO, "bitfields", "SEM_EXECUTE"], KeyError,
     "class HOPPER_CHANNEL_GPFIFO_A.bitfields: missing SEM_EXECUTE, which rmpeer composes (hopper's gpfifo class)"),
    ([*GPFIFO, "bitfields", "DMA", "METHOD_SUBCHANNEL"], KeyError,
     "class HOPPER_CHANNEL_GPFIFO_A.bitfields.DMA: missing METHOD_SUBCHANNEL, which rmpeer sets"),
    ([*GPFIFO, "bitfields", "SEM_EXECUTE", "OPERATION", "values", "ACQ_CIRC_GEQ"], KeyError,
     "class HOPPER_CHANNEL_GPFIFO_A.bitfields.SEM_EXECUTE.OPERATION.values: missing ACQ_CIRC_GEQ, which rmpeer sets"),
    (["classes", "HOPPER_USERMODE_A", "registers", "NOTIFY_CHANNEL_PENDING"], -1,
     "class HOPPER_USERMODE_A.registers.NOTIFY_CHANNEL_PENDING: must be a whole number from 0 to 0xffffffff"),
]


def _damaged(tmp_path, keys, value) -> str:
    path = write_damaged(tmp_path / "engines.yaml", REAL, keys, value)
    return str(path)


@pytest.mark.parametrize("keys, value, message", CASES,
                         ids=[f"{'.'.join(k[1:])}={'deleted' if v is KeyError else v!r}" for k, v, _ in CASES])
def test_a_broken_engine_matrix_is_refused_naming_the_key(tmp_path, keys, value, message):
    path = _damaged(tmp_path, keys, value)
    with pytest.raises(MatrixError) as caught:
        load_engines(path)
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_methods_checked_are_the_ones_the_engine_pushes():
    """METHODS_USED names every method rmpeer.ce.engine looks up by name."""
    from rmpeer.ce.classes import METHODS_USED

    engine = (Path(__file__).parents[2] / "rmpeer" / "ce" / "engine.py").read_text()
    pushed = set(re.findall(r'_copy_method\("(\w+)"', engine)) | set(re.findall(r'methods\["(\w+)"\]', engine))
    assert pushed == {m for names in METHODS_USED.values() for m in names}


def _read_by_name(tree) -> tuple[dict, dict]:
    """What engine.py reads by name: {table: names} of userd/registers/constants subscripts, and
    {group: {field: value names}} of each bits(GROUP).compose(FIELD=...) of an engine class."""
    tables, groups = {}, {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                and node.value.attr in ("userd", "registers", "constants") and isinstance(node.slice, ast.Constant)):
            tables.setdefault(node.value.attr, set()).add(node.slice.value)
        bits = node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "compose" else None
        if isinstance(bits, ast.Call) and "abi" not in ast.unparse(bits.func):    # drivers.yaml's groups are not
            fields = groups.setdefault(bits.args[0].value, {})
            for kw in (k for k in node.keywords if k.arg):      # **channel["launch_copy"]: check_channel
                named = {kw.value.value} if isinstance(kw.value, ast.Constant) else set()
                fields.setdefault(kw.arg, set()).update(named)
    return tables, groups


def test_the_names_checked_are_the_ones_the_engine_reads():
    """NAMES_USED and FIELDS_USED name every USERD member, register, constant, bit field and value
    name rmpeer.ce.engine reads of an engine class."""
    from rmpeer.ce.classes import FIELDS_USED, NAMES_USED

    tables, groups = _read_by_name(ast.parse((Path(__file__).parents[2] / "rmpeer" / "ce" / "engine.py").read_text()))
    assert tables == {t: set(n) for role in NAMES_USED.values() for t, n in role.items()}
    assert groups == {g: {f: set(v) for f, v in fields.items()} for role in FIELDS_USED.values()
                      for g, fields in role.items()}


def test_the_shipped_matrix_loads():
    assert load_engines()["hopper"].copy.name == "HOPPER_DMA_COPY_A"


CHANNEL = yaml.safe_load((MATRICES / "channel.yaml").read_text())["channel"]
LAUNCH_CASES = [
    ("launch_copy", "DATA_TRANSFER_TYP", "NON_PIPELINED", "channel.launch_copy.DATA_TRANSFER_TYP: not a field of "
     "HOPPER_DMA_COPY_A's LAUNCH_DMA in engines.yaml (its fields: DATA_TRANSFER_TYPE, FLUSH_ENABLE"),
    ("launch_copy", "DATA_TRANSFER_TYPE", "NON_PIPELINEDX", "channel.launch_copy.DATA_TRANSFER_TYPE: 'NON_PIPELINEDX' "
     "is not a value of HOPPER_DMA_COPY_A's LAUNCH_DMA.DATA_TRANSFER_TYPE in engines.yaml (its values: NONE, "
     "PIPELINED, NON_PIPELINED)"),
    ("launch_copy", "DATA_TRANSFER_TYPE", 99, "channel.launch_copy.DATA_TRANSFER_TYPE: 99 does not fit "
     "HOPPER_DMA_COPY_A's LAUNCH_DMA.DATA_TRANSFER_TYPE (bits 1:0 in engines.yaml)"),
    ("launch_release", "FLUSH_ENABLE", "MAYBE", "channel.launch_release.FLUSH_ENABLE: 'MAYBE' is not a value"),
]


@pytest.mark.parametrize("key, field, value, message", LAUNCH_CASES, ids=[f"{k}.{f}={v!r}" for k, f, v, _ in LAUNCH_CASES])
def test_a_launch_field_the_copy_class_lacks_is_refused_naming_channel_yaml(tmp_path, key, field, value, message):
    """channel.yaml's LAUNCH_DMA fields were checked as text alone: a typo of a field or a value
    was a KeyError at the first copy, a number too wide a ValueError (exit 5)."""
    launch = {field: value, **{k: v for k, v in CHANNEL[key].items() if k != "DATA_TRANSFER_TYPE"}} \
        if field == "DATA_TRANSFER_TYP" else {**CHANNEL[key], field: value}
    channel = {**CHANNEL, key: launch}
    path = tmp_path / "channel.yaml"
    with pytest.raises(MatrixError) as caught:
        check_channel(channel, load_engines(), path)
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: {message}"), str(caught.value)


@pytest.mark.parametrize("subchannel, refused", [(7, False), (8, True), (1 << 31, True)])
def test_the_copy_subchannel_must_fit_the_method_headers_field(tmp_path, subchannel, refused):
    """copy_subchannel 8 was a ValueError composing the first method header (bits 15:13), exit 5."""
    channel, path = {**CHANNEL, "copy_subchannel": subchannel}, tmp_path / "channel.yaml"
    if not refused:
        check_channel(channel, load_engines(), path)
        return
    with pytest.raises(MatrixError) as caught:
        check_channel(channel, load_engines(), path)
    assert str(caught.value) == (f"{path}: channel.copy_subchannel: {subchannel} does not fit HOPPER_CHANNEL_GPFIFO_A's "
                                 f"DMA.METHOD_SUBCHANNEL (bits 15:13 in engines.yaml)")


@pytest.mark.parametrize("key, value, message", [
    ("ring_entries", 0x4000, "channel.userd_offset: USERD (to HOPPER_CHANNEL_GPFIFO_A's last member) at 0x10000 "
                             "overlaps the ring (ring_entries x GP_ENTRY__SIZE), 0x0 to 0x20000 (channel.ring_offset)"),
    ("userd_offset", 0x20000, "channel.pushbuffer_offset: the pushbuffer at 0x20000 overlaps USERD (to "
                              "HOPPER_CHANNEL_GPFIFO_A's last member), 0x20000 to 0x20094 (channel.userd_offset)"),
    ("ring_offset", 0x1ff000, "channel.ring_offset: the ring (ring_entries x GP_ENTRY__SIZE) at 0x1ff000 overlaps "
                              "the pushbuffer, 0x20000 to 0x200000 (channel.pushbuffer_offset)"),
    ("ring_offset", 0x1f000, "channel.pushbuffer_offset: the pushbuffer at 0x20000 overlaps the ring "
                             "(ring_entries x GP_ENTRY__SIZE), 0x1f000 to 0x21000 (channel.ring_offset)"),
], ids=["ring-over-userd", "userd-in-pushbuffer", "ring-in-pushbuffer", "ring-after-userd-into-pushbuffer"])
def test_the_ring_userd_and_pushbuffer_must_not_overlap(tmp_path, key, value, message):
    """Each was taken (every offset inside the control block): the GPU would read pushbuffer words
    as GPPut, or the ring's entries would overwrite USERD, and a healthy host's copies fault (NOT
    CERTIFIED; a replay said NOT CERTIFIED too)."""
    path = tmp_path / "channel.yaml"
    with pytest.raises(MatrixError) as caught:
        check_channel({**CHANNEL, key: value}, load_engines(), path)
    assert str(caught.value).startswith(f"{path}: {message}"), str(caught.value)


def test_the_doorbell_register_must_be_inside_the_doorbell_mapping(tmp_path):
    """A usermode_map_size below NOTIFY_CHANNEL_PENDING (0x90) made the first doorbell write land
    past the mapping (exit 5)."""
    path = tmp_path / "channel.yaml"
    with pytest.raises(MatrixError) as caught:
        check_channel({**CHANNEL, "usermode_map_size": 0x90}, load_engines(), path)
    assert str(caught.value) == (f"{path}: channel.usermode_map_size: 0x90 bytes do not hold HOPPER_USERMODE_A's "
                                 f"NOTIFY_CHANNEL_PENDING at 0x90 (engines.yaml)")


def test_the_shipped_channel_fits_the_shipped_engines():
    check_channel(CHANNEL, load_engines())
