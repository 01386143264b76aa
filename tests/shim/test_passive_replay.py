"""rmpeer.shim.passive_replay: a full run's recording served to a passive run. Its expected
values are read from the recording's own lines here, not through the replay."""

import gzip
import json

import pytest

from rmpeer.errors import ReplayMismatch
from rmpeer.paths import transcripts_dir
from rmpeer.shim.passive_replay import PassiveReplay

pytestmark = pytest.mark.offline
FULL = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"


def recorded(label: str):
    """The value of the first observation `label` in the recording's runtime:open stretch."""
    stretch = None
    for raw in gzip.open(FULL, "rt"):
        d = json.loads(raw)
        if d.get("note") == "segment":
            stretch = d["key"]
        elif stretch == "runtime:open" and d.get("op") == "observe" and d["label"] == label:
            return d["extra"]["value"]
    raise AssertionError(f"{label} is not in the recording's runtime:open stretch")


def opened() -> PassiveReplay:
    shim = PassiveReplay(FULL)
    shim.segment("runtime:open")
    return shim


def never(*_):
    raise AssertionError("a replay never reads the host")


def test_the_passive_clocks_are_served_by_the_recorded_idle_ones():
    assert opened().observe("host:clocks:passive", never) == recorded("host:clocks:idle")


def test_the_calls_a_passive_run_does_not_make_are_passed_over():
    shim = opened()
    assert shim.observe("host:clocks:boosted", never) == recorded("host:clocks:boosted")   # the boost's, skipped to
    assert shim.observe("host:proc-gpus", never) is None      # behind it now: not in what is left of the stretch


def test_an_observation_the_stretch_lacks_is_not_recorded():
    # a reading of a family rmpeer declares (host:clocks), at a moment the stretch has not
    assert opened().observe("host:clocks:no-such-moment", never) is None


def test_a_call_the_stretch_lacks_is_a_mismatch():
    with pytest.raises(ReplayMismatch, match="the passive run made a ioctl call"):
        opened()._next("ioctl", "health:ecc:card7")      # declared, but not in the stretch


def test_a_call_of_a_family_rmpeer_never_declared_is_refused_before_the_recording_is_read():
    """The shims refuse a step of a family no module declares (rmpeer.model.steps): rmpeer's
    own bug, never taken for a mismatch of the host's recording."""
    from rmpeer.model.steps import UndeclaredStep

    with pytest.raises(UndeclaredStep, match="no-such-call"):
        opened()._next("ioctl", "no-such-call")
