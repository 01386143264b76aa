"""Mutants of rmpeer/judge/cards.py (issue 47, item 9; docs/mutation.md): what each subject is
about (a card, a pair, the host), which column of a pair a check fills, each card's and pair's
verdict and reasons written out whole, a cut-short run, and the host's numbers in a subject.
Hand-made RunResults of up to three cards (host numbers 4, 6 and 9 on a run of some cards);
the expected rows are worked out here by hand from the module's docstring, never taken from
by_card's answer."""

import pytest

from rmpeer.judge import cards as c
from rmpeer.model.result import (CERTIFIED, CUT_SHORT, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED,
                                 UNFINISHED, CheckResult, Finding, LayoutResult, PairResult, RunResult)

pytestmark = pytest.mark.offline
UUIDS = ["GPU-8932f937-aaaa-bbbb-cccc-000000000000", "GPU-11111111-2222-3333-4444-555555555555", ""]


def result(findings=(), checks=(), pairs=(), verdict=NOT_CERTIFIED, n=3, selected=(4, 6, 9), layouts=None):
    cards = [{"index": i, "uuid": UUIDS[i], "pci": f"0000:{0x1b + i:02x}:00.0"} for i in range(n)]
    host = {"cards": cards}
    if selected:
        host["selection"] = {"cards": list(selected[:n])}
    layouts = layouts if layouts is not None else [LayoutResult("one-per-card", list(range(n)), 64 << 20),
                                                   LayoutResult("two-per-card", [0, 0, 1, 1], 64 << 20)]
    return RunResult(host=host, findings=list(findings), checks=list(checks), pairs=list(pairs), layouts=layouts,
                     verdict=verdict)


def test_the_host_numbers_and_uuids_of_the_run_cards():
    assert c._numbering(result()) == ([4, 6, 9], UUIDS)
    assert c._numbering(result(selected=())) == ([0, 1, 2], UUIDS)
    r = RunResult(host={"cards": [{"index": 3}, {"index": 5}], "selection": {"cards": []}})
    assert c._numbering(r) == ([3, 5], ["", ""])
    assert c._numbering(RunResult(host={})) == ([], [])
    assert c._layout_cards(result()) == {"one-per-card": [0, 1, 2], "two-per-card": [0, 0, 1, 1]}


@pytest.mark.parametrize("check, area, subject, dimension", [
    ("setup:p2p", "read/write", "s0->t1", "setup"), ("setup", "", "", "setup"), ("peer-map", "setup", "x", "setup"),
    ("read", "read/write", "s0->t1", "read"), ("write", "read/write", "s0->t1", "write"),
    ("bandwidth-floor", "host", "host", "bandwidth"), ("bw", "", "read 0->1", "bandwidth"),
    ("bw", "", "write 0->1", "bandwidth"), ("bw", "", "bidirectional 0->1", "bandwidth"),
    ("bw", "", "same-card 1->1", "bandwidth"), ("bw", "", "all 0->1", "bw"), ("bw", "", "reading 0->1", "bw"),
    ("xid", "host", "card 0", "xid"), ("reads", "", "", "reads"),
    # a read or write check is its own column, whatever its subject names
    ("read", "", "write 0->1", "read"), ("write", "", "bidirectional 0->1", "write"),
    # the subject's first word: "read 0->1 (256 MiB)" is a figure's
    ("bw", "", "read 0->1 (256 MiB)", "bandwidth")])
def test_the_column_of_each_check(check, area, subject, dimension):
    assert c._dimension(check, area, subject) == dimension


LAYOUTS = {"one-per-card": [0, 1, 2], "two-per-card": [0, 0, 1, 1]}


