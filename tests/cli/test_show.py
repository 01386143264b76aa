"""`rmpeer show` of a recording another user may have written: one derived from a committed
recording (fixtures/transcripts, the first 1 x H200 one) with its header's run.layouts not a
list of layouts, a line nested past Python's reach, or terminal controls in its header. Each
is exit 2 and one line, or shown escaped; never a traceback."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ONE = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[0]


def show(path, *args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "show", str(path), *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, NO_COLOR="1"))
    return done.returncode, done.stdout, done.stderr


def derived(tmp_path, name, header_change=None, extra_line=None):
    lines = gzip.decompress(ONE.read_bytes()).decode().splitlines()
    first = json.loads(lines[0])
    if header_change:
        header_change(first["header"])
    lines[0] = json.dumps(first)
    if extra_line is not None:
        lines.insert(1, extra_line)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_header_whose_layouts_are_not_layouts_is_exit_2(tmp_path):
    bad = derived(tmp_path, "layouts.jsonl", lambda h: h["run"].__setitem__("layouts", ["x"]))
    rc, out, err = show(bad)
    assert rc == 2 and "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err


def test_a_line_nested_past_pythons_reach_is_exit_2(tmp_path):
    bad = derived(tmp_path, "deep.jsonl", extra_line="[" * 100000 + "]" * 100000)
    rc, out, err = show(bad)
    assert rc == 2 and "nested deeper" in err and "Traceback" not in out + err


def test_controls_in_the_header_are_shown_escaped(tmp_path):
    bad = derived(tmp_path, "esc.jsonl", lambda h: h.__setitem__("version", "0.1\x1b]0;owned\x07\x1b[2J"))
    rc, out, err = show(bad)
    assert "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("where", ["card-name", "hostname", "call-label"])
def test_a_line_break_in_a_recording_forges_no_line_of_show(tmp_path, where):
    """A line break a recording's field holds (a host card's name, the header's hostname, a
    call's label) is shown as \\n inside its own line: it printed a forged "card 1" line."""
    forged = "NVIDIA H200\n  card 1: FORGED"
    lines = [json.loads(line) for line in gzip.decompress(ONE.read_bytes()).decode().splitlines()]
    if where == "card-name":
        next(d for d in lines if d.get("note") == "host")["facts"]["cards"][0]["name"] = forged
    elif where == "hostname":
        lines[0]["header"]["hostname"] = forged
    else:
        next(d for d in lines if d.get("op") == "ioctl")["label"] = forged
    path = tmp_path / f"{where}.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    rc, out, err = show(path, *(["--calls"] if where == "call-label" else []))
    assert rc == 0 and "Traceback" not in err, err
    assert not [ln for ln in out.splitlines() if ln.lstrip().startswith("card 1: FORGED")], out
    assert "\\n  card 1: FORGED" in out


def test_a_card_reading_rm_did_not_answer_is_said_never_shown_as_0():
    """A recorded card whose FB size and one PCE mask RM refused (Card.unread): `show` says
    so, where it used to print "0 GiB" and "0 PCEs"."""
    from rmpeer.cli.show import _card_line

    card = {"index": 0, "name": "NVIDIA H200", "pci": "0000:18:00.0", "uuid": "GPU-x", "fb_bytes": 0,
            "ce_caps": {"2": ["CE_SUPPORTED"], "4": ["CE_SUPPORTED"]}, "ce_pces": {"2": 0x3, "4": 0},
            "unread": {"fb_bytes": "NV2080_CTRL_CMD_FB_GET_INFO_V2: NV_ERR_NOT_SUPPORTED",
                       "ce_pces[4]": "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: errno 22"}}
    line = _card_line(card)
    assert "memory not read (NV2080_CTRL_CMD_FB_GET_INFO_V2: NV_ERR_NOT_SUPPORTED)" in line
    assert "LCE 2: 2 PCEs" in line and "LCE 4: PCEs not read (NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: errno 22)" in line
    assert "0 GiB" not in line and "0 PCEs" not in line


