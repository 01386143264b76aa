"""Tests that kill mutmut's survivors in rmpeer/judge/sharedhost.py (docs/mutation.md). Every
expected text is written out by hand from the inputs and the module's docstrings (the no-pair
precondition, the teardown's bases, the names of another card's users, --require-idle), never
the function under test's answer."""

from types import SimpleNamespace

import pytest

from rmpeer.errors import NotIdleError
from rmpeer.judge.sharedhost import (HELD, NOT_APPLICABLE, VIOLATED, Precondition, holders_of,
                                     judge_map_before_pair, judge_teardown, name_other_users, require_idle,
                                     require_idle_of, users_text)
from rmpeer.model.processes import GpuProcess
from rmpeer.model.result import DEGRADE, FAIL, INFO, Finding

pytestmark = pytest.mark.offline
MiB = 1 << 20
CUDA = GpuProcess(4242, "python train.py", (0, 1), True, (0, 1))
WIDE = GpuProcess(5, "wide", (0, 1, 2), True, (0, 1, 2))
ONE = GpuProcess(77, "monitor", (1,), True, (1,))
CTL = GpuProcess(9, "ctl", (), True, ())
CTL_NODE = GpuProcess(10, "ctl node", (), True, (3,))
NO_DRIVER = GpuProcess(11, "bare", (), False, ())
MAPPED = "RM mapped cards 0 and 1 peer to peer before this run made any NV50_P2P between them"


# ---- the no-pair precondition --------------------------------------------------------------

def test_the_three_outcomes_are_their_words():
    assert (HELD, NOT_APPLICABLE, VIOLATED) == ("held", "not-applicable", "violated")
    assert Precondition("held").reason == ""


def test_holders_are_those_on_both_cards_or_on_the_driver_alone():
    assert holders_of([CUDA, WIDE, ONE, CTL, CTL_NODE, NO_DRIVER], (0, 1)) == [CUDA, WIDE, CTL]
    assert holders_of([WIDE.as_dict(), ONE.as_dict()], (1, 2)) == [WIDE]
    assert holders_of([ONE], (1,)) == [ONE]


def test_a_refused_map_is_held_and_another_status_is_violated_in_words():
    assert judge_map_before_pair("NV_ERR_INVALID_STATE", (0, 1), None) == Precondition("held", "")
    assert judge_map_before_pair("NV_ERR_GENERIC", (0, 1), {"processes": [CUDA.as_dict()]}) == Precondition(
        "violated", "expected RM to refuse the map with NV_ERR_INVALID_STATE, found NV_ERR_GENERIC")


def test_a_map_without_a_recorded_snapshot_is_violated_saying_so():
    assert judge_map_before_pair("NV_OK", (0, 1), None) == Precondition(
        "violated", f"expected NV_ERR_INVALID_STATE, found NV_OK: {MAPPED}, and the recording does not say "
                    "which other processes held the GPUs")


def test_a_map_while_others_hold_the_cards_is_not_applicable_naming_each():
    snap = {"processes": [CUDA.as_dict(), ONE.as_dict(), CTL.as_dict()], "unreadable": [3]}
    assert judge_map_before_pair("NV_OK", (0, 1), snap) == Precondition(
        "not-applicable",
        f"not applicable on this host: {MAPPED}, because another process holds them (pid 4242 (python train.py) "
        "on cards 0, 1; pid 9 (ctl) on the driver); RM keeps one peer mapping per pair of GPUs for all processes "
        "(docs/peer-setup.md), so the refusal cannot be shown while it runs")


def test_a_map_with_no_holder_is_violated_counting_the_unreadable():
    assert judge_map_before_pair("NV_OK", (0, 1), {"processes": [ONE.as_dict()], "unreadable": [5, 6]}) == Precondition(
        "violated", f"expected NV_ERR_INVALID_STATE, found NV_OK: {MAPPED}, and no other process holds the GPUs "
                    "(the open files of 2 processes could not be read: run as root to see them)")
    plain = f"expected NV_ERR_INVALID_STATE, found NV_OK: {MAPPED}, and no other process holds the GPUs"
    assert judge_map_before_pair("NV_OK", (0, 1), {}) == Precondition("violated", plain)
    assert judge_map_before_pair("NV_OK", (0, 1), {"processes": [], "unreadable": None}) == Precondition(
        "violated", plain)
    assert judge_map_before_pair("NV_OK", (2, 3), {"unreadable": []}).reason == (
        "expected NV_ERR_INVALID_STATE, found NV_OK: RM mapped cards 2 and 3 peer to peer before this run made "
        "any NV50_P2P between them, and no other process holds the GPUs")