@pytest.mark.parametrize("subject, layout, s, t, place", [
    ("card 2", None, None, None, ("card", 2)),
    ("card 12 link 3: crc", None, None, None, ("card", 12)),
    ("cards 1", None, None, None, None),
    ("card 1x", None, None, None, None),
    ("the card 1", None, None, None, None),
    ("read 2->0", None, None, None, ("pair", (0, 2))),
    ("write 0->1", None, None, None, ("pair", (0, 1))),
    ("bidirectional 1->2", None, None, None, ("pair", (1, 2))),
    ("same-card 1->1", None, None, None, ("card", 1)),
    ("all 0->1", None, None, None, ("pair", (0, 1))),
    ("read 0->1 at 256 MiB", None, None, None, None),
    ("a read 0->1", None, None, None, None),
    ("copy 3 (card 2 -> CE 4 -> card 0)", None, None, None, ("pair", (0, 2))),
    ("(card 1 -> card 1)", None, None, None, ("card", 1)),
    ("interleaved s0 (card 2) -> t1 (card 1)", None, None, None, ("pair", (1, 2))),
    ("interleaved s0 (card 1) -> t3 (card 1)", None, None, None, ("card", 1)),
    ("one-per-card s0->t2", None, None, None, ("pair", (0, 2))),
    ("two-per-card s0->t1", None, None, None, ("card", 0)),
    ("two-per-card s1->t2", None, None, None, ("pair", (0, 1))),
    ("s2->t0", "one-per-card", None, None, ("pair", (0, 2))),
    ("s2->t3", "two-per-card", None, None, ("card", 1)),
    ("one-per-card s0->t1", "two-per-card", None, None, ("pair", (0, 1))),     # the subject's layout first
    ("x", "one-per-card", 1, 2, ("pair", (1, 2))),
    ("one-per-card s0->t1", "one-per-card", 2, 1, ("pair", (1, 2))),          # the check's own sessions first
    ("one-per-card s0->t2", None, None, 1, ("pair", (0, 2))),                  # one session unknown: the subject's
    ("x", "two-per-card", 2, 3, ("card", 1)),
    ("s0->t1", "one-per-card", 2, None, ("pair", (0, 1))),                    # one session unknown: the subject's
    ("x", "one-per-card", 2, None, None),
    ("x", "one-per-card", None, 1, None),
    ("x", "one-per-card", 3, 0, None),                                         # past the layout's cards
    ("x", "one-per-card", 0, 3, None),
    ("x", "one-per-card", 2, 2, ("card", 2)),
    ("x", "no-such-layout", 0, 1, None),
    ("x", None, 0, 1, None),
    ("one-per-card s9->t0", None, None, None, None),
    ("host", None, None, None, None)])
def test_what_each_subject_is_about(subject, layout, s, t, place):
    assert c._place(subject, layout, s, t, LAYOUTS) == place


def test_the_worst_severity_decides_and_info_is_no_reason():
    f = lambda sev, what: Finding("c", "card 0", "e", what, sev)     # noqa: E731
    assert c._verdict([]) == (CERTIFIED, [])
    assert c._verdict([f(INFO, "i")]) == (CERTIFIED, [])
    assert c._verdict([f(DEGRADE, "d")]) == (DEGRADED, ["c: card 0: expected e, found d"])
    assert c._verdict([f(DEGRADE, "d"), f(FAIL, "x")])[0] == NOT_CERTIFIED
    assert c._verdict([f(FAIL, "x"), f(UNFINISHED, "u"), f(DEGRADE, "d")]) == (INCOMPLETE, [
        "c: card 0: expected e, found x", "c: card 0: expected e, found u", "c: card 0: expected e, found d"])
    assert c._verdict([f(UNFINISHED, "u"), f(FAIL, "x")])[0] == INCOMPLETE
    assert c.RANK == {FAIL: (3, NOT_CERTIFIED), UNFINISHED: (4, INCOMPLETE), DEGRADE: (2, DEGRADED)}
    assert c.DIMENSIONS == ("setup", "read", "write", "bandwidth")


def test_a_cards_reasons_are_cut_at_160_characters_between_words():
    # "c: card 0: expected e, found " is 29 characters; then words of 9 letters and a space.
    # short() keeps 158 characters (160 less "..." plus one), 12 words and a part: the part goes
    found = " ".join(["abcdefghi"] * 20)
    (reason,) = c._verdict([Finding("c", "card 0", "e", found, DEGRADE)])[1]
    assert reason == "c: card 0: expected e, found " + " ".join(["abcdefghi"] * 12) + "..."


def _row(card, uuid, pci, verdict=CERTIFIED, reasons=()):
    return {"card": card, "uuid": uuid, "pci": pci, "verdict": verdict, "reasons": list(reasons)}


def test_each_card_row_whole_and_a_host_finding_on_none():
    r = result([Finding("row-remap", "card 1", "no failure", "a failure", FAIL),
                Finding("topology", "host", "an entry", "none", DEGRADE),
                Finding("clocks", "card 7", "P0", "P8", DEGRADE),          # no card 7 in this run
                Finding("ecc", "card 2", "ECC enabled", "ECC is disabled", INFO)])
    assert c.by_card(r) == {"cards": [
        _row(4, UUIDS[0], "0000:1b:00.0"),
        _row(6, UUIDS[1], "0000:1c:00.0", NOT_CERTIFIED, ["row-remap: card 1: expected no failure, found a failure"]),
        _row(9, "", "0000:1d:00.0")], "pairs": []}


def test_a_card_row_without_a_pci_address():
    r = RunResult(host={"cards": [{"index": 0, "uuid": "GPU-x"}]}, verdict=CERTIFIED)
    assert c.by_card(r) == {"cards": [_row(0, "GPU-x", "")], "pairs": []}