# -- the bundled recordings (issue 44, part 7) ----------------------------------------------------

def _rmpeer(cwd, *args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, NO_COLOR="1"))
    return done.returncode, done.stdout, done.stderr


def test_show_list_names_every_bundled_recording_and_what_it_shows(tmp_path):
    rc, out, err = _rmpeer(tmp_path, "show", "--list")
    assert rc == 0, err
    root = transcripts_dir()
    for path in sorted(root.rglob("*.jsonl.gz")):
        assert path.relative_to(root).as_posix().removesuffix(".jsonl.gz") in out, path
    assert "DEGRADED" in out and "NOT CERTIFIED" in out and "CERTIFIED" in out
    rc, _, err = _rmpeer(tmp_path, "show")
    assert rc == 2 and "--list" in err and "Traceback" not in err


def test_a_bundled_recording_replays_by_its_name_from_any_folder(tmp_path):
    rc, out, err = _rmpeer(tmp_path, "certify", "--replay", "derived/h200x2-20261130T005408Z-derived-wrong-memory",
                           "--output", str(tmp_path / "out"))
    assert rc == 1, (out + err)[-2000:]
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert cert["target"]["transcript"].endswith("derived/h200x2-20261130T005408Z-derived-wrong-memory.jsonl.gz")
    assert cert["reasons"][0].startswith("32 read/write checks: wrong memory")
    # a name that is a file here is that file, never the bundled one of the same name
    here = tmp_path / "h200x2-20261130T005408Z.jsonl.gz"
    here.write_text("not a recording\n")
    rc, _, err = _rmpeer(tmp_path, "certify", "--replay", here.name, "--output", str(tmp_path / "o2"))
    assert rc == 2 and str(here) in err


def test_the_bundled_not_certified_example_is_its_derivation_byte_for_byte(tmp_path):
    """The committed derived recording is what tests/slurm/recordings.py's wrong_memory makes
    of the committed real one now: derived, never written by hand."""
    import sys as _sys
    from pathlib import Path

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from slurm.recordings import wrong_memory

    committed = transcripts_dir() / "derived" / "h200x2-20261130T005408Z-derived-wrong-memory.jsonl.gz"
    made = wrong_memory(tmp_path / "made.jsonl.gz")
    assert gzip.open(committed).read() == gzip.open(made).read()
    header = json.loads(gzip.open(committed, "rt").readline())["header"]
    assert header["derived"]["from"] == "h200x2-20261130T005408Z.jsonl.gz" and header["derived"]["verdict"] == "NOT CERTIFIED"


def test_the_bundled_incomplete_example_is_its_derivation_and_replays_incomplete(tmp_path):
    """The bundled INCOMPLETE example: RM refusing the run's first allocation, derived by
    tests/slurm/recordings.py's refused_open from the committed healthy recording, byte for
    byte; its replay is INCOMPLETE (exit 5), the refusal decoded as its first reason."""
    import sys as _sys
    from pathlib import Path

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from slurm.recordings import refused_open

    name = "derived/h200x2-20261130T005408Z-derived-refused-open"
    committed = transcripts_dir() / f"{name}.jsonl.gz"
    assert gzip.open(committed).read() == gzip.open(refused_open(tmp_path / "made.jsonl.gz")).read()
    header = json.loads(gzip.open(committed, "rt").readline())["header"]
    assert header["derived"]["verdict"] == "INCOMPLETE"
    rc, out, err = _rmpeer(tmp_path, "certify", "--replay", name, "--output", str(tmp_path / "out"))
    assert rc == 5, (out + err)[-2000:]
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE" and cert["counts"] == {}
    assert cert["reasons"][0].startswith("open: host: expected RM to accept the run's first calls, found alloc:client: "
                                         "NV_ERR_INSUFFICIENT_RESOURCES")
