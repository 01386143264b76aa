"""The judge is a pure function of findings and check outcomes: each verdict, its order of
strength, and reasons in words (expected vs found, never a Python class name). Expected
verdicts are written here from the rules in docs/architecture.md, not computed by the judge."""

import pytest

from rmpeer.judge.verdict import bandwidth_findings, judge, verdict, xid_findings
from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, INFO, NOT_CERTIFIED, UNFINISHED,
                           EXIT_CODES, CheckResult, Finding, RunResult)
from rmpeer.tables.topology import Floors, Topology

pytestmark = pytest.mark.offline


def check(outcome="passed", area="read/write", reason="", name="read"):
    return CheckResult(id=f"{name}/x", check=name, area=area, subject="one-per-card s0->t1", outcome=outcome,
                       reason=reason, layout="one-per-card")


def finding(severity, found="233 GB/s"):
    return Finding("bandwidth-floor", "read 0->1", "at least 355 GB/s", found, severity)


@pytest.mark.parametrize("findings, checks, want", [
    ([], [check()], CERTIFIED),
    ([], [], INCOMPLETE),                                            # no hardware check ran
    ([], [check("skipped")], INCOMPLETE),
    ([finding(INFO)], [check()], CERTIFIED),
    ([finding(DEGRADE)], [check()], DEGRADED),
    ([], [check("failed", area="fitness", reason="x")], DEGRADED),
    ([finding(DEGRADE)], [check("failed", reason="wrong memory")], NOT_CERTIFIED),
    ([finding(FAIL)], [check()], NOT_CERTIFIED),
    ([], [check("error", reason="setup refused")], NOT_CERTIFIED),
    ([finding(UNFINISHED)], [check("failed", reason="x")], INCOMPLETE),   # a cut run outranks a failure
], ids=["clean", "nothing-ran", "all-skipped", "info-only", "degraded", "fitness-check-failed",
        "fail-beats-degraded", "fail-finding", "error", "unfinished-beats-fail"])
def test_the_verdict(findings, checks, want):
    got, reasons = verdict(findings, checks)
    assert got == want
    assert (reasons == []) == (want == CERTIFIED)


def test_no_check_run_says_so():
    got, reasons = verdict([], [])
    assert got == INCOMPLETE and reasons == ["run: host: expected at least one hardware check run, "
                                             "found no hardware check ran"]


def test_exit_codes_are_the_documented_ones():
    # errors.py's table: 0, 1, 4, 5; exit 1 is NOT CERTIFIED alone
    assert EXIT_CODES == {CERTIFIED: 0, NOT_CERTIFIED: 1, DEGRADED: 4, INCOMPLETE: 5}
    assert {v: RunResult(verdict=v).exit_code for v in EXIT_CODES} == EXIT_CODES


def test_one_reason_per_cause_and_no_class_names():
    checks = [check("failed", reason="read: one-per-card s0->t1: expected the buffer pattern of session 1, "
                                     "found session 0")] * 5
    result = RunResult(checks=checks)
    got, reasons, _ = judge(result)
    assert got == NOT_CERTIFIED and len(reasons) == 1
    assert "expected" in reasons[0] and "found" in reasons[0]
    assert "Error" not in reasons[0] and "rmpeer." not in reasons[0]


def test_bandwidth_findings_name_the_floor_and_the_clocks():
    floors = Floors(cross_card_gbps=355.0, same_card_gbps=500.0, bidirectional_gbps=650.0)
    topo = Topology("h200x2-nv18", "", 2, "H200", {}, {}, {}, floors)
    figures = [{"src_card": 1, "dst_card": 0, "op": "read", "bytes": 256 << 20, "gbps": 233.1},
               {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 256 << 20, "gbps": 394.0}]
    clocks = {"after-traffic": {0: {"graphics_mhz": 345, "memory_mhz": 3201, "pstate": "P0"}}}
    found = bandwidth_findings(topo, figures, clocks)
    below = [f for f in found if f.subject == "read 1->0"]
    assert below and below[0].severity == DEGRADE
    assert "at least 355 GB/s" in below[0].expected
    assert "233.1 GB/s, below the floor of 355 GB/s" in below[0].found
    assert "345 MHz" in below[0].found
    assert [f.subject for f in bandwidth_findings(None, figures, clocks)] == ["read 1->0"]   # far below its sibling


