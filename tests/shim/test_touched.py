"""Nothing happens on the cards a run did not select (issue 25, part 3), shown on recordings.

What is tested how (no GPU here):
- rmpeer.shim.touched walks every RM call of a recording to the cards it touches; on the
  committed 2-card recording it finds exactly the recorded cards (their minors, device
  instances and gpuIds come from the recording's host note, not from the walker), and, asked
  as if only card 0 were selected, it names card 1's calls: the check can fail.
- Discovery with a selection, replayed against real recorded bytes: taking every card makes
  the recorded calls exactly; taking card 1 of the 2-card recording makes different calls
  (the first is open(/dev/nvidia1) where the recording opened /dev/nvidia0), so a subset run
  can never be served from a recording of both cards, and card 0 is never opened.
- A live subset run's own recording is walked by the evidence part tools/evidence/cards.sh.
"""

import pytest

from rmpeer.paths import transcripts_dir
from rmpeer.machine.selection import Chooser, request_from
from rmpeer.shim.replay import ReplayMismatch, ReplayShim
from rmpeer.shim.touched import walk_transcript

pytestmark = pytest.mark.offline
TWO = transcripts_dir() / "h200x2-20261130T162924Z.jsonl.gz"
ONE = transcripts_dir() / "h200x1-20261130T003119Z.jsonl.gz"


def _ids(facts, which):
    cards = [c for c in facts["cards"] if c["index"] in which]
    return [c["minor"] for c in cards], [c["device_instance"] for c in cards], [c["gpu_id"] for c in cards]


@pytest.mark.parametrize("path", [TWO, ONE], ids=["h200x2", "h200x1"])
def test_a_whole_host_run_touches_exactly_its_cards(path):
    touches, facts = walk_transcript(path)
    every = {c["index"] for c in facts["cards"]}
    minors, devices, gpu_ids = _ids(facts, every)
    assert touches.minors == set(minors) and touches.devices == set(devices) and touches.gpu_ids == set(gpu_ids)
    assert touches.foreign(minors, devices, gpu_ids) == []


def test_the_walk_names_every_call_on_a_card_outside_the_selection():
    touches, facts = walk_transcript(TWO)
    minors, devices, gpu_ids = _ids(facts, {0})
    foreign = touches.foreign(minors, devices, gpu_ids)
    one = next(c for c in facts["cards"] if c["index"] == 1)
    assert f"opened /dev/nvidia{one['minor']}" in foreign
    assert any(f.startswith(f"device instance {one['device_instance']}:") for f in foreign)
    assert f"gpuId {one['gpu_id']:#x} named" in foreign
    # the calls it names on card 1 include the copies' channels and the boost
    labels = touches.uses[one["device_instance"]]
    assert any("perf:boost" in x for x in labels) and any(":gpfifo" in x for x in labels)


def _discover(path, names):
    from rmpeer.rm.open import Runtime

    shim = ReplayShim(str(path))
    shim.segment("runtime:open")
    proc = _recorded_proc_gpus(path)      # what the recorded host's /proc said, not this machine's
    runtime = Runtime(shim, select=Chooser(request=request_from(names, environ={}), read_proc=lambda: proc))
    return runtime, runtime.open


def test_discovery_with_every_card_selected_makes_the_recorded_calls():
    runtime, open_ = _discover(TWO, "0,1")
    open_()
    facts = runtime.facts
    assert facts.selection["cards"] == [0, 1] and [c.index for c in facts.cards] == [0, 1]
    assert facts.selection["uuids"] == [c.uuid for c in facts.cards]


def test_discovery_of_card_1_alone_never_opens_card_0():
    """The calls of a card-1 run differ from the 2-card recording's from the first card call
    on: discovery opens /dev/nvidia1 first (the recording: /dev/nvidia0)."""
    runtime, open_ = _discover(TWO, "1")
    with pytest.raises(ReplayMismatch, match=r"open\(/dev/nvidia1\) \(open:card0\)"):
        open_()


def test_the_check_fails_when_discovery_opens_every_card(monkeypatch):
    """Mutation: discovery that ignores the selection replays card 0's calls as recorded, so
    the test above would no longer see a run of card 1 diverge."""
    from source_mutation import mutated

    import rmpeer.rm.open as runtime_module

    broken = mutated("rmpeer.rm.host", "infos, pcis = [infos[i] for i in chosen.cards], [pcis[i] for i in chosen.cards]",
                     "pass")
    from rmpeer.errors import ConfigError

    monkeypatch.setattr(runtime_module, "Host", broken.Host)
    runtime, open_ = _discover(TWO, "1")
    # no ReplayMismatch: card 0 was opened and described as in the 2-card recording; only the
    # second guard (RM's UUID of the card opened against the one chosen) stops it, afterwards
    with pytest.raises(ConfigError, match="cannot be told apart safely"):
        open_()
    assert [c.minor for c in runtime.facts.cards] == [0, 1]


def _recorded_proc_gpus(path):
    from rmpeer.shim.records import read_transcript

    _, lines = read_transcript(path)
    return next(x for x in lines if getattr(x, "label", "") == "host:proc-gpus").extra["value"]


def _discover_live_branch(path, names, proc):
    """Discovery as a live run makes it (UUIDs through /proc), replayed: the shim answers RM's
    calls from the recording and /proc says what the recorded host's /proc said."""
    from rmpeer.rm.open import Runtime

    shim = ReplayShim(str(path))
    shim.segment("runtime:open")
    return Runtime(shim, select=Chooser(request=request_from(names, environ={}), read_proc=lambda: proc))


def test_uuids_are_resolved_through_the_kernel_modules_bus_list(monkeypatch):
    proc = _recorded_proc_gpus(TWO)
    uuids = [g["uuid"] for g in proc]
    runtime = _discover_live_branch(TWO, f"{uuids[1][:8]},{uuids[0][:8]}", proc)
    runtime.open()
    assert runtime.facts.selection["uuids"] == [c.uuid for c in runtime.facts.cards] == uuids
    runtime = _discover_live_branch(TWO, uuids[1][:8], proc)
    with pytest.raises(ReplayMismatch, match=r"open\(/dev/nvidia1\)"):     # the second card's node, first
        runtime.open()


def test_a_card_whose_uuid_rm_and_proc_disagree_on_stops_the_run(monkeypatch):
    """Derived from the recording's /proc observation, one thing changed: the two buses' UUIDs
    swapped, so /proc no longer says what RM says of the opened cards."""
    from rmpeer.errors import ConfigError

    proc = _recorded_proc_gpus(TWO)
    swapped = [dict(proc[0], uuid=proc[1]["uuid"]), dict(proc[1], uuid=proc[0]["uuid"])]
    runtime = _discover_live_branch(TWO, "0,1", swapped)
    with pytest.raises(ConfigError, match="cannot be told apart safely"):
        runtime.open()
