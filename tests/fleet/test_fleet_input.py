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


@pytest.mark.parametrize("record", ['{"nodes": [5]}', '{"nodes": [["a"]]}', DEEP,
                                    # a second hunt: names that are no node's folder (label read ../x's status)
                                    '{"nodes": ["../outside"]}', '{"nodes": [""]}', '{"nodes": ["a\\u0000b"]}',
                                    '{"nodes": [".hidden"]}',
                                    # --drain's re-run put these on srun's command line: exit 5 (TypeError)
                                    '{"nodes": ["vm"], "tier": ["full"]}', '{"nodes": ["vm"], "tier": "deep"}',
                                    '{"nodes": ["vm"], "run_id": {"a": 1}}', '{"nodes": ["vm"], "submitted": 5}'])
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


# -- a second hunt (each failed before its fix) ---------------------------------------------------

@pytest.mark.parametrize("command", ["collect", "label"])
@pytest.mark.parametrize("planted", ["fifo", "folder"])
def test_a_sweep_record_that_is_no_regular_file_is_exit_2_not_ignored(tmp_path, command, planted):
    """A FIFO or a folder at sweep.json was taken for no record at all: no run id, no tier, no
    missing node checked, and a status of an earlier run passed (exit 0). Now exit 2, one line."""
    shared = sweep(tmp_path, status=json.dumps({"node": "vm", "exit": 0, "duration_s": 1.4, "run_id": "earlier",
                                                "at": "2026-12-01T18:00:00Z"}))
    os.mkfifo(shared / "sweep.json") if planted == "fifo" else (shared / "sweep.json").mkdir()
    args = ["--no-report"] if command == "collect" else []
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", command, *args, str(shared)],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, NO_COLOR="1"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "sweep.json" in done.stderr and "not a regular file" in done.stderr and done.stdout == "", done.stderr


def test_a_status_saying_stand_in_makes_no_live_certificate_a_replay(tmp_path):
    """status.json's "stand_in" alone exempted a node from the sweep's tier: a live quick
    certificate passed a full sweep. A stand-in is a certificate that is a replay's."""
    shared = sweep(tmp_path, status=json.dumps({"node": "vm", "exit": 0, "duration_s": 1.4, "run_id": "this",
                                                "stand_in": "/any/recording.jsonl.gz"}))
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm"], "tier": "full", "run_id": "this",
                                                   "submitted": "2026-12-01T19:00:00Z"}))
    rc, out, err = collect(shared)
    row = [line for line in out.splitlines() if line.startswith("vm ")][0]
    assert rc == 5 and row.split()[1] == "error" and "of the quick tier, this sweep asked full" in row, out + err


def _not_certified_by(found):
    """The real certificate judged NOT CERTIFIED by one failed finding whose words are `found`."""
    def change(doc):
        doc["findings"].append({"check": "read", "subject": "one-per-card s0 (card 0) -> t0 (card 0)",
                                "expected": "every byte of the buffer pattern", "found": found, "severity": "fail"})
        doc.update(verdict="NOT CERTIFIED", reasons=["read: wrong memory"])
    return change


def test_a_certificates_control_characters_never_reach_a_drain_reason(tmp_path):
    """A finding's words went into `scontrol update Reason=` as they were: an escape that
    clears the screen or writes the clipboard reached everyone who runs `sinfo -R`. Now the
    reason line shows them as escapes (a fake scontrol records what it was asked)."""
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2Jwrong memory\r"
    shared = sweep(tmp_path, _not_certified_by(evil), status=json.dumps({"node": "vm", "exit": 1, "duration_s": 1}))
    o = oc.load_node(shared / "vm")
    assert o.state == oc.FAIL_STATE and o.line.isprintable() and "\\x1b]52" in o.line, o.line
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text('#!/bin/sh\n[ "$1 $2" = "show node" ] && { echo "NodeName=$3 State=IDLE"; exit 0; }\n'
                                   f'[ "$1" = update ] && printf "%s\\n" "$@" >>{tmp_path}/asked\nexit 0\n')
    (bin_ / "srun").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "collect", "--no-report", "--drain", str(shared)],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}"))
    reason = [a for a in (tmp_path / "asked").read_text().splitlines() if a.startswith("Reason=")]
    assert done.returncode == 1 and len(reason) == 1 and reason[0].isprintable(), done.stdout + done.stderr
    assert reason[0].startswith("Reason=rmpeer: read: ") and "\\x1b[2J" in reason[0], reason


