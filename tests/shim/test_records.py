"""rmpeer.shim.records: a recording's lines are input. A number longer than Python converts
(4300 digits) on a call line was an AttributeError in the parser's own message (exit 5) for
certify --replay and rmpeer show, where any other line that is not JSON is exit 2 naming it (a
hostile-input hunt). The recording is derived from the 1 x H200 one-layout one: one line of
digits inserted after its 50th line."""

import gzip
import os
import subprocess
import sys

import pytest

from rmpeer.errors import TranscriptError
from rmpeer.paths import transcripts_dir
from rmpeer.shim.records import read_transcript

pytestmark = pytest.mark.offline
ONE = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"


@pytest.fixture
def long_number(tmp_path):
    lines = gzip.decompress(ONE.read_bytes()).decode().splitlines(keepends=True)
    lines.insert(50, '{"seq": ' + "9" * 5000 + "}\n")
    path = tmp_path / "long-number.jsonl.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    return path


def test_a_number_past_pythons_reach_is_a_recording_error_naming_its_line(long_number):
    with pytest.raises(TranscriptError, match=r"line 51: a number longer than any rmpeer writes"):
        read_transcript(long_number)


@pytest.mark.parametrize("command", [["certify", "--replay"], ["show"]], ids=["certify", "show"])
def test_certify_and_show_refuse_it_in_one_line(tmp_path, long_number, command):
    extra = ["--output", str(tmp_path / "out")] if command[0] == "certify" else []
    done = subprocess.run([sys.executable, "-m", "rmpeer", *command, str(long_number), *extra], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, RMPEER_STATE_DIR=str(tmp_path / "state")))
    assert done.returncode == 2, done.stdout[-800:] + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 51: a number longer than any rmpeer writes" in lines[0], done.stderr


def _first(lines, op):
    return next(i for i, line in enumerate(lines) if f'"op":"{op}"' in line.replace(" ", ""))


# (op, the extra field changed, its value): the replay printed each with a hex format (an
# unexpected error, exit 5) or compared it as a number it is not
WRONG_EXTRA = [("mem.write", "offset", "x"), ("mem.wait", "want", None), ("mem.fill", "length", [1]),
               ("mem.view", "offset", -1), ("mmap", "length", "64MiB"), ("mem.wait", "seen", 1 << 64),
               ("mem.wait", "unless", "x")]


@pytest.mark.parametrize("op, field, value", WRONG_EXTRA, ids=[f"{o}-{f}-{v!r}"[:40] for o, f, v in WRONG_EXTRA])
def test_a_memory_calls_extra_of_another_kind_is_refused_naming_the_field(tmp_path, op, field, value):
    import json

    lines = gzip.decompress(ONE.read_bytes()).decode().splitlines(keepends=True)
    at = _first(lines, op)
    rec = json.loads(lines[at])
    rec["extra"][field] = value
    lines[at] = json.dumps(rec) + "\n"
    path = tmp_path / f"{op}-{field}.jsonl.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    with pytest.raises(TranscriptError, match=rf"line {at + 1}: not a call record \(its extra {field}"):
        read_transcript(path)


@pytest.mark.parametrize("fields, refused", [
    ({"errno": 22}, "errno 22"),                                   # an escape that failed in the kernel
    ({"status": 0x56, "status_name": "NV_ERR_NOT_SUPPORTED"}, "NV_ERR_NOT_SUPPORTED"),
    ({"status": 0x1234}, "status 0x1234"),                         # a status nvstatus.yaml does not name
    ({"status": 0, "status_name": "NV_OK"}, None),
    ({}, None),                                                    # an escape without an RM status
])
def test_a_call_is_refused_by_its_errno_or_any_nonzero_status(fields, refused):
    """CallRecord.refused, the one reading every caller that goes on without an answer uses.
    A nonzero status is a refusal whether or not its name is known (0x56 is
    NV_ERR_NOT_SUPPORTED in nvstatuscodes.h)."""
    from rmpeer.shim.records import CallRecord

    assert CallRecord(1, "ioctl", **fields).refused == refused


# (the reply written in place of the first ioctl's, refused?): the replay reads request and
# reply with bytes.fromhex, so a field it would refuse, or read as other bytes, is refused here
HEX_REPLIES = [("zz", True), ("abc", True), ("0a0", True), ("٠١", True), ("0a 0b", True),
               ("", False), ("0A0b", False)]


@pytest.mark.parametrize("reply, refused", HEX_REPLIES, ids=[repr(r) for r, _ in HEX_REPLIES])
def test_a_request_or_reply_of_other_than_whole_hex_bytes_is_refused(tmp_path, reply, refused):
    import json

    lines = gzip.decompress(ONE.read_bytes()).decode().splitlines(keepends=True)
    at = _first(lines, "ioctl")
    rec = json.loads(lines[at])
    rec["reply"] = reply
    lines[at] = json.dumps(rec) + "\n"
    path = tmp_path / "reply.jsonl.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    if refused:
        with pytest.raises(TranscriptError, match=rf"line {at + 1}: not a call record \(its reply is not hex bytes"):
            read_transcript(path)
    else:
        read_transcript(path)
