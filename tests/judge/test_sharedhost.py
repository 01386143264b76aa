"""The checks a shared host would fool (rmpeer/judge/sharedhost.py): the no-pair precondition, the
teardown's own accounting, floors that name who used the card, --require-idle; and the
replay of the committed recordings (made on idle hosts) through the changed suites."""

import gzip
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.errors import EXIT_NOT_IDLE, NotIdleError
from rmpeer.judge.floors import judge_bandwidth
from rmpeer.model.processes import GpuProcess
from rmpeer.paths import pytest_args, pytest_env, suites_dir, transcripts_dir
from rmpeer.model.result import DEGRADE, INFO, Finding
from rmpeer.judge.sharedhost import (HELD, NOT_APPLICABLE, VIOLATED, judge_map_before_pair, judge_teardown,
                               name_other_users, require_idle, require_idle_of)

pytestmark = pytest.mark.offline
MiB = 1 << 20
CUDA = GpuProcess(4242, "python train.py", (0, 1), True, (0, 1))
SMI_ONE_CARD = GpuProcess(77, "monitor --card 1", (1,), True, (1,))
CLASS_NAMES = ("Error", "rmpeer.", "Exception")


def snapshot(*procs, unreadable=()):
    return {"processes": [p.as_dict() for p in procs], "unreadable": list(unreadable), "rm_errors": {}}


# ---- the no-pair precondition ----------------------------------------------------------------

def test_a_refused_map_is_the_precondition_held():
    assert judge_map_before_pair("NV_ERR_INVALID_STATE", (0, 1), None).kind == HELD


def test_a_map_that_succeeds_while_cuda_holds_both_cards_is_not_applicable_naming_it():
    got = judge_map_before_pair("NV_OK", (0, 1), snapshot(CUDA, SMI_ONE_CARD))
    assert got.kind == NOT_APPLICABLE
    assert "pid 4242 (python train.py) on cards 0, 1" in got.reason and "pid 77" not in got.reason
    assert "\n" not in got.reason and not any(c in got.reason for c in CLASS_NAMES)


@pytest.mark.parametrize("others, why", [
    (snapshot(), "no other process holds the GPUs"),
    (snapshot(SMI_ONE_CARD), "no other process holds the GPUs"),       # one card cannot pair two
    (snapshot(unreadable=[9, 10]), "could not be read"),
    (None, "does not say which other processes"),                      # a recording without the reading
])
def test_a_map_that_succeeds_with_no_one_to_blame_fails(others, why):
    got = judge_map_before_pair("NV_OK", (0, 1), others)
    assert got.kind == VIOLATED and why in got.reason and "expected NV_ERR_INVALID_STATE, found NV_OK" in got.reason


def test_any_other_answer_fails_saying_what_was_expected():
    got = judge_map_before_pair("NV_ERR_INVALID_ARGUMENT", (0, 1), snapshot(CUDA))
    assert got.kind == VIOLATED and "found NV_ERR_INVALID_ARGUMENT" in got.reason


def test_an_rm_client_holding_only_the_driver_can_pair_any_cards():
    rm_only = GpuProcess(5, "other-rm-tool", (), True, ())
    assert judge_map_before_pair("NV_OK", (0, 1), snapshot(rm_only)).kind == NOT_APPLICABLE


# ---- the teardown's accounting ------------------------------------------------------------------

SETUP = [(0xD0000000, 0xD0000001 + i, f"alloc:buffer:s{i}") for i in range(2)]


def own(before, during, after, cards=(0, 1)):
    return {ph: {"bytes": {c: v for c in cards}, "errors": {}}
            for ph, v in (("before", before), ("during", during), ("after", after))}


def host(before, during, after, cards=(0, 1)):
    return {ph: {c: v for c in cards} for ph, v in (("before", before), ("during", during), ("after", after))}