def test_label_reads_no_status_outside_the_sweep_for_a_name_its_record_gives(tmp_path):
    """sweep.json naming "../outside": label read <shared>/../outside/status.json and put its
    time into rmpeer.io/checked-at of a node "../outside". A record naming no folder is exit 2."""
    shared = sweep(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / oc.STATUS).write_text(json.dumps({"node": "x", "exit": 0, "at": "2001-01-01T00:00:00Z"}))
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm", "../outside"]}))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "label", str(shared)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "20010101" not in done.stdout and done.stderr.count("\n") == 1, done.stdout
    assert "sweep.json: not a sweep record" in done.stderr, done.stderr


@pytest.mark.parametrize("planted", ["summary.jsonl", "junit.xml"])
def test_a_link_at_an_output_of_collect_is_refused_before_any_row_or_drain(tmp_path, planted):
    """A link planted at junit.xml was refused only after the table was printed and
    summary.jsonl written (exit 2 half-way). Now before anything is read: exit 2, one line."""
    shared = sweep(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    (shared / planted).symlink_to(victim)
    rc, out, err = collect(shared)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "symbolic link" in err, out + err
    assert victim.read_text() == "kept\n" and sorted(p.name for p in shared.iterdir()) == sorted([planted, "vm"])


def test_a_certificate_past_its_bound_under_a_sweep_record_is_that_nodes_error(tmp_path):
    """A sparse certificate past signing.CERT_LIMIT (never read whole), in a sweep whose record
    names a tier: that node an error, the sweep collected (the tier's check meets no result)."""
    from rmpeer.machine.signing import CERT_LIMIT

    shared = sweep(tmp_path)
    (shared / "sweep.json").write_text(json.dumps({"nodes": ["vm"], "tier": "quick"}))
    with open(shared / "vm" / "certificate.json", "r+b") as f:
        f.truncate(CERT_LIMIT + 1)
    rc, out, err = collect(shared)
    row = [line for line in out.splitlines() if line.startswith("vm ")][0]
    assert rc == 5 and row.split()[1] == "error" and "unreadable" in row and "internal error" not in err, out + err


@pytest.mark.parametrize("kubeconfig", ["fifo", "yaml-cut", "clusters-a-number", "/dev/zero"])
def test_label_apply_with_a_kubeconfig_it_cannot_read_is_exit_2_in_one_line(tmp_path, kubeconfig):
    """`fleet label --apply` with KUBECONFIG naming a FIFO hung until killed; one of broken
    YAML or of the wrong kinds was an internal error (exit 5). Now each is exit 2, one line,
    before any node is patched (none can be here: no cluster)."""
    pytest.importorskip("kubernetes", reason="--apply needs the kubernetes client (the `fleet` extra)")
    path = tmp_path / "kubeconfig"
    if kubeconfig == "fifo":
        os.mkfifo(path)
    elif kubeconfig == "/dev/zero":
        path = Path("/dev/zero")
    else:
        path.write_text(": [\n" if kubeconfig == "yaml-cut" else "apiVersion: v1\nclusters: 5\n")
    shared = sweep(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}     # never in-cluster here
    done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "label", "--apply", str(shared)],
                          capture_output=True, text=True, timeout=60, env=dict(env, KUBECONFIG=str(path)))
    last = done.stderr.splitlines()[-1:]
    assert done.returncode == 2 and done.stdout == "" and last and last[0].startswith("rmpeer: --apply: the kubeconfig"), \
        done.stderr
    assert "internal error" not in done.stderr


def test_the_merged_report_reads_no_results_through_a_link_planted_for_a_node(tmp_path, monkeypatch):
    """collect's report took <node>/allure-results by is_dir(), which follows a link: another
    folder's results went to `rmpeer report --results` as that node's. (The Allure CLI is
    stood in for: what collect would run is recorded.)"""
    from rmpeer.fleet import collect as fc

    shared = sweep(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x-result.json").write_text("{}")
    (shared / "vm" / "allure-results").symlink_to(tmp_path / "elsewhere")
    ran = []
    monkeypatch.setattr(fc, "allure_command", lambda: ["allure"])
    monkeypatch.setattr(fc.subprocess, "run", lambda argv, **kw: ran.append(argv) or subprocess.CompletedProcess(
        argv, 0, "", ""))
    said = fc.write_report([oc.load_node(shared / "vm")], shared / "report.html")
    assert ran == [] and said == "report.html not written: no node left Allure results", (said, ran)
