"""Writes fixtures/transcripts/step-families.json: for every step family (rmpeer.model.steps.family_of
of a call's label), the creation time of the earliest committed recording of a real host that holds a
call of it (rmpeer.diff.load.first_seen). `rmpeer diff` reads it to tell a step one side's
rmpeer never made (not comparable) from one it made and the other side did not (a difference),
for a recording made before rmpeer wrote its manifest into every header (tools/manifest.py).
Run it after committing a recording that holds a new family; tests/diff/test_diff_versions.py
fails while the file is not what this writes.

    python tools/step_families.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys

from rmpeer.diff.load import FAMILIES_FILE, first_seen
from rmpeer.paths import transcripts_dir


def real_recordings() -> list:
    """The committed recordings of real hosts (derived/ holds changed copies of them)."""
    root = transcripts_dir()
    return sorted(p for p in root.rglob("*.jsonl.gz") if "derived" not in p.relative_to(root).parts)


def table_text() -> str:
    paths = real_recordings()
    doc = {"made_by": "tools/step_families.py", "from": [str(p.relative_to(transcripts_dir())) for p in paths],
           "families": first_seen(paths)}
    return json.dumps(doc, indent=1) + "\n"


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed file is not current, writing nothing")
    args = ap.parse_args(argv)
    path, text = transcripts_dir() / FAMILIES_FILE, table_text()
    if args.check:
        current = path.is_file() and path.read_text() == text
        print(f"{path}: {'current' if current else 'not current: run python tools/step_families.py'}")
        return 0 if current else 1
    path.write_text(text)
    print(f"{path}: {text.count(chr(10)) - 3} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