def _pair(a, b, verdict=CERTIFIED, reasons=(), **columns):
    hosts = [4, 6, 9]
    return {"pair": f"{hosts[a]}-{hosts[b]}", "cards": [hosts[a], hosts[b]], "uuids": [UUIDS[a], UUIDS[b]],
            "verdict": verdict, **{k: columns.get(k, "not run") for k in ("setup", "read", "write", "bandwidth")},
            "reasons": list(reasons)}


def check(name, area, subject, outcome, reason="", layout="one-per-card", s=None, t=None, **more):
    return CheckResult(f"{name}/{subject}", name, area, subject, outcome, reason, layout, s=s, t=t, **more)


def test_each_pair_row_whole_from_its_checks():
    checks = [check("setup:p2p", "setup", "s0->t1", "passed", s=0, t=1),
              check("read", "read/write", "s0->t1", "failed", "bytes differ at 0x40", s=0, t=1),
              check("write", "read/write", "s0->t1", "passed", s=0, t=1),
              check("write", "read/write", "s1->t0", "failed", "bytes differ", s=1, t=0),
              check("read", "read/write", "s1->t2", "passed", s=1, t=2),
              check("read", "read/write", "s2->t1", "skipped", s=2, t=1),
              check("bandwidth-floor", "host", "read 2->1", "passed", layout=None),
              check("read", "read/write", "s0->t0", "failed", "bytes differ", layout="two-per-card", s=0, t=1),
              check("neg", "negative", "host", "failed", "refused", layout=None)]
    got = c.by_card(result(checks=checks))
    assert got["pairs"] == [
        _pair(0, 1, NOT_CERTIFIED, ["bytes differ at 0x40 (read: one-per-card s0->t1)",
                                    "bytes differ (write: one-per-card s1->t0)"],
              setup="passed", read="failed", write="failed"),
        _pair(1, 2, CERTIFIED, [], read="passed", bandwidth="passed")]
    # the two-per-card window s0->t1 is card 0 twice: card 0's own; the negative check is the host's
    assert [(x["card"], x["verdict"], x["reasons"]) for x in got["cards"]] == [
        (4, NOT_CERTIFIED, ["bytes differ (read: two-per-card s0->t0)"]), (6, CERTIFIED, []), (9, CERTIFIED, [])]


def test_a_column_failed_by_a_finding_and_left_by_an_info():
    findings = [Finding("bandwidth-floor", "read 0->2", "355 GB/s", "300 GB/s", DEGRADE),
                Finding("bandwidth-floor", "write 1->0", "355 GB/s", "360 GB/s", INFO),
                Finding("copy", "copy 1 (card 2 -> CE 0 -> card 1)", "the bytes", "wrong", FAIL),
                Finding("read", "read 5->0", "x", "y", FAIL)]                  # no card 5: no pair
    got = c.by_card(result(findings, verdict=NOT_CERTIFIED))
    assert got["pairs"] == [
        _pair(0, 1, CERTIFIED, []),
        _pair(0, 2, DEGRADED, ["bandwidth-floor: read 0->2: expected 355 GB/s, found 300 GB/s"], bandwidth="failed"),
        _pair(1, 2, NOT_CERTIFIED, ["copy: copy 1 (card 2 -> CE 0 -> card 1): expected the bytes, found wrong"])]


def test_the_copies_of_a_pair_fill_its_read_and_write_columns():
    pairs = [PairResult("one-per-card", 0, 1, 0, 1, "read", True), PairResult("one-per-card", 1, 0, 1, 0, "read", False),
             PairResult("one-per-card", 0, 1, 0, 1, "read", True), PairResult("one-per-card", 0, 1, 0, 1, "write", True),
             PairResult("one-per-card", 0, 2, 0, 2, "write", None),           # not run: no column
             PairResult("two-per-card", 0, 1, 0, 0, "read", False),          # one card: no pair
             PairResult("one-per-card", 1, 2, 1, 3, "read", False),          # no card 3
             PairResult("one-per-card", 2, 1, 2, 1, "write", True)]
    got = c.by_card(result(pairs=pairs, verdict=CERTIFIED))
    assert got["pairs"] == [_pair(0, 1, read="failed", write="passed"), _pair(1, 2, write="passed")]