def real_teardown():
    """What a teardown that frees everything leaves: no objects, memory back where it was."""
    return [], own(100 * MiB, 164 * MiB, 100 * MiB), host(80_000 * MiB, 79_936 * MiB, 80_000 * MiB)


def teardown_that_frees_nothing():
    """The mutant: every object still allocated, memory still taken (host-wide, the other
    process's growth hides nothing: our own figure shows it)."""
    return SETUP, own(100 * MiB, 164 * MiB, 164 * MiB), host(80_000 * MiB, 79_936 * MiB, 79_936 * MiB)


@pytest.mark.parametrize("teardown, fails", [(real_teardown, False), (teardown_that_frees_nothing, True)])
@pytest.mark.parametrize("basis", ["own", "host"])
def test_a_teardown_that_frees_nothing_fails_on_either_basis(teardown, fails, basis):
    leftover, own_mem, host_mem = teardown()
    got = judge_teardown(refused=[], leftover=leftover if basis == "own" else [], cards=[0, 1],
                         own=own_mem if basis == "own" else None, host=host_mem, others=snapshot())
    assert got.ok is not fails, got.problems
    if fails:
        assert any("back to 100.0 MiB" in p or "back to 80000.0 MiB" in p for p in got.problems), got.problems


def test_own_accounting_ignores_what_another_process_does_to_free_memory():
    """Another process took 10 GiB between our readings: the host-wide figure moved, ours did not."""
    host_mem = host(80_000 * MiB, 79_936 * MiB, 70_000 * MiB)
    got = judge_teardown(refused=[], leftover=[], cards=[0, 1], own=own(100 * MiB, 164 * MiB, 100 * MiB),
                         host=host_mem, others=snapshot(CUDA))
    assert got.ok and got.basis.startswith("this process's video memory")
    assert not judge_teardown(refused=[], leftover=[], cards=[0, 1], own=None, host=host_mem,
                              others=snapshot()).ok     # the same figures, host-wide, on a host thought idle


def test_without_own_figures_a_shared_host_makes_the_memory_part_not_applicable():
    got = judge_teardown(refused=[], leftover=[], cards=[0, 1], own={"before": None, "during": None, "after": None},
                         host=host(80_000 * MiB, 79_936 * MiB, 70_000 * MiB), others=snapshot(CUDA))
    assert got.ok and "pid 4242 (python train.py)" in got.not_applicable
    left = judge_teardown(refused=[], leftover=SETUP, cards=[0, 1], own=None,
                          host=host(1, 0, 1), others=snapshot(CUDA))
    assert not left.ok and "2 never freed" in left.problems[0]   # objects still count


def test_refused_frees_and_missing_readings_fail():
    refused = [SimpleNamespace(label="free:alloc:p2p", status_name="NV_ERR_IN_USE")]
    got = judge_teardown(refused=refused, leftover=[], cards=[0], own=None, host=None, others=None)
    assert got.problems == ["expected RM to accept every free, found free:alloc:p2p: NV_ERR_IN_USE",
                            "expected video memory readings before, during and after the setup, found none"]


def test_free_memory_rm_did_not_answer_is_no_reading_and_never_a_verdict():
    """Without a usable per-process figure, the host-wide free memory decides; where RM did
    not answer it for a card (rm.host.Host.heap_free: no bytes, why), the memory part cannot
    tell and says why. Before: the unanswered reading was 0 bytes free, and the teardown
    failed "expected the setup's buffers to take video memory" (exit 1) on RM's refusal."""
    why = "NV2080_CTRL_CMD_FB_GET_INFO_V2: NV_ERR_NOT_SUPPORTED"
    readings = host(9, 8, 9)
    del readings["during"][1]
    got = judge_teardown(refused=[], leftover=[], cards=[0, 1], own=None, host=readings, others=snapshot(),
                         host_unread={1: why})
    assert got.ok and got.problems == [], got.problems
    assert f"card 1: {why}" in got.not_applicable
    left = judge_teardown(refused=[], leftover=SETUP, cards=[0, 1], own=None, host=readings, others=snapshot(),
                          host_unread={1: why})
    assert not left.ok and "2 never freed" in left.problems[0]    # objects still count


