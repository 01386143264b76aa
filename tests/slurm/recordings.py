"""The recordings that stand in for the fleet tests' nodes: a healthy host (the 2 x H200 quick
recording), a host at idle clocks (degraded/, DEGRADED by its floors alone), and a host whose
copies land in the wrong memory (NOT CERTIFIED): a copy of the healthy recording in which
every block read back after the first layout's setup holds another session's pattern in its
second half, so the replay's byte check finds the wrong data, as on a broken host."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from rmpeer.paths import transcripts_dir

HEALTHY = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
IDLE_CLOCKS = transcripts_dir() / "degraded" / "h200x2-20261130T003733Z-noboost.jsonl.gz"


def wrong_memory(dest: Path) -> Path:
    lines = gzip.open(HEALTHY, "rt").read().splitlines()
    views = [i for i, line in enumerate(lines) if '"mem.view"' in line]
    start = views[len(views) // 4]          # past the staging checks, into the windows' reads
    out = []
    for i, line in enumerate(lines):
        if i >= start and '"mem.view"' in line:
            rec = json.loads(line)
            (first, count, value), = rec["extra"]["runs"]
            half = count // 2
            rec["extra"]["runs"] = [[first, half, value], [first + half, count - half, value + (1 << 40)]]
            line = json.dumps(rec)
        out.append(line)
    with gzip.open(dest, "wt") as f:
        f.write("\n".join(out) + "\n")
    return dest
