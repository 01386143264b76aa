"""Every check can fail: break the code it guards (tests/mutants.py) or a fact of the ABI,
replay a real recording, and the suite fails, saying what broke. The unchanged replay of the
same selection passes, so each failure is the mutant's doing."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from rmpeer.paths import matrices_dir, pytest_args, pytest_env, suites_dir, transcripts_dir
from rmpeer.shim.live import LiveShim
from rmpeer.shim.replay import ReplayShim, recorded_next

pytestmark = pytest.mark.offline
REPO = suites_dir().parent
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # mutants.py, a plugin of the self-tests
TWO_GPU = sorted(str(p) for p in transcripts_dir().glob("h200x2-*.jsonl.gz"))
DEGRADED = sorted(str(p) for p in (transcripts_dir() / "degraded").glob("h200x2-*.jsonl.gz"))
needs_transcript = pytest.mark.skipif(not TWO_GPU, reason="no two-GPU recording in fixtures/transcripts/")


def replay(*extra, suites=None, recording=None, matrices=None, layout="one-per-card"):
    """The hardware suites (or `suites`) replayed against the two-GPU recording, one layout,
    in a fresh process; (exit code, output). Every check of one layout runs, in the
    recording's order, so the replay goes straight on and must consume every call."""
    env = pytest_env(dict(os.environ, RMPEER_MATRICES=str(matrices or matrices_dir()),
                          PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    env["PYTHONPATH"] = os.pathsep.join([TESTS, env["PYTHONPATH"]])
    paths = [str(suites_dir() / s) for s in suites] if suites else [str(suites_dir()), "-m", "hardware"]
    cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", *pytest_args(),
           "-p", "mutants", "--rm-replay", recording or TWO_GPU[0],
           "-rP", *(["--rm-layout", layout] if layout else []), *extra]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


# mutant -> fragments its failure must show
MUTANTS = {
    "pair-handle": ["NVOS64_PARAMETERS field hObjectNew", "the run sent 0xb2000002, the recording has 0xb2000001"],
    "p2p-rule": ["NVOS46_PARAMETERS field flags", "the run sent 0x208400, the recording has 0x8400"],
    "compare-always-equal": ["the flagless map read the right bytes"],
    "read-wrong-session": ["wrong memory: found the buffer pattern of session 0 (card 0)",
                           "where the buffer pattern of session 1 (card 1)"],
    "teardown-frees-dropped": ["the recording has calls the run never made", "free:",
                               "expected RM to accept a free of each of the"],
    "skip-first-pair": ["replay of", "alloc:p2p"],
    "swap-windows": ["NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS field offset"],
    "no-status-sentinel": ["NVOS46_PARAMETERS field status"],
    "no-boost": ["perf:boost"],
    "unchecked-flagless-plan": ["test_map", "'NO' == 'NOSLI'"],
}


@needs_transcript
def test_the_unchanged_replay_passes():
    rc, out = replay()
    assert rc == 0, out[-3000:]


@needs_transcript
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_fails_the_replay_naming_what_broke(mutant):
    fragments = MUTANTS[mutant]
    rc, out = replay("--rm-mutant", mutant)
    assert rc != 0, f"the {mutant} mutant survived:\n{out[-3000:]}"
    for fragment in fragments:
        assert fragment in out, f"{mutant}: {fragment!r} not in\n{out[-3000:]}"


@pytest.mark.skipif(not DEGRADED, reason="no --no-boost recording in fixtures/transcripts/degraded/")
def test_the_floors_are_what_finds_a_host_at_idle_clocks():
    """The --no-boost recording fails its floors; with the floor check removed it would pass."""
    rc, out = replay(recording=DEGRADED[0], layout=None)
    assert rc != 0 and "below the floor of 355 GB/s" in out and "345 MHz" in out, out[-3000:]
    rc, out = replay("--rm-mutant", "no-floors", recording=DEGRADED[0], layout=None)
    assert rc == 0, f"without the floors the degraded host still failed:\n{out[-3000:]}"


@needs_transcript
def test_a_host_that_is_not_the_topology_asked_for_fails():
    """--rm-topology names an entry the recorded host is not: the topology check fails, saying
    which; with the comparison removed (a mutant) nothing says so."""
    rc, out = replay("--rm-topology", "h200x1", suites=["test_host.py"])
    assert rc != 0 and "expected the topology h200x1, found" in out, out[-3000:]
    rc, out = replay("--rm-mutant", "ignore-expected-topology", "--rm-topology", "h200x1", suites=["test_host.py"])
    assert "expected the topology h200x1" not in out, out[-3000:]


def test_no_check_run_is_never_certified():
    """The judge's own rule, and a mutant that drops it: with no check run the verdict is
    INCOMPLETE, and the mutant turns that into CERTIFIED (so the rule is what prevents it)."""
    import mutants
    from rmpeer.judge import verdict as judge

    assert judge.verdict([], [])[0] == "INCOMPLETE"
    undo = mutants.apply("no-check-run-passes")
    try:
        assert judge.verdict([], [])[0] == "CERTIFIED"
    finally:
        for u in undo:
            u()
    assert judge.verdict([], [])[0] == "INCOMPLETE"


@needs_transcript
def test_the_flagless_map_replays_to_the_hardware_message():
    """The data check runs for real on bytes rebuilt from the recording: the wrong card's
    pattern is found again, in the words it was found on the H200s."""
    rc, out = replay()
    assert rc == 0, out[-3000:]
    assert "wrong memory: found the buffer pattern of session 0 (card 0)" in out, out[-3000:]


def mutated_matrices(tmp_path, change):
    out = tmp_path / "matrices"
    shutil.copytree(matrices_dir(), out)
    data = yaml.safe_load((out / "drivers.yaml").read_text())
    change(data)
    (out / "drivers.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def in_force(data, struct, release="580.65.06"):
    """The entry that states `struct` for `release` (the newest at or before it, by parent)."""
    entries = {e["version"]: e for e in data["releases"]}
    version = release
    while version:
        if struct in (entries[version].get("structs") or {}):
            return entries[version]
        version = entries[version].get("parent")
    raise KeyError(struct)


@needs_transcript
def test_a_changed_struct_size_fails_at_the_size_field(tmp_path):
    def grow(data):
        in_force(data, "NV503B_ALLOC_PARAMETERS")["structs"]["NV503B_ALLOC_PARAMETERS"]["size"] += 8
    rc, out = replay(matrices=mutated_matrices(tmp_path, grow))
    assert rc != 0
    assert "NVOS64_PARAMETERS field paramsSize" in out and "the run sent 0x50, the recording has 0x48" in out, out[-3000:]


@needs_transcript
def test_a_moved_offset_fails_at_that_field(tmp_path):
    def swap(data):
        fields = in_force(data, "NV503B_ALLOC_PARAMETERS")["structs"]["NV503B_ALLOC_PARAMETERS"]["fields"]
        fields["hSubDevice"][0], fields["hPeerSubDevice"][0] = fields["hPeerSubDevice"][0], fields["hSubDevice"][0]
    rc, out = replay(matrices=mutated_matrices(tmp_path, swap))
    assert rc != 0
    assert "params NV503B_ALLOC_PARAMETERS field" in out and "the recording has" in out, out[-3000:]


@needs_transcript
def test_a_replay_takes_an_optional_reading_only_where_the_recording_made_it():
    shim = ReplayShim(TWO_GPU[0])
    at = next(i for i, line in enumerate(shim.lines) if isinstance(line, dict) and line.get("note") == "segment")
    first = next(line for line in shim.lines[at:] if not isinstance(line, dict))
    shim.segment(shim.lines[at]["key"])          # the replay stands where that stretch begins
    assert recorded_next(shim, first.op, first.label)
    assert not recorded_next(shim, first.op, first.label + ":another")
    assert not recorded_next(shim, "observe", "teardown:own:before:pid")
    assert recorded_next(LiveShim(), "observe", "anything")   # live: always taken


QUICK_TWO = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"


@pytest.mark.skipif(not QUICK_TWO.is_file(), reason=f"no {QUICK_TWO.name} in fixtures/transcripts/")
def test_a_read_back_that_differs_from_the_one_before_is_checked_as_read(tmp_path):
    """The replay keeps a mapping's rebuilt read-back while the next one holds the same word
    runs. Derived from the 2 x H200 quick recording: the first read-back that repeats the one
    before it (same mapping, same runs) now holds another session's pattern in its second
    half. The byte check must see it: a replay that kept the earlier bytes would pass."""
    lines = gzip.decompress(QUICK_TWO.read_bytes()).decode().splitlines()
    last, at = {}, None
    for i, line in enumerate(lines):
        if '"mem.view"' in line:
            rec = json.loads(line)
            if last.get(rec["label"]) == rec["extra"]["runs"]:
                at = i
                break
            last[rec["label"]] = rec["extra"]["runs"]
    assert at is not None, "the recording repeats no read-back"
    rec = json.loads(lines[at])
    (first, count, value), = rec["extra"]["runs"]
    rec["extra"]["runs"] = [[first, count // 2, value], [first + count // 2, count - count // 2, value + (1 << 40)]]
    lines[at] = json.dumps(rec)
    derived = tmp_path / "repeated-read-back-changed.jsonl.gz"
    derived.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    rc, out = replay(recording=str(derived), layout=None)
    assert rc != 0 and re.search(r"^1 failed, ", out, re.M), out[-3000:]     # that read-back's check alone
    assert f"bytes differ, the first at offset {(first + count // 2) * 8:#x}" in out, out[-3000:]
