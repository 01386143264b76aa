"""nvstatus.yaml's codes are NvU32s and code 0 is NV_OK: a broken table is a MatrixError
(exit 2) naming the file and the status, never a run whose every success reads as a failure
(hostile-input hunt F8)."""

import copy

import pytest
import yaml

from rmpeer.abi.nvstatus import _table
from rmpeer.errors import EXIT_CONFIG, MatrixError
from rmpeer.tables.load import MATRICES

pytestmark = pytest.mark.offline
REAL = yaml.safe_load((MATRICES / "nvstatus.yaml").read_text())


def _damaged(tmp_path, change) -> str:
    doc = copy.deepcopy(REAL)
    change(doc["statuses"])
    path = tmp_path / "nvstatus.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _set(name, code):
    return lambda statuses: statuses[name].update(code=code)


CASES = {
    "negative": (_set("NV_OK", -1), "status NV_OK.code: must be a whole number from 0 to 0xffffffff, found -1"),
    "huge": (_set("NV_OK", 10**30), f"status NV_OK.code: must be a whole number from 0 to 0xffffffff, found {10**30}"),
    "another's huge": (_set("NV_ERR_BROKEN_FB", 1 << 32), "status NV_ERR_BROKEN_FB.code: must be a whole number"),
    "deleted": (lambda s: s.pop("NV_OK"), "statuses: missing NV_OK (code 0, the status of every call that succeeds)"),
    "not 0": (_set("NV_OK", 5), "status NV_OK.code: must be 0 (the status of every call that succeeds), found 5"),
    "0 taken": (_set("NV_ERR_BROKEN_FB", 0), "status NV_ERR_BROKEN_FB.code: 0 is NV_OK's code"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_broken_code_is_refused_naming_the_status(tmp_path, case):
    change, message = CASES[case]
    path = _damaged(tmp_path, change)
    with pytest.raises(MatrixError) as caught:
        _table(path)
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_shipped_table_has_nv_ok_at_code_0():
    assert _table(str(MATRICES / "nvstatus.yaml"))[0].name == "NV_OK"
