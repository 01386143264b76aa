"""The verdict's words (rmpeer.render.verdict) come from what the judge put in the RunResult,
never from judging it again: a result the judge has not seen blames no card, whatever its
findings say."""

import pytest

from rmpeer.model.result import CERTIFIED, CUT_SHORT, FAIL, INCOMPLETE, NOT_CERTIFIED, Finding, RunResult
from rmpeer.render.verdict import compact, unchecked_phrase, verdict_text

pytestmark = pytest.mark.offline
BAD_CARD = Finding("row-remap", "card 0", "no pending row remap", "row-remap failure", FAIL)
HOST = {"cards": [{"index": 0, "uuid": "GPU-0", "pci": "0000:10:00.0"}]}


def test_a_result_never_judged_blames_no_card():
    unjudged = RunResult(host=HOST, findings=[BAD_CARD], verdict=NOT_CERTIFIED)
    assert verdict_text(unjudged) == NOT_CERTIFIED
    assert (compact(unjudged)["cards"], compact(unjudged)["pairs"]) == ([], [])


def test_the_judges_per_card_verdict_is_what_the_line_names():
    per = {"cards": [{"card": 0, "uuid": "GPU-0", "pci": "", "verdict": NOT_CERTIFIED,
                      "reasons": [BAD_CARD.text]}], "pairs": []}
    judged = RunResult(host=HOST, findings=[BAD_CARD], verdict=NOT_CERTIFIED, by_card=per)
    assert verdict_text(judged) == f"NOT CERTIFIED: card 0 (GPU-0): {BAD_CARD.text}"
    assert compact(judged)["cards"] == [{"card": 0, "uuid": "GPU-0", "verdict": NOT_CERTIFIED,
                                         "reasons": [BAD_CARD.text]}]


def test_the_checks_not_made_are_named_with_their_reasons():
    items = [{"check": "xid", "subject": "host", "reason": "/dev/kmsg: Permission denied"},
             {"check": "gpu-processes", "subject": "after", "reason": "no /proc"}]
    assert unchecked_phrase(items) == "xid (/dev/kmsg: Permission denied), gpu-processes (no /proc)"


# ---- hunt6-b: how much of the blame the line shows ---------------------------------------------

def _row(card, verdict=NOT_CERTIFIED, reasons=("row-remap: bad",), uuid="GPU-x"):
    return {"card": card, "uuid": uuid, "pci": "", "verdict": verdict, "reasons": list(reasons)}


def _pair(name, verdict=NOT_CERTIFIED):
    return {"pair": name, "verdict": verdict, "reasons": ["read: bad"]}


def test_three_bad_cards_are_all_shown_and_more_are_counted():
    three = {"cards": [_row(i) for i in range(3)], "pairs": []}
    text = verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card=three))
    assert text.count("card ") == 3 and "more cards" not in text
    five = {"cards": [_row(i) for i in range(5)], "pairs": []}
    assert verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card=five)).endswith("; and 2 more cards")


def test_a_card_without_a_uuid_says_so():
    per = {"cards": [_row(2, uuid="")], "pairs": []}
    assert verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card=per)) == \
        "NOT CERTIFIED: card 2 (uuid unknown): row-remap: bad"


def test_eight_bad_pairs_are_named_and_a_ninth_is_an_ellipsis():
    eight = {"cards": [], "pairs": [_pair(f"0-{i}") for i in range(1, 9)]}
    assert verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card=eight)) == \
        "NOT CERTIFIED: pairs 0-1, 0-2, 0-3, 0-4, 0-5, 0-6, 0-7, 0-8"
    nine = {"cards": [], "pairs": [_pair(f"0-{i}") for i in range(1, 10)]}
    assert verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card=nine)) == \
        "NOT CERTIFIED: pairs 0-1, 0-2, 0-3, 0-4, 0-5, 0-6, 0-7, 0-8, ..."


def test_a_card_incomplete_for_its_own_reason_as_well_as_the_cut_short_run_is_blamed():
    per = {"cards": [_row(1, INCOMPLETE, ("xid: card 1: unreadable", CUT_SHORT)), _row(0, INCOMPLETE, (CUT_SHORT,))],
           "pairs": []}
    assert verdict_text(RunResult(verdict=INCOMPLETE, by_card=per)) == \
        "INCOMPLETE: card 1 (GPU-x): xid: card 1: unreadable"


def test_the_json_share_keeps_three_reasons_of_a_bad_card_and_none_of_a_certified_one():
    per = {"cards": [_row(0, reasons=("a", "b", "c", "d")), _row(1, CERTIFIED, ())], "pairs": []}
    got = compact(RunResult(verdict=NOT_CERTIFIED, by_card=per))
    assert got["cards"] == [{"card": 0, "uuid": "GPU-x", "verdict": NOT_CERTIFIED, "reasons": ["a", "b", "c"]},
                            {"card": 1, "uuid": "GPU-x", "verdict": CERTIFIED}]


def test_the_json_share_says_how_the_cards_were_chosen():
    sel = {"cards": [1], "uuids": ["GPU-1"], "how": "--cards 1", "of": [], "source": "cli"}
    got = compact(RunResult(host={"selection": sel}, verdict=CERTIFIED))
    assert got["selection"] == {"cards": [1], "uuids": ["GPU-1"], "how": "--cards 1"}


def test_the_verdict_line_is_at_most_400_characters_and_cuts_no_word():
    """Three bad cards with long reasons (an 8-card host's floor misses) and nine bad pairs:
    the line keeps every card's uuid and the pairs, and shortens the reasons between words."""
    reason = ("bandwidth-floor: read 0->7: expected at least 355 GB/s, found 231.8 GB/s below 18 links x 26.562 "
              "GB/s x 0.743 = 355.2 GB/s (derived; efficiency calibrated on 2 x H200)")
    cards = [{"card": i, "uuid": f"GPU-{i:08x}-5c4d-b517-0aa7-11896c02ea0f", "pci": "", "verdict": NOT_CERTIFIED,
              "reasons": [reason]} for i in range(4)]
    pairs = [{"pair": f"{i}-{i + 1}", "verdict": NOT_CERTIFIED, "reasons": [reason]} for i in range(9)]
    text = verdict_text(RunResult(verdict=NOT_CERTIFIED, by_card={"cards": cards, "pairs": pairs}))
    assert len(text) <= 400, (len(text), text)
    assert all(f"card {i} (GPU-{i:08x}-5c4d-b517-0aa7-11896c02ea0f): bandwidth-floor: read 0->7" in text for i in range(3))
    assert "and 1 more cards" in text and "pairs 0-1, 1-2" in text
    words = set(reason.split())
    for part in text.split("; "):
        if part.startswith("card ") and part.endswith("..."):
            assert part.removesuffix("...").split()[-1] in words, part
