"""`rmpeer fleet collect` and `fleet label` over a sweep folder another user could write: a
node's certificate derived from a real one (docs/evidence: the live quick certificate of the
1 x H200 run of 2026-12-01, node "vm") with one field of a kind rmpeer never writes, a status
or sweep record of the wrong kinds, JSON nested past Python's reach, a file or a node folder
planted as a link, and control characters or a line break in a folder's name. Each node it
touches is an `error` (never a pass, never an internal error) and every word reaches the
terminal escaped. Each case failed before its fix (a hostile-input hunt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.fleet import outcome as oc
from rmpeer.paths import suites_dir

pytestmark = pytest.mark.offline
REPO = suites_dir().parent
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence"   # the checkout's (a wheel has no docs/)
REAL = EVIDENCE / "h200x1-20261201T1832Z-final" / "onepath" / "certificate-live-quick.json"
DEEP = "[" * 100000 + "]" * 100000


def sweep(tmp_path, change=None, status=None, node="vm") -> Path:
    shared = tmp_path / "sweep"
    folder = shared / node
    folder.mkdir(parents=True)
    doc = json.loads(REAL.read_text())
    doc["node"] = node
    if change:
        change(doc)
    (folder / "certificate.json").write_text(json.dumps(doc) if isinstance(doc, dict) else doc)
    (folder / oc.STATUS).write_text(status if status is not None else json.dumps(
        {"node": node, "exit": 0, "duration_s": 1.4}))
    return shared


def collect(shared: Path):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "collect", "--no-report", str(shared)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    return done.returncode, done.stdout, done.stderr


def _set(key, value):
    def change(doc):
        node = doc
        for k in key[:-1]:
            node = node[k]
        node[key[-1]] = value
    return change


@pytest.mark.parametrize("change", [
    _set(("verdict",), 5), _set(("verdict",), None), _set(("host",), "abc"), _set(("target",), "abc"),
    _set(("host", "selection"), "abc"), _set(("host", "selection"), {"cards": "x"}), _set(("host", "cards"), [5]),
    _set(("checks", 0, "outcome"), ["failed"]), _set(("started",), [1]), _set(("duration_s",), "slow"),
    _set(("certificate_id",), ["x"]),
], ids=["verdict-5", "verdict-null", "host-text", "target-text", "selection-text", "selection-no-of",
        "cards-numbers", "outcome-list", "started-list", "duration-text", "id-list"])
def test_a_certificate_field_of_another_kind_makes_the_node_an_error(tmp_path, change):
    shared = sweep(tmp_path, change)
    assert oc.load_node(shared / "vm").state == oc.ERROR
    rc, out, err = collect(shared)
    assert "internal error" not in err and "Traceback" not in out + err, err
    assert " pass " not in out and "error" in out, out


@pytest.mark.parametrize("status", ['{"exit": 5, "line": 5}', '{"exit": 0, "line": ["x"]}',
                                    '{"exit": 0, "stand_in": ["x"]}', '{"exit": 0, "duration_s": "slow"}',
                                    '{"exit": true}', DEEP])
def test_a_status_of_another_kind_makes_the_node_an_error(tmp_path, status):
    shared = sweep(tmp_path, status=status)
    o = oc.load_node(shared / "vm")
    assert o.state == oc.ERROR and "unreadable" in o.line
    rc, out, err = collect(shared)
    assert "internal error" not in err and "Traceback" not in out + err, err


@pytest.mark.parametrize("record", ['{"nodes": [5]}', '{"nodes": [["a"]]}', DEEP])
def test_a_sweep_record_of_another_kind_is_exit_2(tmp_path, record):
    shared = sweep(tmp_path)
    (shared / "sweep.json").write_text(record)
    rc, out, err = collect(shared)
    assert rc == 2 and "sweep.json" in err and "internal error" not in err, err


def test_a_certificate_nested_past_pythons_reach_makes_the_node_an_error(tmp_path):
    shared = sweep(tmp_path, change=None)
    (shared / "vm" / "certificate.json").write_text(DEEP)
    assert oc.load_node(shared / "vm").state == oc.ERROR


@pytest.mark.parametrize("planted", ["certificate.json", oc.STATUS, "folder"])
def test_a_file_or_a_node_folder_planted_as_a_link_is_not_read_through(tmp_path, planted):
    shared = sweep(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    if planted == "folder":
        (shared / "vm").rename(elsewhere)
        (shared / "vm").symlink_to(elsewhere)
    else:
        elsewhere.mkdir()
        (shared / "vm" / planted).rename(elsewhere / planted)
        (shared / "vm" / planted).symlink_to(elsewhere / planted)
    rc, out, err = collect(shared)
    assert " pass " not in out and "error" in out and "internal error" not in err, out + err


def test_a_status_file_is_read_within_a_bound(tmp_path):
    shared = sweep(tmp_path)
    with open(shared / "vm" / oc.STATUS, "r+b") as f:
        f.truncate(oc.STATUS_LIMIT + 1)       # sparse: no disk, and never read whole
    o = oc.load_node(shared / "vm")
    assert o.state == oc.ERROR and o.line.startswith(f"rmpeer: tool: unreadable {shared / 'vm' / oc.STATUS}")


def test_a_folder_name_with_a_line_break_cannot_forge_a_row(tmp_path):
    name = "vm\nfake  pass  CERTIFIED\x1b[2J"
    shared = sweep(tmp_path, node=name)
    rc, out, err = collect(shared)
    assert "\x1b" not in out + err and not any(line.startswith("fake") for line in out.splitlines()), out


@pytest.mark.parametrize("mac", ["\u00e9" * 64, "\udcff" * 64, "0" * 63 + "\u0661"],
                         ids=["non-ascii", "lone-surrogate", "arabic-digit"])
def test_a_planted_signature_that_is_not_ascii_makes_its_node_an_error_and_the_sweep_goes_on(tmp_path, mac):
    """Issue 47, row 1: a mac of non-ASCII text beside this machine's key_id (public in any
    certificate) made hmac.compare_digest raise, and collect exit 5 with no table. Now that node's
    signature does not verify, and every other node is collected."""
    from rmpeer.machine.signing import key_id, load_key

    mine = key_id(load_key(create=True))
    shared = sweep(tmp_path, _set(("signature",), {"alg": "HMAC-SHA256", "key_id": mine, "signer": "x", "mac": mac}),
                   node="planted")
    good = shared / "vm"
    good.mkdir()
    (good / "certificate.json").write_text(REAL.read_text())
    (good / oc.STATUS).write_text(json.dumps({"node": "vm", "exit": 0, "duration_s": 1.4}))
    rc, out, err = collect(shared)
    assert "internal error" not in err and "Traceback" not in out + err, err
    rows = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in (["planted"], ["vm"])}
    assert " error " in rows["planted"] and "does not verify" in rows["planted"], out
    assert " pass " in rows["vm"], out           # the rest of the sweep is collected
    assert (shared / "summary.jsonl").is_file()


@pytest.mark.parametrize("engine", ["slurm", "kubernetes"])
def test_fleet_files_checks_every_name_before_writing_any(tmp_path, engine):
    """Issue 47, row 11: a link planted at rmpeer-prolog was refused (exit 2), but the files
    before it were already written. A link at each name in turn: exit 2 naming it, nothing
    written, and the link's target untouched."""
    names = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "files", engine, str(tmp_path / "all")],
                           capture_output=True, text=True, timeout=60).stdout.split()
    assert len(names) >= 3
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    for i, name in enumerate(names):
        dest = tmp_path / f"d{i}"
        planted = dest / Path(name).relative_to(tmp_path / "all")
        planted.parent.mkdir(parents=True)
        planted.symlink_to(victim)
        done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "files", engine, str(dest)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and str(planted) in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert [p for p in dest.rglob("*") if p.is_file() and not p.is_symlink()] == [], name
        assert victim.read_text() == "root's file\n"


