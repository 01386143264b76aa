"""rmpeer.tables.layouts: a layouts.yaml whose counts or addresses no run could use is refused
at load, naming the file and the key, before a layout is built (a per_card of 10**30 once
built a tuple of that many sessions)."""

import pytest
import yaml

from rmpeer.errors import MatrixError
from rmpeer.tables.layouts import LayoutMatrix
from rmpeer.tables.load import MATRICES

pytestmark = pytest.mark.offline


def edited(tmp_path, section, name, key, value):
    data = yaml.safe_load((MATRICES / "layouts.yaml").read_text())
    (data[section][name] if name else data[section])[key] = value
    path = tmp_path / "layouts.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("name,key,value", [
    ("one-per-card", "per_card", 10**30),
    ("one-per-card", "per_card", 17),
    ("sixteen", "sessions", 10**30),
    ("all-on-one-4", "sessions", 17),
    ("seed-three", "cards", [0] * 17),
])
def test_more_sessions_than_any_run_can_hold_are_refused_at_load(tmp_path, name, key, value):
    path = edited(tmp_path, "layouts", name, key, value)
    with pytest.raises(MatrixError) as err:
        LayoutMatrix(path)
    text = str(err.value)
    assert text.startswith(str(path)) and f"layout {name}.{key}" in text and "must be at most 16, found" in text
    assert len(text) < len(str(path)) + 300


def test_sixteen_sessions_are_still_a_layout(tmp_path):
    path = edited(tmp_path, "layouts", "one-per-card", "per_card", 16)
    assert LayoutMatrix(path).resolve("one-per-card", 1).sessions == 16


@pytest.mark.parametrize("key,value", [
    ("vaspace_base", -1), ("vaspace_base", 10**30), ("private_base", 10**30), ("private_base", -0x200000),
    ("window_base", -0x200000), ("page_size", 2**64), ("private_size", 2**70),
])
def test_a_va_value_outside_64_bits_is_refused_naming_its_key(tmp_path, key, value):
    path = edited(tmp_path, "va", None, key, value)
    with pytest.raises(MatrixError) as err:
        LayoutMatrix(path)
    assert str(err.value).startswith(f"{path}: va.{key}: ") and "64 bits" in str(err.value)


def test_a_private_range_outside_the_address_space_is_refused(tmp_path):
    path = edited(tmp_path, "va", None, "private_base", 2**64 - 0x200000)
    with pytest.raises(MatrixError) as err:
        LayoutMatrix(path)
    assert str(err.value).startswith(f"{path}: va.private_base: ") and "outside the address space" in str(err.value)
