"""Tests that kill the mutants of rmpeer/render/verdict.py (docs/mutation.md): the verdict line,
the JSON line's per-card share and the warnings under the verdict line, on RunResults built by
hand. Every expected line is written out here, its lengths counted by hand from the docstrings'
rules (a blamed card's reason gets `room` characters: the limit less the line's fixed parts,
shared by the cards shown, between 40 and 120; a reason of one long word is cut to room - 3
characters and "..."), never taken from verdict_text."""

import pytest

from rmpeer.model.result import (CERTIFIED, CUT_SHORT, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED,
                                 Finding, RunResult)
from rmpeer.render.verdict import compact, verdict_text, warning_lines

pytestmark = pytest.mark.offline


def card(i, verdict=NOT_CERTIFIED, reasons=("row-remap: bad",), uuid=None):
    return {"card": i, "uuid": f"GPU-{i}" if uuid is None else uuid, "pci": "", "verdict": verdict,
            "reasons": list(reasons)}


def pair(name, verdict=NOT_CERTIFIED, reasons=("read: bad",)):
    return {"pair": name, "verdict": verdict, "reasons": list(reasons)}


def line(cards=(), pairs=(), verdict=NOT_CERTIFIED, **kw):
    return verdict_text(RunResult(verdict=verdict, by_card={"cards": list(cards), "pairs": list(pairs)}), **kw)


HEAD = "NOT CERTIFIED: card 0 (GPU-0): "      # 31 characters; fixed = 13 + 2 + (14 + 4) = 33 for one card


# -- who is blamed -------------------------------------------------------------------------------

def test_a_certified_host_is_the_word_alone_whatever_its_cards_say():
    assert verdict_text(RunResult(verdict=CERTIFIED, by_card={"cards": [card(0)], "pairs": [pair("0-1")]})) \
        == "CERTIFIED"


def test_a_result_without_a_per_card_verdict_is_the_verdict_alone():
    assert verdict_text(RunResult(verdict=DEGRADED)) == "DEGRADED"
    assert verdict_text(RunResult(verdict=DEGRADED, by_card={})) == "DEGRADED"


def test_certified_cards_and_pairs_are_never_named():
    assert line([card(0, CERTIFIED, ()), card(1)], [pair("0-1", CERTIFIED, ()), pair("1-0")]) == \
        "NOT CERTIFIED: card 1 (GPU-1): row-remap: bad; pair 1-0"


def test_no_card_to_blame_leaves_the_verdict_alone():
    assert line([card(0, CERTIFIED, ())], [pair("0-1", CERTIFIED, ())]) == "NOT CERTIFIED"


def test_a_degraded_card_is_blamed():
    assert line([card(3, DEGRADED, ("bandwidth-floor: slow",))], verdict=DEGRADED) == \
        "DEGRADED: card 3 (GPU-3): bandwidth-floor: slow"


def test_a_card_incomplete_only_because_the_run_was_cut_short_is_not_blamed():
    assert line([card(0, INCOMPLETE, (CUT_SHORT,))], [pair("0-1", INCOMPLETE, (CUT_SHORT,))],
                verdict=INCOMPLETE) == "INCOMPLETE"


def test_a_card_incomplete_without_a_reason_is_blamed_by_its_verdict():
    assert line([card(0, INCOMPLETE, ())], verdict=INCOMPLETE) == "INCOMPLETE: card 0 (GPU-0): INCOMPLETE"


def test_a_pair_incomplete_for_a_reason_of_its_own_is_named():
    assert line([], [pair("0-1", INCOMPLETE, ("read: unreadable",))], verdict=INCOMPLETE) == "INCOMPLETE: pair 0-1"


def test_the_first_reason_of_a_card_is_the_one_shown():
    assert line([card(0, reasons=("first", "second"))]) == HEAD + "first"


def test_one_bad_pair_is_a_pair_two_are_pairs():
    assert line([], [pair("0-1")]) == "NOT CERTIFIED: pair 0-1"
    assert line([], [pair("0-1"), pair("1-0")]) == "NOT CERTIFIED: pairs 0-1, 1-0"


def test_four_bad_cards_show_three_and_count_one():
    text = line([card(i) for i in range(4)])
    assert text == ("NOT CERTIFIED: card 0 (GPU-0): row-remap: bad; card 1 (GPU-1): row-remap: bad; "
                    "card 2 (GPU-2): row-remap: bad; and 1 more cards")


