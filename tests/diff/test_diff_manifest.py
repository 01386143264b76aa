"""`rmpeer diff` by what each side's rmpeer makes (issue 45, item 1): a file's manifest
(rmpeer.model.steps) says which step families and checks its rmpeer makes. A family or a check
one side's rmpeer does not make is "not comparable", named with both rmpeers; one both make
and that differs still differs; a malformed manifest is exit 2 in one line.

The recordings here are the newest committed 1 x H200 recording with today's manifest put in
its header, as today's rmpeer writes it (written under tmp_path, never committed); "an older
rmpeer" is the same with one family's calls deleted and the family taken out of its manifest."""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.diff.compare import compare, compare_tests, coverage
from rmpeer.diff.load import load
from rmpeer.diff.side import step_family
from rmpeer.model.steps import manifest
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
NEWEST = sorted(transcripts_dir().glob("h200x1-2*.jsonl.gz"))[-1]


def _lines(path: Path) -> list:
    with gzip.open(path, "rt") as f:
        return [json.loads(x) for x in f]


def _write(path: Path, lines: list) -> Path:
    with gzip.open(path, "wt") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))
    return path


def with_manifest(lines: list, drop: str | None = None, keep_in_manifest: bool = False) -> list:
    """The recording as today's rmpeer writes it (its manifest in the header); with `drop`,
    one family's calls gone, and the family out of the manifest unless keep_in_manifest."""
    lines = copy.deepcopy(lines)
    made = dict(manifest())
    if drop and not keep_in_manifest:
        made["families"] = {k: v for k, v in made["families"].items() if k != drop}
    lines[0]["header"]["manifest"] = made
    return [lines[0]] + [x for x in lines[1:] if "op" not in x or step_family(x.get("label", "")) != drop]


def _diff(a: Path, b: Path):
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "rmpeer", "diff", str(a), str(b)], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def today(tmp_path_factory):
    """(the path, the loaded Side) of the newest recording with today's manifest."""
    path = _write(tmp_path_factory.mktemp("today") / "today.jsonl.gz", with_manifest(_lines(NEWEST)))
    return path, load(str(path))


def test_a_recording_with_a_manifest_is_read_by_it(today):
    _, side = today
    assert side.makes("families") == set(manifest()["families"])
    assert side.makes("checks") == set(manifest()["checks"])


def _families_called(side) -> list:
    return sorted({step_family(label) for _, label, _ in side.calls})


def test_each_family_one_side_s_rmpeer_does_not_make_is_not_comparable(today):
    """Every family the recording calls, deleted in turn with its manifest entry: the same
    behaviour, the family named as one the other rmpeer never made."""
    _, new = today
    families = _families_called(new)
    assert len(families) > 50
    for family in families:
        older = copy.deepcopy(new)
        older.calls = [c for c in older.calls if step_family(c[1]) != family]
        older.manifest = dict(older.manifest, families=[f for f in older.manifest["families"] if f != family])
        statuses, counts = compare(older, new)[:2]
        assert not statuses.differences and not counts.differences, (family, statuses.differences)
        assert any(f"{family}:*" in line and "A's rmpeer never made" in line and "by its manifest" in line
                   for line in statuses.info), (family, statuses.info)


def test_a_family_both_rmpeers_make_deleted_from_one_side_differs(today):
    """The same deletion with the family still in the manifest (the rmpeer made it and did not
    call it): a difference, for every family."""
    _, new = today
    for family in _families_called(new):
        older = copy.deepcopy(new)
        older.calls = [c for c in older.calls if step_family(c[1]) != family]
        statuses = compare(older, new)[0]
        assert statuses.differences and all(step_family(k) == family for k, _, _ in statuses.differences), family


