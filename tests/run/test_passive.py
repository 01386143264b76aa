"""The passive tier: replays of the committed recordings (CI), the state it compares with
the last run, the kernel log reader, and what it does when something cannot be read."""

from __future__ import annotations

import gzip
import json

import pytest

from rmpeer.run import passive
from rmpeer.errors import ReplayMismatch
from rmpeer.run.execute import run_passive
from rmpeer.run.passive import xids_since
from rmpeer.shim.passive_replay import PassiveReplay
from rmpeer.model.result import CERTIFIED, DEGRADED, INCOMPLETE, NOT_CERTIFIED, RunResult
from rmpeer.run.targets import committed_transcripts, replay_target

pytestmark = pytest.mark.offline
TWO = next(p for p in committed_transcripts() if "h200x2-20261130T003650Z" in p)
# What a passive run may ask RM for: discovery, P-state and clocks, NVLink readings, and the
# client's own open and free. Nothing that allocates memory, makes a channel or boosts.
# The health facts (rm.health) too: controls, and one NV_CONFIDENTIAL_COMPUTE object, freed at once.
PASSIVE_LABELS = ("driver:version", "alloc:client", "host:", "register-fd:", "perf:pstate", "perf:clock-levels",
                  "nvlink:", "health:", "free:client")


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state.json"


@pytest.mark.parametrize("recording", committed_transcripts(), ids=lambda p: p.rsplit("/", 1)[-1])
def test_passive_replay_of_each_recording(recording, state):
    result = run_passive(replay_target(recording), state_path=state)
    assert result.verdict == CERTIFIED, result.reasons
    assert result.tier == "passive" and result.target["kind"] == "replay"
    header = json.loads(gzip.open(recording, "rt").readline())["header"]
    assert len(result.host["cards"]) == header["cards"]
    assert set(result.links) == set(range(header["cards"]))
    assert all(r["pstate"] for r in result.clocks["passive"].values())
    assert {c.id: c.outcome for c in result.checks} == {
        "passive/cards": "passed", "passive/p2p-caps": "passed", "passive/nvlink": "passed",
        "passive/clocks": "passed", "passive/xids": "skipped", "passive/gpu-processes": "skipped",
        # recordings made before rmpeer read the health facts hold none of their calls
        "passive/health": "passed" if b'"label":"health:' in gzip.open(recording).read() else "skipped"}
    assert RunResult.from_dict(json.loads(json.dumps(result.to_dict()))).verdict == CERTIFIED


def test_passive_asks_rm_for_facts_only(state, monkeypatch):
    """Every call the passive run makes, served from a full run's recording: no memory, no
    channel, no boost, no mapping."""
    served = []
    original = PassiveReplay._next

    def spy(self, op, label):
        rec = original(self, op, label)
        served.append((op, label))
        return rec

    monkeypatch.setattr(PassiveReplay, "_next", spy)
    run_passive(replay_target(TWO), state_path=state)
    assert served and {op for op, _ in served} <= {"open", "close", "ioctl", "observe"}
    ioctls = [label for op, label in served if op == "ioctl"]
    assert [label for label in ioctls if not label.startswith(PASSIVE_LABELS)] == []
    assert "nvlink:counters" in ioctls and "perf:pstate" in ioctls


def test_a_call_the_recording_lacks_is_a_replay_mismatch(state, monkeypatch):
    from rmpeer.rm import perf

    real = perf.read_clocks

    def with_boost(rm, subdevice):     # a passive run that would raise the clocks
        rm.control(subdevice, perf.BOOST_CONTROL, check=False, label="perf:boost:sneaky", flags=0, duration=0)
        return real(rm, subdevice)

    monkeypatch.setattr("rmpeer.run.fitness.read_clocks", with_boost)
    with pytest.raises(ReplayMismatch, match="perf:boost:sneaky"):
        run_passive(replay_target(TWO), state_path=state)


def test_the_second_run_compares_with_the_first(state):
    first = run_passive(replay_target(TWO), state_path=state)
    assert any(f.check == "state" and "baseline" in f.found for f in first.findings)
    saved = json.loads(state.read_text())["runs"][f"replay:{TWO.rsplit('/', 1)[-1]}"]
    assert [c["uuid"] for c in saved["cards"]] == [c["uuid"] for c in first.host["cards"]]
    second = run_passive(replay_target(TWO), state_path=state)
    assert second.verdict == CERTIFIED and not any(f.check == "state" for f in second.findings)


def test_a_card_gone_since_the_last_run_fails(state):
    run_passive(replay_target(TWO), state_path=state)
    data = json.loads(state.read_text())
    run = next(iter(data["runs"].values()))
    run["cards"].append({"index": 2, "pci": "0000:00:08.0", "uuid": "GPU-gone"})
    state.write_text(json.dumps(data))
    result = run_passive(replay_target(TWO), state_path=state)
    assert result.verdict == NOT_CERTIFIED
    assert result.reasons == ["cards: card 2 (0000:00:08.0): expected GPU-gone, present at the last run "
                              f"({run['at']}), found it is gone"]