def test_a_reason_quoting_a_control_character_is_escaped():
    assert line([card(0, reasons=("xid: \x1b[2J gone",))]) == HEAD + "xid: \\x1b[2J gone"


# -- how much of a reason the line keeps ---------------------------------------------------------

def test_one_card_reason_is_cut_to_120_characters_under_the_default_limit():
    assert line([card(0, reasons=("x" * 200,))]) == HEAD + "x" * 117 + "..."


def test_the_room_is_the_limit_less_the_fixed_parts():
    # 100 - 33 = 67 characters for the reason: 64 and "..."; 98 in all
    assert line([card(0, reasons=("x" * 200,))], limit=100) == HEAD + "x" * 64 + "..."


def test_the_room_is_never_below_40():
    # 71 - 33 = 38, raised to 40: 37 and "..."; 31 + 40 = 71, within the limit
    assert line([card(0, reasons=("x" * 200,))], limit=71) == HEAD + "x" * 37 + "..."


def test_a_pair_tail_takes_its_room_from_the_reason():
    # fixed 33 + len("pair 0-1") + 2 = 43; 100 - 43 = 57: 54 and "..."
    assert line([card(0, reasons=("x" * 200,))], [pair("0-1")], limit=100) == HEAD + "x" * 54 + "...; pair 0-1"


def test_three_cards_share_the_room_and_the_count_takes_its_own():
    # fixed = 15 + 3 x (14 + 4) + (len("and 1 more cards") + 2) = 87; (399 - 87) // 3 = 104: 101 and "..."
    cards = [card(i, reasons=("y" * 300,)) for i in range(4)]
    assert line(cards, limit=399) == "NOT CERTIFIED: " + "; ".join(
        [f"card {i} (GPU-{i}): " + "y" * 101 + "..." for i in range(3)] + ["and 1 more cards"])


def test_the_whole_line_is_cut_at_400_characters_between_words():
    # a pair of 323 characters leaves the reason its 40, and the line is 31 + 40 + 2 + 5 + 323 = 401:
    # cut at 400 (397 and "...", after the last space) the pair's name goes
    text = line([card(0, reasons=("r" * 200,))], [pair("p" * 323)])
    assert text == HEAD + "r" * 37 + "...; pair..."


# -- the JSON line's share -----------------------------------------------------------------------

def test_the_json_share_of_pairs_keeps_the_reasons_of_bad_ones_only():
    per = {"cards": [], "pairs": [pair("0-1", reasons=("a", "b", "c", "d")), pair("1-0", CERTIFIED, ())]}
    assert compact(RunResult(verdict=NOT_CERTIFIED, by_card=per)) == {
        "selection": None, "cards": [],
        "pairs": [{"pair": "0-1", "verdict": NOT_CERTIFIED, "reasons": ["a", "b", "c"]},
                  {"pair": "1-0", "verdict": CERTIFIED}]}


def test_the_json_share_of_a_result_never_judged_is_empty():
    assert compact(RunResult(verdict=INCOMPLETE)) == {"selection": None, "cards": [], "pairs": []}


def test_the_json_share_of_a_partial_selection_keeps_its_three_fields():
    sel = {"cards": [2, 3], "how": "--cards 2,3"}
    assert compact(RunResult(host={"selection": sel}, verdict=CERTIFIED))["selection"] == \
        {"cards": [2, 3], "uuids": None, "how": "--cards 2,3"}


# -- the warnings under the verdict line -------------------------------------------------------

def test_warnings_are_the_info_findings_of_drift_and_history():
    findings = [Finding("drift", "card 0 read", "at least 300 GB/s", "250 GB/s", INFO),
                Finding("history", "host", "a usable history", "history.jsonl unreadable", INFO),
                Finding("drift", "card 1 read", "at least 300 GB/s", "200 GB/s", DEGRADE),
                Finding("xid", "host", "no Xid", "none", INFO),
                Finding("history", "card 2", "x", "y", FAIL)]
    assert warning_lines(RunResult(verdict=CERTIFIED, findings=findings)) == [
        "drift: card 0 read: 250 GB/s (expected at least 300 GB/s)",
        "history: host: history.jsonl unreadable"]


def test_no_warning_without_drift_or_history():
    assert warning_lines(RunResult(verdict=CERTIFIED)) == []