# ---- the teardown check --------------------------------------------------------------------

def own(before, during, after, errors=None):
    return {ph: {"bytes": dict(v), "errors": dict((errors or {}).get(ph, {}))}
            for ph, v in (("before", before), ("during", during), ("after", after))}


def test_refused_frees_and_six_leftover_labels_are_problems():
    refused = [SimpleNamespace(label="free 0x5", status_name="NV_ERR_INVALID_OBJECT")]
    leftover = [(1, 2, f"obj{i}") for i in range(7)]
    j = judge_teardown(refused=refused, leftover=leftover, cards=(0,),
                       own=own({0: MiB}, {0: 3 * MiB}, {0: MiB}))
    assert j.problems == ["expected RM to accept every free, found free 0x5: NV_ERR_INVALID_OBJECT",
                          "expected every object of the setup freed, found 7 never freed "
                          "(obj0, obj1, obj2, obj3, obj4, obj5)"]
    assert not j.ok and j.basis == "this process's video memory (RM, per process)" and j.not_applicable == ""


def test_own_figures_that_grew_judge_each_card_back_where_it_was():
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1),
                       own=own({0: 10 * MiB, 1: 10 * MiB}, {0: 74 * MiB, 1: 42 * MiB}, {0: 10 * MiB, 1: 23 * MiB // 2}),
                       others={"processes": [CUDA.as_dict()]}, host=None)
    assert j.basis == "this process's video memory (RM, per process)" and j.not_applicable == ""
    assert j.problems == ["expected this process's video memory on card 1 back to 10.0 MiB after teardown, "
                          "found 11.5 MiB (the setup took 32.0 MiB, teardown returned 30.5 MiB)"]


def test_own_figures_back_where_they_were_pass():
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1),
                       own=own({0: MiB, 1: MiB}, {0: 2 * MiB, 1: 2 * MiB}, {0: MiB, 1: MiB}))
    assert j.ok and j.problems == [] and j.basis == "this process's video memory (RM, per process)"


def test_an_own_figure_that_did_not_grow_is_set_aside_and_a_user_makes_it_not_applicable():
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1, 2),
                       own=own({0: MiB, 1: MiB, 2: MiB}, {0: 2 * MiB, 1: MiB, 2: MiB // 2}, {0: MiB, 1: MiB, 2: MiB}),
                       others={"processes": [ONE.as_dict()]})
    assert j.problems == [] and j.ok
    assert j.basis == "(RM's per-process video memory did not count the setup's buffers on card 1, 2)"
    assert j.not_applicable == (
        "the video memory teardown returned cannot be told apart on this host: RM gave no usable per-process "
        "figure (card 1: RM's per-process figure did not grow with the setup's buffers; card 2: RM's per-process "
        "figure did not grow with the setup's buffers) and free memory is host-wide while pid 77 (monitor) on card 1")


def test_unread_own_figures_are_named_sorted_by_card():
    o = own({0: MiB}, {0: 2 * MiB}, {0: MiB}, errors={"before": {2: "NV_ERR_B", 1: "NV_ERR_A"}})
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1, 2), own=o, others={"processes": [WIDE, ONE]})
    assert j.basis == "" and j.problems == []
    assert j.not_applicable == (
        "the video memory teardown returned cannot be told apart on this host: RM gave no usable per-process "
        "figure (card 1: NV_ERR_A; card 2: NV_ERR_B) and free memory is host-wide while pid 5 (wide) on cards "
        "0, 1, 2; pid 77 (monitor) on card 1")
    j = judge_teardown(refused=[], leftover=[], cards=(0,), own={"before": None}, others={"processes": [CUDA]})
    assert "per-process figure (not read) and free memory" in j.not_applicable


