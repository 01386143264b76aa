"""The verdict's words (rmpeer.render.verdict) come from what the judge put in the RunResult,
never from judging it again: a result the judge has not seen blames no card, whatever its
findings say."""

import pytest

from rmpeer.model.result import FAIL, NOT_CERTIFIED, Finding, RunResult
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
