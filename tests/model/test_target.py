"""rmpeer.model.target: a target and its cases, as the run names them. The expected label
and card count are read from the recording's own header here."""

import gzip
import json

import pytest

from rmpeer.model.target import Case, Target
from rmpeer.paths import transcripts_dir
from rmpeer.run.targets import replay_target
from rmpeer.tables.layouts import LayoutMatrix

pytestmark = pytest.mark.offline
TWO = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"


def test_a_recordings_target_is_named_by_its_header():
    header = json.loads(gzip.open(TWO, "rt").readline())["header"]
    target = replay_target(str(TWO))
    assert target == Target("replay", f"replay:{header['label']}", header["cards"], str(TWO))
    assert target.is_replay and not Target("live", "h200x2", 2).is_replay


def test_a_case_is_named_by_its_target_and_layout():
    layout = LayoutMatrix().resolve("one-per-card", 2)
    assert Case(Target("live", "h200x2", 2), layout, 64 << 20).id == "h200x2/one-per-card"
