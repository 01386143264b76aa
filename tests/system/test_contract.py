"""The command-line contract, as a table: every row is a command a user may type, run as a
user would (the `rmpeer` of the Python running these tests, from an empty temporary directory
outside the checkout), with the exit code and the message it must give.

Every row asserts: the documented exit code; a fragment of the message; no traceback; output
under OUTPUT_BOUND; nothing written in the working directory on exit 2 or 3, and on other exits
only what the row allows. CI runs it against a non-editable install (.ci/run), so the data the
commands need must be found through rmpeer.paths, not through a checkout.

Exit codes (README, rmpeer/errors.py): 0 ok, 1 not certified, 2 usage or configuration error, 3 no GPU
access, 4 degraded, 5 incomplete, 6 busy (another run holds the host's lock), 7 not idle.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rmpeer import paths as resources

pytestmark = pytest.mark.offline

OUTPUT_BOUND = 20_000          # bytes of stdout + stderr: a message, not a dump
RMPEER = [sys.executable, "-m", "rmpeer"]


@dataclass(frozen=True)
class Row:
    argv: tuple                 # after `rmpeer`; "{name}" is filled from the inputs fixture
    code: int                   # the exit code
    says: str                   # a regular expression the output must match ("{name}" filled too)
    env: dict = field(default_factory=dict)     # extra environment ("{name}" filled)
    writes: tuple = ()          # globs of what may appear in the working directory (exit 0/1 only)
    before: str = ""            # a regular expression stdout must match too (a line said before the last)


def row(name, argv, code, says, **kw):
    return pytest.param(Row(tuple(argv), code, says, **kw), id=name)


def seventeen():
    return ",".join(str(i % 2) for i in range(17))


ROWS = [
    # -- the command line itself
    row("help", ["--help"], 0, r"exit codes:\n  0  CERTIFIED(.*\n)+  5  INCOMPLETE(.*\n)+  7  NOT IDLE"),
    row("version", ["--version"], 0, r"^rmpeer \d"),
    row("no-command", [], 2, r"required: command"),
    row("unknown-command", ["frobnicate"], 2, r"invalid choice: 'frobnicate'"),
    row("unknown-option", ["plan", "0,1", "--colour"], 2, r"unrecognized arguments: --colour"),
    row("certify-help", ["certify", "--help"], 0, r"3  no access to the GPUs"),
    row("no-gpu-host", ["host"], 3, r"/dev/nvidiactl does not exist"),
    # -- plan: the card list, the extent, the host
    row("plan", ["plan", "0,1"], 0, r"^layout    0,1 \(needs 2 card\(s\)\)\nsessions  2: s0 on card 0, s1 on card 1\n"
        r"extent    64 MiB \(0x4000000\) per session"),
    row("plan-letters", ["plan", "a,b"], 2, r"layout 'a,b': 'a' is not a card number"),
    row("plan-empty-item", ["plan", "0,,1"], 2, r"layout '0,,1': '' is not a card number"),
    row("plan-empty", ["plan", ""], 2, r"layout '' is empty"),
    row("plan-negative", ["plan", "0,-1"], 2, r"'-1' is not a card number"),
    row("plan-card-the-host-lacks", ["plan", "0,9", "--host-cards", "2"], 2, r"needs card 9, but this host has 2"),
    row("plan-host-cards-not-a-number", ["plan", "0,1", "--host-cards", "x"], 2, r"'x' is not a number of cards"),
    row("plan-17-sessions", ["plan", seventeen()], 2, r"17 sessions: .* beyond 16 sessions"),
    row("plan-extent-not-a-size", ["plan", "0,1", "--extent", "abc"], 2, r"'abc' is not a size"),
    row("plan-extent-zero", ["plan", "0,1", "--extent", "0"], 2, r"extent 0 bytes \(0x0\) is below the minimum 2 MiB"),
    row("plan-extent-not-a-page-multiple", ["plan", "0,1", "--extent", "3MiB"], 2,
        r"3 MiB \(0x300000\) is not a multiple of the page size 2 MiB"),
    row("plan-extent-absurd", ["plan", "0,1", "--extent", "128GiB"], 2, r"above the maximum 64 GiB"),
    # -- a broken copy of the matrices (RMPEER_MATRICES)
    row("matrices-missing", ["plan", "0,1"], 2, r"{in}/nowhere/layouts.yaml: file: not found \(RMPEER_MATRICES=",
        env={"RMPEER_MATRICES": "{in}/nowhere"}),
    row("layouts-yaml-syntax", ["plan", "0,1"], 2, r"layouts-syntax/layouts.yaml: line {syntax_line}: not valid YAML",
        env={"RMPEER_MATRICES": "{in}/layouts-syntax"}),
    row("layouts-duplicate-key", ["plan", "0,1"], 2,
        r"layouts-dup/layouts.yaml: line {dup_line}: duplicate key 'default' \(first at line {dup_first}\)",
        env={"RMPEER_MATRICES": "{in}/layouts-dup"}),
    row("layouts-wrong-type", ["plan", "0,1"], 2, r"layouts-type/layouts.yaml: file\.va: must be dict, found 5",
        env={"RMPEER_MATRICES": "{in}/layouts-type"}),
    row("layouts-extent-not-a-page-multiple", ["plan", "0,1"], 2,
        r"layouts.yaml: extent.default: 3 MiB \(0x300000\) is not a positive multiple of va.page_size",
        env={"RMPEER_MATRICES": "{in}/layouts-odd-extent"}),
    row("layouts-extent-absurd", ["plan", "0,1"], 2, r"layouts.yaml: extent.default: 1 TiB .* is not between",
        env={"RMPEER_MATRICES": "{in}/layouts-huge-extent"}),
    row("layouts-windows-beyond-64-bits", ["plan", "0,1"], 2,
        r"layouts.yaml: extent.maximum: 16 windows .* outside the address space",
        env={"RMPEER_MATRICES": "{in}/layouts-high-windows"}),
    row("drivers-yaml-syntax", ["show", "{good}"], 2, r"drivers-syntax/drivers.yaml: line {drivers_line}: not valid YAML",
        env={"RMPEER_MATRICES": "{in}/drivers-syntax"}),
    row("drivers-duplicate-key", ["show", "{good}"], 2, r"drivers-dup/drivers.yaml: line \d+: duplicate key 'version'",
        env={"RMPEER_MATRICES": "{in}/drivers-dup"}),
    row("drivers-wrong-type", ["show", "{good}"], 2, r"drivers-type/drivers.yaml: release 535.43.02: bitfields\.\w+: "
        r"must be dict, found \[1\]", env={"RMPEER_MATRICES": "{in}/drivers-type"}),
    # -- show: every way a recording can be bad
    row("show", ["show", "{good}"], 0, r"label: h200x\d.*\n(.*\n)*  \d+ calls: "),
    row("show-relative-path", ["show", "../inputs/good.jsonl.gz"], 0, r"transcript \.\./inputs/good\.jsonl\.gz"),
    row("show-has-no-python-tuples", ["show", "{good}"], 0, r"layouts: one-per-card \(cards [\d,]+\)"),
    row("show-missing", ["show", "{in}/missing.jsonl.gz"], 2, r"missing\.jsonl\.gz: no such file"),
    row("show-directory", ["show", "{in}"], 2, r"inputs: not a file"),
    row("show-empty", ["show", "{in}/empty.jsonl"], 2, r"empty\.jsonl: empty, not a recording"),
    row("show-empty-gz", ["show", "{in}/empty.jsonl.gz"], 2, r"empty\.jsonl\.gz: empty, not a recording"),
    row("show-garbage", ["show", "{in}/garbage.jsonl"], 2, r"garbage\.jsonl: line 1: not JSON .*not an rmpeer-transcript"),
    row("show-binary", ["show", "{in}/binary.jsonl"], 2, r"binary\.jsonl: line 1: not (text|JSON)"),
    row("show-garbage-gz", ["show", "{in}/garbage.jsonl.gz"], 2, r"garbage\.jsonl\.gz: corrupt compressed data"),
    row("show-no-header", ["show", "{in}/noheader.jsonl"], 2, r"line 1: not an rmpeer-transcript/2 recording"),
    row("show-not-an-object", ["show", "{in}/array.jsonl"], 2, r"array\.jsonl: line 1: not a JSON object"),
    row("show-not-a-record", ["show", "{in}/badrecord.jsonl"], 2, r"badrecord\.jsonl: line 2: not a call record"),
    row("show-bad-line", ["show", "{in}/badline.jsonl"], 2, r"badline\.jsonl: line 6: not JSON"),
    row("show-cut-gzip", ["show", "{in}/cut.jsonl.gz"], 2, r"cut\.jsonl\.gz: truncated"),
    row("show-cut-line", ["show", "{in}/cutline.jsonl"], 2, r"cutline\.jsonl: line {cut_line}: truncated"),
    row("show-gzip-block-byte-flipped", ["show", "{in}/flipped-block.jsonl.gz"], 2,
        r"flipped-block\.jsonl\.gz: corrupt compressed data .*invalid block type"),
    row("show-gzip-byte-flipped", ["show", "{in}/flipped.jsonl.gz"], 2,
        r"flipped\.jsonl\.gz: (corrupt compressed data|line \d+: not (JSON|text|a call record|a JSON object))"),
    row("show-gzip-named-plain", ["show", "{in}/gzip-named.jsonl"], 0, r"\d+ calls"),
    row("show-plain-named-gzip", ["show", "{in}/plain-named.jsonl.gz"], 0, r"\d+ calls"),
    # -- report: its inputs and its output, checked before Allure runs
    row("report-no-results", ["report"], 2, r"no Allure results in reports/allure-results"),
    row("report-results-is-a-file", ["report", "--results", "{in}/empty.jsonl"], 2, r"no Allure results in"),
    row("report-corrupt-result", ["report", "--results", "{in}/results-corrupt"], 2,
        r"results-corrupt/b-result\.json: not a readable Allure result"),
    row("report-result-not-an-object", ["report", "--results", "{in}/results-array"], 2,
        r"results-array/a-result\.json: not an Allure result"),
    row("report-output-under-a-file", ["report", "--results", "{in}/results-good", "--output", "{in}/empty.jsonl/r.html"],
        2, r"--output .*/empty\.jsonl is not a directory"),
    row("report-several-one-corrupt", ["report", "--results", "{in}/results-good", "{in}/results-corrupt"], 2,
        r"results-corrupt/b-result\.json: not a readable Allure result"),
    row("report-output-is-a-directory", ["report", "--results", "{in}/results-good", "--output", "{in}"], 2,
        r"--output .* is a directory"),
]

# `rmpeer certify` rows (--replay of each recording from here with relative paths, --extent abc,
# --layout 0,9 / '' / nosuchlayout, --rm-abi garbage in a replay, an unwritable --output, a
# 17-session layout, a broken topologies.yaml with --expect-topology, ...) come with the
# certify rewrite (issue 10 items 1, 3-5, 7, 11): add them here as row(...) entries.
CERTIFY_ROWS: list = [
    row("certify-extent-abc", ["certify", "--extent", "abc"], 2, r"'abc' is not a size"),
    row("certify-extent-not-pages", ["certify", "--extent", "3MiB"], 2, r"not a multiple of the page size"),
    row("certify-expect-empty", ["certify", "--expect-topology", ""], 2, r"--expect-topology needs the name"),
    row("certify-expect-unknown", ["certify", "--replay", "{good}", "--expect-topology", "nosuch"], 2,
        r"unknown topology 'nosuch'"),
    row("certify-replay-missing", ["certify", "--replay", "nosuch.jsonl.gz"], 2, r"nosuch.jsonl.gz"),
    row("certify-replay-cut", ["certify", "--replay", "{in}/cut.jsonl.gz"], 2, r"truncated|cannot be replayed"),
    row("certify-replay-garbage", ["certify", "--replay", "{in}/garbage.jsonl"], 2, r"garbage.jsonl"),
    row("certify-replay-card-list", ["certify", "--replay", "{good}", "--layout", "0,9"], 2,
        r"--layout '0,9': the recording .* holds no such layout \(it has: one-per-card"),
    row("certify-replay-empty-layout", ["certify", "--replay", "{good}", "--layout", ""], 2, r"holds no such layout"),
    row("certify-replay-unknown-layout", ["certify", "--replay", "{good}", "--layout", "nosuchlayout"], 2,
        r"holds no such layout"),
    row("certify-replay-seventeen", ["certify", "--replay", "{good}", "--layout", seventeen()], 2,
        r"holds no such layout"),
    row("certify-replay-abi", ["certify", "--replay", "{good}", "--rm-abi", "garbage"], 2,
        r"--rm-abi: a replay repeats the recorded run exactly"),
    row("certify-replay-extent", ["certify", "--replay", "{good}", "--extent", "0"], 2, r"--extent: a replay repeats"),
    row("certify-replay-record", ["certify", "--replay", "{good}", "--record", "rec"], 2, r"--record: a replay repeats"),
    row("certify-replay-no-boost", ["certify", "--replay", "{good}", "--no-boost"], 2, r"--no-boost: a replay repeats"),
    row("certify-output-unwritable", ["certify", "--replay", "{good}", "--layout", "one-per-card", "--output",
                                      "/proc/rmpeer-out"], 2, r"--output /proc/rmpeer-out: cannot write there"),
    # option checks come before device checks: exit 2 even without a GPU (issue 16)
    row("certify-output-empty", ["certify", "--replay", "{good}", "--output", ""], 2,
        r"--output needs a folder"),
    row("certify-seventeen-sessions", ["certify", "--layout", seventeen()], 2, r"17 sessions > 16"),
    row("certify-abi-garbage", ["certify", "--rm-abi", "garbage"], 2, r"garbage"),
    row("certify-tier-unknown", ["certify", "--tier", "deep"], 2, r"--tier 'deep': one of passive, quick, full"),
    row("certify-valid-for-zero", ["certify", "--valid-for", "0"], 2, r"--valid-for '0': give a duration such as 24h"),
    row("certify-valid-for-garbage", ["certify", "--valid-for", "garbage"], 2,
        r"--valid-for 'garbage': give a duration such as 24h"),
    row("certify-wait-negative", ["certify", "--wait", "-1"], 2,
        r"^rmpeer: --wait -1: give the seconds to wait for another run's lock, 0 or more$"),
    row("certify-if-stale-missing", ["certify", "--if-stale", "{in}/no-certificate.json"], 3, r"no NVIDIA device",
        before=r"^rmpeer: running the full tier: the certificate cannot be read: .*no-certificate\.json"),
    row("certify-replay-no-end", ["certify", "--replay", "{in}/noend.jsonl.gz"], 2,
        r"noend\.jsonl\.gz is truncated: no 'end' line after line \d+"),
    row("certify-junit-unwritable", ["certify", "--replay", "{good}", "--junit", "/proc/rmpeer.xml"], 2,
        r"^rmpeer: --junit /proc/rmpeer\.xml: cannot write there"),
    row("certify-junit-a-folder", ["certify", "--replay", "{good}", "--junit", "{in}"], 2,
        r"--junit .*/inputs is a directory: name the file to write"),
    row("certify-prometheus-unwritable", ["certify", "--replay", "{good}", "--prometheus", "/proc/rmpeer-prom"], 2,
        r"^rmpeer: --prometheus /proc/rmpeer-prom: cannot write there"),
    row("bench-size-zero", ["bench", "--sizes", "0"], 2, r"--sizes: .*below the minimum"),
    row("bench-no-gpu", ["bench"], 3, r"no NVIDIA device"),
    row("bench-bad-sizes", ["bench", "--sizes", "lots"], 2, r"'lots' is not a size"),
]


# -- the inputs: broken files made from the real ones -------------------------------------------

def _deflate_start(data: bytes) -> int:
    """Where the first deflate block begins in a gzip member (after the optional header fields)."""
    flags, at = data[3], 10
    if flags & 4:                                   # FEXTRA
        at += 2 + int.from_bytes(data[at:at + 2], "little")
    for bit in (8, 16):                             # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            at = data.index(b"\0", at) + 1
    return at + (2 if flags & 2 else 0)             # FHCRC


def _matrices_copy(root: Path, name: str, file: str, edit) -> Path:
    out = root / name
    shutil.copytree(resources.matrices_dir(), out)
    path = out / file
    path.write_text(edit(path.read_text()))
    return out


def _line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based number of the line holding the nth occurrence of needle."""
    at = -1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("contract")
    root = base / "inputs"
    root.mkdir()
    recordings = sorted(resources.transcripts_dir().glob("*.jsonl.gz"))
    if not recordings:
        pytest.skip(f"no recording in {resources.transcripts_dir()}")
    good = root / "good.jsonl.gz"
    shutil.copy(recordings[0], good)
    packed = good.read_bytes()
    plain = gzip.decompress(packed)
    lines = plain.split(b"\n")
    files = {
        "empty.jsonl": b"", "empty.jsonl.gz": b"",
        "garbage.jsonl": b"hello world\nthis is not a transcript\n",
        "binary.jsonl": bytes(range(256)),
        "garbage.jsonl.gz": b"\x1f\x8b not deflate data at all",
        "noheader.jsonl": b"\n".join(lines[1:10]) + b"\n",
        "array.jsonl": b"[1, 2, 3]\n",
        "badrecord.jsonl": lines[0] + b'\n{"seq": 1, "op": "open", "colour": "red"}\n',
        "badline.jsonl": b"\n".join(lines[:5] + [b'{"seq": 5, "op": '] + lines[6:20]) + b"\n",
        "cut.jsonl.gz": packed[: len(packed) // 2],
        "cutline.jsonl": plain[: len(plain) // 2],
        "gzip-named.jsonl": packed,
        "plain-named.jsonl.gz": b"\n".join(lines[:200]) + b"\n",
        "noend.jsonl.gz": gzip.compress(b"\n".join(lines[: len(lines) // 2]) + b"\n"),   # whole lines, no end
    }
    flipped = bytearray(packed)
    flipped[len(packed) // 2] ^= 0xFF
    files["flipped.jsonl.gz"] = bytes(flipped)
    block = bytearray(packed)
    block[_deflate_start(packed)] |= 0x06             # BTYPE 11: a block type deflate reserves
    files["flipped-block.jsonl.gz"] = bytes(block)
    for name, data in files.items():
        (root / name).write_bytes(data)
    cut = files["cutline.jsonl"]
    assert not cut.endswith(b"\n")

    # results of a run: one good, one corrupt (cut JSON), one that is not an object
    for name, results in {"results-good": {"a": {"name": "t", "status": "passed"}},
                          "results-corrupt": {"a": {"name": "t", "status": "passed"}, "b": '{"name": "t", "sta'},
                          "results-array": {"a": [1]}}.items():
        (root / name).mkdir()
        for stem, body in results.items():
            (root / name / f"{stem}-result.json").write_text(body if isinstance(body, str) else json.dumps(body))

    layouts = (resources.matrices_dir() / "layouts.yaml").read_text()
    drivers = (resources.matrices_dir() / "drivers.yaml").read_text()
    default = re.search(r"\n(  default: .*)\n", layouts).group(1)
    _matrices_copy(root, "layouts-syntax", "layouts.yaml", lambda t: t.replace(default, "  default: [0x4000000"))
    _matrices_copy(root, "layouts-dup", "layouts.yaml", lambda t: t.replace(default, default + "\n" + default))
    _matrices_copy(root, "layouts-type", "layouts.yaml", lambda t: re.sub(r"\nva:\n", "\nva: 5\nold_va:\n", t))
    _matrices_copy(root, "layouts-odd-extent", "layouts.yaml", lambda t: t.replace(default, "  default: 0x300000"))
    _matrices_copy(root, "layouts-huge-extent", "layouts.yaml", lambda t: t.replace(default, "  default: 0x10000000000"))
    _matrices_copy(root, "layouts-high-windows", "layouts.yaml",
                   lambda t: re.sub(r"\n  window_base: \S+", "\n  window_base: 0xffffffffffe00000", t))
    first_version = re.search(r'\n(  - version: "[^"]+")\n', drivers).group(1)
    _matrices_copy(root, "drivers-syntax", "drivers.yaml", lambda t: t.replace(first_version, first_version + "\n    : ]"))
    _matrices_copy(root, "drivers-dup", "drivers.yaml",
                   lambda t: t.replace(first_version, first_version + "\n" + first_version[4:].replace("version", "    version")))
    _matrices_copy(root, "drivers-type", "drivers.yaml",
                   lambda t: re.sub(r"(\n    bitfields:\n      )(\w+):.*\n", r"\1\2: [1]\n      OLD_\2:\n", t, count=1))
    dup_first = _line_of(layouts, default)
    return {
        "in": str(root), "base": str(base), "good": str(good),
        "syntax_line": str(dup_first + 1),   # the flow sequence runs on and fails on the next line
        "dup_first": str(dup_first), "dup_line": str(dup_first + 1),
        "cut_line": str(cut.count(b"\n") + 1),
        "drivers_line": str(_line_of(drivers, first_version) + 1),
    }


def run_row(r: Row, inputs: dict, cwd: Path):
    fill = lambda s: s.format(**inputs)      # noqa: E731
    env = {k: v for k, v in os.environ.items() if k != "RMPEER_MATRICES"}
    env.update({k: fill(v) for k, v in r.env.items()})
    before = {p: p.stat().st_mtime_ns for p in cwd.rglob("*")}
    done = subprocess.run(RMPEER + [fill(a) for a in r.argv], cwd=cwd, env=env, capture_output=True, text=True,
                          errors="replace", timeout=300)
    after = {p: p.stat().st_mtime_ns for p in cwd.rglob("*")}
    written = sorted(str(p.relative_to(cwd)) for p, t in after.items() if before.get(p) != t)
    return done, written


def check(r: Row, done, written, inputs):
    out = done.stdout + done.stderr
    shown = f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert "Traceback" not in out and "INTERNALERROR" not in out, shown
    assert done.returncode == r.code, shown
    assert re.search(r.says.format(**inputs), done.stderr if r.code else done.stdout, re.M), shown
    assert re.search(r.before.format(**inputs), done.stdout, re.M), shown
    assert len(out.encode()) <= OUTPUT_BOUND, f"{len(out.encode())} bytes of output\n{shown}"
    if r.code in (2, 3):
        assert written == [], f"exit {r.code} but wrote {written}"
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("rmpeer"), shown              # one message, named, at the end
        assert len(done.stderr.strip().splitlines()) <= 6, shown
    else:
        stray = [w for w in written if not any(fnmatch.fnmatch(w, g) for g in r.writes)]
        assert stray == [], f"wrote {stray}, the row allows {list(r.writes)}"


@pytest.mark.parametrize("r", ROWS + CERTIFY_ROWS)
def test_contract(r, inputs, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    if "../inputs/" in " ".join(r.argv):      # a relative path from here to the inputs
        cwd = Path(inputs["base"]) / f"cwd-{tmp_path.name}"
        cwd.mkdir()
    done, written = run_row(r, inputs, cwd)
    check(r, done, written, inputs)


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="this machine has an NVIDIA device")
def test_certify_without_a_gpu_exits_3_writing_nothing(inputs, tmp_path):
    r = Row(("certify",), 3, r"no NVIDIA device")
    done, written = run_row(r, inputs, tmp_path)
    check(r, done, written, inputs)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: nothing to refuse")
def test_certify_into_a_read_only_folder_is_one_line(inputs, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    r = Row(("certify", "--replay", "{good}", "--output", str(locked)), 2, r"cannot write there")
    done, written = run_row(r, inputs, tmp_path)
    check(r, done, written, inputs)


# -- where the installed package finds its data -------------------------------------------------

def test_the_readme_shows_the_exit_codes_of_rmpeer_help():
    """README's exit-code block is rmpeer/errors.py's table, as `rmpeer --help` prints it."""
    from rmpeer.cli import EXIT_CODES

    readme = Path(__file__).resolve().parents[2] / "README.md"
    if not readme.is_file():
        pytest.skip("README.md is in the checkout, not beside these tests")
    assert f"```\n{EXIT_CODES}\n```" in readme.read_text()
    assert [line.split()[0] for line in EXIT_CODES.splitlines()[1:]] == [str(code) for code in range(9)]


def test_certify_help_says_what_each_tier_runs_and_its_budget():
    done = subprocess.run(RMPEER + ["certify", "--help"], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, COLUMNS="400"))
    text = " ".join(done.stdout.split())
    for tier, budget in (("passive", "under 1 s"), ("quick", "under 4 s"), ("full", "under 15 s")):
        assert re.search(rf"{tier} \([^)]*{budget}\)", text), (tier, budget, text)


def test_the_resources_are_where_rmpeer_looks():
    assert {"layouts.yaml", "drivers.yaml", "topologies.yaml", "nvstatus.yaml", "engines.yaml", "channel.yaml"} <= \
        {p.name for p in resources.matrices_dir().glob("*.yaml")}
    assert (resources.suites_dir() / "test_peer_setup.py").is_file()
    assert not (resources.suites_dir() / "test_contract.py").exists()   # self-tests stay in tests/
    assert (resources.PACKAGE / "pytest_plugin" / "plugin.py").is_file()
    assert list(resources.transcripts_dir().glob("*.jsonl.gz"))
    assert resources.allure_config().is_file()


def test_rmpeer_matrices_overrides_the_matrices(monkeypatch, tmp_path):
    monkeypatch.setenv("RMPEER_MATRICES", str(tmp_path))
    assert resources.matrices_dir() == tmp_path
    monkeypatch.delenv("RMPEER_MATRICES")
    assert resources.matrices_dir() != tmp_path and (resources.matrices_dir() / "layouts.yaml").is_file()


def test_the_installed_script_runs_from_anywhere(tmp_path):
    script = Path(sys.executable).with_name("rmpeer")
    if not script.exists():
        pytest.skip(f"no rmpeer script beside {sys.executable}")
    done = subprocess.run([str(script), "plan", "0,1"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("layout    0,1"), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_wheel_lists_every_package_of_the_tree():
    """pyproject.toml names rmpeer's packages one by one (the top-level folders are mapped into
    the wheel): a new subpackage missing there would be missing from every install."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        pytest.skip("not a checkout")
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    tree = {".".join(p.parent.relative_to(root).parts) for p in (root / "rmpeer").rglob("__init__.py")}
    assert tree <= listed, f"add {sorted(tree - listed)} to [tool.setuptools] packages"
    for package, folder in config["package-dir"].items():
        assert package in listed and (root / folder).is_dir()


def test_an_unreadable_driver_version_is_a_config_error(inputs):
    """RM answering the version query with something that is not a release number: exit 2,
    naming the string, unless an ABI is forced."""
    from rmpeer.errors import ConfigError
    from rmpeer.rm.open import Runtime
    from rmpeer.shim.replay import ReplayShim

    lines = gzip.decompress(Path(inputs["good"]).read_bytes()).decode().splitlines()
    at = next(i for i, line in enumerate(lines) if '"label":"driver:version"' in line)
    rec = json.loads(lines[at])
    version = json.loads(next(line for line in lines if line.startswith('{"note": "driver"')))["version"]
    assert version.encode().hex() in rec["reply"]
    rec["reply"] = rec["reply"].replace(version.encode().hex(), b"5x0.1\xff".ljust(len(version), b"!").hex())
    lines[at] = json.dumps(rec)
    path = Path(inputs["base"]) / "bad-version.jsonl"
    path.write_text("\n".join(lines[: at + 40]) + "\n")
    shim = ReplayShim(path)
    shim.segment("runtime:open")
    with pytest.raises(ConfigError, match="reported version '5x0\\.1\ufffd!+'.*not a release number"):
        Runtime(shim)
