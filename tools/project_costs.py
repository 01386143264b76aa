"""Fits the certify cost model to an evidence folder (its bench.json and the certify logs
beside it) and writes the result into that bench.json under "cost_model", as `rmpeer bench`
does for a new run. For a bench.json made before the model existed.

    python tools/project_costs.py docs/evidence/h200x2-20261130T003650Z [MORE_LOG_FOLDERS ...]
           [--recordings PATH ...] [--cross-from 2-CARD/bench.json]

Extra folders add their certify logs (the same host, other runs) to the fit. The bandwidth
rig's cost comes from the recordings (files, or folders searched for *.jsonl.gz) of runs on
the same kind of machine, the folder's own by default (rmpeer.run.costmodel.rig_stretch).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rmpeer.run.costmodel import (calibration_logs, calibration_stretches, cross_card_parts, projection,
                                  render_projection)


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="an evidence folder with bench.json and certify logs")
    ap.add_argument("more", type=Path, nargs="*", help="more folders whose certify logs join the fit")
    ap.add_argument("--recordings", type=Path, nargs="+", default=None,
                    help="recordings (or folders of them) whose bandwidth rig's stretch prices the rig and figures")
    ap.add_argument("--cross-from", type=Path, default=None, metavar="BENCH_JSON",
                    help="for a folder of one card: a bench.json of 2 cards or more whose NV50_P2P setup and "
                         "cross-card GB/s the projection takes (one card cannot measure them)")
    args = ap.parse_args(argv)
    folder = args.folder
    if not (folder / "bench.json").is_file():
        print(f"project_costs: {folder}: no bench.json (rmpeer bench --output {folder} writes one)", file=sys.stderr)
        return 2
    bench = json.loads((folder / "bench.json").read_text())
    logs = [text for f in [folder, *args.more] for text in calibration_logs(f)]
    stretches = calibration_stretches(args.recordings or [folder])
    cross = None
    if args.cross_from:
        try:
            cross = cross_card_parts(json.loads(args.cross_from.read_text()))
        except (OSError, ValueError, KeyError) as exc:
            print(f"project_costs: --cross-from {args.cross_from}: {exc}", file=sys.stderr)
            return 2
    bench["cost_model"] = projection(bench, logs, stretches, cross=cross)
    if cross:
        bench["cost_model"]["cross_card_from"] = str(args.cross_from)
    (folder / "bench.json").write_text(json.dumps(bench, indent=1, default=str) + "\n")
    print(render_projection(bench["cost_model"]))
    print(json.dumps(bench["cost_model"].get("reproduces"), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
