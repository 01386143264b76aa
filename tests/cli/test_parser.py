"""Building rmpeer's parser (every command's options, for any one command line) loads the
command modules and the few light modules their options name, never a command's
implementation: `rmpeer certify --tier passive` (0.3 s on 1 x H200) must not pay for the ABI
readers, the fleet, the diff or the renderers, and `rmpeer show` not for the run."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.offline

# What the options themselves need: the command modules, the exit table (errors), the tiers and
# the spec's types (model), the card selection's names (machine.selection, with the Xid parser
# it imports) and the data paths their help prints.
ALLOWED = {"rmpeer", "rmpeer.cli", "rmpeer.errors", "rmpeer.paths", "rmpeer.model", "rmpeer.model.result",
           "rmpeer.model.spec", "rmpeer.machine", "rmpeer.machine.selection", "rmpeer.machine.xids"}
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
