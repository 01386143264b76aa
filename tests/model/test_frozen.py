"""A RunResult is frozen once assembled (issue 44): every output renders the same value, so
no renderer can change what the next one renders. Expected behaviour comes from Python's own
dataclasses (FrozenInstanceError) and from the certificate a real replay writes."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import pytest

from rmpeer.model.result import FrozenError, RunResult
from rmpeer.paths import transcripts_dir
from rmpeer.run.execute import run_passive
from rmpeer.run.targets import replay_target

RECORDING = next(iter(sorted(transcripts_dir().glob("h200x2-*.jsonl.gz"))), None)
needs_recording = pytest.mark.skipif(RECORDING is None, reason="no committed h200x2 recording")


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The judged RunResult of a passive replay of a real 2 x H200 recording, by certify's path."""
    state = tmp_path_factory.mktemp("state") / "state.json"
    return run_passive(replay_target(str(RECORDING)), save=False, state_path=state)


WRITES = {
    "a field": lambda r: setattr(r, "verdict", "CERTIFIED"),
    "a list field": lambda r: r.findings.append(r.findings[0] if r.findings else None),
    "a list field, in place": lambda r: r.checks.__iadd__([]),
    "a list item": lambda r: r.reasons.__setitem__(0, "fine"),
    "a dict field": lambda r: r.host.__setitem__("driver_version", "999.99"),
    "a nested dict": lambda r: r.host["cards"][0].__setitem__("name", "NVIDIA B200"),
    "a nested dict, by update": lambda r: r.fingerprint.update(boot="another"),
    "a dict, by setdefault": lambda r: r.by_card.setdefault("cards", []),
    "a list, cleared": lambda r: r.checks.clear(),
}


@needs_recording
@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_an_assembled_result_refuses_every_write(judged, write):
    before = json.dumps(judged.to_dict(), sort_keys=True)
    with pytest.raises((dataclasses.FrozenInstanceError, FrozenError)):
        write(judged)
    assert json.dumps(judged.to_dict(), sort_keys=True) == before


@needs_recording
def test_a_result_read_back_is_frozen_too(judged):
    back = RunResult.from_dict(json.loads(json.dumps(judged.to_dict())))
    with pytest.raises(FrozenError):
        back.findings.append(None)
    assert json.dumps(back.to_dict()) == json.dumps(judged.to_dict())


@needs_recording
def test_a_copy_and_the_certificates_dict_are_the_callers_own(judged):
    """A deep copy, and to_dict's output, are plain lists and dicts: the way to change a value
    is to copy it (or dataclasses.replace the result)."""
    def plain(value) -> bool:
        if isinstance(value, dict):
            return type(value) is dict and all(plain(v) for v in value.values())
        if isinstance(value, list):
            return type(value) is list and all(plain(v) for v in value)
        return True

    assert plain(judged.to_dict())
    host = copy.deepcopy(judged.host)
    host["cards"][0]["name"] = "changed"
    assert plain(host) and judged.host["cards"][0]["name"] != "changed"
    changed = dataclasses.replace(judged, verdict="DEGRADED")
    assert (changed.verdict, judged.verdict) == ("DEGRADED", judged.verdict)
    with pytest.raises(FrozenError):
        changed.reasons.append("x")


@needs_recording
def test_a_pickled_result_comes_back_equal_and_frozen(judged):
    back = pickle.loads(pickle.dumps(judged))
    assert back.to_dict() == judged.to_dict()
    with pytest.raises(FrozenError):
        back.host["cards"].append({})
