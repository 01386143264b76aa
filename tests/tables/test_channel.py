"""rmpeer.tables.channel: matrices/channel.yaml is shape-checked at load. A key the copy engine
reads that is missing, of the wrong type or out of range is a MatrixError naming the file and
the key (it was a KeyError or TypeError mid-run, exit 5, or a wrong write and NOT CERTIFIED)."""

import pytest
import yaml

from rmpeer.errors import MatrixError
from rmpeer.tables.channel import load_channel
from rmpeer.tables.load import MATRICES

pytestmark = pytest.mark.offline
SHIPPED = yaml.safe_load((MATRICES / "channel.yaml").read_text())


def written(tmp_path, data):
    path = tmp_path / "channel.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def with_channel(tmp_path, key, value):
    data = yaml.safe_load((MATRICES / "channel.yaml").read_text())
    if value is DEL:
        del data["channel"][key]
    else:
        data["channel"][key] = value
    return written(tmp_path, data)


DEL = object()


def test_the_shipped_channel_loads():
    assert load_channel() == SHIPPED["channel"]


@pytest.mark.parametrize("text,problem", [
    ("", "top level must be a mapping, found an empty file"),
    ("- 1\n- 2\n", "top level must be a mapping, found a list"),
    ("schema: 1\n", "missing key 'channel'"),
    ("channel: [1]\n", "must be dict"),
])
def test_a_channel_file_without_its_mapping_is_refused(tmp_path, text, problem):
    path = written(tmp_path, text)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value).startswith(f"{path}: ") and problem in str(err.value)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    with pytest.raises(MatrixError, match="channel.yaml: file: not found"):
        load_channel(tmp_path / "channel.yaml")


@pytest.mark.parametrize("key", sorted(SHIPPED["channel"]))
def test_every_key_the_engine_reads_is_required(tmp_path, key):
    path = with_channel(tmp_path, key, DEL)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value) == f"{path}: channel: missing key {key!r}"


INTEGERS = sorted(k for k, v in SHIPPED["channel"].items() if isinstance(v, int))


@pytest.mark.parametrize("value", ["x", None, -1, 10**30, 1.5, True, [1]], ids=repr)
@pytest.mark.parametrize("key", INTEGERS)
def test_a_size_offset_or_count_of_the_wrong_type_or_range_is_refused(tmp_path, key, value):
    path = with_channel(tmp_path, key, value)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value).startswith(f"{path}: channel.{key}: must be ")


def test_a_number_out_of_range_is_said_as_a_number(tmp_path):
    """`found -1`, not `found '-1'`: the quotes said the matrix held text."""
    path = with_channel(tmp_path, "ring_offset", -1)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value).endswith("found -1"), str(err.value)


@pytest.mark.parametrize("key", ["control_block_size", "ring_entries", "max_copy_bytes", "pushbuffer_align",
                                 "semaphore_slot_size"])
def test_a_size_or_count_of_zero_is_refused(tmp_path, key):
    """Zero: a modulus, a divisor or a chunk of a copy loop that would never end."""
    path = with_channel(tmp_path, key, 0)
    with pytest.raises(MatrixError, match=rf"channel\.{key}: must be an integer from 1 to 2\*\*"):
        load_channel(path)


def test_a_copy_chunk_past_the_32_bit_line_length_is_refused(tmp_path):
    path = with_channel(tmp_path, "max_copy_bytes", 1 << 32)
    with pytest.raises(MatrixError, match=r"channel\.max_copy_bytes: must be an integer from 1 to 2\*\*32 - 1"):
        load_channel(path)


@pytest.mark.parametrize("key", ["ring_offset", "userd_offset", "pushbuffer_offset"])
def test_an_offset_past_the_control_block_is_refused(tmp_path, key):
    path = with_channel(tmp_path, key, SHIPPED["channel"]["control_block_size"])
    with pytest.raises(MatrixError, match=rf"channel\.{key}: .* is past the control block"):
        load_channel(path)


@pytest.mark.parametrize("value", ["x", None, 0, -5.0, float("inf"), float("nan"), True, 10**400], ids=repr)
def test_a_timeout_that_is_no_positive_finite_number_is_refused(tmp_path, value):
    path = with_channel(tmp_path, "timeout_s", value)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value).startswith(f"{path}: channel.timeout_s: must be ")
    assert len(str(err.value)) < len(str(path)) + 200


