"""What a certify process loads (docs/architecture.md, Imports): numpy, cffi, pytest, allure
and prometheus_client load only on the paths that use them. A passive certify, the tier a
prolog runs before every job, loads none of them: each costs its import on every node, every
job. Measured in a fresh process running certify as the command line does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
HEAVY = ("numpy", "cffi", "pytest", "allure", "allure_commons", "prometheus_client")
RECORDING = transcripts_dir() / "h200x2-20261130T003650Z.jsonl.gz"
LOADED = ("import json, sys\nfrom rmpeer.cli import main\ncode = main({argv!r})\n"
          "print(json.dumps([code, sorted(m for m in {heavy!r} if m in sys.modules)]))")


def loaded(tmp_path, *argv) -> tuple[int, list]:
    argv = ["certify", "--replay", str(RECORDING), "--output", str(tmp_path / "out"), *map(str, argv)]
    done = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv, heavy=HEAVY)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return code, modules


def test_a_passive_certify_loads_no_heavy_library(tmp_path):
    assert loaded(tmp_path, "--tier", "passive", "--json") == (0, [])


def test_prometheus_client_loads_for_prometheus_alone(tmp_path):
    assert loaded(tmp_path, "--tier", "passive", "--prometheus", tmp_path / "prom") == (0, ["prometheus_client"])
    assert (tmp_path / "prom" / "rmpeer.prom").is_file()


def test_a_wheels_certify_parses_no_yaml(tmp_path):
    """A wheel carries the shipped matrices parsed at its build (rmpeer/tables/load.py, BUILT):
    its certify, of any tier, never imports yaml (about 13 ms of every start on a lent host).
    A checkout parses them at each run, and loads it."""
    from rmpeer.tables.load import BUILT

    if not BUILT.is_file():
        pytest.skip("the matrices parsed at build are in the wheel, which CI installs and tests "
                    "(RMPEER_CI_WHEEL=1); a checkout parses them at each run")
    argv = ["certify", "--replay", str(RECORDING), "--tier", "quick", "--output", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv, heavy=("yaml",))], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]


# What only a refusal, an internal error, a recording or a thread pool needs, which a passive
# run that ends well never reaches (each a few ms of every prolog's start on a lent host:
# docs/evidence/h100x1-20261205T1758Z-final2/importtime-quick.txt.gz)
ONLY_WHEN_NEEDED = ("difflib", "traceback", "concurrent.futures", "socket", "pdb",
                    # the quick and full tiers' host run, copy engines and traffic
                    "rmpeer.run.hostrun", "rmpeer.ce.engine", "rmpeer.traffic.bandwidth")


def test_a_passive_certify_that_ends_well_loads_nothing_it_never_uses(tmp_path):
    argv = ["certify", "--replay", str(RECORDING), "--tier", "passive", "--output", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv, heavy=ONLY_WHEN_NEEDED)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]


def test_a_quick_certify_loads_neither_difflib_nor_pdb(tmp_path):
    """difflib is for a matrix's misspelt key alone; pdb for pytest's --pdb, which certify's
    session leaves out (QUIET_PLUGINS)."""
    argv = ["certify", "--replay", str(RECORDING), "--tier", "quick", "--output", str(tmp_path / "out")]
    done = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv, heavy=("difflib", "pdb"))],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]
