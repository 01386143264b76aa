"""NV_STATUS codes (matrices/nvstatus.yaml): a code's NV_ERR_* name and NVIDIA's text."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rmpeer.errors import MatrixError
from rmpeer.tables.load import MATRICES, load_yaml, require

OK = "NV_OK"
CODES = 1 << 32     # NV_STATUS is an NvU32


@dataclass(frozen=True)
class Status:
    code: int
    name: str
    text: str

    @property
    def ok(self) -> bool:
        return self.code == 0

    def __str__(self) -> str:
        return f"{self.name} ({self.code:#x}: {self.text})"


@lru_cache(maxsize=4)
def _table(path: str) -> dict[int, Status]:
    data = load_yaml(Path(path))
    statuses = require(path, "file", data, "statuses", dict)
    table = {}
    for name, spec in statuses.items():
        code = require(path, f"status {name}", spec, "code", int)
        if not 0 <= code < CODES:
            raise MatrixError(path, f"status {name}.code",
                              f"must be a whole number from 0 to {CODES - 1:#x}, found {code}")
        table[code] = Status(code, name, str(spec.get("text", "")))
    # every call that succeeds answers code 0: unless it is NV_OK, each success would read as a failure
    if OK not in statuses:
        raise MatrixError(path, "statuses", f"missing {OK} (code 0, the status of every call that succeeds)")
    if statuses[OK]["code"] != 0:
        raise MatrixError(path, f"status {OK}.code", f"must be 0 (the status of every call that succeeds), "
                                                    f"found {statuses[OK]['code']}")
    if table[0].name != OK:
        raise MatrixError(path, f"status {table[0].name}.code", f"0 is {OK}'s code (every call that succeeds answers it)")
    return table


# named once: every RM call's status is looked up here (3128 a full run), and a Path built
# and made a string again for each cost more than the lookup
_SHIPPED = str(MATRICES / "nvstatus.yaml")


def status(code: int, path: Path | None = None) -> Status:
    table = _table(str(path) if path else _SHIPPED)
    return table.get(code) or Status(code, f"NV_STATUS_{code:#x}", "not in matrices/nvstatus.yaml")


def names(path: Path | None = None) -> set[str]:
    return {st.name for st in _table(str(path) if path else _SHIPPED).values()}