@pytest.mark.parametrize("value", [1e300, 60, 3600.0, 0.5, 1e-300, 5e-9], ids=repr)
def test_a_timeout_no_copy_wait_can_use_is_refused(tmp_path, value):
    """1e300 was taken: the live wait's int(timeout_s * 1e9) is an OverflowError at the first copy
    (exit 5); past the quick tier's deadline a hung engine ends as INCOMPLETE, never judged; below a
    second a healthy copy reads as a fault (NOT CERTIFIED for a broken matrix)."""
    path = with_channel(tmp_path, "timeout_s", value)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value) == (f"{path}: channel.timeout_s: must be a number of seconds from 1 to below 60, "
                              f"found {value}")


@pytest.mark.parametrize("value", [1, 5.0, 59.5])
def test_a_timeout_inside_its_bounds_is_taken(tmp_path, value):
    assert load_channel(with_channel(tmp_path, "timeout_s", value))["timeout_s"] == value


def test_the_timeout_bound_is_the_quick_tiers_deadline():
    from rmpeer.machine.deadline import DEFAULT_S
    from rmpeer.tables.channel import TIMEOUT_S

    assert TIMEOUT_S[1] == DEFAULT_S["quick"] == min(DEFAULT_S[t] for t in DEFAULT_S if t != "passive")


@pytest.mark.parametrize("value", ["x", None, [1], {"FLUSH_ENABLE": None}], ids=repr)
def test_a_launch_that_is_no_field_mapping_is_refused(tmp_path, value):
    path = with_channel(tmp_path, "launch_release", value)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value).startswith(f"{path}: channel.launch_release: must ")


@pytest.mark.parametrize("key, value, message", [
    ("semaphore_slot_size", 0x8000, "channel.semaphore_slot_size: 4 slots of 0x8000 bytes do not fit semaphore_size "
                                    "0x10000"),
    ("semaphore_timestamp_offset", 12, "channel.semaphore_timestamp_offset: the 8-byte timestamp at 12 must be inside "
                                       "a semaphore slot (semaphore_slot_size 16)"),
], ids=["slots-past-the-mapping", "timestamp-across-slots"])
def test_the_semaphore_slots_rmpeer_uses_must_fit(tmp_path, key, value, message):
    """Slot 2 and 3 past a 0x10000 mapping were a read or write past it at the first gated copy
    (exit 5); a timestamp at 12 of a 16-byte slot read half of the next slot as the GPU's time."""
    path = with_channel(tmp_path, key, value)
    with pytest.raises(MatrixError) as err:
        load_channel(path)
    assert str(err.value) == f"{path}: {message}"


def test_the_semaphore_slots_counted_are_the_ones_traffic_uses():
    from rmpeer.tables.channel import SEMAPHORE_SLOTS
    from rmpeer.traffic.bandwidth import FIRST_SLOT, GATE_SLOT

    assert SEMAPHORE_SLOTS == max(0, 1, FIRST_SLOT, GATE_SLOT) + 1


def test_an_unknown_key_is_refused_naming_it(tmp_path):
    path = with_channel(tmp_path, "ring_entires", 1024)
    with pytest.raises(MatrixError, match=r"channel\.ring_entires: unknown key"):
        load_channel(path)


def test_an_error_notifier_smaller_than_an_nvnotification_is_refused(tmp_path):
    """RM writes a faulted channel's NvNotification (16 bytes in every release of drivers.yaml,
    nvgputypes.h) into the error notifier, and the engine clears and reads one there: a notifier of
    8 bytes was written and read past its mapping. The spec passes drivers.yaml's size."""
    path = with_channel(tmp_path, "notifier_size", 8)
    assert load_channel(path)["notifier_size"] == 8          # alone, channel.yaml cannot tell
    with pytest.raises(MatrixError) as err:
        load_channel(path, notifier_bytes=16)
    assert str(err.value) == (f"{path}: channel.notifier_size: 0x8 bytes do not hold the error notifier's "
                              "NvNotification (16 bytes in drivers.yaml)")
    assert load_channel(with_channel(tmp_path, "notifier_size", 16), notifier_bytes=16)["notifier_size"] == 16