def test_a_per_process_figure_that_ignores_the_buffers_is_set_aside_not_trusted():
    """RM's figure did not move with the setup: it proves nothing, so the host-wide figures decide."""
    flat = own(5, 5, 5, cards=(0,))
    assert judge_teardown(refused=[], leftover=[], cards=[0], own=flat, host=host(9, 8, 9, cards=(0,)),
                          others=snapshot()).ok
    got = judge_teardown(refused=[], leftover=[], cards=[0], own=flat, host=host(9, 8, 8, cards=(0,)),
                         others=None)
    assert not got.ok and "did not count the setup's buffers on card 0" in got.basis
    shared = judge_teardown(refused=[], leftover=[], cards=[0], own=flat, host=host(9, 8, 1, cards=(0,)),
                            others=snapshot(CUDA))
    assert shared.ok and "did not grow with the setup's buffers" in shared.not_applicable


# ---- floors that name who used the card ------------------------------------------------------

def test_a_missed_floor_names_the_process_that_held_the_card():
    topology = SimpleNamespace(name="h200x2", floors=SimpleNamespace(size=256 * MiB, cross_card_gbps=300.0,
                                                                     same_card_gbps=1000.0, bidirectional_gbps=600.0,
                                                                     warn_band=0.05))
    figures = [{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 256 * MiB, "gbps": 120.0},
               {"src_card": 2, "dst_card": 3, "op": "read", "bytes": 256 * MiB, "gbps": 100.0}]
    findings = judge_bandwidth(topology, figures)
    named = name_other_users(findings, before=[SMI_ONE_CARD.as_dict()], after=[SMI_ONE_CARD, CUDA])
    by_pair = {f["pair"]: f["message"] for f in named if f["level"] == "FAIL"}
    assert by_pair["0->1"].endswith("while pid 77 (monitor --card 1) held card 1; "
                                    "pid 4242 (python train.py) held cards 0, 1")
    assert "while" not in by_pair["2->3"]
    assert findings[0]["message"].count("while") == 0          # the input is left as it was


def test_a_result_finding_gets_the_name_in_what_was_found():
    f = Finding("bandwidth-floor", "pair 1->0", "at least 300 GB/s", "120.0 GB/s", "DEGRADE")
    [named] = name_other_users([f], after=[SMI_ONE_CARD])
    assert named.found == "120.0 GB/s while pid 77 (monitor --card 1) held card 1"


# ---- --require-idle ---------------------------------------------------------------------------

def test_require_idle_refuses_naming_the_processes_in_one_line():
    with pytest.raises(NotIdleError) as err:
        require_idle([CUDA.as_dict(), SMI_ONE_CARD])
    text = str(err.value)
    assert err.value.exit_code == EXIT_NOT_IDLE == 7 and "\n" not in text
    assert "pid 4242 (python train.py) on cards 0, 1" in text and "pid 77 (monitor --card 1) on card 1" in text


def test_require_idle_passes_an_idle_host_and_refuses_one_it_cannot_see():
    assert require_idle([]) is None
    with pytest.raises(NotIdleError, match="2 processes whose open files"):
        require_idle([], unknown=[5, 6])


# One reading of the other processes (rm.snapshots' shape), as every tier hands it to the rule.
READ_OK = {"processes": [], "unreadable": [], "rm_errors": {}}


