"""NV_STATUS codes (matrices/nvstatus.yaml): a code's NV_ERR_* name and NVIDIA's text."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rmpeer.tables.load import MATRICES, load_yaml, require


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
        table[code] = Status(code, name, str(spec.get("text", "")))
    return table


def status(code: int, path: Path | None = None) -> Status:
    table = _table(str(path or MATRICES / "nvstatus.yaml"))
    return table.get(code) or Status(code, f"NV_STATUS_{code:#x}", "not in matrices/nvstatus.yaml")


def names(path: Path | None = None) -> set[str]:
    return {st.name for st in _table(str(path or MATRICES / "nvstatus.yaml")).values()}
