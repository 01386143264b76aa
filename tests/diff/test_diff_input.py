"""`rmpeer diff` of files another user may have written: a certificate derived from a real one
(docs/evidence: the 1 x H200 full tier of 2026-12-01) with one field of a kind rmpeer never
writes, JSON nested past Python's reach, NaN, a compression bomb, and control characters in
the words it shows. Each is exit 2 and one line naming the file, or the table shows the
bytes escaped; never a traceback or an internal error (exit 5)."""

import copy
import gzip
import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

from rmpeer.errors import ConfigError
from rmpeer.paths import suites_dir

pytestmark = pytest.mark.offline
REPO = suites_dir().parent
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence"   # the checkout's (a wheel has no docs/)
REAL = EVIDENCE / "h200x1-20261201T1832Z-final" / "tiers" / "certificate-full.json"
ESC = "\x1b]0;owned\x07\x1b[2J"


def rmpeer(*args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    return done.returncode, done.stdout, done.stderr


def real() -> dict:
    return json.loads(REAL.read_text())


def derived(tmp_path, name, change) -> object:
    """The real certificate with `change` applied (named in each case's id)."""
    doc = copy.deepcopy(real())
    change(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _set(path, value):
    def change(doc):
        *keys, last = path
        node = doc
        for k in keys:
            node = node[k]
        node[last] = value
    return change


@pytest.mark.parametrize("change", [
    _set(("layouts", 0, "name"), 7),
    _set(("checks", 0, "id"), 7),
    _set(("clocks", "idle"), ["x"]),
    _set(("boost", "results"), [1]),
    _set(("host", "selection"), "s"),
    _set(("host", "cards"), None),
    _set(("bandwidth", 0, "gbps"), "fast"),
    _set(("bandwidth", 0, "dst_card"), None),
], ids=["layout-name-a-number", "check-id-a-number", "clocks-a-list", "boost-results-a-list",
        "selection-a-string", "cards-none", "bandwidth-gbps-a-word", "bandwidth-dst-none"])
def test_a_field_of_a_kind_rmpeer_never_writes_is_exit_2_naming_the_file(tmp_path, change):
    bad = derived(tmp_path, "bad.json", change)
    for args in ((bad, REAL), (REAL, bad)):
        rc, out, err = rmpeer(*args, "--json", tmp_path / "d.json")
        assert "Traceback" not in out + err and "internal error" not in err, err
        if rc == 2:
            assert len(err.strip().splitlines()) == 1 and str(bad) in err, err
            assert not (tmp_path / "d.json").exists()
        else:       # a field the comparison does not read: compared as it stands
            assert rc in (0, 1), (rc, err)


def test_json_nested_past_pythons_reach_is_exit_2(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    rc, out, err = rmpeer(deep, REAL)
    assert rc == 2 and "nested deeper" in err and "Traceback" not in out + err


def test_nan_is_not_a_measurement_it_is_refused(tmp_path):
    doc = real()
    text = json.dumps(doc).replace(json.dumps(doc["duration_s"]), "NaN", 1)
    bad = tmp_path / "nan.json"
    bad.write_text(text)
    rc, out, err = rmpeer(bad, bad)
    assert rc == 2 and "NaN is not a number rmpeer writes" in err and "Traceback" not in err


def test_a_compression_bomb_is_refused_unread(tmp_path, monkeypatch):
    from rmpeer.diff.load import load
    from rmpeer.shim import records

    monkeypatch.setattr(records, "MAX_UNPACKED", 1 << 20)      # a 1 MiB bound: the same rule, faster
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (2 << 20) + json.dumps(real()).encode()))
    with pytest.raises(ConfigError, match="unpacks to more than"):
        load(str(bomb))
    small = tmp_path / "small.json.gz"
    small.write_bytes(gzip.compress(json.dumps(real()).encode()))
    assert load(str(small)).verdict == real()["verdict"]      # the bound does not refuse a certificate


def test_words_from_a_file_reach_the_terminal_escaped(tmp_path):
    bad = derived(tmp_path, "esc.json", lambda d: d["layouts"][0].__setitem__("name", d["layouts"][0]["name"] + ESC))
    rc, out, err = rmpeer(bad, REAL)
    assert rc in (0, 1, 2) and "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("args, message", [
    (("--json", ""), "--json needs a name"),
    (("--alluredir", ""), "--alluredir needs a name"),
])
def test_an_empty_output_name_is_refused(args, message):
    rc, out, err = rmpeer(REAL, REAL, *args)
    assert rc == 2 and message in err


def test_an_allure_folder_under_a_file_is_exit_2(tmp_path):
    (tmp_path / "f").write_text("x")
    rc, out, err = rmpeer(REAL, REAL, "--alluredir", tmp_path / "f" / "sub")
    assert rc == 2 and "--alluredir" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", ["bandwidth-gbps-a-word", "bandwidth-dst-none"])
def test_a_bandwidth_figure_of_another_kind_is_refused_not_left_out(tmp_path, bad):
    """Issue 45: such a certificate diffed as "SAME BEHAVIOUR (not comparable: bandwidth)", exit 0."""
    change = {"bandwidth-gbps-a-word": _set(("bandwidth", 0, "gbps"), "fast"),
              "bandwidth-dst-none": _set(("bandwidth", 0, "dst_card"), None)}[bad]
    path = derived(tmp_path, "bad.json", change)
    rc, out, err = rmpeer(path, REAL)
    assert rc == 2 and str(path) in err and "bandwidth[" in err and out == "", (rc, out, err)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_not_a_file_and_is_never_read(tmp_path, kind):
    """Issue 45: /dev/zero or a FIFO read "no such file"; a FIFO must never block the read."""
    path = tmp_path / "fifo" if kind == "fifo" else Path("/dev/zero")
    if kind == "fifo":
        os.mkfifo(path)
    rc, out, err = rmpeer(path, REAL)
    assert rc == 2 and "not a regular file" in err and len(err.strip().splitlines()) == 1, err


def test_json_at_a_link_is_refused_before_anything_is_compared(tmp_path):
    """Issue 45: --json at a symbolic link printed the whole diff, then exit 2."""
    (tmp_path / "elsewhere.json").write_text("{}")
    (tmp_path / "d.json").symlink_to(tmp_path / "elsewhere.json")
    rc, out, err = rmpeer(REAL, REAL, "--json", tmp_path / "d.json")
    assert rc == 2 and out == "" and "symbolic link" in err, (rc, out, err)
    assert (tmp_path / "elsewhere.json").read_text() == "{}"