@pytest.mark.parametrize("reading, refused", [
    (READ_OK, None),
    # /proc hid two processes' files, but RM's own list names every holder: none
    (dict(READ_OK, unreadable=[5, 6]), None),
    # RM refused its list too: the two hidden processes may hold the GPUs
    (dict(READ_OK, unreadable=[5, 6], rm_errors={"0": "NV_ERR_INSUFFICIENT_PERMISSIONS"}), "2 processes whose open"),
    ({"processes": [], "unreadable": [], "error": "/proc could not be read: Permission denied"},
     r"could not tell.*Permission denied"),
    (None, "could not tell.*not recorded"),
    (dict(READ_OK, processes=[SMI_ONE_CARD.as_dict()]), "pid 77"),
], ids=["idle", "hidden-but-rm-listed", "hidden-and-rm-refused", "unread", "none", "busy"])
def test_require_idle_of_one_reading_proves_idle_or_refuses(reading, refused):
    if refused is None:
        assert require_idle_of(reading, None) is None
        return
    with pytest.raises(NotIdleError, match=refused):
        require_idle_of(reading, None)


# ---- the changed checks, replayed ------------------------------------------------------------

TWO_GPU = sorted(transcripts_dir().glob("h200x2-*.jsonl.gz"))
needs_transcript = pytest.mark.skipif(not TWO_GPU, reason="no two-GPU recording in fixtures/transcripts/")


