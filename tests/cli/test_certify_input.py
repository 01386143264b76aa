"""`rmpeer certify` on input another user may have written: an --if-stale certificate nested
past Python's reach or holding terminal controls, and recordings derived from a committed one
(fixtures/transcripts, a 1 x H200 one of one layout) with one field changed: a host card whose
device number is a list, a recorded selection without its cards, a kernel-log reason holding
terminal controls. Each is exit 2 naming the problem, or its words are shown escaped; never
an internal error. Each case failed before its fix (a hostile-input hunt)."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
# a 1 x H200 recording of one layout (one-per-card) with every host note: what these cases
# change is the host's input, which a longer run would only repeat
ONE = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence"   # the checkout's (a wheel has no docs/)
ESC = "\x1b[31mEVIL\x07"


def certify(*args, tmp_path):
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(tmp_path / "key" / "host.key"),
               RMPEER_STATE_DIR=str(tmp_path / "state"))
    (tmp_path / "key").mkdir(mode=0o700, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)
    return done.returncode, done.stdout, done.stderr


def derived(tmp_path, name, change):
    lines = [json.loads(line) for line in gzip.decompress(ONE.read_bytes()).decode().splitlines()]
    change(lines)
    path = tmp_path / name
    path.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    return path


def note(lines, kind):
    return next(line for line in lines if line.get("note") == kind)


def test_an_if_stale_certificate_nested_past_pythons_reach_does_not_hold(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    rc, out, err = certify("--if-stale", deep, "--tier", "passive", "--output", tmp_path / "o", tmp_path=tmp_path)
    assert "internal error" not in err and "nested deeper" in out + err, out + err
    assert rc != 0 or "still holds" not in out + err


def test_an_if_stale_certificates_words_are_shown_escaped(tmp_path):
    cert = json.loads((EVIDENCE / "h200x1-20261201T1832Z-final" / "onepath" / "certificate-live-quick.json").read_text())
    cert["node"], cert["verdict"] = ESC, ESC
    path = tmp_path / "esc.json"
    path.write_text(json.dumps(cert))
    rc, out, err = certify("--if-stale", path, "--tier", "passive", "--output", tmp_path / "o", tmp_path=tmp_path)
    assert "\x1b" not in out + err and "\x07" not in out + err and "EVIL" in out + err


@pytest.mark.parametrize("change, message", [
    (lambda lines: note(lines, "host")["facts"]["cards"][0].__setitem__("minor", [0]), "device number"),
    (lambda lines: note(lines, "host")["facts"].__setitem__("selection", {"cards": "x"}), "host note"),
], ids=["card-minor-a-list", "selection-without-cards"])
def test_a_recordings_host_facts_of_another_kind_are_exit_2(tmp_path, change, message):
    bad = derived(tmp_path, "bad.jsonl.gz", change)
    rc, out, err = certify("--replay", bad, "--output", tmp_path / "o", tmp_path=tmp_path)
    assert rc == 2 and message in err and "internal error" not in err, out[-500:] + err


def test_a_recorded_kernel_log_reason_is_shown_escaped(tmp_path):
    def change(lines):
        xids = next(line for line in lines if line.get("label") == "host:xids")
        xids["extra"]["value"].update(readable=False, reason=ESC, xids=[])
    bad = derived(tmp_path, "xid.jsonl.gz", change)
    rc, out, err = certify("--replay", bad, "--output", tmp_path / "o", tmp_path=tmp_path)
    assert "\x1b" not in out + err and "\x07" not in out + err and "EVIL" in out + err, out[-800:]


def test_a_check_that_stops_on_an_error_rmpeer_did_not_expect_is_incomplete_not_a_failure(tmp_path):
    """A check that stops on an error of rmpeer's own says nothing of the host: INCOMPLETE,
    exit 5, never NOT CERTIFIED (exit 1 drains a node). The error is planted as a bug would be
    (the byte check raises a TypeError), in the process certify runs in: a recording can no
    longer reach a check with malformed data (refused before the run, the test below)."""
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(tmp_path / "key" / "host.key"),
               RMPEER_STATE_DIR=str(tmp_path / "state"))
    (tmp_path / "key").mkdir(mode=0o700)
    script = ("import sys\n"
              "import rmpeer.traffic.bytecheck as bytecheck\n"
              "def broken(*args, **kwargs):\n"
              "    raise TypeError('planted: a bug in the byte check')\n"
              "bytecheck.compare = broken\n"
              "from rmpeer.cli import entry\n"
              f"sys.argv = ['rmpeer', 'certify', '--replay', {str(ONE)!r}, '--output', {str(tmp_path / 'o')!r}]\n"
              "entry()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    out = done.stdout
    assert done.returncode == 5 and "INCOMPLETE" in out and "unexpected error" in out, out[-1500:] + done.stderr
    cert = json.loads((tmp_path / "o" / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE" and any(c.get("unexpected") for c in cert["checks"])


def test_a_read_back_of_malformed_runs_is_refused_before_the_run(tmp_path):
    """Issue 47, row 10: the same malformed read-back was judged (INCOMPLETE, a certificate
    written); it is a recording rmpeer never wrote, refused unread: exit 2, nothing written."""
    def change(lines):
        next(line for line in lines if line.get("op") == "mem.view")["extra"]["runs"] = "x"
    bad = derived(tmp_path, "runs.jsonl.gz", change)
    rc, out, err = certify("--replay", bad, "--output", tmp_path / "o", tmp_path=tmp_path)
    assert rc == 2 and "its extra runs are 'x'" in err and not (tmp_path / "o").exists(), out[-800:] + err


SCREEN = "\x1b[2J\x1b]0;pwned\x07"      # a screen clear and a title escape


def test_a_recording_and_an_output_named_with_escapes_reach_no_terminal_raw(tmp_path):
    """A recording's file name (in a shared recordings folder, anyone's to name) and an
    --output name holding terminal controls: the "certifying" line, the verdict line and
    "written to" printed them raw (the screen cleared)."""
    recording = tmp_path / f"r{SCREEN}.jsonl.gz"
    recording.write_bytes(ONE.read_bytes())
    code, out, err = certify("--replay", recording, "--output", tmp_path / f"o{SCREEN}", tmp_path=tmp_path)
    assert code == 0, err
    assert not [c for c in out + err if not c.isprintable() and c != "\n"], out
    certifying = next(line for line in out.splitlines() if "certifying REPLAY of " in line)
    written = next(line for line in out.splitlines() if line.startswith("  written to "))
    assert "\\x1b[2J" in certifying and "\\x1b]0;pwned\\x07" in certifying
    assert "\\x1b[2J" in written and "\\x1b]0;pwned\\x07" in written



@pytest.mark.parametrize("key", ["a-file/sub/host.key", "x" * 300 + "/host.key"], ids=["file-on-the-way", "name-too-long"])
def test_a_key_path_that_cannot_be_looked_up_is_exit_2_in_one_line(tmp_path, key):
    """RMPEER_KEY under a plain file, or with a name longer than the system allows: the key's
    folder cannot be looked up. One line and exit 2, naming the path, never an internal error
    (found by the mutation run of machine/signing.py)."""
    (tmp_path / "a-file").write_text("")
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(tmp_path / key), RMPEER_STATE_DIR=str(tmp_path / "state"))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(ONE), "--tier", "quick",
                           "--output", str(tmp_path / "o")], capture_output=True, text=True, timeout=120, env=env)
    said = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(said) == 1 and "cannot be looked up" in said[0], done.stderr + done.stdout[-500:]
    assert "internal error" not in done.stderr and not list(tmp_path.glob("**/rmpeer-traceback-*"))