def test_a_cut_short_run_certifies_no_card_nor_pair_but_keeps_their_faults():
    findings = [Finding("clocks", "card 0", "P0", "P8", DEGRADE), Finding("bw", "read 1->2", "a", "b", FAIL)]
    checks = [check("read", "read/write", "s0->t1", "passed", s=0, t=1)]
    got = c.by_card(result(findings, checks, verdict=INCOMPLETE))
    assert [(x["card"], x["verdict"], x["reasons"]) for x in got["cards"]] == [
        (4, DEGRADED, ["clocks: card 0: expected P0, found P8"]), (6, INCOMPLETE, [CUT_SHORT]), (9, INCOMPLETE, [CUT_SHORT])]
    assert [(x["pair"], x["verdict"], x["reasons"]) for x in got["pairs"]] == [
        ("4-6", INCOMPLETE, [CUT_SHORT]), ("6-9", NOT_CERTIFIED, ["bw: read 1->2: expected a, found b"])]
    assert CUT_SHORT == "the run did not finish"
    assert [x["verdict"] for x in c.by_card(result(findings[:0], checks, verdict=DEGRADED))["cards"]] == [CERTIFIED] * 3


def test_a_failed_check_restating_a_finding_is_said_once_with_its_cause():
    finding = Finding("read", "one-per-card s0->t1", "the bytes", "wrong memory", FAIL, cause="wrong memory: x")
    failed = check("read", "read/write", "s0->t1", "failed", finding.text, s=0, t=1)
    got = c.by_card(result([finding], [failed]))
    assert got["pairs"] == [_pair(0, 1, NOT_CERTIFIED, ["read: one-per-card s0->t1: expected the bytes, found wrong memory"],
                                  read="failed")]


def test_an_error_check_and_an_unexpected_one():
    checks = [check("write", "read/write", "s1->t2", "error", "RM answered NV_ERR_X", s=1, t=2),
              check("setup", "setup", "s0->t1", "error", "TypeError", s=0, t=1, unexpected=True)]
    got = c.by_card(result(checks=checks))
    assert got["pairs"] == [_pair(0, 1, INCOMPLETE, ["TypeError (setup: one-per-card s0->t1)"], setup="failed"),
                            _pair(1, 2, NOT_CERTIFIED, ["RM answered NV_ERR_X (write: one-per-card s1->t2)"],
                                  write="failed")]


def test_a_check_of_a_pair_past_the_run_cards_and_of_no_place():
    checks = [check("read", "read/write", "s0->t1", "passed", layout="wide", s=0, t=1),
              check("read", "read/write", "s0->t1", "failed", "x", layout="wide", s=0, t=1),
              check("read", "read/write", "odd", "failed", "y", layout=None)]
    got = c.by_card(result(checks=checks, n=2, layouts=[LayoutResult("wide", [0, 5], 1)]))
    assert got == {"cards": [_row(4, UUIDS[0], "0000:1b:00.0"), _row(6, UUIDS[1], "0000:1c:00.0")], "pairs": []}


def test_a_subject_with_the_hosts_numbers_and_uuid():
    r = result()
    assert c.host_subject(r, "card 1") == "card 6 (GPU-11111111)"
    assert c.host_subject(r, "card 0 link 3") == "card 4 (GPU-8932f937) link 3"
    assert c.host_subject(r, "card 2") == "card 9" and c.host_subject(r, "card 2: x") == "card 9: x"
    assert c.host_subject(r, "card 3") == "card 3"
    assert c.host_subject(r, "read 0->2") == "read 4->9"
    assert c.host_subject(r, "same-card 1->1") == "same-card 6->6"
    assert c.host_subject(r, "write 2->5") == "write 9->5"
    assert c.host_subject(r, "host") == "host" and c.host_subject(r, "pair 0->1") == "pair 0->1"


def test_a_place_past_the_run_cards_by_one_is_no_pair():
    # 3 run cards (0..2): a figure and a window at card 3 are no pair of this run
    findings = [Finding("bandwidth-floor", "read 3->0", "355 GB/s", "1 GB/s", DEGRADE)]
    checks = [check("read", "read/write", "s0->t1", "failed", "x", layout="wide", s=0, t=1)]
    got = c.by_card(result(findings, checks, layouts=[LayoutResult("wide", [0, 3], 1)]))
    assert got["pairs"] == []


def test_a_pairs_columns_from_checks_of_every_kind_in_any_order():
    checks = [check("negative", "negative", "host", "failed", "refused", layout=None),    # no place, first
              check("map", "setup", "copy", "passed", s=0, t=1),                           # sessions, no window words
              check("bw", "host", "read 0->1", "passed", layout=None),
              check("map", "setup", "copy", "failed", "RM refused the map", s=1, t=2),
              check("bw", "host", "write 1->2", "failed", "below the floor", layout=None)]
    findings = [Finding("bandwidth-floor", "read 0->1", "355 GB/s", "370 GB/s", INFO)]     # INFO: the column stays
    got = c.by_card(result(findings, checks))
    assert got["pairs"] == [
        _pair(0, 1, CERTIFIED, [], setup="passed", bandwidth="passed"),
        _pair(1, 2, NOT_CERTIFIED, ["RM refused the map (map: one-per-card copy)", "below the floor (bw: write 1->2)"],
              setup="failed", bandwidth="failed")]
