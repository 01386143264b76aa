"""A verdict per card and per pair (issue 25, part 6) and what a certificate covers for
--if-stale (part 5).

Sources: a replay of the committed degraded 2-card recording (idle clocks: every figure below
the h200x2-nv18 floors), judged by certify itself; and hand-made RunResults (findings written
here, as the checks write them) for the cases no recording shows (one bad card of several)."""

import dataclasses
import json

import pytest

from rmpeer.judge.cards import by_card
from rmpeer.model.result import (CERTIFIED, DEGRADED, FAIL, INCOMPLETE, NOT_CERTIFIED, UNFINISHED, CheckResult, Finding,
                           LayoutResult, RunResult)
from rmpeer.paths import transcripts_dir
from rmpeer.render import verdict as render_verdict

pytestmark = pytest.mark.offline
DEGRADED_TWO = transcripts_dir() / "degraded" / "h200x2-20261130T003733Z-noboost.jsonl.gz"
UUIDS = [f"GPU-{i}0000000-0000-0000-0000-00000000000{i}" for i in range(4)]


def _result(findings=(), checks=(), verdict=NOT_CERTIFIED, selected=None):
    cards = [{"index": i, "uuid": UUIDS[h], "pci": f"0000:{0x10 + h:02x}:00.0"}
             for i, h in enumerate(selected or range(4))]
    host = {"cards": cards}
    if selected:
        host["selection"] = {"cards": list(selected), "uuids": [UUIDS[h] for h in selected], "how": "--cards",
                             "source": "--cards", "of": []}
    layouts = [LayoutResult("one-per-card", list(range(len(cards))), 64 << 20)]
    return RunResult(host=host, findings=list(findings), checks=list(checks), layouts=layouts, verdict=verdict)


def verdict_text(r) -> str:
    """The verdict line's words of r once the judge has put each finding on its card."""
    return render_verdict.verdict_text(dataclasses.replace(r, by_card=by_card(r)))


def test_one_bad_card_is_named_apart_from_its_pairs():
    """Card 3 fails its own check; the reads from it fail too: the line names card 3 first,
    then the pairs, so an operator tells one bad card from a bad host."""
    checks = [CheckResult(f"read/one-per-card/s{s}->t{t}", "read", "read/write", f"s{s}->t{t}",
                          "failed" if 3 in (s, t) else "passed", "bytes differ", "one-per-card", s=s, t=t)
              for s in range(4) for t in range(4) if s != t]
    findings = [Finding("row-remap", "card 3", "no pending row remap", "row-remap failure", FAIL)]
    r = _result(findings, checks)
    per = by_card(r)
    assert [c["verdict"] for c in per["cards"]] == [CERTIFIED, CERTIFIED, CERTIFIED, NOT_CERTIFIED]
    assert per["cards"][3]["reasons"] == ["row-remap: card 3: expected no pending row remap, found row-remap failure"]
    bad = {p["pair"]: p for p in per["pairs"] if p["verdict"] != CERTIFIED}
    assert sorted(bad) == ["0-3", "1-3", "2-3"] and bad["0-3"]["read"] == "failed"
    assert {p["pair"] for p in per["pairs"] if p["verdict"] == CERTIFIED} == {"0-1", "0-2", "1-2"}
    assert verdict_text(r) == (f"NOT CERTIFIED: card 3 ({UUIDS[3]}): row-remap: card 3: expected no pending row "
                               f"remap, found row-remap failure; pairs 0-3, 1-3, 2-3")


def test_a_subset_is_named_by_the_hosts_numbers():
    """A run of host cards 1 and 3 numbers them 0 and 1; its verdicts say 1 and 3."""
    r = _result([Finding("clocks", "card 1", "a P-state from RM", "none", "degraded")], verdict=DEGRADED,
                selected=(1, 3))
    per = by_card(r)
    assert [(c["card"], c["uuid"], c["verdict"]) for c in per["cards"]] == [(1, UUIDS[1], CERTIFIED),
                                                                          (3, UUIDS[3], DEGRADED)]
    assert verdict_text(r).startswith(f"DEGRADED: card 3 ({UUIDS[3]}): clocks")


def test_a_cut_short_run_certifies_no_card():
    r = _result([Finding("run", "host", "the run to finish", "it was stopped by SIGTERM", UNFINISHED)],
                verdict=INCOMPLETE)
    assert {c["verdict"] for c in by_card(r)["cards"]} == {INCOMPLETE}
    assert verdict_text(r) == INCOMPLETE          # no card is to blame: the host's verdict alone


def test_a_host_fault_blames_no_card():
    r = _result([Finding("topology", "host", "the topology x", "3 card(s), expected 4", FAIL)])
    assert {c["verdict"] for c in by_card(r)["cards"]} == {CERTIFIED}
    assert verdict_text(r) == NOT_CERTIFIED


