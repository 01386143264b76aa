"""The verdict table made with the code before the one-run-path move
(tests/data/verdicts-before-move.json, by tools/verdict_table.py), for the tests that replay a
committed recording anyway: each compares its replay's JSON line with the table's row."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "verdict_table.py"
TABLE = json.loads((Path(__file__).resolve().parent / "data" / "verdicts-before-move.json").read_text())


def tool():
    """tools/verdict_table.py as a module (tools/ is in the checkout, not in the wheel)."""
    spec = importlib.util.spec_from_file_location("verdict_table", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def row(recording: Path, tier: str) -> dict:
    """The table's row of a committed recording (the checkout's or the installed package's,
    named by its place under the recordings' folder): tier "passive" or "own" (certify's default)."""
    from rmpeer.paths import transcripts_dir

    return TABLE[recording.resolve().relative_to(transcripts_dir().resolve()).as_posix()][tier]


def now(output: str, code: int) -> dict:
    """A replay's exit code and JSON line (`--json`) as the table keeps them."""
    line = json.loads([ln for ln in output.splitlines() if ln.startswith("{")][-1])
    return {"exit": code, "line": {k: v for k, v in line.items() if k not in tool().VOLATILE}}