def test_without_figures_or_users_a_missing_host_reading_is_a_problem():
    none = ["expected video memory readings before, during and after the setup, found none"]
    assert judge_teardown(refused=[], leftover=[], cards=(0,)).problems == none
    host = {"before": {0: 3 * MiB}, "during": {0: MiB}}
    assert judge_teardown(refused=[], leftover=[], cards=(0,), host=host).problems == none
    j = judge_teardown(refused=[], leftover=[], cards=(0,), host=dict(host, after=None))
    assert j.problems == none and j.not_applicable == "" and j.basis == ""


def test_a_card_the_host_reading_lacks_is_not_applicable_naming_why_sorted():
    host = {"before": {0: MiB, 2: MiB}, "during": {0: MiB, 1: MiB}, "after": {0: MiB, 1: MiB, 2: MiB}}
    j = judge_teardown(refused=[], leftover=[], cards=(2, 1, 0), host=host, host_unread={1: "NV_ERR_GPU_IS_LOST"})
    assert j.problems == [] and j.basis == ""
    assert j.not_applicable == ("the video memory teardown returned cannot be told: RM gave no usable per-process "
                                "figure and did not answer the cards' free memory (card 1: NV_ERR_GPU_IS_LOST; "
                                "card 2: not read)")


def test_the_host_wide_figure_judges_each_card():
    host = {"before": {0: 100 * MiB, 1: 100 * MiB, 2: 100 * MiB},
            "during": {0: 100 * MiB, 1: 68 * MiB, 2: 60 * MiB},
            "after": {0: 100 * MiB, 1: 197 * MiB // 2, 2: 100 * MiB}}
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1, 2), host=host, others={"processes": [CTL.as_dict()]})
    assert j.not_applicable == ""
    assert j.basis == "the cards' free video memory (host-wide; no other process known to use the cards)"
    assert j.problems == [
        "expected the setup's buffers to take video memory on card 0, found 100.0 MiB free before and "
        "100.0 MiB during",
        "expected card 1's free video memory back to 100.0 MiB after teardown, found 98.5 MiB (the setup took "
        "32.0 MiB, teardown returned 30.5 MiB)"]
    more = dict(host, during={0: 101 * MiB, 1: 68 * MiB, 2: 60 * MiB})
    assert judge_teardown(refused=[], leftover=[], cards=(0,), host=more).problems == [
        "expected the setup's buffers to take video memory on card 0, found 100.0 MiB free before and "
        "101.0 MiB during"]


def test_a_set_aside_own_figure_is_said_after_the_host_wide_basis():
    host = {"before": {0: 9 * MiB, 1: 9 * MiB}, "during": {0: MiB, 1: MiB}, "after": {0: 9 * MiB, 1: 9 * MiB}}
    j = judge_teardown(refused=[], leftover=[], cards=(0, 1), host=host,
                       own=own({0: MiB, 1: MiB}, {0: 2 * MiB, 1: MiB}, {0: MiB, 1: MiB}))
    assert j.ok and j.not_applicable == ""
    assert j.basis == ("the cards' free video memory (host-wide; no other process known to use the cards) "
                       "(RM's per-process video memory did not count the setup's buffers on card 1)")


# ---- another card's users named ------------------------------------------------------------

def test_users_text_names_each_process_once_before_then_after():
    assert users_text({0, 1}) == ""
    assert users_text({0, 1}, before=[ONE.as_dict(), CTL], after=[ONE, CUDA, GpuProcess(3, "x", (2,))]) == (
        " while pid 77 (monitor) held card 1; pid 4242 (python train.py) held cards 0, 1")
    assert users_text({2}, after=[WIDE]) == " while pid 5 (wide) held card 2"


def finding(check, subject, expected="e", found="f", severity=DEGRADE, cause="c"):
    return Finding(check, subject, expected, found, severity, cause)


def test_a_floor_dict_names_the_users_of_its_cards():
    dicts = [{"src_card": "0", "dst_card": 2, "message": "low"}, {"src_card": 2, "pair": "1->3", "message": "m"},
             {"pair": "1 -> 2"}, {"pair": "read 2->3", "message": "no one"}, {"message": "none"}]
    assert name_other_users(dicts, before=[ONE], after=[CUDA]) == [
        {"src_card": "0", "dst_card": 2, "message": "low while pid 4242 (python train.py) held card 0"},
        {"src_card": 2, "pair": "1->3", "message": "m while pid 77 (monitor) held card 1; "
                                                    "pid 4242 (python train.py) held card 1"},
        {"pair": "1 -> 2", "message": " while pid 77 (monitor) held card 1; pid 4242 (python train.py) held card 1"},
        {"pair": "read 2->3", "message": "no one"}, {"message": "none"}]