def test_the_degraded_recording_gives_each_card_and_the_pair_their_own_verdict(tmp_path):
    """certify --replay --json --prometheus of the idle-clock recording: both cards DEGRADED by
    their own same-card figures, the pair by its read, write and bandwidth figures, its setup
    passed; the JSON line and rmpeer.prom carry the same. Its own process, as a user runs it
    (in this one, the suites this test run collected would clash with the installed ones)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(DEGRADED_TWO), "--output",
                           str(tmp_path), "--json", "--prometheus", str(tmp_path / "prom")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(c["card"], c["verdict"]) for c in line["cards"]] == [(0, DEGRADED), (1, DEGRADED)]
    assert "same-card 0->0" in line["cards"][0]["reasons"][0] and "same-card 1->1" in line["cards"][1]["reasons"][0]
    assert [(p["pair"], p["verdict"]) for p in line["pairs"]] == [("0-1", DEGRADED)]
    cert = json.loads((tmp_path / "replay-certificate.json").read_text())
    pair = cert["by_card"]["pairs"][0]
    assert (pair["setup"], pair["read"], pair["write"], pair["bandwidth"]) == ("passed", "passed", "passed", "failed")
    assert [c["uuid"] for c in cert["by_card"]["cards"]] == [c["uuid"] for c in cert["host"]["cards"]]
    prom = (tmp_path / "prom" / "rmpeer.prom").read_text()
    uuid0 = cert["host"]["cards"][0]["uuid"]
    assert f'rmpeer_gpu_certified{{UUID="{uuid0}",gpu="0",' in prom
    assert 'peer_gpu="1",verdict="DEGRADED"} 0.0' in prom
    assert "DEGRADED: card 0 (" in done.stderr and "pair 0-1" in done.stderr


# -- --if-stale: which selections a certificate covers -----------------------------------------

def _cert_host(selected, how="--cards"):
    from rmpeer.machine.selection import HostCard, Selection

    of = tuple(HostCard(i, i, f"0000:{0x10 + i:02x}:00.0", UUIDS[i]) for i in range(4))
    return {"selection": Selection(tuple(selected), of, "--cards", how).as_dict()}


PROC = [{"pci": f"0000:{0x10 + i:02x}:00.0", "uuid": UUIDS[i]} for i in range(4)]


@pytest.mark.parametrize("certified, asked, holds", [
    ((0, 1, 2, 3), "1", True),            # the whole host's certificate holds for any selection
    ((0, 1, 2), "0,2", True),             # a superset's holds
    ((1, 2), "1,2", True),                # itself
    ((1, 2), "2", True),                  # a subset of it
    ((1, 2), "1,3", False),               # not a card it checked
    ((1,), "all", False),                 # a subset's never holds for the whole host
    ((0, 1, 2, 3), "all", True),
])
def test_a_certificate_holds_for_the_cards_it_covers(certified, asked, holds):
    from rmpeer.machine.selection import request_from, stale_reason

    reason = stale_reason(_cert_host(certified), request_from(asked, environ={}), PROC)
    assert (reason is None) == holds, reason
    if not holds:
        assert "the certificate covers cards" in reason


def test_a_certificate_of_other_cards_at_the_same_numbers_does_not_hold():
    """A UUID moved (a card swapped): the recorded RM order no longer describes this host."""
    from rmpeer.machine.selection import request_from, stale_reason

    swapped = [dict(PROC[0], uuid=UUIDS[1]), dict(PROC[1], uuid=UUIDS[0]), *PROC[2:]]
    assert "not the certificate's" in stale_reason(_cert_host((0, 1, 2, 3)), request_from("0", environ={}), swapped)
    assert stale_reason({}, request_from("0", environ={}), PROC) is None      # made before selection: every card


def test_mutation_run_numbers_instead_of_host_numbers_fail_the_subset_check():
    from source_mutation import mutated

    broken = mutated("rmpeer.judge.cards", 'hosts = list(sel.get("cards") or [c["index"] for c in cards])',
                     'hosts = [c["index"] for c in cards]')
    r = _result([Finding("clocks", "card 1", "a P-state from RM", "none", "degraded")], verdict=DEGRADED,
                selected=(1, 3))
    assert [c["card"] for c in broken.by_card(r)["cards"]] != [1, 3]


def test_mutation_an_unfinished_run_left_certified_fails_the_fail_closed_check():
    from source_mutation import mutated

    broken = mutated("rmpeer.judge.cards", "cut_short = result.verdict == INCOMPLETE", "cut_short = False")
    r = _result([Finding("run", "host", "the run to finish", "it was stopped by SIGTERM", UNFINISHED)],
                verdict=INCOMPLETE)
    assert CERTIFIED in {c["verdict"] for c in broken.by_card(r)["cards"]}


def test_a_drain_reason_names_the_host_card_and_its_uuid():
    from rmpeer.judge.cards import host_subject
    from rmpeer.fleet.outcome import from_result

    r = _result([Finding("clocks", "card 1", "a P-state from RM", "none", "degraded")], verdict=DEGRADED,
                selected=(1, 3))
    assert host_subject(r, "card 1") == f"card 3 ({UUIDS[3][:12]})"
    assert host_subject(r, "read 0->1") == "read 1->3" and host_subject(r, "host") == "host"
    assert from_result("n1", r).line == f"rmpeer: clocks: card 3 ({UUIDS[3][:12]}): expected a P-state from RM, found none"


def test_prometheus_names_a_subsets_cards_by_the_hosts_numbers():
    from prometheus_client import generate_latest

    from rmpeer.render.prometheus import registry_of

    r = _result([Finding("clocks", "card 1", "a P-state from RM", "none", "degraded")], verdict=DEGRADED,
                selected=(1, 3))
    text = generate_latest(registry_of(dataclasses.replace(r, by_card=by_card(r)))).decode()
    assert f'rmpeer_gpu_certified{{UUID="{UUIDS[3]}",gpu="3",' in text and 'verdict="DEGRADED"} 0.0' in text
    assert f'rmpeer_gpu_certified{{UUID="{UUIDS[1]}",gpu="1",' in text
    assert 'gpu="0"' not in text          # the run's own number 0 is host card 1


def test_a_card_that_could_not_be_checked_is_incomplete_even_beside_a_degrade():
    """The verdict's order (rmpeer.judge.verdict's docstring): INCOMPLETE outranks NOT
    CERTIFIED and DEGRADED, for a card as for the host."""
    r = _result([Finding("clocks", "card 2", "a P-state from RM", "none", "degraded"),
                 Finding("nvlink", "card 2", "NVLink state from RM", "errno 5", UNFINISHED),
                 Finding("row-remap", "card 1", "no row-remapping failure", "a row remapping failed", FAIL),
                 Finding("nvlink", "card 1", "NVLink state from RM", "errno 5", UNFINISHED)])
    assert [c["verdict"] for c in by_card(r)["cards"]] == [CERTIFIED, INCOMPLETE, INCOMPLETE, CERTIFIED]


def test_a_pairs_failed_copy_shows_in_its_read_column():
    """A read through a window from card 0 to card 1 that returned the wrong bytes (ok False)
    is the pair's read "failed", beside a passed one the other way."""
    from rmpeer.model.result import PairResult

    r = dataclasses.replace(_result(verdict=NOT_CERTIFIED), pairs=[
        PairResult("one-per-card", 0, 1, 0, 1, "read", False, 64 << 20),
        PairResult("one-per-card", 1, 0, 1, 0, "read", True, 64 << 20)])
    (pair,) = by_card(r)["pairs"]
    assert (pair["pair"], pair["read"], pair["write"]) == ("0-1", "failed", "not run")


