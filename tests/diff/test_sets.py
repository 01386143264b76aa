"""`rmpeer diff` of two sets of hosts (issue 45, item 2): a fleet folder built from the
committed recordings (one node folder each, as `rmpeer fleet node` writes them) against the
same fleet where derived recordings and certificates stand for the upgraded hosts.

Derived inputs, each made here from a real recording or certificate, one field changed:
- `flipped`: the first `nvlink:counters` ioctl's status_name NV_OK -> NV_ERR_NOT_SUPPORTED
  (status 0 -> 0x56), of h200x2-20261130T005408Z;
- `slower`: every `gbps` of the 1 x H200 full certificate of the machinery evidence x 0.9."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.paths import suites_dir

pytestmark = pytest.mark.offline
REPO = suites_dir().parent
T = REPO / "fixtures" / "transcripts"
RECORDINGS = sorted(T.glob("h200x*-*.jsonl.gz"))
QUICK_TWO = T / "h200x2-20261130T005408Z.jsonl.gz"
# the checkout's docs/ (a wheel has none: REPO is the installed package's copy under CI)
FULL_ONE = (Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261204T2035Z-machinery" / "report"
            / "full" / "certificate.json")
needs_inputs = pytest.mark.skipif(not (QUICK_TWO.is_file() and FULL_ONE.is_file() and len(RECORDINGS) >= 4),
                                  reason="the committed recordings and the machinery evidence's certificate")
NOT_SUPPORTED = 0x56


def rmpeer(*args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, NO_COLOR="1"))
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def flipped(dest: Path) -> Path:
    """QUICK_TWO with its first nvlink:counters status changed (see the module's docstring)."""
    lines = gzip.open(QUICK_TWO, "rt").read().splitlines()
    out, done = [], False
    for line in lines:
        d = json.loads(line)
        if not done and d.get("op") == "ioctl" and d.get("label") == "nvlink:counters":
            d.update(status=NOT_SUPPORTED, status_name="NV_ERR_NOT_SUPPORTED", status_text="Not supported")
            line, done = json.dumps(d), True
        out.append(line)
    assert done
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(gzip.compress(("\n".join(out) + "\n").encode()))
    return dest


def slower(dest: Path, factor: float = 0.9) -> Path:
    doc = json.loads(FULL_ONE.read_text())
    doc["bandwidth"] = [{**row, "gbps": round(row["gbps"] * factor, 1)} if isinstance(row.get("gbps"), float)
                        else row for row in doc["bandwidth"]]
    doc.pop("signature", None)     # changed: no longer what was signed
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(doc))
    return dest


@pytest.fixture
def fleet(tmp_path):
    """(before, after): <dir>/<node>/ folders. Before: every committed recording as a node,
    and node `cert-a` with the real 1 x H200 certificate; after: the same, but node `h2-up`
    holds the flipped recording and `cert-a` the slower certificate."""
    before, after = tmp_path / "before", tmp_path / "after"
    for i, recording in enumerate(RECORDINGS):
        for side in (before, after):
            (side / f"node{i}").mkdir(parents=True)
            shutil.copy(recording, side / f"node{i}" / recording.name)
    up = RECORDINGS.index(QUICK_TWO)
    (after / f"node{up}" / QUICK_TWO.name).unlink()
    flipped(after / f"node{up}" / QUICK_TWO.name)
    (before / "cert-a").mkdir()
    shutil.copy(FULL_ONE, before / "cert-a" / "certificate.json")
    slower(after / "cert-a" / "certificate.json")
    return before, after, f"node{up}"


@needs_inputs
def test_a_fleet_against_itself_is_the_same_behaviour_on_every_host(fleet):
    before, _, _ = fleet
    code, out, _ = rmpeer("--baseline", before, before)
    assert code == 0, out
    assert out.splitlines()[-1] == f"SAME BEHAVIOUR on all {len(RECORDINGS) + 1} matched host(s)"
    assert "RM steps whose statuses changed: none" in out


