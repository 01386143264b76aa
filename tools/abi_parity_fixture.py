#!/usr/bin/env python3
"""Writes fixtures/abi-parity.json.gz: every tag of open-gpu-kernel-modules from FIRST to
LAST, read by the C compiler (rmpeer/abi/headers/probe.py), for tests/abi/headers/test_parity.py.

  python tools/abi_parity_fixture.py [--src CLONE] [--first 535.43.02] [--last 595.45.04]

CLONE is a clone (bare is fine) of https://github.com/NVIDIA/open-gpu-kernel-modules, by
default the one RMPEER_DRIVER_SRC names. Each tag's headers are extracted once into --cache
(default /tmp/rmpeer-headers) and the tags are measured in parallel. Run it again after
adding a name or a release to matrices/drivers.yaml, and commit the fixture with it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rmpeer.abi.headers.parity import FIXTURE, measure_tags, tags_between, write_fixture  # noqa: E402
from rmpeer.abi.headers.sources import DRIVER_SRC_ENV, HOW_TO_GET, driver_source, tags_of  # noqa: E402
from rmpeer.errors import EXIT_CONFIG, ConfigError  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", "--mirror", dest="src",
                   help=f"a clone (bare is fine) of open-gpu-kernel-modules (default: ${DRIVER_SRC_ENV})")
    p.add_argument("--first", default="535.43.02")
    p.add_argument("--last", default="595.45.04")
    p.add_argument("--cache", default="/tmp/rmpeer-headers", help="where extracted headers are kept")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    p.add_argument("--output", default=str(FIXTURE))
    args = p.parse_args()
    try:
        src = driver_source(args.src)
        if not tags_of(src):
            raise ConfigError(f"{src}: not a clone of open-gpu-kernel-modules (no tags); get one with: {HOW_TO_GET}")
        tags = tags_between(src, args.first, args.last)
        if not tags:
            raise ConfigError(f"{src} has no tag from {args.first} to {args.last} (git -C {src} fetch --tags)")
    except ConfigError as exc:
        print(f"abi_parity_fixture: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    per_tag = measure_tags(src, tags, Path(args.cache), args.jobs)
    write_fixture(per_tag, Path(args.output))
    print(f"{len(tags)} tags ({tags[0]} .. {tags[-1]}) -> {args.output} ({Path(args.output).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
