"""`rmpeer diff` between runs made with other settings (issue 45): a step one side's run does
not make because of how it was run is "not comparable", the settings of both named, never a
difference. The passive tier reads RM's facts alone (no layout, copy or bandwidth); --no-boost
neither raises nor clears the boost and reads the clocks in fewer phases. Every committed
1 x H200 recording, of any tier, with or without the boost, diffs against the newest full one
as the same behaviour; the same file with its header claiming the other setting differs."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.diff.compare import compare_calls, coverage
from rmpeer.diff.load import load

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]


def _committed(kind: str) -> list[Path]:
    """Every committed real recording of one host kind (derived ones left out), oldest first."""
    paths = [p for folder in (ROOT / "docs" / "evidence", ROOT / "fixtures" / "transcripts")
             for p in folder.rglob("*.jsonl.gz") if kind in str(p.relative_to(ROOT)) and "derived" not in p.parts]
    return sorted((p for p in paths if p.is_file() and not p.is_symlink()), key=lambda p: _header(p).get("created", ""))


def _header(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.loads(f.readline())["header"]


ALL = _committed("h200x1")
FULL = [p for p in ALL if (_header(p).get("run") or {}).get("layouts") and (_header(p).get("run") or {}).get("boost")]
NEWEST = FULL[-1] if FULL else None
PASSIVE = [p for p in ALL if (_header(p).get("run") or {}).get("tier") == "passive"]
NOBOOST = [p for p in ALL if (_header(p).get("run") or {}).get("boost") is False
           and (_header(p).get("run") or {}).get("layouts")]
needs = pytest.mark.skipif(not (NEWEST and PASSIVE and NOBOOST),
                           reason="the committed 1 x H200 recordings (a checkout, not a wheel)")


def _calls(a: Path, b: Path):
    sa, sb = load(str(a)), load(str(b))
    return compare_calls(sa, sb, coverage(sa, sb))


def _with_header(src: Path, dst: Path, **run) -> Path:
    """The recording at src, its header's run settings changed (written under tmp_path only)."""
    with gzip.open(src, "rt") as f:
        lines = f.read().splitlines()
    head = json.loads(lines[0])
    for key, value in run.items():
        if value is None:
            head["header"]["run"].pop(key, None)
        else:
            head["header"]["run"][key] = value
    with gzip.open(dst, "wt") as f:
        f.write("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    return dst


@pytest.mark.skipif(not (ROOT / "docs" / "evidence").is_dir(), reason="docs/evidence (a checkout, not a wheel)")
def test_the_committed_recordings_cover_both_settings():
    """The premise: recordings of the passive tier and of --no-boost are committed (were they
    deleted, the tests below would prove nothing)."""
    assert len(ALL) >= 30 and len(PASSIVE) >= 5 and NOBOOST, (len(ALL), len(PASSIVE), NOBOOST)


@needs
@pytest.mark.parametrize("old", ALL, ids=[f"{p.parent.name}/{p.name}" for p in ALL])
def test_every_committed_recording_is_the_same_behaviour_as_the_newest_full_one(old):
    statuses, counts = _calls(old, NEWEST)
    assert statuses.differences == [] and counts.differences == [], (statuses.differences[:5], counts.differences[:5])


@needs
def test_a_passive_run_leaves_the_deeper_tier_s_steps_not_comparable_and_named():
    statuses, counts = _calls(NEWEST, PASSIVE[-1])
    unrun = [x for x in statuses.info if "run does not make" in x]
    assert any(x.startswith("not comparable (only in A)") and "ran the passive tier" in x and "ce:copy:*" in x
               and "dma-map-window:*" in x and "B: tier passive" in x for x in unrun), statuses.info
    # the GPU processes, read once by the passive tier and before and after by the deeper one
    assert any(x.startswith("not comparable (only in B)") and "gpu-processes:now:*" in x
               and "the other ran the passive tier" in x for x in unrun), statuses.info
    assert any("perf:pstate:*" in x for x in counts.info), counts.info


@needs
def test_the_same_passive_recording_claiming_a_deeper_tier_differs(tmp_path):
    """Its header's tier taken out and the boost said asked (a run with no layouts that says it
    is no passive run, made as the newest was): every step it did not call is a difference again."""
    fake = _with_header(PASSIVE[-1], tmp_path / "untiered.jsonl.gz", tier=None, boost=True)
    statuses, counts = _calls(NEWEST, fake)
    keys = {d[0] for d in statuses.differences}
    assert any(k.startswith("ce:") for k in keys) and not any("passive tier" in x for x in statuses.info), keys
    assert counts.differences, "the clock readings' counts differ again"


@needs
def test_a_no_boost_run_leaves_the_boost_not_comparable_and_named():
    statuses, counts = _calls(NEWEST, NOBOOST[-1])
    assert not any(d[0].startswith("perf:") for d in statuses.differences + counts.differences)
    unrun = [x for x in statuses.info if "run does not make" in x]
    assert len(unrun) == 1 and "perf:boost:*" in unrun[0] and "ran without the boost (--no-boost)" in unrun[0] \
        and "B: tier not recorded, boost asked no" in unrun[0], unrun


@needs
def test_the_same_no_boost_recording_claiming_the_boost_differs(tmp_path):
    fake = _with_header(NOBOOST[-1], tmp_path / "claims-boost.jsonl.gz", boost=True)
    statuses, counts = _calls(NEWEST, fake)
    assert {d[0] for d in statuses.differences} >= {"perf:boost:boost_to_max:card0", "perf:boost:clear:card0"}
    assert {d[0] for d in counts.differences} >= {"perf:pstate", "perf:clock-levels"}


@needs
def test_the_command_says_same_behaviour_across_tiers():
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", str(NEWEST), str(PASSIVE[-1])],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and "SAME BEHAVIOUR" in done.stdout.splitlines()[-1], done.stdout[-2000:]
