"""A recording is checked against itself before anything runs: a header that does not describe
its content (cards, layouts), or a file cut short, is refused in one line with exit code 2.

The bad recordings are made here from a committed one; each expected message is built from
what the test itself reads in the file (line numbers, card counts), not from the checker."""

import gzip
import json

import pytest

from rmpeer.errors import EXIT_CONFIG, TranscriptError
from rmpeer.paths import transcripts_dir
from rmpeer.shim.replay import validate_recording
from rmpeer.cli.show import show_transcript

pytestmark = pytest.mark.offline
COMMITTED = sorted(transcripts_dir().rglob("*.jsonl.gz"))
# the smallest two-card recording: cheap to rewrite
TWO_CARD = min((p for p in COMMITTED if p.name.startswith("h200x2")), key=lambda p: p.stat().st_size, default=None)
needs_recording = pytest.mark.skipif(TWO_CARD is None, reason="no two-card recording in fixtures/transcripts/")


def raw_lines(path) -> list[bytes]:
    return gzip.open(path, "rb").read().splitlines(keepends=True)


def write(tmp_path, lines: list[bytes], name="bad.jsonl.gz"):
    path = tmp_path / name
    with gzip.open(path, "wb") as f:
        f.write(b"".join(lines))
    return path


def with_header(lines, change):
    header = json.loads(lines[0])
    change(header["header"])
    return [json.dumps(header).encode() + b"\n"] + lines[1:]


def line_of(lines, predicate) -> int:
    """1-based line number of the first line whose JSON satisfies `predicate`."""
    return next(n for n, raw in enumerate(lines, 1) if predicate(json.loads(raw)))


def refused(path) -> str:
    with pytest.raises(TranscriptError) as err:
        validate_recording(path)
    assert err.value.exit_code == EXIT_CONFIG
    message = str(err.value)
    assert "\n" not in message, "one line"
    return message


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_the_committed_recordings_are_accepted(path):
    validate_recording(path)


@needs_recording
@pytest.mark.parametrize("cards", [8, 1])
def test_a_header_whose_card_count_the_host_facts_contradict_is_refused(tmp_path, cards):
    lines = raw_lines(TWO_CARD)
    host = line_of(lines, lambda d: d.get("note") == "host")
    recorded = len(json.loads(lines[host - 1])["facts"]["cards"])
    assert recorded == 2
    path = write(tmp_path, with_header(lines, lambda h: h.update(cards=cards)))
    assert refused(path) == f"recording {path} says cards: {cards} but records 2 card(s) (host facts at line {host})"


@needs_recording
def test_a_call_on_a_card_the_host_facts_lack_is_refused(tmp_path):
    lines = raw_lines(TWO_CARD)
    at = line_of(lines, lambda d: d.get("op") == "open" and d.get("path") == "/dev/nvidia1")
    host = line_of(lines, lambda d: d.get("note") == "host")
    lines[at - 1] = lines[at - 1].replace(b'"/dev/nvidia1"', b'"/dev/nvidia5"')
    path = write(tmp_path, lines)
    assert refused(path) == (f"recording {path} says cards: 2 but opens /dev/nvidia5 (line {at}), none of the "
                             f"cards of its host facts (line {host})")


@needs_recording
@pytest.mark.parametrize("keep", [2, 600, -1])
def test_a_recording_cut_at_a_line_boundary_is_refused(tmp_path, keep):
    lines = raw_lines(TWO_CARD)
    assert json.loads(lines[-1]) == {"note": "end", "t_ns": json.loads(lines[-1])["t_ns"]}
    kept = lines[:keep]
    path = write(tmp_path, kept)
    assert refused(path) == (f"recording {path} is truncated: no 'end' line after line {len(kept)} "
                             f"(the recording was cut short)")


@needs_recording
def test_a_recording_cut_mid_line_is_refused(tmp_path):
    lines = raw_lines(TWO_CARD)
    cut = lines[:700] + [lines[700][: len(lines[700]) // 2]]
    path = write(tmp_path, cut)
    assert refused(path) == (f"recording {path} cannot be replayed: line 701: truncated: the last line is cut off "
                             f"(the recording stopped mid-write)")


@needs_recording
def test_a_layout_the_header_names_but_the_recording_never_sets_up_is_refused(tmp_path):
    lines = raw_lines(TWO_CARD)
    layouts = [entry[0] for entry in json.loads(lines[0])["header"]["run"]["layouts"]]
    gone = layouts[-1]
    setups = sorted(json.loads(raw)["key"].removeprefix("setup:") for raw in lines[1:]
                    if b'"setup:' in raw and json.loads(raw).get("note") == "segment")
    assert gone in setups
    path = write(tmp_path, [raw for raw in lines if f'"key": "setup:{gone}"'.encode() not in raw])
    rest = ", ".join(s for s in setups if s != gone)
    assert refused(path) == (f"recording {path}: its header lists layout {gone}, but the recording never sets it up "
                             f"(no 'setup:{gone}' segment; it sets up: {rest})")


@needs_recording
def test_a_header_layout_on_a_card_beyond_the_recording_is_refused(tmp_path):
    lines = raw_lines(TWO_CARD)
    path = write(tmp_path, with_header(lines, lambda h: h["run"]["layouts"].append(["far", [0, 3], 1 << 26])))
    assert refused(path) == f"recording {path}: its header's layout far uses card 3, but the recording has 2 card(s)"


@needs_recording
def test_a_recording_without_host_facts_is_refused(tmp_path):
    lines = [raw for raw in raw_lines(TWO_CARD) if b'"note": "host"' not in raw]
    path = write(tmp_path, lines)
    assert refused(path) == (f"recording {path} holds no host facts (no 'host' note): not a recording certify "
                             f"can replay")


@needs_recording
def test_show_warns_at_the_top_about_a_truncated_recording(tmp_path):
    lines = raw_lines(TWO_CARD)
    path = write(tmp_path, lines[:600])
    shown = []
    show_transcript(path, out=shown.append)
    assert shown[0] == (f"WARNING: {path} is truncated: no 'end' line after line 600: the recording was cut "
                        f"short, and certify --replay refuses it")
    whole = []
    show_transcript(TWO_CARD, out=whole.append)
    assert not any("WARNING" in line for line in whole)
