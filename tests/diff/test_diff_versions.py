"""`rmpeer diff` across rmpeer versions (issue 23, item 8): a step one recording's rmpeer never
attempted is "not comparable (only in A/B)", both versions named, never a difference. The
committed recordings of one host and driver, made by older and newer rmpeer, diff as SAME
BEHAVIOUR (exit 0); so do the 1 x H200 certificates of the first evidence and of the b2b
evidence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.diff.compare import compare_calls, coverage
from rmpeer.diff.side import Side
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
T = transcripts_dir()
EVIDENCE = ROOT / "docs" / "evidence"
PAIRS = [
    (T / "h200x2-20261130T003650Z.jsonl.gz", T / "h200x2-20261130T151653Z.jsonl.gz"),    # full, older and newer
    (T / "h200x2-20261130T005408Z.jsonl.gz", T / "h200x2-20261130T162924Z.jsonl.gz"),    # quick, older and newer
    (EVIDENCE / "h200x1-20261130T003119Z" / "certificate.json.gz",
     EVIDENCE / "h200x1-20261130T1649Z-b2b" / "b2b" / "certificate-b2b-1.json.gz"),
]


def _diff(a, b):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "rmpeer", "diff", str(a), str(b)], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("a, b", PAIRS, ids=[p[1].name for p in PAIRS])
def test_recordings_of_one_host_and_driver_by_two_rmpeer_versions_are_the_same_behaviour(a, b):
    if not (a.is_file() and b.is_file()):
        pytest.skip(f"{a.name} or {b.name} is not in this checkout")
    done = _diff(a, b)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "SAME BEHAVIOUR" in done.stdout
    if a.name.endswith(".jsonl.gz"):
        line = next(x for x in done.stdout.splitlines() if x.startswith("RM statuses: "))
        assert line.startswith("RM statuses: same (not comparable (only in B): 14 step(s) of gpu-processes:after:*, "
                               "gpu-processes:before:*, teardown:own:*, which A's rmpeer never attempted "
                               "(A: rmpeer 0.1.0, made 2026-11-30T00:"), line


def _side(name, calls, made):
    side = Side(name, "transcript", context={"rmpeer": "0.1.0", "created": made})
    side.calls, side.layouts = [(None, label, status) for label, status in calls], None
    side.sources = {"calls": "the transcript"}
    return side


OLD = [("setup:map", "NV_OK"), ("teardown:own:before:card0", "NV_OK")]
NEW = OLD + [("teardown:own:before:card1", "NV_OK"), ("gpu-processes:before:pids:card0", "NV_OK"),
             ("alloc:p2p", "NV_OK")]


def test_a_missing_step_of_a_family_both_made_still_differs():
    """Only an unconditional family one side never called is not comparable: card1's teardown:own step,
    missing where card0's was made, is a difference."""
    a, b = _side("a", OLD, "t1"), _side("b", NEW, "t2")
    statuses, _ = compare_calls(a, b, coverage(a, b))
    assert statuses.differences == [("alloc:p2p", "not called", "NV_OK x1"),          # a step of the host, not
                                    ("teardown:own:before:card1", "not called", "NV_OK x1")]  # of rmpeer's version
    assert statuses.info == ["not comparable (only in B): 1 step(s) of gpu-processes:before:*, which A's rmpeer "
                             "never attempted (A: rmpeer 0.1.0, made t1; B: rmpeer 0.1.0, made t2)"]


@pytest.mark.parametrize("old, new", [
    ('return ":".join(str(label).split(":")[:2])', "return label"),
    ("unknown_to = None if family not in UNCONDITIONAL_STEPS else (", "unknown_to = None if False else ("),
], ids=["family-of-one-label", "any-family-unconditional"])
def test_mutant_a_looser_version_rule_is_caught(old, new):
    """The rule broken two ways: a one-sided step of the host or of a family both sides made
    would be waved through as "not comparable", and the test above sees it."""
    from source_mutation import mutated

    broken = mutated("rmpeer.diff.compare", old, new)
    a, b = _side("a", OLD, "t1"), _side("b", NEW, "t2")
    statuses, _ = broken.compare_calls(a, b, broken.coverage(a, b))
    assert statuses.differences != [("alloc:p2p", "not called", "NV_OK x1"),
                                    ("teardown:own:before:card1", "not called", "NV_OK x1")]
