"""What this rmpeer makes (issue 45, item 1): the manifest rmpeer/model/manifest.json is
generated from the code (tools/manifest.py: the families each module declares, the suites'
checks, the host facts' fields, the bandwidth figures), every recording's header and every
certificate carries it, and the shims refuse a step of a family nobody declared, so code
cannot make one the manifest does not know."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.model.steps import UndeclaredStep, check_label, family_of, manifest
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
T = transcripts_dir()


def _tool():
    sys.path.insert(0, str(ROOT / "tools"))
    import manifest as tool

    return tool


def test_the_committed_manifest_is_what_the_code_declares():
    """A module that declares a new family (or a suite a new check) without running
    tools/manifest.py fails here."""
    assert (ROOT / "rmpeer" / "model" / "manifest.json").read_text() == _tool().manifest_text()


@pytest.mark.parametrize("label, family", [
    ("alloc:buffer:s3", "alloc:buffer"),                  # the seed's per-session buffer
    ("ce:s0:g1:copy", "ce:copy"),                         # a channel group's copy object
    ("free:ce:s12:control:reserve", "free:ce"),
    ("health:ecc:card2", "health:ecc"),
    ("host:p2p-caps:0->1", "host:p2p-caps"),
    ("gpu-processes:before:pids:card0", "gpu-processes:before"),
    ("close:card1", "close"),
    ("dma-map-peer", "dma-map-peer"),
    ("close:card0 [close]", "close"),                     # rmpeer diff's key: the op left out
])
def test_a_family_leaves_out_the_parts_that_number_an_instance(label, family):
    assert family_of(label) == family


def _families(path: Path) -> set:
    with gzip.open(path, "rt") as f:
        return {family_of(d.get("label", "")) for d in map(json.loads, f) if "op" in d}


REAL = sorted(p for p in T.rglob("*.jsonl.gz") if "derived" not in p.parts)


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_every_family_a_real_host_recorded_is_in_the_manifest(path):
    """The recordings were made on H200 hosts by the code of their day: every family they hold
    is one a module of today's rmpeer declares (none was dropped from the declarations)."""
    assert _families(path) - set(manifest()["families"]) == set()


def test_the_manifest_names_what_rmpeer_makes():
    doc = manifest()
    assert doc["digest"].startswith("sha256:")
    # checks a suite declares by its rm_check marker, and the passive tier's aspects
    assert {"read", "write", "setup:map", "bandwidth-floor", "xid", "cards", "health"} <= set(doc["checks"])
    assert {"host.driver_version", "card.uuid", "card.health"} <= set(doc["fields"])
    assert set(doc["figures"]) == {"read", "write", "same-card", "bidirectional", "all"}
    assert doc["families"]["health:ecc"] == ["rmpeer.rm.health"]
    assert doc["families"]["open:nvidiactl"] == ["rmpeer.rm.client", "rmpeer.rm.open"]   # both open it
    assert doc["families"]["detect:reserve"] == ["suites.test_detect_missing_flag"]


def test_the_shims_refuse_a_step_of_a_family_no_module_declares():
    from rmpeer.shim.live import Recorder
    from rmpeer.shim.records import CallRecord

    recorder = Recorder()
    assert recorder.add(CallRecord(0, "ioctl", label="health:ecc:card0")).seq == 1
    with pytest.raises(UndeclaredStep, match="'health:ecc-counts'"):
        recorder.add(CallRecord(0, "ioctl", label="health:ecc-counts:card0"))
    assert recorder.seq == 1                   # refused before it was numbered or written
    with pytest.raises(UndeclaredStep):
        check_label("brand-new:family")


def test_a_recording_header_and_a_certificate_carry_the_manifest(tmp_path):
    from rmpeer.shim.records import host_header

    assert host_header(label="x")["manifest"] == manifest()
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay",
                           str(T / "h200x1-20261201T100856Z.jsonl.gz"), "--tier", "quick", "--output",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert cert["manifest"] == manifest()