def test_an_nvlink_counter_grown_since_the_last_run_degrades(state):
    run_passive(replay_target(TWO), state_path=state)
    data = json.loads(state.read_text())
    run = next(iter(data["runs"].values()))
    uuid = next(iter(run["links"]))
    now = run["links"][uuid]["links"][3]["counters"]["replay_tx"]
    run["links"][uuid]["links"][3]["counters"]["replay_tx"] = now - 4    # it was lower at the last run
    state.write_text(json.dumps(data))
    result = run_passive(replay_target(TWO), state_path=state)
    assert result.verdict == DEGRADED
    assert result.reasons == [f"nvlink-errors: card 0: expected no error counter grown since the last run, "
                              f"found card 0 link 3: replay_tx {now - 4} -> {now}"]


def test_a_garbled_state_file_is_incomplete(state):
    state.write_text("{ not json")
    result = run_passive(replay_target(TWO), state_path=state)
    assert result.verdict == INCOMPLETE
    assert result.reasons[0].startswith(f"state: host: expected the last run's state, found {state}")


def test_a_topology_asked_for_that_the_host_is_not_fails(state):
    result = run_passive(replay_target(TWO), state_path=state, topology_name="hgx-h200x8-nvswitch")
    assert result.verdict == NOT_CERTIFIED
    assert "topology: host: expected the topology hgx-h200x8-nvswitch, found 2 card(s), expected 8" in result.reasons


def refused(tmp_path, label: str) -> str:
    """The 2-card recording with RM's answer to the first `label` call changed to a refusal."""
    lines = gzip.open(TWO, "rt").read().splitlines()
    i = next(n for n, line in enumerate(lines) if f'"label":"{label}"' in line.replace(" ", ""))
    rec = json.loads(lines[i])
    rec.update(status=0x56, status_name="NV_ERR_NOT_SUPPORTED", status_text="Call not supported")
    lines[i] = json.dumps(rec)
    broken = tmp_path / "refused.jsonl.gz"
    with gzip.open(broken, "wt") as f:
        f.write("\n".join(lines) + "\n")
    return str(broken)


def test_rm_refusing_the_counters_is_incomplete(tmp_path, state):
    result = run_passive(replay_target(refused(tmp_path, "nvlink:counters")), state_path=state)
    assert result.verdict == INCOMPLETE
    assert result.reasons == ["nvlink-errors: card 0: expected readable error counters, found "
                              "NV2080_CTRL_CMD_NVLINK_GET_COUNTERS: NV_ERR_NOT_SUPPORTED"]


def test_rm_refusing_a_discovery_control_is_incomplete(tmp_path, state):
    result = run_passive(replay_target(refused(tmp_path, "host:name")), state_path=state)
    assert result.verdict == INCOMPLETE and result.checks[0].outcome == "error"
    (reason,) = result.reasons
    assert reason.startswith("rm: host: expected the host's facts through RM, found RM refused host:name: "
                             "NV_ERR_NOT_SUPPORTED (0x56: Call not supported); handles: hClient=")
    # the run stops here and the reason is all it leaves: it names the object RM refused
    # (card 0's probe subdevice) and the control, as the deeper tiers' RM failure lines do
    from rmpeer.tables.handles import PROBE_SUBDEVICE_BASE

    assert f" hObject={PROBE_SUBDEVICE_BASE:#x} cmd=NV2080_CTRL_CMD_GPU_GET_NAME_STRING (0x" in reason
    assert not state.exists()      # nothing learnt: the last run's state stays as it was


# -- the kernel log since the last run -----------------------------------------------------

def kmsg_file(tmp_path, records):
    """A file in /dev/kmsg's record format ('prio,seq,usec,flags;text')."""
    path = tmp_path / "kmsg"
    path.write_bytes(b"".join(f"4,{seq},{seq * 1000},-;{text}\n".encode() for seq, text in records))
    return str(path)


XID = "NVRM: Xid (PCI:0000:00:07): 79, pid=1, GPU has fallen off the bus."
BOOT = "3f1e0c5a-0000-4000-8000-000000000001"


@pytest.fixture
def boot(tmp_path):
    path = tmp_path / "boot_id"
    path.write_text(BOOT + "\n")
    return str(path)


def test_xids_since_the_last_run_only(tmp_path, boot):
    kmsg = kmsg_file(tmp_path, [(10, XID), (11, "eth0: link up"), (12, XID.replace("79", "48"))])
    got = xids_since({"boot_id": BOOT, "kmsg_seq": 10}, kmsg, boot)
    assert got["readable"] and got["complete"] and got["last_seq"] == 12
    assert [(x["seq"], x["xid"], x["pci"]) for x in got["xids"]] == [(12, 48, "0000:00:07")]


def test_after_a_reboot_every_xid_in_the_ring_counts(tmp_path, boot):
    kmsg = kmsg_file(tmp_path, [(1, XID), (2, "x")])
    got = xids_since({"boot_id": "another-boot", "kmsg_seq": 500}, kmsg, boot)
    assert [x["seq"] for x in got["xids"]] == [1] and got["since"].startswith("boot")


