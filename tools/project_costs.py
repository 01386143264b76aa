"""Fits the certify cost model to an evidence folder (its bench.json and the certify logs
beside it) and writes the result into that bench.json under "cost_model", as `rmpeer bench`
does for a new run. For a bench.json made before the model existed.

    python tools/project_costs.py docs/evidence/h200x2-20261130T003650Z [MORE_LOG_FOLDERS ...]

Extra folders add their certify logs (the same host, other runs) to the fit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rmpeer.costmodel import calibration_logs, projection, render_projection


def main(argv: list) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[0])
    bench = json.loads((folder / "bench.json").read_text())
    logs = [text for f in [folder, *map(Path, argv[1:])] for text in calibration_logs(f)]
    bench["cost_model"] = projection(bench, logs)
    (folder / "bench.json").write_text(json.dumps(bench, indent=1, default=str) + "\n")
    print(render_projection(bench["cost_model"]))
    print(json.dumps(bench["cost_model"].get("reproduces"), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
