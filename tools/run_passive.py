"""Runs the passive tier (rmpeer.passive) on this host or a recording, until certify's
--tier passive is wired: prints the verdict, the reasons and the wall time, and writes the
result as a certificate.

    python tools/run_passive.py [--replay TRANSCRIPT] [--record DIR] [--state FILE]
                                [--expect-topology NAME] [--output DIR] [--valid-for 24h]

Exit codes are certify's (rmpeer/errors.py): 0 CERTIFIED, 1 NOT CERTIFIED, 4 DEGRADED, 5
INCOMPLETE, 2 usage, 3 no GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

T0 = time.perf_counter()

from rmpeer.errors import EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, NoDeviceError, RmpeerError  # noqa: E402

EXIT = {"CERTIFIED": EXIT_OK, "NOT CERTIFIED": EXIT_NOT_CERTIFIED, "DEGRADED": EXIT_DEGRADED,
        "INCOMPLETE": EXIT_INCOMPLETE}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replay")
    ap.add_argument("--record")
    ap.add_argument("--state")
    ap.add_argument("--expect-topology")
    ap.add_argument("--output", default="rmpeer-passive")
    ap.add_argument("--valid-for")
    args = ap.parse_args()
    from rmpeer.passive import run_passive
    from rmpeer.staleness import parse_valid_for
    from rmpeer.targets import live_target, replay_target

    try:
        target = replay_target(args.replay) if args.replay else live_target()
        if target is None:
            raise NoDeviceError("no NVIDIA device: /dev/nvidiactl does not exist on this machine")
        result = run_passive(target, state_path=args.state, topology_name=args.expect_topology, record=args.record,
                             valid_for=parse_valid_for(args.valid_for))
    except RmpeerError as exc:
        print(f"rmpeer: {exc}", file=sys.stderr)
        return exc.exit_code
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "certificate.json").write_text(json.dumps(result.to_dict(), indent=1, default=str))
    print(f"{result.verdict} (passive, {len(result.checks)} checks) in {result.duration_s:.3f} s run, "
          f"{time.perf_counter() - T0:.3f} s since the process started; written to {out / 'certificate.json'}")
    for reason in result.reasons:
        print(f"  - {reason}")
    return EXIT[result.verdict]


if __name__ == "__main__":
    sys.exit(main())
