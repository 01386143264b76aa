"""Building rmpeer's parser (every command's options, for any one command line) loads the
command modules and the few light modules their options name, never a command's
implementation: `rmpeer certify --tier passive` (0.3 s on 1 x H200) must not pay for the ABI
readers, the fleet, the diff or the renderers, and `rmpeer show` not for the run."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.offline

# What the options themselves need: the command modules, the exit table (errors), the tiers and
# the spec's types (model, with the host facts a spec carries), the card selection's names
# (machine.selection) and the data paths their help prints.
ALLOWED = {"rmpeer", "rmpeer.cli", "rmpeer.errors", "rmpeer.paths", "rmpeer.model", "rmpeer.model.result",
           "rmpeer.model.spec", "rmpeer.model.host", "rmpeer.model.selection", "rmpeer.model.target", "rmpeer.machine", "rmpeer.machine.selection"}
LOADED = ("import json, sys, rmpeer.cli as c; c.build_parser(); "
          "print(json.dumps(sorted(m for m in sys.modules if m == 'rmpeer' or m.startswith('rmpeer.'))))")


def loaded_by_the_parser() -> set:
    """In a fresh process (this one has loaded everything), the rmpeer this test run imports."""
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def beyond(loaded: set) -> set:
    return {m for m in loaded if m not in ALLOWED and not m.startswith("rmpeer.cli.")}


def test_building_the_parser_loads_no_commands_implementation():
    assert beyond(loaded_by_the_parser()) == set()


def test_an_error_while_the_parser_is_built_is_exit_5_never_pythons_1(tmp_path):
    """The parser loads every command module: an error there (a damaged install, a module that
    cannot import) comes before any command's guard, and must still be exit 5, one line, never
    the traceback and exit 1 that a node's health check reads as NOT CERTIFIED."""
    broken = ("import rmpeer.cli as c\n"
              "def build_parser():\n    raise ImportError('rmpeer.cli.show: damaged')\n"
              "c.build_parser = build_parser\nc.entry()\n")
    done = subprocess.run([sys.executable, "-c", broken, "certify"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env={**os.environ, "TMPDIR": str(tmp_path)})
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 5, done.stderr
    assert len(said) == 1 and "internal error (ImportError: rmpeer.cli.show: damaged)" in said[0], said