def test_an_xid_is_allowed_only_when_a_detection_test_provoked_it():
    seen = {"readable": True, "xids": [{"xid": 31, "pci": None, "text": "Xid 31: MMU fault"}]}
    assert [f.severity for f in xid_findings(seen, [], [], set())] == [DEGRADE]
    assert xid_findings(seen, [], [("unknown", 31)], set()) == []
    assert xid_findings(seen, [], [], {31}) == []                    # the recorded run's detection test
    assert [f.severity for f in xid_findings(seen, [], [], {43})] == [DEGRADE]


# -- issue 27: rules the whole suite once let through, each with its mutant in
#    tests/source_mutation.py (MUTANTS), which the harness applies to the source ---------------

# The driver's own Xid line (xids.py quotes kernel_rc.c), written here by hand for one card.
XID31 = "NVRM: Xid (PCI:0000:18:00): 31, pid=4242, name=python3, Ch 00000008, intr 00000000. MMU Fault"


def one_card():
    from rmpeer.model.host import Card

    return [Card(0, 0, 6, "0000:18:00.0", 0x2335, uuid="GPU-a")]


def test_one_allowance_covers_one_provoked_xid():
    """Row 1: a detection test provokes one Xid 31 on card 0; a second Xid 31 is the host's."""
    from rmpeer.machine.xids import parse_xid

    seen = {"readable": True, "xids": [parse_xid(XID31), parse_xid(XID31)]}
    got = xid_findings(seen, one_card(), [(0, 31)], set())
    assert [(f.check, f.subject, f.severity) for f in got] == [("xid", "card 0", DEGRADE)]
    assert got[0].found.startswith("Xid 31: pid=4242")
    assert xid_findings({"readable": True, "xids": [parse_xid(XID31)]}, one_card(), [(0, 31)], set()) == []


def test_a_boost_rm_refused_degrades():
    """Row 2: RM answered the boost with NV_ERR_NOT_SUPPORTED (a status of matrices/statuses)
    on card 0: the host was measured at clocks nobody raised, so it is DEGRADED."""
    from types import SimpleNamespace

    from rmpeer.judge.verdict import boost_findings

    fitness = SimpleNamespace(clocks={"idle": {0: {"pstate": "P0", "graphics_mhz": 345}}},
                              boost=SimpleNamespace(failures={0: "NV_ERR_NOT_SUPPORTED"}))
    got = boost_findings(fitness)
    assert [(f.check, f.subject, f.severity) for f in got] == [("boost", "card 0", DEGRADE)]
    assert "NV_ERR_NOT_SUPPORTED" in got[0].found
    assert verdict(got, [check()])[0] == DEGRADED


