"""rmpeer.shim.recording: a recording read once, as the replay's spec takes it. The expected
values are read from the file here, line by line, not through the shim."""

from __future__ import annotations

import gzip
import json

import pytest

from rmpeer.errors import TranscriptError
from rmpeer.run.targets import committed_transcripts
from rmpeer.shim.recording import read_recording


def lines_of(path) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("path", committed_transcripts()[:3], ids=lambda p: p.rsplit("/", 1)[-1])
def test_a_recording_holds_its_header_and_its_host_facts(path):
    lines = lines_of(path)
    header = lines[0]["header"]
    host = next(line for line in lines[1:] if line.get("note") == "host")
    rec = read_recording(path)
    assert (rec.path, rec.label, rec.cards) == (path, header["label"], header["cards"])
    assert rec.header == header and rec.run == header["run"]
    assert rec.host_facts == host["facts"] and len(rec.host_facts["cards"]) == header["cards"]


def test_a_recording_whose_header_lies_about_its_cards_is_refused(tmp_path):
    lines = lines_of(committed_transcripts()[0])
    lines[0]["header"]["cards"] += 1
    bad = tmp_path / "lies.jsonl.gz"
    with gzip.open(bad, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    with pytest.raises(TranscriptError, match="cards"):
        read_recording(bad)
