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


WRONG_MEMORY_CHANGE = ("every mem.view reply (a block read back) from the first quarter of the recording's "
                       "read-backs on (past the staging checks, into the windows' reads): the second half of its "
                       "words re-owned, +1 in the owner field (bit 40): another session's pattern where the "
                       "session's own belongs")


def wrong_memory(dest: Path) -> Path:
    """The healthy quick recording with its later read-backs holding another session's pattern
    (fixtures/transcripts/derived/ commits the result; its header's `derived` says so)."""
    lines = gzip.open(HEALTHY, "rt").read().splitlines()
    header = json.loads(lines[0])
    header["header"]["derived"] = {"from": HEALTHY.name, "changed": WRONG_MEMORY_CHANGE,
                                   "by": "tests/slurm/recordings.py: wrong_memory", "verdict": "NOT CERTIFIED"}
    lines[0] = json.dumps(header)
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
    # mtime 0: the same derivation gives the same bytes (the committed copy is checked against it)
    with gzip.GzipFile(dest, "wb", mtime=0) as f:
        f.write(("\n".join(out) + "\n").encode())
    return dest


REFUSED_OPEN_CHANGE = ("the reply of the run's first RM allocation (alloc:client, NVOS64_PARAMETERS) says "
                       "NV_ERR_INSUFFICIENT_RESOURCES, in its status field and in the record, as RM writes both; "
                       "every other line as recorded: RM refused the run's first call, so no check could run")


def refused_open(dest: Path) -> Path:
    """The healthy quick recording with RM refusing its client (fixtures/transcripts/derived/
    commits the result, the bundled INCOMPLETE example; its header's `derived` says so)."""
    from rmpeer.abi import DriverMatrix, load_yaml, status
    from rmpeer.paths import matrices_dir

    lines = gzip.open(HEALTHY, "rt").read().splitlines()
    header = json.loads(lines[0])
    header["header"]["derived"] = {"from": HEALTHY.name, "changed": REFUSED_OPEN_CHANGE,
                                   "by": "tests/slurm/recordings.py: refused_open", "verdict": "INCOMPLETE"}
    lines[0] = json.dumps(header)
    driver = next(json.loads(x) for x in lines if '"note": "driver"' in x)
    abi = DriverMatrix().abi(driver["abi"])
    code = load_yaml(matrices_dir() / "nvstatus.yaml")["statuses"]["NV_ERR_INSUFFICIENT_RESOURCES"]["code"]
    refused = status(code)
    i = next(k for k, x in enumerate(lines) if '"label":"alloc:client"' in x)
    rec = json.loads(lines[i])
    reply = bytearray(bytes.fromhex(rec["reply"]))
    abi.struct(rec["struct"]).set(reply, "status", refused.code)
    rec.update(reply=reply.hex(), status=refused.code, status_name=refused.name, status_text=refused.text)
    lines[i] = json.dumps(rec, separators=(",", ":"))
    with gzip.GzipFile(dest, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())
    return dest