def test_a_figure_on_the_floor_is_a_warning_not_a_failure():
    """Row 3: the rule is "below the floor": 355.0 GB/s against the floor of 355 (h200x2-nv18
    in matrices/topologies.yaml, read here with yaml) is within the warning band, not below."""
    import yaml

    from rmpeer.judge.floors import FAIL as BELOW, WARN, judge_bandwidth
    from rmpeer.paths import matrices_dir
    from rmpeer.tables.topology import TopologyMatrix

    stated = yaml.safe_load((matrices_dir() / "topologies.yaml").read_text())
    floor = next(t for name, t in stated["topologies"].items() if name == "h200x2-nv18")["floors"]["cross_card_gbps"]
    topology = TopologyMatrix().get("h200x2-nv18")
    on = {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": float(floor)}
    below = dict(on, src_card=1, dst_card=0, gbps=floor - 0.1)
    levels = {x["pair"]: x["level"] for x in judge_bandwidth(topology, [on, below])}
    assert levels == {"0->1": WARN, "1->0": BELOW}
    assert [f.subject for f in bandwidth_findings(topology, [on, below], {})] == ["read 1->0"]


def test_link_counter_growth_is_judged_by_the_judge():
    """The one counter-growth rule (rmpeer.judge.nvlink through judge.link_findings), on two
    hand-made readings of card 1: flit CRC 0 -> 5 over the run degrades the verdict; the
    lane counts the link's FEC repaired (crc_lanes) grow on healthy links and are not judged."""
    link = lambda crc, lanes: {"index": 3, "state": "ACTIVE", "active": True, "connected": True,
                               "counters": {"crc": crc, "crc_lanes": lanes}}
    reading = lambda crc, lanes: {"card": 1, "supported": True, "active": 1, "links": [link(crc, lanes)]}
    from rmpeer.judge.verdict import link_findings

    got = link_findings(1, reading(0, 11), reading(5, 33), None)
    assert [(f.check, f.subject, f.found, f.severity) for f in got] == [
        ("nvlink-errors", "card 1", "card 1 link 3: crc 0 -> 5", DEGRADE)]
    assert link_findings(1, reading(0, 11), reading(0, 33), None) == []
    assert judge(RunResult(findings=got, checks=[check()]))[0] == DEGRADED
    unreadable = dict(reading(0, 0), counters_reason="NV2080_CTRL_CMD_NVLINK_GET_COUNTERS: errno 5")
    assert [f.severity for f in link_findings(1, reading(0, 0), unreadable, None)] == [UNFINISHED]


@pytest.mark.parametrize("refused", [
    {"card": 1, "supported": False, "reason": "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS: errno 5", "links": [],
     "active": 0},
    {"card": 1, "supported": True, "reason": "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS: errno 5", "links": [],
     "active": 0}], ids=["caps", "status"])
def test_a_link_reading_rm_refused_at_the_runs_end_is_never_a_pass(refused):
    """The links read whole at the start and refused by RM at the end (the two refusals
    rm.nvlink.link_health returns): no counter can be compared over the run, so the run has
    not made its check (verdict.py: counters RM would not give are never a pass): INCOMPLETE,
    saying RM's refusal; never a pass, and no link said disabled that RM never said was."""
    from rmpeer.judge.verdict import link_findings

    up = {"index": 3, "state": "ACTIVE", "active": True, "connected": True, "counters": {"crc": 0}}
    start = {"card": 1, "supported": True, "active": 1, "links": [up], "counters_reason": None}
    got = link_findings(1, start, refused, None)
    assert [(f.check, f.subject, f.found, f.severity) for f in got] == [
        ("nvlink-errors", "card 1", refused["reason"], UNFINISHED)]
    assert judge(RunResult(findings=got, checks=[check()]))[0] == INCOMPLETE


def test_a_link_reading_rm_refused_is_never_a_pass():
    """A card whose NVLink caps RM refused (errno 5) is not a card without NVLink."""
    from rmpeer.judge.verdict import link_state_findings

    refused = {"card": 0, "supported": False, "reason": "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS: errno 5"}
    assert [(f.check, f.severity) for f in link_state_findings(0, refused, None)] == [("nvlink", UNFINISHED)]
    none = {"card": 0, "supported": False, "reason": "RM reports no NVLink on this card"}
    assert link_state_findings(0, none, None) == []


def test_a_card_without_nvlink_on_an_nvlink_topology_degrades():
    """h200x2-nv18 states 18 NVLinks per card (matrices/topologies.yaml, read with yaml); a
    card RM says has none is not that host at full fitness."""
    import yaml

    from rmpeer.judge.verdict import link_state_findings
    from rmpeer.paths import matrices_dir
    from rmpeer.tables.topology import TopologyMatrix

    links = yaml.safe_load((matrices_dir() / "topologies.yaml").read_text())["topologies"]["h200x2-nv18"]["links"]
    none = {"card": 1, "supported": False, "reason": "RM reports no NVLink on this card"}
    got = link_state_findings(1, none, TopologyMatrix().get("h200x2-nv18"))
    assert [(f.check, f.expected, f.found, f.severity) for f in got] == [
        ("nvlink-active", f"{links['count']} active NVLinks", "no NVLink", DEGRADE)]


def test_a_reason_counts_the_subjects_it_stands_for():
    """One reason per distinct text; the subjects it covers counted once each (docstring of
    verdict): the same failure of one pair three times is one subject, of four pairs four."""
    def failed(subject):
        return CheckResult(id=f"read/{subject}", check="read", area="read/write", subject=subject, outcome="failed",
                           reason="wrong memory")

    assert verdict([], [failed("pair 0->1")] * 3) == (NOT_CERTIFIED, ["wrong memory (read: pair 0->1)"])
    assert verdict([], [failed("pair 0->1"), failed("pair 1->0")] * 2) == (
        NOT_CERTIFIED, ["wrong memory (2 checks: pair 0->1, pair 1->0)"])
    four = [failed(f"pair {s}->{t}") for s, t in ((0, 1), (1, 0), (0, 0), (1, 1))]
    assert verdict([], four) == (NOT_CERTIFIED, ["wrong memory (4 checks: pair 0->1, pair 1->0, pair 0->0 and 1 more)"])


def test_a_card_without_a_p_state_degrades():
    """The clocks read at the run's start (hand-made): RM gave card 1 no P-state, so its clocks
    cannot be told; card 0's reading is whole. No boost was asked (--no-boost)."""
    from types import SimpleNamespace

    from rmpeer.judge.verdict import boost_findings

    fitness = SimpleNamespace(clocks={"idle": {0: {"pstate": "P0", "graphics_mhz": 1980},
                                               1: {"pstate": None, "graphics_mhz": 1980}}}, boost=None)
    assert [(f.check, f.subject, f.found, f.severity) for f in boost_findings(fitness)] == [
        ("clocks", "card 1", "none", DEGRADE)]


def test_the_topology_asked_for_gives_the_floors():
    """--expect-topology h200x1 on the recorded 2 x H200 host (its host facts, from the quick
    recording): the floors are h200x1's as matrices/topologies.yaml states them (no cross-card
    floor), not those of the entry the host matches (h200x2-nv18, 355 GB/s across cards)."""
    import yaml

    from rmpeer.judge.floors import floors_for
    from rmpeer.paths import matrices_dir, transcripts_dir
    from rmpeer.model.host import HostFacts
    from rmpeer.shim.replay import recorded_note
    from rmpeer.tables.topology import TopologyMatrix

    stated = yaml.safe_load((matrices_dir() / "topologies.yaml").read_text())["topologies"]
    facts = HostFacts.from_dict(recorded_note(transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz", "host")["facts"])
    floors, source, missing = floors_for(facts, TopologyMatrix(), expected="h200x1")
    assert (source, missing, floors.cross_card_gbps, floors.same_card_gbps) == (
        "expected:h200x1", None, stated["h200x1"]["floors"].get("cross_card_gbps"),
        stated["h200x1"]["floors"]["same_card_gbps"])
    floors, source, _ = floors_for(facts, TopologyMatrix())
    assert (source, floors.cross_card_gbps) == ("match:h200x2-nv18", stated["h200x2-nv18"]["floors"]["cross_card_gbps"])


# -- gaps a mutant hunt found (tests/source_mutation.py MUTANTS names each) ---------------------

def test_an_info_finding_never_hides_a_failed_check_of_the_same_words():
    """A check is left out of the reasons only when a finding that counts (FAIL, DEGRADE,
    UNFINISHED) already says it (check_findings' docstring); an INFO finding is a note, not a
    verdict: a failed check with the same words still fails the run."""
    note = finding(INFO, found="233 GB/s")
    failed = check("failed", reason=note.text)
    got, reasons = verdict([note], [failed])
    assert got == NOT_CERTIFIED and [r.startswith(note.text) for r in reasons] == [True]


def test_a_check_reason_that_only_begins_with_a_findings_words_is_its_own_reason():
    """The passive tier's check reason is its findings' texts joined by "; "; a check whose
    reason merely begins with a finding's text says more than it, so it is a failure of its own."""
    slow = finding(DEGRADE)
    failed = check("failed", reason=slow.text + " and the copy returned the wrong bytes")
    got, reasons = verdict([slow], [failed])
    assert got == NOT_CERTIFIED and [r.startswith(failed.reason) for r in reasons] == [True]
    joined = check("failed", reason=slow.text + "; " + finding(DEGRADE, found="240 GB/s").text)
    assert verdict([slow], [joined])[0] == DEGRADED


def test_a_boost_rm_accepted_that_lowered_the_clocks_degrades():
    """RM accepted the boost (no failures) but card 0's graphics clock is lower after it than
    at idle (hand-made readings): the cards were measured below the clocks the run asked for."""
    from types import SimpleNamespace

    from rmpeer.judge.verdict import boost_findings

    fitness = SimpleNamespace(clocks={"idle": {0: {"pstate": "P0", "graphics_mhz": 1980},
                                               1: {"pstate": "P0", "graphics_mhz": 1980}},
                                      "boosted": {0: {"pstate": "P0", "graphics_mhz": 1950},
                                                  1: {"pstate": "P0", "graphics_mhz": 1980}}},
                              boost=SimpleNamespace(failures={}))
    assert [(f.check, f.subject, f.expected, f.found, f.severity) for f in boost_findings(fitness)] == [
        ("boost", "card 0", "a graphics clock of at least 1980 MHz after the boost", "1950 MHz", DEGRADE)]
    fitness.clocks["boosted"][0]["graphics_mhz"] = 1979       # "at least": one MHz below is below
    assert [f.found for f in boost_findings(fitness)] == ["1979 MHz"]


def test_a_link_status_rm_refused_on_an_nvlink_card_is_never_a_pass():
    """RM said the card has NVLink (caps read) but refused the link status control: the reading
    rm.nvlink.link_health gives then ({"supported": True, "reason": ...}, no links) cannot show
    the links up, on a host with a topology or without one."""
    from rmpeer.judge.verdict import link_state_findings
    from rmpeer.tables.topology import TopologyMatrix

    refused = {"card": 0, "supported": True, "reason": "NV2080_CTRL_CMD_NVLINK_GET_LINK_AND_CLOCK_INFO: errno 5",
               "links": [], "active": 0}
    for topology in (None, TopologyMatrix().get("h200x2-nv18")):
        got = link_state_findings(0, refused, topology)
        assert [(f.check, f.found, f.severity) for f in got] == [("nvlink", refused["reason"], UNFINISHED)]


def test_an_allowance_for_one_card_does_not_cover_the_same_xid_on_another():
    """A detection test provoked Xid 31 on card 0 (allowance (0, 31)); the same Xid on card 1
    (its bus 0000:2a:00, in the driver's own line format) is the host's and degrades."""
    from rmpeer.machine.xids import parse_xid
    from rmpeer.model.host import Card

    cards = one_card() + [Card(1, 0, 7, "0000:2a:00.0", 0x2335, uuid="GPU-b")]
    seen = {"readable": True, "xids": [parse_xid(XID31.replace("0000:18:00", "0000:2a:00"))]}
    got = xid_findings(seen, cards, [(0, 31)], set())
    assert [(f.check, f.subject, f.severity) for f in got] == [("xid", "card 1", DEGRADE)]


def test_a_failed_checks_reason_names_its_layout_and_window():
    """Two layouts both have a window s0->t1: a reason says which layout's failed (the
    plugin records a window's subject "s0->t1" and its layout apart)."""
    failed = CheckResult(id="read/two-per-card/s0->t1", check="read", area="read/write", subject="s0->t1",
                         outcome="failed", reason="wrong memory", layout="two-per-card")
    assert verdict([], [failed]) == (NOT_CERTIFIED, ["wrong memory (read: two-per-card s0->t1)"])


def test_three_subjects_are_all_named_and_a_fourth_is_and_more():
    def failed(subject):
        return CheckResult(id=f"read/{subject}", check="read", area="read/write", subject=subject, outcome="failed",
                           reason="wrong memory")

    three = [failed(f"pair {s}->{t}") for s, t in ((0, 1), (1, 0), (0, 0))]
    assert verdict([], three) == (NOT_CERTIFIED, ["wrong memory (3 checks: pair 0->1, pair 1->0, pair 0->0)"])


def test_a_reason_is_cut_to_at_most_300_characters():
    """REASON_CHARS bounds a reason: 300 characters are kept whole, 301 are cut to 300."""
    from rmpeer.judge.verdict import short

    assert short("x" * 300) == "x" * 300
    assert short("x" * 301) == "x" * 297 + "..."


def test_the_certificate_says_a_figure_on_the_floor_met_it():
    """The certificate's judged figures say whether each met its floor; the rule is "below the
    floor" fails (h200x2-nv18's 355 GB/s, read with yaml): 355.0 met it, 354.9 did not."""
    import yaml

    from rmpeer.judge.floors import HostFloors, judged_figures
    from rmpeer.paths import matrices_dir
    from rmpeer.tables.topology import TopologyMatrix

    floor = yaml.safe_load((matrices_dir() / "topologies.yaml").read_text())["topologies"]["h200x2-nv18"][
        "floors"]["cross_card_gbps"]
    floors = HostFloors.calibrated(TopologyMatrix().get("h200x2-nv18").floors, "h200x2-nv18")
    on = {"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": float(floor)}
    below = dict(on, src_card=1, dst_card=0, gbps=floor - 0.1)
    assert [(j["pair"], j["floor"], j["met"]) for j in judged_figures(floors, [on, below])] == [
        ("0->1", floor, True), ("1->0", floor, False)]


def test_a_card_rm_enables_no_nvlink_on_is_judged_only_where_links_are_expected():
    """check_active: the topology's count says whether NVLinks are expected at all; a card RM
    says has NVLink but enables none passes on a host without a topology, and degrades on
    h200x2-nv18 (18 links a card, matrices/topologies.yaml)."""
    from rmpeer.judge.nvlink import check_active

    none_enabled = {"card": 0, "supported": True, "links": [], "active": 0}
    assert check_active(none_enabled, None) == []
    assert check_active(none_enabled, 18) == ["card 0: RM enables no NVLink on this card (18 expected)"]


@pytest.mark.parametrize("unexpected, expected", [(False, NOT_CERTIFIED), (True, INCOMPLETE)])
def test_a_check_stopped_by_an_error_rmpeer_did_not_expect_says_nothing_of_the_host(unexpected, expected):
    """Exit 1 is the judge's word on the host: a check that stopped on rmpeer's own error
    (CheckResult.unexpected) could not be made, so the run is INCOMPLETE, never NOT CERTIFIED."""
    from rmpeer.judge.verdict import verdict
    from rmpeer.model.result import CheckResult

    checks = [CheckResult("read/a", "read", "read/write", "s0->t1", "passed"),
              CheckResult("read/b", "read", "read/write", "s1->t0", "failed",
                          reason="the check stopped on an unexpected error: bad runs", unexpected=unexpected)]
    got, reasons = verdict([], checks)
    assert got == expected and reasons == ["the check stopped on an unexpected error: bad runs (read: s1->t0)"]