def test_a_clock_rate_on_a_busy_card_is_not_judged_and_others_are_named():
    rate = finding("clocks", "card 1", expected="at least 1980 MHz", found="1755 MHz")
    boost = finding("boost", "card 12", expected="a graphics clock of at least 1980 MHz", found="1755 MHz")
    pstate = finding("clocks", "card 1", expected="P0", found="P8")
    info = finding("clocks", "card 1", expected="at least 1980 MHz", found="x", severity=INFO)
    link = finding("bandwidth-floor", "read 1->0", found="120.0 GB/s", severity=FAIL)
    xid = finding("xid", "card 1")
    busy = [ONE, GpuProcess(8, "big", (12,))]
    assert name_other_users([rate, boost, pstate, info, link, xid], after=busy) == [
        Finding("clocks", "card 1", "at least 1980 MHz",
                "not judged while pid 77 (monitor) held card 1: found 1755 MHz, expected at least 1980 MHz", INFO, ""),
        Finding("boost", "card 12", "a graphics clock of at least 1980 MHz",
                "not judged while pid 8 (big) held card 12: found 1755 MHz, expected a graphics clock of at least "
                "1980 MHz", INFO, ""),
        Finding("clocks", "card 1", "P0", "P8 while pid 77 (monitor) held card 1", DEGRADE, "c"),
        Finding("clocks", "card 1", "at least 1980 MHz", "x while pid 77 (monitor) held card 1", INFO, "c"),
        Finding("bandwidth-floor", "read 1->0", "e", "120.0 GB/s while pid 77 (monitor) held card 1", FAIL, "c"),
        xid]
    assert name_other_users([finding("clocks", "card 1x")], after=busy) == [finding("clocks", "card 1x")]


# ---- --require-idle ------------------------------------------------------------------------

def refusal(reading, selection=None) -> str:
    with pytest.raises(NotIdleError) as err:
        require_idle_of(reading, selection)
    return str(err.value)


def test_require_idle_of_a_reading_it_cannot_trust():
    assert refusal(None) == "--require-idle: could not tell whether other processes use the GPUs (not recorded)"
    assert refusal({"error": "EACCES", "processes": []}) == (
        "--require-idle: could not tell whether other processes use the GPUs (EACCES)")
    assert require_idle_of({}, None) is None
    assert require_idle_of({"error": "", "unreadable": [4], "rm_errors": {}}, None) is None


def test_require_idle_names_processes_then_the_unreadable():
    assert refusal({"processes": [ONE.as_dict()], "unreadable": [4, 5, 6], "rm_errors": {"0": "E"}}) == (
        "--require-idle: other processes use the GPUs: pid 77 (monitor) on card 1; and 3 processes whose open "
        "files this user may not read (run as root, or on a driver whose RM lists GPU processes)")
    assert refusal({"unreadable": [4], "rm_errors": {"0": "E"}}) == (
        "--require-idle: other processes use the GPUs: 1 processes whose open files this user may not read "
        "(run as root, or on a driver whose RM lists GPU processes)")
    assert refusal({"processes": [CUDA.as_dict(), CTL.as_dict()], "unreadable": [4]}) == (
        "--require-idle: other processes use the GPUs: pid 4242 (python train.py) on cards 0, 1; pid 9 (ctl) "
        "on the driver")
    with pytest.raises(NotIdleError) as err:
        require_idle([], unknown=[1])
    assert str(err.value) == ("--require-idle: other processes use the GPUs: 1 processes whose open files this "
                              "user may not read (run as root, or on a driver whose RM lists GPU processes)")
    assert require_idle([]) is None and require_idle((), unknown=()) is None


def test_cards_of_anything_else_are_none():
    """An object with neither a subject nor a check names no card (and raises nothing)."""
    from rmpeer.judge.sharedhost import _cards_of_finding

    assert _cards_of_finding(SimpleNamespace()) == set()
    assert _cards_of_finding(SimpleNamespace(subject="card 1")) == set()
    assert _cards_of_finding(SimpleNamespace(subject="read 1->2")) == {1, 2}
    assert _cards_of_finding(SimpleNamespace(check="boost", subject="card 3")) == {3}
