"""Writes rmpeer/model/manifest.json: what this rmpeer makes, generated from the code that
makes it, never kept by hand.

- families: every step family a module declares (rmpeer.model.steps.declare), with the
  module: every module of rmpeer and every suite is imported to collect them;
- checks: every check a suite declares (its rm_check marker) and the passive tier's
  (rmpeer.judge.passive), with its area;
- fields: the host facts' fields (rmpeer.model.host: HostFacts, and Card per card);
- figures: the bandwidth figures a run measures, each with how it is timed
  (rmpeer.traffic.bandwidth.OPS, METHODS).

Every recording's header and every certificate carries it; `rmpeer diff` reads from it what
each side's rmpeer makes. The shims refuse a call of a family the manifest does not hold, and
tests/model/test_manifest.py fails while the file is not what this writes: run it after code
adds a step family, a check, a host fact or a figure.

    python tools/manifest.py [--check]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import importlib.resources
import json
import pkgutil
import sys

import rmpeer
from rmpeer.model import steps
from rmpeer.model.host import Card, HostFacts
from rmpeer.paths import suites_dir


def _import_everything() -> list:
    """Every module of rmpeer (its command line's entry point aside) and every suite."""
    mods = [importlib.import_module(m.name) for m in pkgutil.walk_packages(rmpeer.__path__, "rmpeer.")
            if not m.name.endswith("__main__")]
    folder = suites_dir()
    sys.path.insert(0, str(folder.parent))
    package = folder.name if folder.name == "suites" else "rmpeer.suites"
    for path in sorted(folder.glob("test_*.py")):
        mods.append(importlib.import_module(f"{package}.{path.stem}"))
    return mods


def _suite_checks(mods) -> dict:
    checks = {}
    for mod in mods:
        if not mod.__name__.rsplit(".", 1)[-1].startswith("test_"):
            continue
        for name, fn in vars(mod).items():
            for mark in getattr(fn, "pytestmark", []) if name.startswith("test_") else []:
                if mark.name == "rm_check":
                    checks[mark.args[0]] = mark.kwargs.get("area", "")
    return checks


def build() -> dict:
    from rmpeer.judge.passive import ASPECTS, UNREAD
    from rmpeer.traffic.bandwidth import METHODS, OPS

    mods = _import_everything()
    # a check is named as its CheckResult's `check` (the passive tier's clocks and the full
    # tier's are one check, in the fitness area)
    checks = {**{UNREAD: "host"}, **ASPECTS, **_suite_checks(mods)}
    doc = {"format": steps.MANIFEST_FORMAT, "made_by": "tools/manifest.py",
           "families": steps.declared(),
           "checks": dict(sorted(checks.items())),
           "fields": sorted([f"host.{f.name}" for f in dataclasses.fields(HostFacts)]
                            + [f"card.{f.name}" for f in dataclasses.fields(Card)]),
           "figures": {op: METHODS[op] for op in sorted(OPS)}}
    body = json.dumps(doc, sort_keys=True).encode()
    return {**doc, "digest": "sha256:" + hashlib.sha256(body).hexdigest()}


def manifest_text() -> str:
    return json.dumps(build(), indent=1) + "\n"


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the committed file is not current, writing nothing")
    args = ap.parse_args(argv)
    path = importlib.resources.files("rmpeer.model").joinpath(steps.MANIFEST_FILE)
    text = manifest_text()
    if args.check:
        current = path.is_file() and path.read_text() == text
        print(f"{path}: {'current' if current else 'not current: run python tools/manifest.py'}")
        return 0 if current else 1
    path.write_text(text)
    doc = json.loads(text)
    print(f"{path}: {len(doc['families'])} families, {len(doc['checks'])} checks, {len(doc['fields'])} fields, "
          f"{len(doc['figures'])} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
