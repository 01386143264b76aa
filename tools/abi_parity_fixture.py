#!/usr/bin/env python3
"""Writes fixtures/abi-parity.json.gz: every tag of open-gpu-kernel-modules from FIRST to
LAST, read by the C compiler (rmpeer/abi/probe.py), for tests/test_abi_parity.py.

  python tools/abi_parity_fixture.py [--mirror DIR] [--first 535.43.02] [--last 595.45.04]

Each tag's headers are extracted once into --cache (default /tmp/rmpeer-headers) and the
tags are measured in parallel. Run it again after adding a name or a release to
matrices/drivers.yaml, and commit the fixture with it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rmpeer.abi.parity import FIXTURE, measure_tags, tags_between, write_fixture  # noqa: E402

MIRROR = "/work/.mirror/NVIDIA+open-gpu-kernel-modules/repo"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirror", default=MIRROR, help="a clone (bare is fine) of NVIDIA/open-gpu-kernel-modules")
    p.add_argument("--first", default="535.43.02")
    p.add_argument("--last", default="595.45.04")
    p.add_argument("--cache", default="/tmp/rmpeer-headers", help="where extracted headers are kept")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    p.add_argument("--output", default=str(FIXTURE))
    args = p.parse_args()
    tags = tags_between(Path(args.mirror), args.first, args.last)
    per_tag = measure_tags(Path(args.mirror), tags, Path(args.cache), args.jobs)
    write_fixture(per_tag, Path(args.output))
    print(f"{len(tags)} tags ({tags[0]} .. {tags[-1]}) -> {args.output} ({Path(args.output).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