def test_fleet_label_reads_nothing_through_a_planted_certificate_link(tmp_path):
    """Issue 47, row 5: label read a linked certificate's target whole, hashed it into
    rmpeer.io/certificate and took its mtime for checked-at. Now the node is an error whose
    labels come from nothing behind the link."""
    target = tmp_path / "big"
    target.write_bytes(b"x" * (1 << 20))
    os.utime(target, (978307200, 978307200))          # 2001: a time that must not reach a label
    folder = tmp_path / "sweep" / "n1"
    folder.mkdir(parents=True)
    (folder / "replay-certificate.json").symlink_to(target)
    (folder / oc.STATUS).write_text(json.dumps({"node": "n1", "exit": 0, "duration_s": 1}))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "label", str(tmp_path / "sweep")],
                          capture_output=True, text=True, timeout=60)
    patch = json.loads(done.stdout.splitlines()[0])
    labels = patch["patch"]["metadata"]["labels"]
    assert labels["rmpeer.io/result"] == "error" and patch["taint"] == "keep", done.stdout
    assert labels["rmpeer.io/certificate"] is None and labels["rmpeer.io/checked-at"] is None, labels
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["collect", "label"])
@pytest.mark.parametrize("case", ["shallower-tier", "another-run"])
def test_a_result_that_is_not_this_sweeps_is_no_pass(tmp_path, command, case):
    """Issue 47, row 6: a full-tier sweep took a quick certificate as a pass, and label took
    a status.json of an earlier run as this one's (it read no run id at all)."""
    shared = sweep(tmp_path, status=json.dumps({"node": "vm", "exit": 0, "duration_s": 1.4,
                                                "run_id": "this" if case == "shallower-tier" else "earlier",
                                                "at": "2026-12-01T18:00:00Z"}))
    tier = "full" if case == "shallower-tier" else "quick"      # the certificate is of the quick tier
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm"], "tier": tier, "run_id": "this",
                                                   "submitted": "2026-12-01T19:00:00Z"}))
    args = ["--no-report"] if command == "collect" else []
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", command, *args, str(shared)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    said = done.stdout + done.stderr
    assert "Traceback" not in said
    why = "of the quick tier, this sweep asked full" if case == "shallower-tier" else "status.json is of another run"
    assert why in said, said
    if command == "label":
        assert json.loads(done.stdout.splitlines()[0])["patch"]["metadata"]["labels"]["rmpeer.io/result"] == "error"
    else:
        assert [line for line in done.stdout.splitlines() if line.startswith("vm ")][0].split()[1] == "error", said
