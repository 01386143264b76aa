"""A replay asserts for real: change a fact of the ABI, a handle, a struct size or the P2P
flag rule, and the replay of a real recording fails at that field, saying so."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rmpeer.resources import suites_dir
from rmpeer.targets import committed_transcripts

REPO = suites_dir().parent   # the checkout, or the installed package's copy

pytestmark = pytest.mark.offline
TRANSCRIPTS = [p for p in committed_transcripts() if "x2" in Path(p).name] or committed_transcripts()
needs_transcript = pytest.mark.skipif(not TRANSCRIPTS, reason="no transcript committed in fixtures/transcripts/")


def replay(tmp_path, *extra, matrices=None):
    """The setup suite replayed against the two-GPU recording, one layout, in a fresh process."""
    env = dict(os.environ, RMPEER_MATRICES=str(matrices or REPO / "matrices"))
    cmd = [sys.executable, "-m", "pytest", str(REPO / "suites" / "test_peer_setup.py"), "-q", "-x", "-p",
           "no:cacheprovider", "-p", "fixtures.mutants", "--rm-replay", TRANSCRIPTS[0],
           "--rm-layout", "one-per-card", "--rootdir", str(REPO), "-o", "addopts=", *extra]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def mutated_matrices(tmp_path, change):
    out = tmp_path / "matrices"
    shutil.copytree(REPO / "matrices", out)
    data = yaml.safe_load((out / "drivers.yaml").read_text())
    change(data)
    (out / "drivers.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def entry(data, version):
    return next(e for e in data["releases"] if e["version"] == version)


def in_force(data, struct, release="580.65.06"):
    """The entry that states `struct` for `release` (the newest at or before it)."""
    versions = [e["version"] for e in data["releases"]]
    upto = versions[: versions.index(release) + 1]
    return next(entry(data, v) for v in reversed(upto) if struct in (entry(data, v).get("structs") or {}))


@needs_transcript
def test_the_unchanged_replay_passes(tmp_path):
    rc, out = replay(tmp_path)
    assert rc == 0, out[-3000:]


@needs_transcript
def test_a_changed_struct_size_fails_at_the_size_field(tmp_path):
    def grow(data):
        st = in_force(data, "NV503B_ALLOC_PARAMETERS")["structs"]["NV503B_ALLOC_PARAMETERS"]
        st["size"] += 8
    rc, out = replay(tmp_path, matrices=mutated_matrices(tmp_path, grow))
    assert rc != 0
    assert "replay of" in out and "NVOS64_PARAMETERS field paramsSize" in out, out[-3000:]
    assert "the run sent 0x50, the recording has 0x48" in out


@needs_transcript
def test_a_moved_offset_fails_at_that_field(tmp_path):
    def swap(data):
        fields = in_force(data, "NV503B_ALLOC_PARAMETERS")["structs"]["NV503B_ALLOC_PARAMETERS"]["fields"]
        fields["hSubDevice"][0], fields["hPeerSubDevice"][0] = fields["hPeerSubDevice"][0], fields["hSubDevice"][0]
    rc, out = replay(tmp_path, matrices=mutated_matrices(tmp_path, swap))
    assert rc != 0
    assert "params NV503B_ALLOC_PARAMETERS field" in out and "the recording has" in out, out[-3000:]


@needs_transcript
@pytest.mark.parametrize("mutant,field,values", [
    ("pair-handle", "NVOS64_PARAMETERS field hObjectNew", "the run sent 0xb2000002, the recording has 0xb2000001"),
    ("p2p-rule", "NVOS46_PARAMETERS field flags", "the run sent 0x208400, the recording has 0x8400"),
])
def test_a_changed_plan_rule_fails_at_its_field(tmp_path, mutant, field, values):
    """A changed pair handle, or the P2P flag on same-card maps too."""
    rc, out = replay(tmp_path, "--rm-mutant", mutant)
    assert rc != 0
    assert field in out, out[-3000:]
    assert values in out