def replay_suite(path, recording=None):
    """The suite replayed in a fresh process: against `recording`, else every committed one."""
    env = pytest_env(dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    cmd = [sys.executable, "-m", "pytest", str(suites_dir() / path), "-q", "-rA", "-p", "no:cacheprovider",
           *pytest_args(), *(["--rm-replay", str(recording)] if recording else [])]
    done = subprocess.run(cmd, cwd=suites_dir().parent, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


@needs_transcript
@pytest.mark.parametrize("suite", ["test_detect_no_pair.py", "test_lifecycle.py::test_teardown_frees_everything"])
def test_the_changed_checks_pass_and_do_not_skip_on_the_idle_hosts_recorded(suite):
    rc, out = replay_suite(suite)
    assert rc == 0 and " passed" in out and "SKIPPED" not in out and "skipped" not in out, out[-3000:]


@needs_transcript
def test_a_recorded_peer_map_that_succeeded_without_a_pair_fails_the_replay(tmp_path):
    """The recording doctored so that RM mapped before the pair existed, with no record of
    other processes: the check fails (never skips, never passes)."""
    nvos46 = DriverMatrix().abi_for_driver("580.95.05").struct("NVOS46_PARAMETERS")
    out, in_check, flipped = [], False, 0
    with gzip.open(TWO_GPU[0], "rt") as f:
        for raw in f:
            d = json.loads(raw)
            if d.get("note") == "segment":
                in_check = d["key"].startswith(("test:test_detect_no_pair", "fresh:test_peer_map_needs_a_pair"))
            elif in_check and d.get("label") == "dma-map-peer" and not flipped:
                reply = bytearray.fromhex(d["reply"])
                nvos46.set(reply, "status", 0)
                d["reply"], d["status"], d["status_name"] = reply.hex(), 0, "NV_OK"
                flipped += 1
            out.append(json.dumps(d))
    assert flipped == 1
    doctored = tmp_path / "shared.jsonl.gz"
    doctored.write_bytes(gzip.compress(("\n".join(out) + "\n").encode()))
    rc, text = replay_suite("test_detect_no_pair.py", doctored)
    assert rc == 1 and "1 failed" in text and "does not say which other processes" in text, text[-3000:]


def test_a_per_process_figure_that_missed_one_cards_buffers_is_not_trusted_for_any():
    """RM's per-process figure grew on card 0 and not on card 1: it did not count every buffer
    of the setup, so it cannot show card 1's teardown; the host-wide figures (no other process
    known) decide, and card 1's free memory did not come back."""
    mixed = {ph: {"bytes": {0: v, 1: 5 * MiB}, "errors": {}}
             for ph, v in (("before", 100 * MiB), ("during", 164 * MiB), ("after", 100 * MiB))}
    host_mem = {"before": {0: 80_000 * MiB, 1: 80_000 * MiB}, "during": {0: 79_936 * MiB, 1: 79_936 * MiB},
                "after": {0: 80_000 * MiB, 1: 79_936 * MiB}}
    got = judge_teardown(refused=[], leftover=[], cards=[0, 1], own=mixed, host=host_mem, others=snapshot())
    assert "did not count the setup's buffers on card 1" in got.basis
    assert [p.split(",")[0] for p in got.problems] == ["expected card 1's free video memory back to 80000.0 MiB after "
                                                       "teardown"]


def test_a_setup_that_took_no_video_memory_host_wide_fails():
    """Host-wide free memory unchanged during the setup (no other process known): the setup's
    buffers were not seen at all, so the teardown cannot be shown to return them."""
    got = judge_teardown(refused=[], leftover=[], cards=[0], own=None, host=host(9 * MiB, 9 * MiB, 9 * MiB, cards=(0,)),
                         others=snapshot())
    assert [p.split(",")[0] for p in got.problems] == ["expected the setup's buffers to take video memory on card 0"]


def test_a_process_on_another_card_leaves_the_host_wide_figure_judged():
    """A monitor holding card 1 only does not move card 0's free memory: a run of card 0 is
    still judged host-wide (and card 0 did not get its memory back)."""
    got = judge_teardown(refused=[], leftover=[], cards=[0], own=None, host=host(9 * MiB, 8 * MiB, 8 * MiB, cards=(0,)),
                         others=snapshot(SMI_ONE_CARD))
    assert got.not_applicable == "" and [p.split(",")[0] for p in got.problems] == [
        "expected card 0's free video memory back to 9.0 MiB after teardown"]


# ---- hunt6-b: the readings a judgement cannot use, and whom a finding or a map blames ----------

def test_a_per_process_reading_that_lacks_a_card_leaves_the_host_wide_figure_to_judge():
    """RM gave its per-process figure for card 0 but not card 1 (an error for 1): the figure is
    not complete, so the host-wide one decides (never a KeyError, never a pass on half of it)."""
    partial = {ph: {"bytes": {0: v}, "errors": {1: "NV_ERR_INSUFFICIENT_PERMISSIONS"}}
               for ph, v in (("before", 100 * MiB), ("during", 164 * MiB), ("after", 100 * MiB))}
    got = judge_teardown(refused=[], leftover=[], cards=[0, 1], own=partial,
                         host=host(80_000 * MiB, 79_936 * MiB, 80_000 * MiB), others=snapshot())
    assert got.ok and got.basis.startswith("the cards' free video memory (host-wide")
    shared = judge_teardown(refused=[], leftover=[], cards=[0, 1], own=partial,
                            host=host(80_000 * MiB, 79_936 * MiB, 70_000 * MiB), others=snapshot(CUDA))
    assert "card 1: NV_ERR_INSUFFICIENT_PERMISSIONS" in shared.not_applicable


def test_a_host_wide_reading_missing_one_phase_is_no_reading():
    """The free memory after teardown was not read: the teardown cannot be shown, so it fails
    (it does not raise, and it does not pass)."""
    partial = dict(host(9 * MiB, 8 * MiB, 9 * MiB, cards=(0,)), after=None)
    got = judge_teardown(refused=[], leftover=[], cards=[0], own=None, host=partial, others=snapshot())
    assert got.problems == ["expected video memory readings before, during and after the setup, found none"]


def test_more_free_memory_after_teardown_than_before_is_not_back_where_it_was():
    got = judge_teardown(refused=[], leftover=[], cards=[0], own=None, host=host(9 * MiB, 8 * MiB, 10 * MiB, cards=(0,)),
                         others=snapshot())
    assert [p.split(",")[0] for p in got.problems] == ["expected card 0's free video memory back to 9.0 MiB after teardown"]


def test_a_finding_dict_naming_its_cards_names_a_user_of_either_card():
    f = {"src_card": 0, "dst_card": 1, "level": "FAIL", "message": "120.0 GB/s"}
    [named] = name_other_users([f], after=[SMI_ONE_CARD])
    assert named["message"] == "120.0 GB/s while pid 77 (monitor --card 1) held card 1"


def test_a_driver_client_holding_another_cards_node_cannot_pair_these_cards():
    """Holding /dev/nvidiactl and the node of a card outside the pair (an other job's card) is a
    card node: only an RM client holding no card node at all reaches every card."""
    other_card = GpuProcess(6, "other job", (), True, (7,))
    got = judge_map_before_pair("NV_OK", (0, 1), snapshot(other_card))
    assert got.kind == VIOLATED and "no other process holds the GPUs" in got.reason


def test_require_idle_of_a_run_of_some_cards_ignores_another_jobs_card():
    """A run of card 1 of the 8-card board (tests/board_host.py): a process holding only card 0's
    node is another job's; one on card 1 is refused."""
    from board_host import HOST, subset_facts
    sel = subset_facts((1,)).selection
    other_job = {"pid": 10, "command": "other job", "cards": [], "minors": [HOST[0].minor], "driver": True}
    assert require_idle_of(dict(READ_OK, processes=[other_job]), sel) is None
    with pytest.raises(NotIdleError, match="pid 10"):
        require_idle_of(dict(READ_OK, processes=[other_job]), None)      # the whole host: counted


# ---- a busy card's clocks (issue 47, item 8) -----------------------------------------------------

def _boost_findings_of(idle_mhz: int, boosted_mhz: int) -> list:
    """The judge's own boost rule (rmpeer.judge.verdict.boost_findings) on card 0's readings."""
    from rmpeer.judge.verdict import boost_findings

    fitness = SimpleNamespace(clocks={"idle": {0: {"pstate": "P0", "graphics_mhz": idle_mhz}},
                                      "boosted": {0: {"pstate": "P0", "graphics_mhz": boosted_mhz}}},
                              boost=SimpleNamespace(failures={1: "NV_ERR_INSUFFICIENT_PERMISSIONS"}))
    return boost_findings(fitness)


def test_a_boost_below_a_busy_card_s_idle_sample_is_not_judged_and_names_the_process():
    """Another job (pid 4242, on cards 0 and 1) ran its matmul while the idle sample was taken
    at 1980 MHz; the boost then held 1755 MHz under both jobs' power draw. Not a fault of the
    card: a check that could not be made, naming the job; RM's refusal on card 1 stays DEGRADED,
    named."""
    findings = _boost_findings_of(1980, 1755)
    assert [(f.subject, f.severity) for f in findings] == [("card 1", DEGRADE), ("card 0", DEGRADE)]
    named = name_other_users(findings, after=[CUDA])
    by_card = {f.subject: f for f in named}
    assert by_card["card 0"].severity == INFO
    assert by_card["card 0"].found == ("not judged while pid 4242 (python train.py) held card 0: found 1755 MHz, "
                                       "expected a graphics clock of at least 1980 MHz after the boost")
    assert by_card["card 1"].severity == DEGRADE
    assert by_card["card 1"].found.endswith("while pid 4242 (python train.py) held card 1")


def test_a_boost_below_an_idle_card_s_sample_stays_degraded():
    """The same readings with nobody else on card 0 (the monitor holds card 1 only)."""
    findings = name_other_users(_boost_findings_of(1980, 1755), after=[SMI_ONE_CARD])
    card0 = next(f for f in findings if f.subject == "card 0")
    assert card0.severity == DEGRADE and "while" not in card0.found


def test_a_busy_card_s_unjudged_boost_is_listed_as_not_checked():
    from rmpeer.judge.unchecked import not_checked

    named = name_other_users(_boost_findings_of(1980, 1755), after=[CUDA])
    listed = not_checked(SimpleNamespace(findings=named, gpu_processes={}))
    assert [(x["check"], x["subject"]) for x in listed] == [("boost", "card 0")]
    assert "pid 4242 (python train.py)" in listed[0]["reason"]