@needs_inputs
def test_the_upgraded_hosts_changed_step_and_moved_pairs_are_named(fleet, tmp_path):
    before, after, up = fleet
    report = tmp_path / "sets.json"
    code, out, _ = rmpeer("--baseline", before, after, "--json", report)
    assert code == 1, out
    hosts = len(RECORDINGS) + 1
    step = next(line for line in out.splitlines() if line.strip().startswith("nvlink:counters "))
    assert "NV_OK x" in step and "NV_ERR_NOT_SUPPORTED x1" in step and f"1 of {hosts}: {up}" in step
    same_card = next(line for line in out.splitlines() if line.strip().startswith("same-card 256 MiB"))
    assert "cert-a -10.0%" in same_card, same_card
    doc = json.loads(report.read_text())
    (change,) = [c for c in doc["changes"] if c["key"] == "nvlink:counters"]
    assert (change["aspect"], change["count"], change["hosts"]) == ("RM statuses", 1, [up])
    (row,) = [r for r in doc["bandwidth"] if r["kind"] == "same-card 256 MiB"]
    assert row["beyond"] == 1 and row["moved"][0]["b"] == "cert-a" and row["moved"][0]["change"] == pytest.approx(-0.1, abs=0.002)
    assert {m["b"] for m in doc["matched"] if m["differs"]} == {up, "cert-a"}
    assert out.splitlines()[-1].startswith(f"BEHAVIOUR DIFFERS on 2 of {hosts} matched host(s): ")


@needs_inputs
def test_hosts_are_matched_by_node_else_by_host_kind(fleet, tmp_path):
    """A host of B with no node of its name in A is matched with a host of A of its kind (as
    many cards of one model); one of a kind A lacks is listed, never a difference. A run
    directly in a folder given is named by its certificate's node."""
    before, _, _ = fleet
    node = json.loads(FULL_ONE.read_text())["node"]
    renamed = tmp_path / "renamed"
    (renamed / "fresh-name").mkdir(parents=True)
    shutil.copy(FULL_ONE, renamed / "fresh-name" / "certificate.json")
    code, out, _ = rmpeer(before / "cert-a", "--", renamed, "--json", tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert code == 0, out
    assert doc["matched"] == [{"a": node, "b": "fresh-name", "by": "host kind", "differs": False,
                               "differing_aspects": []}]
    two = tmp_path / "two"
    (two / "big").mkdir(parents=True)
    shutil.copy(QUICK_TWO, two / "big" / QUICK_TWO.name)
    code, out, _ = rmpeer(before / "cert-a", two, "--json", tmp_path / "k.json")
    doc = json.loads((tmp_path / "k.json").read_text())
    assert (code, doc["matched"], doc["only_in_a"], doc["only_in_b"]) == (0, [], [node], ["big"])


@needs_inputs
def test_a_planted_file_in_a_fleet_folder_is_listed_never_followed_and_never_stops_the_diff(fleet, tmp_path):
    before, after, _ = fleet
    (after / "cert-a" / "planted.json").symlink_to("/etc/passwd")
    (after / "cert-a" / "garbage.json").write_text("{not json")
    os.mkfifo(after / "cert-a" / "fifo.json")
    code, out, _ = rmpeer("--baseline", before, after)
    assert code == 1
    assert f"unreadable (left out): {after / 'cert-a' / 'planted.json'}: a symbolic link: refused" in out
    assert f"unreadable (left out): {after / 'cert-a' / 'fifo.json'}: not a regular file" in out
    assert f"{after / 'cert-a' / 'garbage.json'}: not a readable rmpeer recording" in out
    assert "root:" not in out


def test_sets_that_cannot_be_compared_are_one_line_and_exit_2(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for args, said in (((empty, empty), "no recording or certificate to compare"),
                       ((tmp_path / "a", tmp_path / "b", tmp_path / "c"), "diff takes two runs (A B), or two sets"),
                       (("--baseline", empty, empty, "--", empty), "give set A once"),
                       (("--baseline", "", empty), "--baseline needs a folder")):
        code, out, err = rmpeer(*args)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, (args, err)


@needs_inputs
def test_a_set_diffs_allure_results_fail_with_their_change(fleet, tmp_path):
    before, after, up = fleet
    folder = tmp_path / "allure"
    code, _, _ = rmpeer("--baseline", before, after, "--alluredir", folder)
    results = [json.loads(p.read_text()) for p in folder.glob("*-result.json")]
    by_name = {r["name"]: r for r in results}
    assert code == 1
    assert by_name["RM statuses: nvlink:counters"]["status"] == "failed"
    assert up in by_name["RM statuses: nvlink:counters"]["statusDetails"]["message"]
    assert by_name["bandwidth: same-card 256 MiB"]["status"] == "failed"
    assert "same behaviour" not in by_name