def test_from_the_command_line_a_family_only_one_rmpeer_makes_is_exit_0_and_named(tmp_path, today):
    path, _ = today
    older = _write(tmp_path / "older.jsonl.gz", with_manifest(_lines(NEWEST), drop="health:ecc"))
    done = _diff(older, path)
    assert done.returncode == 0, done.stdout[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RM statuses: "))
    assert "health:ecc:*" in line and "never made" in line, line
    kept = _write(tmp_path / "kept.jsonl.gz", with_manifest(_lines(NEWEST), drop="health:ecc", keep_in_manifest=True))
    done = _diff(kept, path)
    assert done.returncode == 1 and "health:ecc:card0" in done.stdout, done.stdout[-3000:]


def test_a_real_change_between_two_files_with_manifests_still_differs(tmp_path, today):
    """A status flipped in one step (nvlink:caps, a family both make): exit 1."""
    path, _ = today
    lines = with_manifest(_lines(NEWEST))
    call = next(x for x in lines[1:] if x.get("label") == "nvlink:caps")
    call["status_name"], call["status"] = "NV_ERR_NOT_SUPPORTED", 0x56
    done = _diff(_write(tmp_path / "flipped.jsonl.gz", lines), path)
    assert done.returncode == 1 and "nvlink:caps" in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize("bad, said", [
    ("all of it", "is not an object"),
    ({"format": "rmpeer-manifest/9"}, "format 'rmpeer-manifest/9'"),
    ({**{"format": "rmpeer-manifest/1", "checks": {}, "fields": [], "figures": []}, "families": ["x", 3]},
     "families is not an object of names"),
])
def test_a_malformed_manifest_is_exit_2_in_one_line_before_anything_is_compared(tmp_path, today, bad, said):
    path, _ = today
    lines = _lines(NEWEST)
    lines[0]["header"]["manifest"] = bad
    done = _diff(_write(tmp_path / "bad.jsonl.gz", lines), path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not done.stdout.strip()


# -- checks: a certificate's tests, by the check each is -------------------------------------

def _cert_side(name, created, tests: dict, made: set | None):
    """A certificate's Side: tests {id: (check, outcome)}; made: its manifest's checks."""
    from rmpeer.diff.side import Side

    side = Side(name, "certificate", context={"rmpeer": "0.1.0", "created": created})
    side.tests = {t: (None, outcome) for t, (_, outcome) in tests.items()}
    side.checks_of = {t: check for t, (check, _) in tests.items()}
    side.sources["tests"] = "check ids"
    if made is not None:
        side.manifest = {"families": [], "checks": sorted(made), "fields": [], "figures": []}
    return side


BOTH = {"read/one-per-card/s0->t0": ("read", "passed"), "xid/host": ("xid", "passed")}
NEW_CHECK = {"nvlink-errors/host": ("nvlink-errors", "passed")}


@pytest.mark.parametrize("older_made", [{"read", "xid"}, None], ids=["by-its-manifest", "inferred-no-manifest"])
def test_a_check_one_side_s_rmpeer_does_not_make_is_not_comparable(older_made):
    a = _cert_side("a", "2026-11-30T00:00:00Z", BOTH, older_made)
    b = _cert_side("b", "2026-12-05T00:00:00Z", {**BOTH, **NEW_CHECK}, {"read", "xid", "nvlink-errors"})
    aspect = compare_tests(a, b, coverage(a, b))
    assert aspect.differences == []
    assert any("only in B" in x and "nvlink-errors" in x and "A's rmpeer never made" in x for x in aspect.info), \
        aspect.info


def test_a_check_both_rmpeers_make_missing_on_one_side_differs():
    a = _cert_side("a", "2026-11-30T00:00:00Z", BOTH, {"read", "xid", "nvlink-errors"})
    b = _cert_side("b", "2026-12-05T00:00:00Z", {**BOTH, **NEW_CHECK}, {"read", "xid", "nvlink-errors"})
    assert compare_tests(a, b, coverage(a, b)).differences == [("nvlink-errors/host", "absent", "passed")]
    # no manifest, and the older side holds tests of that check elsewhere: its rmpeer made it
    a = _cert_side("a", "2026-11-30T00:00:00Z", {**BOTH, "nvlink-errors/card1": ("nvlink-errors", "passed")}, None)
    assert ("nvlink-errors/host", "absent", "passed") in compare_tests(a, b, coverage(a, b)).differences


# -- figures: how each was timed ---------------------------------------------------------------

TWO = transcripts_dir() / "h200x2-20261130T162924Z.jsonl.gz"     # gated: the engines at once behind a gate


def _bidirectional_faster(lines: list, gated: bool) -> list:
    """The recording with its both-directions figure 12% higher, made by an rmpeer with the
    gate or without it (its header's run.gated)."""
    lines = copy.deepcopy(lines)
    if not gated:
        lines[0]["header"]["run"].pop("gated", None)
    note = next(x for x in lines if x.get("note") == "bandwidth")
    row = next(r for r in next(v for v in note.values() if isinstance(v, list)) if r["op"] == "bidirectional")
    row["gbps"] = round(row["gbps"] * 1.12, 2)
    return lines


def test_a_figure_timed_two_ways_is_not_comparable_and_says_how(tmp_path):
    """A recording made before the gate (no run.gated) timed both directions at once from the
    first start on any card to the last end on any card: against a gated one, that figure is
    not comparable, whatever it reads; every figure timed one way still compares."""
    ungated = _write(tmp_path / "ungated.jsonl.gz", _bidirectional_faster(_lines(TWO), gated=False))
    done = _diff(ungated, TWO)
    assert done.returncode == 0, done.stdout[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("bandwidth"))
    assert "not comparable: 1 bidirectional figure(s) timed two ways (A ungated, B gated" in line, line
    gated = _write(tmp_path / "gated.jsonl.gz", _bidirectional_faster(_lines(TWO), gated=True))
    done = _diff(gated, TWO)
    assert done.returncode == 1 and "bidirectional card 0->1 256 MiB" in done.stdout, done.stdout[-3000:]


def test_a_manifest_names_how_each_figure_is_timed():
    assert manifest()["figures"] == {"read": "own-clock", "write": "own-clock", "same-card": "own-clock",
                                     "bidirectional": "gated", "all": "gated"}