def test_a_ring_that_rotated_past_the_last_run_is_incomplete(tmp_path, boot):
    kmsg = kmsg_file(tmp_path, [(40, "a"), (41, "b")])
    got = xids_since({"boot_id": BOOT, "kmsg_seq": 30}, kmsg, boot)
    assert got["complete"] is False and "records 31..39" in got["reason"]


def test_an_unreadable_kernel_log_says_so(tmp_path, boot):
    got = xids_since(None, str(tmp_path / "no-kmsg"), boot)
    assert got == {"readable": False, "source": "kmsg", "reason": f"{tmp_path / 'no-kmsg'}: No such file or directory",
                   "xids": []}


# Mutation tests: the comparison with the last run, broken on purpose, lets a problem through.
def _lowered_counter(state):
    data = json.loads(state.read_text())
    run = next(iter(data["runs"].values()))
    uuid = next(iter(run["links"]))
    run["links"][uuid]["links"][0]["counters"]["crc"] -= 1
    state.write_text(json.dumps(data))


def _card_gone(state):
    data = json.loads(state.read_text())
    next(iter(data["runs"].values()))["cards"].append({"index": 2, "pci": "0000:00:08.0", "uuid": "GPU-gone"})
    state.write_text(json.dumps(data))


@pytest.mark.parametrize("change, verdict, target, broken", [
    (_lowered_counter, DEGRADED, "rmpeer.judge.verdict.compare_counters", lambda before, after: []),
    (_card_gone, NOT_CERTIFIED, "rmpeer.judge.passive._card_findings", lambda facts, proc, last: []),
])
def test_mutation_a_broken_comparison_passes_a_bad_host(state, monkeypatch, change, verdict, target, broken):
    run_passive(replay_target(TWO), state_path=state)
    change(state)
    assert run_passive(replay_target(TWO), state_path=state, save=False).verdict == verdict
    monkeypatch.setattr(target, broken)
    assert run_passive(replay_target(TWO), state_path=state, save=False).verdict == CERTIFIED


def test_the_passive_result_carries_a_fingerprint_and_valid_until(state):
    from datetime import datetime, timedelta

    result = run_passive(replay_target(TWO), state_path=state, valid_for=timedelta(hours=2))
    fp = result.fingerprint
    assert fp["source"] == "recording" and fp["driver"] == result.host["driver_version"] == "580.159.04"
    assert [c["uuid"] for c in fp["cards"]] == [c["uuid"] for c in result.host["cards"]]
    assert fp["nvlinks"] == {c["uuid"]: 18 for c in result.host["cards"]}     # h200x2-nv18: 18 per card
    started = datetime.fromisoformat(result.started.replace("Z", "+00:00"))
    assert datetime.fromisoformat(result.valid_until.replace("Z", "+00:00")) - started == timedelta(hours=2)


def test_a_deeper_run_moves_the_kernel_log_mark_past_its_own_xids(tmp_path, state, boot):
    from rmpeer.model.target import Target

    live = Target("live", "h200x2", 2)
    kmsg = kmsg_file(tmp_path, [(7, XID), (8, "done")])
    assert passive.remember_kmsg_position(live, state, kmsg=kmsg, boot_path=boot) is None
    assert json.loads(state.read_text())["runs"]["live"] == {"boot_id": BOOT, "kmsg_seq": 8}
    assert xids_since(json.loads(state.read_text())["runs"]["live"], kmsg, boot)["xids"] == []
    assert passive.remember_kmsg_position(replay_target(TWO), state) is None     # a replay: nothing to mark


def test_the_clocks_reader_starts_before_rms_open_and_is_always_closed(monkeypatch):
    """A live passive run starts its clocks' reader (NVML's start, on a thread of its own)
    before RM's open, so that the start runs beside the open and the facts' reads, and ends
    NVML whatever happens. Here the run is live but its shim serves a recording, which takes
    no reading: the reader is closed unread."""
    from rmpeer.model.target import Target
    from rmpeer.shim.passive_replay import PassiveReplay

    events, readers, real_start = [], [], passive.start_clocks

    def start():
        events.append("clocks' reader started")
        readers.append(real_start())
        return readers[-1]
    monkeypatch.setattr(passive, "start_clocks", start)
    monkeypatch.setattr(passive, "_shim", lambda target, record, abi: PassiveReplay(TWO))
    real_open = passive.Runtime.open
    monkeypatch.setattr(passive.Runtime, "open", lambda self: events.append("RM opened") or real_open(self))
    read = passive.read_passive(Target(kind="live", label="live", cards=2), None)
    assert read["problems"] == [] and read["clocks"]
    assert events == ["clocks' reader started", "RM opened"]
    assert readers[0].closed, "NVML was left open in the process"


def test_a_replayed_passive_run_starts_no_clocks_reader(monkeypatch, state):
    monkeypatch.setattr(passive, "start_clocks", lambda: pytest.fail("a replay started a clocks' reader"))
    assert run_passive(replay_target(TWO), state_path=state).verdict == CERTIFIED