def test_a_pairs_column_stays_failed_when_a_later_check_of_it_passes():
    """Card 0 -> 1 read failed, card 1 -> 0 read passed (checks in that order): the pair 0-1's
    read is "failed", whatever order the checks come in."""
    def read(s, t, outcome):
        return CheckResult(f"read/one-per-card/s{s}->t{t}", "read", "read/write", f"s{s}->t{t}", outcome,
                           "bytes differ" if outcome == "failed" else "", "one-per-card", s=s, t=t)

    for checks in ([read(0, 1, "failed"), read(1, 0, "passed")], [read(1, 0, "passed"), read(0, 1, "failed")]):
        (pair,) = [p for p in by_card(_result(checks=checks))["pairs"] if p["pair"] == "0-1"]
        assert (pair["read"], pair["verdict"]) == ("failed", NOT_CERTIFIED)


def test_a_card_that_failed_and_degraded_is_not_certified():
    """The verdict's order (rmpeer.judge.verdict's docstring): NOT CERTIFIED outranks DEGRADED,
    for a card as for the host."""
    r = _result([Finding("clocks", "card 1", "a P-state from RM", "none", "degraded"),
                 Finding("row-remap", "card 1", "no row-remapping failure", "a row remapping failed", FAIL)])
    assert [c["verdict"] for c in by_card(r)["cards"]] == [CERTIFIED, NOT_CERTIFIED, CERTIFIED, CERTIFIED]


def test_a_copy_that_was_not_run_gives_its_pair_no_column():
    """A copy not run (ok None: the map refused as the topology expects, or skipped) is neither
    passed nor failed: no check touched the pair, which has no verdict to give."""
    from rmpeer.model.result import PairResult

    r = dataclasses.replace(_result(verdict=NOT_CERTIFIED), pairs=[PairResult("one-per-card", 0, 1, 0, 1, "read", None)])
    assert by_card(r)["pairs"] == []


def test_a_finding_about_a_card_the_run_does_not_have_blames_no_pair():
    """A copy finding naming card 9 on a run of 4 cards is the host's, never a pair's."""
    r = _result([Finding("read", "one-per-card (card 2 -> card 9)", "the bytes written", "bytes differ", FAIL)])
    per = by_card(r)
    assert per["pairs"] == [] and {c["verdict"] for c in per["cards"]} == {CERTIFIED}
