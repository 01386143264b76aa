"""rmpeer used as a careless or hostile user would, row by row: each row is an input that broke
one of the project's promises (never a traceback; exit 1 only for NOT CERTIFIED; bad input one
line and its code in rmpeer/errors.py; nothing written through a link or left half-done), run
as `python -m rmpeer ...` in a process of its own, asserting the exit code, the one line that
says why, and what is on disk afterwards.

Rows marked xfail name a break whose fix lies in a file another helper is changing (cli.py,
certify.py, signing.py, diff_load.py): strict, so the row turns red once the fix lands and
the mark must go.

Recordings derived at test time from the committed quick recording (QUICK), one field
changed each (nothing is committed):

| name              | line          | change                                   | why                               |
| ----------------- | ------------- | ---------------------------------------- | --------------------------------- |
| run-is-text       | header        | run = "x"                                | was exit 5 (AttributeError)       |
| run-is-null       | header        | run = null                               | was exit 5 (AttributeError)       |
| extent-is-text    | header        | run.extent = "big"                       | was exit 5 (ValueError)           |
| extent-negative   | header        | run.extent = -1                          | was exit 5 (OverflowError)        |
| seed-is-text      | header        | run.pattern_seed = "x"                   | was exit 1, NOT CERTIFIED         |
| seed-is-float     | header        | run.pattern_seed = 1.5                   | was exit 1, NOT CERTIFIED         |
| driver-text-int   | header        | driver_text = 7                          | was exit 5 (TypeError)            |
| label-escapes     | header        | label = ESC[2J ... newline "CERTIFIED"   | printed a forged verdict line     |
| hostname-newline  | header        | hostname = "a\\nCERTIFIED b"              | printed a forged verdict line     |
| facts-is-text     | host note     | facts = "x"                              | was exit 5 (AttributeError)       |
| reply-not-hex     | first ioctl   | reply = "zz"                             | was exit 5 (ValueError)           |
| status-is-text    | first ioctl   | status = "bad"                           | was exit 5 (ValueError)           |
| device-gpu-lost   | host:device:card0 | status = NV_ERR_GPU_IS_LOST (0xf)    | INCOMPLETE, no reason, no file    |
| call-label-osc52  | first ioctl   | label = "step" ESC]52 (clipboard) BEL    | show printed it to the terminal   |
| layouts-is-number | header        | run.layouts = 5                          | was exit 5 (TypeError)            |
| layout-no-cards   | header        | run.layouts[0] cards = []                | was exit 1, NOT CERTIFIED         |
| layout-newline    | header        | run.layouts[0] name = "a\\nCERTIFIED"   | printed a forged verdict line     |
| p2p-is-text       | host note     | facts.p2p = "x"                          | was exit 5 (AttributeError)       |
| selection-is-text | host note     | facts.selection = "x"                    | was exit 5 (TypeError)            |
| card-field-extra  | host note     | facts.cards[0] gains bogus = 1           | was exit 5 (TypeError)            |
| key-is-list       | first segment | key = []                                 | was exit 5 (TypeError)            |
| label-is-number   | first open    | label = 7                                | was exit 5 (AttributeError)       |
| path-is-number    | first open    | path = 7                                 | was exit 5 (TypeError)            |
| extra-is-text     | first observe | extra = "x"                              | was exit 5 (AttributeError)       |
| payload-is-list   | first payload | payload = []                             | was exit 5 (AttributeError)       |
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from rmpeer.errors import EXIT_CONFIG, EXIT_INCOMPLETE, EXIT_OK
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
QUICK = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
# a 2-card host's quick run: diff finds changes (alloc:p2p, the cards); the 1-card --no-boost run
# no longer differs from QUICK, its boost calls being ones its run does not make (issue 45)
OTHER_HOST = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
EARLIER_ONE_CARD = transcripts_dir() / "h200x1-20261130T003119Z.jsonl.gz"    # an earlier run, CERTIFIED


def _env(extra=None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RMPEER_", "SLURM")) and k != "NODE_NAME"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


# -- recordings derived at test time (the table above) ----------------------------------------

def _header(change):
    def derive(lines):
        full = json.loads(lines[0])
        change(full["header"])
        return [json.dumps(full).encode()] + lines[1:]
    return derive


def _line(pick, change):
    def derive(lines):
        out = list(lines)
        i = next(i for i, raw in enumerate(out) if raw.strip() and pick(json.loads(raw)))
        d = json.loads(out[i])
        change(d)
        out[i] = json.dumps(d).encode()
        return out
    return derive


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


def _run_set(key, value):
    return lambda h: h["run"].__setitem__(key, value)


DERIVED = {
    "run-is-text": _header(_set("run", "x")),
    "run-is-null": _header(_set("run", None)),
    "extent-is-text": _header(_run_set("extent", "big")),
    "extent-negative": _header(_run_set("extent", -1)),
    "seed-is-text": _header(_run_set("pattern_seed", "x")),
    "seed-is-float": _header(_run_set("pattern_seed", 1.5)),
    "driver-text-int": _header(_set("driver_text", 7)),
    "label-escapes": _header(_set("label", "\x1b[2J\x1b[31mEVIL\nCERTIFIED")),
    "hostname-newline": _header(_set("hostname", "a\nCERTIFIED b")),
    "facts-is-text": _line(lambda d: d.get("note") == "host", _set("facts", "x")),
    "reply-not-hex": _line(lambda d: d.get("op") == "ioctl", _set("reply", "zz")),
    "status-is-text": _line(lambda d: d.get("op") == "ioctl" and "status" in d, _set("status", "bad")),
    "call-label-osc52": _line(lambda d: d.get("op") == "ioctl" and "status" in d,
                              _set("label", "step\x1b]52;c;ZXZpbA==\x07")),
    "layouts-is-number": _header(_run_set("layouts", 5)),
    "layout-no-cards": _header(lambda h: h["run"]["layouts"][0].__setitem__(1, [])),
    "layout-newline": _header(lambda h: h["run"]["layouts"][0].__setitem__(0, "a\nCERTIFIED")),
    "p2p-is-text": _line(lambda d: d.get("note") == "host", lambda d: d["facts"].__setitem__("p2p", "x")),
    "selection-is-text": _line(lambda d: d.get("note") == "host", lambda d: d["facts"].__setitem__("selection", "x")),
    "card-field-extra": _line(lambda d: d.get("note") == "host", lambda d: d["facts"]["cards"][0].update(bogus=1)),
    "key-is-list": _line(lambda d: d.get("note") == "segment", _set("key", [])),
    "label-is-number": _line(lambda d: d.get("op") == "open", _set("label", 7)),
    "path-is-number": _line(lambda d: d.get("op") == "open", _set("path", 7)),
    "extra-is-text": _line(lambda d: d.get("op") == "observe", _set("extra", "x")),
    "payload-is-list": _line(lambda d: "payload" in d, _set("payload", [])),
    "device-gpu-lost": _line(lambda d: d.get("label") == "host:device:card0",
                             lambda d: d.update(status=0xF, status_name="NV_ERR_GPU_IS_LOST",
                                                status_text="GPU lost from the bus")),
}


def derived(tmp: Path, name: str) -> Path:
    lines = gzip.decompress(QUICK.read_bytes()).split(b"\n")
    path = tmp / f"{name}.jsonl"
    path.write_bytes(b"\n".join(DERIVED[name](lines)))
    return path


# -- the rows -----------------------------------------------------------------------------------

@dataclass
class Row:
    id: str
    argv: Callable[[Path], list]          # tmp -> the arguments after `rmpeer`
    code: int                            # the exit code (rmpeer/errors.py)
    says: str = ""                       # in the last line of stderr
    stdout: str = "pipe"                 # pipe | closed | full | gone (a pipe its reader closed: `| head`)
    stderr: str = "pipe"                 # pipe | closed
    env: Callable[[Path], dict] = lambda tmp: {}
    on_disk: Callable[[Path], None] = lambda tmp: None
    xfail: str = ""
    timeout: int = 60
    marks: list = field(default_factory=list)


def _no_certificate(tmp: Path) -> None:
    assert not list(tmp.rglob("*certificate*.json")), sorted(map(str, tmp.rglob("*")))


def _certified(tmp: Path) -> None:
    cert = tmp / "out" / "replay-certificate.json"
    assert json.loads(cert.read_text())["verdict"] == "CERTIFIED"


def _replay(name):
    return lambda tmp: ["certify", "--replay", derived(tmp, name), "--output", tmp / "out"]


def _quick_certificate(tmp: Path) -> Path:
    """A certificate to feed calibrate: certify --replay of the committed quick recording."""
    subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", QUICK, "--output", tmp / "cert"],
                   env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)
    return tmp / "cert" / "replay-certificate.json"


def _array(tmp: Path) -> Path:
    (tmp / "array.json").write_text("[1]\n")
    return tmp / "array.json"


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "fifo")
    return tmp / "fifo"


def _nothing_written(folder: str):
    def check(tmp: Path) -> None:
        assert not (tmp / folder).exists() or not any((tmp / folder).iterdir())
    return check


def _no_key_in_cwd(tmp: Path) -> None:
    assert not [p for p in (tmp / "cwd").iterdir() if p.name != "out"], sorted(os.listdir(tmp / "cwd"))


def _not_there(path: Path) -> None:
    assert not path.exists(), path


def _results_with_a_link(tmp: Path) -> Path:
    """A certify --output folder whose allure-results holds a link (planted by another user
    where they can write: a shared sweep folder) to a file only root may read."""
    run = tmp / "run"
    subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", QUICK, "--output", run],
                   env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)
    (tmp / "secret").write_text("root's secret\n")
    (tmp / "secret").chmod(0o600)
    (run / "allure-results" / "ffff-attachment.txt").symlink_to(tmp / "secret")
    return run


def _other_hosts_results(tmp: Path) -> Path:     # a second host's results, beside the first
    other = tmp / "other"
    subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", EARLIER_ONE_CARD, "--tier", "quick",
                    "--output", other],
                   env=_env({"RMPEER_NODE_NAME": "other-node"}), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60, check=True)
    return other


def _min_certificate(tmp: Path) -> Path:
    (tmp / "min.json").write_text('{"format": "rmpeer-result/1"}\n')
    return tmp / "min.json"


FIELD = "not a call record"
HUGE = "9" * 5000


def _loop(tmp: Path) -> Path:
    """A link to itself: every name under it fails to resolve (ELOOP)."""
    (tmp / "loop").symlink_to("loop")
    return tmp / "loop"
ROWS = [
    # A malformed recording is bad input (exit 2, one line), never an internal error (5) nor a
    # failed check (1); a header field printed into the output is one printable line.
    Row("header run is text", _replay("run-is-text"), EXIT_CONFIG, "its header's run is", on_disk=_no_certificate),
    Row("header run is null", _replay("run-is-null"), EXIT_CONFIG, "its header's run is", on_disk=_no_certificate),
    Row("header extent is text", _replay("extent-is-text"), EXIT_CONFIG, "run extent is 'big'",
        on_disk=_no_certificate),
    Row("header extent negative", _replay("extent-negative"), EXIT_CONFIG, "run extent is '-1'",
        on_disk=_no_certificate),
    Row("header seed is text (was NOT CERTIFIED)", _replay("seed-is-text"), EXIT_CONFIG, "pattern_seed is 'x'",
        on_disk=_no_certificate),
    Row("header seed is a float (was NOT CERTIFIED)", _replay("seed-is-float"), EXIT_CONFIG, "pattern_seed is '1.5'",
        on_disk=_no_certificate),
    Row("header driver_text is a number", _replay("driver-text-int"), EXIT_CONFIG, "driver_text is '7', not text",
        on_disk=_no_certificate),
    Row("header label holds escapes and a newline", _replay("label-escapes"), EXIT_CONFIG,
        "label is '\\x1b[2J", on_disk=_no_certificate),
    Row("header hostname holds a newline", _replay("hostname-newline"), EXIT_CONFIG, "hostname is 'a\\nCERTIFIED b'",
        on_disk=_no_certificate),
    Row("host note facts are text", _replay("facts-is-text"), EXIT_CONFIG, "host note's facts are 'x'",
        on_disk=_no_certificate),
    Row("a reply that is not hex", _replay("reply-not-hex"), EXIT_CONFIG, f"{FIELD} (its reply is not hex bytes",
        on_disk=_no_certificate),
    Row("a status that is text", _replay("status-is-text"), EXIT_CONFIG, f"{FIELD} (its status is 'bad'",
        on_disk=_no_certificate),
    Row("header layouts is a number", _replay("layouts-is-number"), EXIT_CONFIG,
        "its header's run layouts is '5', not a list of layouts", on_disk=_no_certificate),
    Row("header layout with no cards (was NOT CERTIFIED)", _replay("layout-no-cards"), EXIT_CONFIG,
        "its header's layout one-per-card uses no card", on_disk=_no_certificate),
    Row("header layout name holds a newline", _replay("layout-newline"), EXIT_CONFIG,
        "lists a layout named 'a\\nCERTIFIED', not one line", on_disk=_no_certificate),
    Row("host note p2p is text", _replay("p2p-is-text"), EXIT_CONFIG, "host note's facts p2p is 'x', not a mapping",
        on_disk=_no_certificate),
    Row("host note selection is text", _replay("selection-is-text"), EXIT_CONFIG,
        "host note's facts selection is 'x', not a mapping", on_disk=_no_certificate),
    Row("host note card with a field the recorder never writes", _replay("card-field-extra"), EXIT_CONFIG,
        "its host note's facts cannot be read (Card.__init__() got an unexpected keyword argument 'bogus')",
        on_disk=_no_certificate),
    Row("a segment's key that is a list", _replay("key-is-list"), EXIT_CONFIG,
        "not a segment note (its key is '[]', not text", on_disk=_no_certificate),
    Row("a label that is a number", _replay("label-is-number"), EXIT_CONFIG, f"{FIELD} (its label is '7', not text",
        on_disk=_no_certificate),
    Row("a path that is a number", _replay("path-is-number"), EXIT_CONFIG, f"{FIELD} (its path is '7', not text",
        on_disk=_no_certificate),
    Row("an observation's extra that is text", _replay("extra-is-text"), EXIT_CONFIG,
        f"{FIELD} (its extra is 'x', not a mapping", on_disk=_no_certificate),
    Row("a payload that is a list", _replay("payload-is-list"), EXIT_CONFIG,
        f"{FIELD} (its payload is '[]', not a mapping", on_disk=_no_certificate),
    # two answers to "how deep": --tier silently won, so --quick --tier passive ran less than quick
    Row("--quick with --tier passive", lambda tmp: ["certify", "--replay", QUICK, "--quick", "--tier", "passive",
                                                    "--output", tmp / "out"],
        EXIT_CONFIG, "--quick and --tier passive: give one of them", on_disk=_no_certificate),
    # `--replay "$RECORDING"` with the variable unset: was a live run on this host's GPUs (other
    # jobs' on a shared host), where the user asked for a replay
    Row("--replay with an empty name", lambda tmp: ["certify", "--replay", "", "--output", tmp / "out"], EXIT_CONFIG,
        "--replay needs a recording (an empty name would certify this host's GPUs instead)",
        on_disk=_nothing_written("out")),
    Row("--replay with a blank name", lambda tmp: ["certify", "--replay", " ", "--tier", "passive", "--output",
                                                    tmp / "out"], EXIT_CONFIG, "--replay needs a recording",
        on_disk=_nothing_written("out")),
    # fleet node's folder: an empty --output was an internal error (exit 5, TypeError) and an
    # empty --shared wrote <cwd>/<node>/ and ran the tier; a node name that is no folder name
    # put <shared>/<node>/ outside the sweep's folder
    Row("fleet node --output with an empty name", lambda tmp: ["fleet", "node", "--tier", "passive", "--output", ""],
        EXIT_CONFIG, "--output needs a folder (an empty name would write into the current directory)",
        on_disk=_nothing_written("cwd")),
    Row("fleet node --shared with an empty name", lambda tmp: ["fleet", "node", "--tier", "passive", "--shared", ""],
        EXIT_CONFIG, "--shared needs a folder (an empty name would write into the current directory)",
        on_disk=_nothing_written("cwd")),
    Row("fleet node --shared with a node name that climbs out", lambda tmp: ["fleet", "node", "--tier", "passive",
                                                                          "--shared", tmp / "cwd" / "shared"],
        EXIT_CONFIG, "the node name '../../escaped' is not a folder name: fleet node writes <shared>/<node>/",
        env=lambda tmp: {"NODE_NAME": "../../escaped"}, on_disk=lambda tmp: _nothing_written("cwd")(tmp) or
        _not_there(tmp / "escaped")),
    # a node name starting with '.': exit 0 into <shared>/.hidden/, a folder fleet collect and
    # label skip, so the node's verdict (a NOT CERTIFIED too) never reached the sweep's table
    Row("fleet node --shared with a node name collect never reads", lambda tmp: [
        "fleet", "node", "--tier", "passive", "--shared", tmp / "cwd" / "shared"],
        EXIT_CONFIG, "the node name '.hidden' starts with '.': fleet collect never reads",
        env=lambda tmp: {"NODE_NAME": ".hidden"}, on_disk=lambda tmp: _not_there(tmp / "cwd" / "shared" / ".hidden")),
    # report reads other runs' results (a shared sweep folder): Allure, run by root, read a
    # planted link's target into the report's attachments
    Row("report of results holding a planted link", lambda tmp: ["report", "--results", _results_with_a_link(tmp),
                                                                 "--output", tmp / "report.html"], EXIT_CONFIG,
        "allure-results/ffff-attachment.txt: refused: it is a symbolic link", on_disk=lambda tmp: _not_there(
            tmp / "report.html")),
    Row("fleet report of results holding a planted link",
        lambda tmp: ["report", "--results", _results_with_a_link(tmp), _other_hosts_results(tmp), "--output",
                     tmp / "report.html"], EXIT_CONFIG,
        "allure-results/ffff-attachment.txt: refused: it is a symbolic link", on_disk=lambda tmp: _not_there(
            tmp / "report.html")),
    # --if-stale asks whether THIS host's certificate holds: with --replay, one that did would
    # have skipped the recording's replay and said exit 0 for a request regression never run
    Row("--replay with --if-stale", lambda tmp: ["certify", "--replay", QUICK, "--if-stale", _quick_certificate(tmp),
                                                 "--output", tmp / "out"], EXIT_CONFIG,
        "rmpeer: --if-stale: a replay repeats the recorded run exactly", on_disk=_nothing_written("out")),
    # calibrate --from reads certificates as input: bounded, regular files, JSON objects.
    Row("calibrate --from a JSON array", lambda tmp: ["calibrate", "--from", _array(tmp)], EXIT_CONFIG,
        "array.json is not a readable certificate: not a JSON object"),
    Row("calibrate --from /dev/zero", lambda tmp: ["calibrate", "--from", "/dev/zero"], EXIT_CONFIG,
        "/dev/zero is not a readable certificate: not a regular file"),
    Row("calibrate --from a FIFO (was a hang)", lambda tmp: ["calibrate", "--from", _fifo(tmp)], EXIT_CONFIG,
        "fifo is not a readable certificate: not a regular file", timeout=20),
    Row("calibrate --from one certificate twice",
        lambda tmp: ["calibrate", "--from", _quick_certificate(tmp), tmp / "cert" / "replay-certificate.json"],
        EXIT_CONFIG, "is the same run as"),
    Row("calibrate --name with a newline writes no YAML",
        lambda tmp: ["calibrate", "--from", _quick_certificate(tmp), "--name", "bad\nother: {}",
                     "--write", tmp / "matrices"],
        EXIT_CONFIG, "--name 'bad\\nother: {}'", on_disk=_nothing_written("matrices")),
    # stdout closed (`>&-`): was a traceback in interrupts.finish and exit 1 with no verdict.
    Row("show with stdout closed", lambda tmp: ["show", QUICK], EXIT_OK, stdout="closed"),
    Row("plan with stdout closed", lambda tmp: ["plan", "0,1"], EXIT_OK, stdout="closed"),
    Row("certify --replay with stdout closed", lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out"],
        EXIT_OK, stdout="closed", on_disk=_certified),
    Row("certify --replay with stderr closed", lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out"],
        EXIT_OK, stderr="closed", on_disk=_certified),   # cli._standard_streams: /dev/null onto fds 0-2
    Row("certify --replay > /dev/full: the verdict stands, one line on stderr, no pytest INTERNALERROR",
        lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out"], EXIT_OK,
        "rmpeer: the report could not be written to stdout (No space left on device); the verdict stands: "
        "CERTIFIED (exit 0), certificate ", stdout="full", on_disk=_certified),
    Row("RMPEER_KEY relative and not UTF-8 makes no key in the working folder",
        lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "cwd" / "out"], EXIT_CONFIG, "RMPEER_KEY",
        env=lambda tmp: {"RMPEER_KEY": os.fsdecode(b"k\xff\xfe")}, on_disk=_no_key_in_cwd),
    # diff's exit code is its answer (0 same, 1 differs): a stdout that cannot take the table
    # (a reader gone, a full disk) must not turn "differs" into "same" (was exit 0 under
    # `| head`) nor into an internal error (was exit 5 on /dev/full); said once on stderr.
    Row("diff | head of two runs that differ keeps exit 1", lambda tmp: ["diff", QUICK, OTHER_HOST], 1,
        "rmpeer: diff: the table could not be written to stdout (Broken pipe); the answer stands: "
        "behaviour differs (exit 1)", stdout="gone"),
    Row("diff > /dev/full of two runs that differ keeps exit 1", lambda tmp: ["diff", QUICK, OTHER_HOST], 1,
        "rmpeer: diff: the table could not be written to stdout (No space left on device); the answer stands: "
        "behaviour differs (exit 1)", stdout="full"),
    Row("diff | head of one run with itself keeps exit 0", lambda tmp: ["diff", QUICK, QUICK], EXIT_OK,
        "the answer stands: same behaviour (exit 0)", stdout="gone"),
    # a command whose output is its answer (show, plan, fleet files) on a full disk: its output
    # is incomplete (exit 5), said in one line; was an "internal error" and a traceback file.
    Row("show > /dev/full", lambda tmp: ["show", QUICK], EXIT_INCOMPLETE,
        "rmpeer: show: its output could not be written to stdout (No space left on device): INCOMPLETE (exit 5)",
        stdout="full"),
    Row("plan > /dev/full", lambda tmp: ["plan", "0,1"], EXIT_INCOMPLETE,
        "rmpeer: plan: its output could not be written to stdout (No space left on device)", stdout="full"),
    Row("fleet files > /dev/full", lambda tmp: ["fleet", "files", "slurm", tmp / "files"], EXIT_INCOMPLETE,
        "rmpeer: fleet files: its output could not be written to stdout (No space left on device)", stdout="full"),
    # --help and --version: argparse swallowed the write's error and the process ended exit 0
    Row("--version > /dev/full", lambda tmp: ["--version"], EXIT_INCOMPLETE,
        "rmpeer: its help or version text could not be written to stdout (No space left on device)", stdout="full"),
    Row("certify --help > /dev/full", lambda tmp: ["certify", "--help"], EXIT_INCOMPLETE,
        "rmpeer: its help or version text could not be written to stdout", stdout="full"),
    Row("diff of a 'certificate' that holds only its format",
        lambda tmp: ["diff", _min_certificate(tmp), _quick_certificate(tmp)], EXIT_CONFIG, "not an rmpeer"),
    # numbers past the 4300 digits Python converts: each was a ValueError, exit 5
    Row("plan --extent of 5000 digits", lambda tmp: ["plan", "0,1", "--extent", HUGE], EXIT_CONFIG,
        "is not a size such as 64MiB"),
    Row("plan of a card of 5000 digits", lambda tmp: ["plan", f"0,{HUGE}"], EXIT_CONFIG, "is not a card number"),
    Row("certify --layout of 5000 digits", lambda tmp: ["certify", "--layout", HUGE, "--output", tmp / "out"],
        EXIT_CONFIG, "neither a layout name"),
    Row("certify --extent of 5000 digits", lambda tmp: ["certify", "--extent", HUGE, "--output", tmp / "out"],
        EXIT_CONFIG, "is not a size"),
    Row("certify --rm-abi of 5000 digits", lambda tmp: ["certify", "--rm-abi", HUGE + ".1", "--output", tmp / "out"],
        EXIT_CONFIG, "is not a driver version"),
    Row("bench --sizes of 5000 digits", lambda tmp: ["bench", "--sizes", HUGE], EXIT_CONFIG, "is not a size"),
    # an output whose name cannot be looked up: each was an internal error (OSError), exit 5
    Row("--output under a loop of links", lambda tmp: ["certify", "--replay", QUICK, "--output", _loop(tmp) / "x"],
        EXIT_CONFIG, "cannot write there (Too many levels of symbolic links)", on_disk=_no_certificate),
    Row("--output of a name too long", lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / ("b" * 300)],
        EXIT_CONFIG, "cannot write there (File name too long)", on_disk=_no_certificate),
    Row("--junit under a loop of links",
        lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out", "--junit", _loop(tmp) / "j.xml"],
        EXIT_CONFIG, "--junit", on_disk=_no_certificate),
    Row("--prometheus of a name too long",
        lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out", "--prometheus", tmp / ("p" * 300)],
        EXIT_CONFIG, "cannot write there (File name too long)", on_disk=_no_certificate),
    Row("RMPEER_MATRICES of a name too long", lambda tmp: ["certify", "--replay", QUICK, "--output", tmp / "out"],
        EXIT_CONFIG, "cannot be read (File name too long)", env=lambda tmp: {"RMPEER_MATRICES": str(tmp / ("m" * 300))},
        on_disk=_no_certificate),
]


def _stream(kind: str):
    if kind == "gone":          # the reader went away before the first write (`rmpeer ... | head -0`)
        read, write = os.pipe()
        os.close(read)
        return os.fdopen(write, "wb")
    return {"pipe": subprocess.PIPE, "full": open("/dev/full", "wb"), "closed": None}[kind]


def run(row: Row, tmp: Path) -> subprocess.CompletedProcess:
    (tmp / "cwd").mkdir()
    argv = [sys.executable, "-m", "rmpeer", *map(str, row.argv(tmp))]
    # a closed descriptor is closed in the child before exec (`rmpeer ... >&-`)
    closed = [fd for fd, kind in ((1, row.stdout), (2, row.stderr)) if kind == "closed"]
    err_path = tmp / "stderr.txt"
    with open(err_path, "wb") as err:
        done = subprocess.run(argv, env=_env(row.env(tmp)), cwd=tmp / "cwd",
                              stdout=_stream(row.stdout) if row.stdout != "closed" else subprocess.DEVNULL,
                              stderr=err if row.stderr != "closed" else subprocess.DEVNULL,
                              preexec_fn=(lambda: [os.close(fd) for fd in closed]) if closed else None,
                              timeout=row.timeout)
    done.stderr = err_path.read_text(errors="replace")
    return done


@pytest.mark.parametrize("row", [pytest.param(r, id=r.id, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)]
                                              if r.xfail else []) for r in ROWS])
def test_row(row: Row, tmp_path):
    done = run(row, tmp_path)
    err = done.stderr
    assert "Traceback" not in err and "INTERNALERROR" not in err, err
    assert done.returncode == row.code, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if row.code != EXIT_OK or row.stdout in ("full", "gone"):    # a lost stdout is said once on stderr
        assert len(lines) == 1 and row.says in lines[0], err
    row.on_disk(tmp_path)
    # no temporary file or traceback file left in the folders the run wrote
    assert not [p for p in tmp_path.rglob("*") if ".tmp" in p.name or "traceback" in p.name]


def test_rm_refusing_the_runs_first_calls_says_why_and_writes_its_certificate(tmp_path):
    """RM refuses the card's device object while the run opens the host (a GPU lost from the
    bus): no check can run, so INCOMPLETE (exit 5), and the refusal is its reason, on the
    terminal and in the certificate, which is written. It was "no hardware check ran" alone,
    and no certificate: nothing said which call RM refused, or why."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", derived(tmp_path, "device-gpu-lost"),
                           "--output", out], env=_env(), capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr and done.returncode == EXIT_INCOMPLETE, done.stdout + done.stderr
    refusal = "host:device:card0: NV_ERR_GPU_IS_LOST"
    said = [ln for ln in done.stdout.splitlines() if ln.startswith("  - ")]
    assert any(refusal in ln for ln in said), done.stdout
    cert = json.loads((out / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE" and any(refusal in r for r in cert["reasons"]), cert["reasons"]
    # the run stops there, and its reason names the object RM refused (the handles, the class)
    (line,) = [r for r in cert["reasons"] if refusal in r]
    assert "; handles: hClient=" in line and " class=NV01_DEVICE_0 (" in line, line


def test_the_run_path_makes_the_folder_a_refused_opens_certificate_goes_to(tmp_path):
    """The run itself (rmpeer.run.execute), not only certify, makes the output folder when RM
    refuses the open: certify makes it before the run for its report, but the certificate
    that says which call RM refused must not depend on a caller having done so."""
    from rmpeer.run.execute import run
    from rmpeer.run.outputs import write_files
    from rmpeer.run.spec import replay_spec

    out = tmp_path / "not-made-yet" / "out"
    spec = replay_spec(str(derived(tmp_path, "device-gpu-lost")), tier="quick", output=out)
    result = run(spec, suites=lambda host, progress: pytest.fail("no check runs after a refused open"))
    assert out.is_dir()
    cert = json.loads(Path(write_files(result, spec)).read_text())
    assert cert["verdict"] == "INCOMPLETE"
    assert any("host:device:card0: NV_ERR_GPU_IS_LOST" in r for r in cert["reasons"]), cert["reasons"]


@pytest.mark.parametrize("name, shown", [("label-escapes", "\\x1b[2J\\x1b[31mEVIL"),
                                         ("call-label-osc52", "step\\x1b]52;c;ZXZpbA==\\x07")],
                         ids=["header-label", "call-label"])
def test_show_never_sends_a_recordings_control_characters_to_the_terminal(tmp_path, name, shown):
    """`rmpeer show` prints a recording, which is input (one attached to a bug report, say):
    a terminal's escapes in its fields (clear the screen, write the clipboard with OSC 52)
    are shown escaped, never sent; certify refuses such a header, show still reads the file."""
    done = subprocess.run([sys.executable, "-m", "rmpeer", "show", "--calls", derived(tmp_path, name)], env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_OK and "Traceback" not in done.stderr, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert shown in done.stdout, done.stdout[:2000]


def test_diff_never_sends_a_recordings_control_characters_to_the_terminal(tmp_path):
    """`rmpeer diff` tabulates what two recordings hold: a label or a call's step holding
    terminal escapes is shown escaped in its cell, never sent (the table has no colour off a
    terminal, so no escape at all belongs on this stdout)."""
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", derived(tmp_path, "label-escapes"),
                           derived(tmp_path, "call-label-osc52")], env=_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[2J\\x1b[31mEVIL\\nCERTIFIED" in done.stdout and "step\\x1b]52;c;" in done.stdout, done.stdout
