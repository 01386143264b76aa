"""judge_health: every row of docs/health.md's severity table, on the real facts of 1 x H200
(docs/evidence/h200x1-20261201T0928Z-health-probe/nobody.json, as rm.health decoded them there)
with one fact changed; each row also has a mutant of the judge that the row's test kills.

The severities expected are the table's (docs/health.md), written here once more by hand:
the table is the specification, the judge its implementation."""

import copy
import json
from pathlib import Path

import pytest

from rmpeer.judge.verdict import verdict
from rmpeer.judge.health import health_findings
from rmpeer.model.result import DEGRADE, FAIL, INFO, CheckResult, Finding

pytestmark = pytest.mark.offline
PROBE = json.loads((Path(__file__).resolve().parents[2] / "docs" / "evidence" /
                    "h200x1-20261201T0928Z-health-probe" / "nobody.json").read_text())


def real_host(cards: int = 1) -> dict:
    """The probe's facts in HostFacts.as_dict()'s shape (`cards` copies of its one card)."""
    card = PROBE["cards"][0]
    return {"health": copy.deepcopy(PROBE["system"]),
            "cards": [{"index": i, "health": copy.deepcopy(card["health"])} for i in range(cards)]}


def card_fact(name, **changes):
    def change(host):
        host["cards"][0]["health"][name].update(changes)
    return change


def system_fact(name, **changes):
    def change(host):
        host["health"][name].update(changes)
    return change


def mask(**changes):
    def change(host):
        host["cards"][0]["health"]["fabric_probe"]["health_mask"].update(changes)
    return change


NVSWITCH_PROBE = {"state": "COMPLETE", "probe_status": "NV_OK", "health_summary": "HEALTHY"}
# row -> (change to the real facts, topology link kind, severity, a fragment of the finding,
#         the judge's code the row rests on and what the mutant puts there)
ROWS = {
    "fabric-uninitialised": (system_fact("fabric", state="UNINITIALIZED"), "nvswitch", FAIL,
                             "start nvidia-fabricmanager",
                             ("if needed and state in FABRIC_NOT_READY:", "if False:")),
    "fabric-in-progress": (system_fact("fabric", state="IN_PROGRESS"), "nvswitch", FAIL, "still initialising",
                           ("if needed and state in FABRIC_NOT_READY:", "if False:")),
    "fabric-probe-not-started": (card_fact("fabric_probe", state="NOT_STARTED"), "nvswitch", FAIL, "probe NOT_STARTED",
                                 ('if state != "COMPLETE":', "if False:")),
    "fabric-probe-refused": (card_fact("fabric_probe", **{**NVSWITCH_PROBE, "probe_status": "NV_ERR_INVALID_STATE"}),
                             "nvswitch", FAIL, "NV_ERR_INVALID_STATE",
                             ('if fact.get("probe_status") != OK:', "if False:")),
    "fabric-unhealthy": (card_fact("fabric_probe", **{**NVSWITCH_PROBE, "health_summary": "UNHEALTHY"}), "nvswitch",
                         FAIL, "UNHEALTHY", ('if summary == "UNHEALTHY":', "if False:")),
    "fabric-limited": (card_fact("fabric_probe", **{**NVSWITCH_PROBE, "health_summary": "LIMITED_CAPACITY"}),
                       "nvswitch", DEGRADE, "LIMITED_CAPACITY", ('elif summary == "LIMITED_CAPACITY":', "elif False:")),
    "fabric-connection-unhealthy": (lambda h: (card_fact("fabric_probe", **NVSWITCH_PROBE)(h),
                                               mask(CONNECTION_UNHEALTHY="TRUE")(h)), "nvswitch", FAIL,
                                    "CONNECTION_UNHEALTHY TRUE", ('MASK_FAIL = ("CONNECTION_UNHEALTHY",)', "MASK_FAIL = ()")),
    "fabric-misconfigured": (lambda h: (card_fact("fabric_probe", **NVSWITCH_PROBE)(h),
                                        mask(INCORRECT_CONFIGURATION="NO_PARTITION")(h)), "nvswitch", FAIL,
                             "INCORRECT_CONFIGURATION NO_PARTITION",
                             ('if config not in (None, "NOT_SUPPORTED", "NONE"):', "if False:")),
    "fabric-degraded-bw": (lambda h: (card_fact("fabric_probe", **NVSWITCH_PROBE)(h), mask(DEGRADED_BW="TRUE")(h)),
                           "nvswitch", DEGRADE, "degraded bandwidth",
                           ('MASK_DEGRADE = {"DEGRADED_BW"', 'MASK_DEGRADE = {"DEGRADED_BW_"')),
    "fabric-access-timeout": (lambda h: (card_fact("fabric_probe", **NVSWITCH_PROBE)(h),
                                         mask(ACCESS_TIMEOUT_RECOVERY="TRUE")(h)), "nvswitch", DEGRADE,
                              "recovering from an access timeout",
                              ('"ACCESS_TIMEOUT_RECOVERY": "the fabric', '"ACCESS_TIMEOUT_RECOVERY_": "the fabric')),
    "fabric-route-update": (lambda h: (card_fact("fabric_probe", **NVSWITCH_PROBE)(h), mask(ROUTE_UPDATE="TRUE")(h)),
                            "nvswitch", DEGRADE, "route update is in progress",
                            ('"ROUTE_UPDATE": "a fabric', '"ROUTE_UPDATE_": "a fabric')),
    "row-remap-failure": (card_fact("remapped_rows", failure=True), None, FAIL, "a row remapping failed",
                          ('if fact.get("failure"):', "if False:")),
    "row-remap-pending": (card_fact("remapped_rows", pending=True), None, DEGRADE, "a row remap is pending",
                          ('elif fact.get("pending"):', "elif False:")),
    "reset-required": (card_fact("reset", required=True), None, DEGRADE, "needs a reset",
                       ('elif reset.get("required"):', "elif False:")),
    "drain-recommended": (card_fact("drain", recommended=True), None, DEGRADE, "drain and reset",
                          ('elif drain.get("recommended"):', "elif False:")),
    "recovery-drain-p2p": (card_fact("recovery", action="DRAIN_P2P"), None, FAIL, "drain peer-to-peer",
                           ('"DRAIN_P2P": (FAIL,', '"DRAIN_P2P": (INFO,')),
    "recovery-node-reboot": (card_fact("recovery", action="NODE_REBOOT"), None, FAIL, "node reboot",
                             ('"NODE_REBOOT": (FAIL,', '"NODE_REBOOT": (INFO,')),
    "recovery-gpu-reset": (card_fact("recovery", action="GPU_RESET"), None, DEGRADE, "GPU reset",
                           ('"GPU_RESET": (DEGRADE,', '"GPU_RESET": (INFO,')),
    "recovery-drain-and-reset": (card_fact("recovery", action="DRAIN_AND_RESET"), None, DEGRADE, "drain the card",
                                 ('"DRAIN_AND_RESET": (DEGRADE,', '"DRAIN_AND_RESET": (INFO,')),
    "ecc-uncorrectable": (card_fact("ecc", uncorrectable="TRUE"), None, DEGRADE, "uncorrectable errors",
                          ('if fact.get("uncorrectable") == "TRUE" or', 'if fact.get("uncorrectable") == "TRUE_" or')),
    "ecc-dbe": (card_fact("ecc", dbe=3), None, DEGRADE, "3 double-bit since boot",
                ('or fact.get("dbe"):', 'or False:')),
    "ecc-fatal-poison": (card_fact("ecc", fatal_poison=True), None, DEGRADE, "fatal poison",
                         ('if fact.get("fatal_poison"):', "if False:")),
    "pcie-width": (card_fact("pcie", width=8), None, DEGRADE, "x8: the link trained below its width",
                   ('if fact["width"] < fact["max_width"]:', "if False:")),
    "pcie-upstream-gen": (card_fact("pcie", root_max_gen=4), None, DEGRADE, "cannot train above Gen4",
                          ("if root is not None and card_max is not None and root < card_max:", "if False:")),
    "mig-enabled": (card_fact("mig", mode="ENABLED"), None, FAIL, "MIG is ENABLED",
                    ('MIG_ON = ("ENABLED", "DISABLE_PENDING")', 'MIG_ON = ("DISABLE_PENDING",)')),
    "mig-disable-pending": (card_fact("mig", mode="DISABLE_PENDING"), None, FAIL, "MIG is DISABLE_PENDING",
                            ('MIG_ON = ("ENABLED", "DISABLE_PENDING")', 'MIG_ON = ("ENABLED",)')),
    "mig-enable-pending": (card_fact("mig", mode="ENABLE_PENDING"), None, DEGRADE, "at the next GPU reset",
                           ('elif mig.get("mode") == "ENABLE_PENDING":', "elif False:")),
    "cc-on": (system_fact("cc", feature="HCC_ENABLED"), None, DEGRADE, "it is on (HCC_ENABLED",
              ('if feature != "DISABLED":', "if False:")),
}


def judged(change=None, links=None, cards: int = 1):
    host = real_host(cards)
    if change:
        change(host)
    return health_findings(host, links)


def test_the_real_host_is_healthy_and_fully_checked():
    found, not_checked = judged()
    assert [f for f in found if f.severity != INFO] == [] and not_checked == []


@pytest.mark.parametrize("row", sorted(ROWS))
def test_each_row_gives_its_severity(row):
    change, links, severity, fragment, _ = ROWS[row]
    found, _ = judged(change, links)
    hits = [f for f in found if fragment in f.found and f.severity != INFO]
    assert [f.severity for f in hits] == [severity], [f.text for f in found]


@pytest.mark.parametrize("row", sorted(ROWS))
def test_each_row_has_a_mutant_its_test_kills(row):
    from source_mutation import mutated

    change, links, severity, fragment, (anchor, replacement) = ROWS[row]
    broken = mutated("rmpeer.judge.health", anchor, replacement)
    host = real_host()
    change(host)
    found, _ = broken.health_findings(host, links)
    assert [f.severity for f in found if fragment in f.found and f.severity != INFO] != [severity]


def test_cc_on_without_a_multi_gpu_mode_leaves_two_cards_no_peer_access():
    found, _ = judged(system_fact("cc", feature="HCC_ENABLED", multi_gpu="NONE"), cards=2)
    assert [f.severity for f in found if f.check == "confidential-compute"] == [FAIL]
    found, _ = judged(system_fact("cc", feature="HCC_ENABLED", multi_gpu="PROTECTED_PCIE"), cards=2)
    assert [f.severity for f in found if f.check == "confidential-compute"] == [DEGRADE]


def test_the_current_generation_is_not_judged_at_rest():
    found, _ = judged(card_fact("pcie", gen=1))
    assert [f for f in found if f.severity != INFO] == []


def test_a_fabric_fact_matters_only_where_the_host_needs_the_fabric():
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
    found, not_checked = judged(lambda h: h["health"].__setitem__("fabric", dict(refused)))
    # where it does not matter the recorded status alone says it: no finding, nothing unchecked
    assert not_checked == [] and [f for f in found if f.check == "fabric"] == []
    found, not_checked = judged(lambda h: h["health"].__setitem__("fabric", dict(refused)), "nvswitch")
    assert [c for c, _ in not_checked] == ["fabric"]
    assert [f.severity for f in found if f.check == "fabric"] == [INFO]     # rmpeer.judge.unchecked names it


@pytest.mark.parametrize("fact", ["ecc", "remapped_rows", "reset", "recovery", "pcie", "mig"])
def test_a_refused_card_fact_is_not_checked_never_passed(fact):
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
    found, not_checked = judged(lambda h: h["cards"][0]["health"].__setitem__(fact, dict(refused)))
    assert len(not_checked) == 1 and "card 0: answered NV_ERR_NOT_SUPPORTED" in not_checked[0][1]
    assert [f.severity for f in found if f.severity != INFO] == []


def test_drain_matters_only_on_a_mig_card():
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
    _, not_checked = judged(lambda h: h["cards"][0]["health"].__setitem__("drain", dict(refused)))
    assert not_checked == []


def test_a_recording_without_the_facts_says_not_recorded():
    gone = {"status": "not recorded", "reason": "the recording has no X call"}
    found, not_checked = judged(lambda h: h["cards"][0]["health"].__setitem__("ecc", dict(gone)))
    assert [f.found for f in found if f.check == "ecc"] == ["not recorded: the recording has no X call"]
    assert not_checked == [("ecc", "card 0: the recording has no X call")]


def test_the_fabric_reason_comes_before_the_peer_checks_it_explains():
    found, _ = judged(system_fact("fabric", state="UNINITIALIZED"), "nvswitch")
    peer = CheckResult("setup/one-per-card/s0->t1", "setup:p2p", "setup", "s0->t1", "failed",
                       "NV50_P2P answered NV_ERR_INVALID_STATE")
    name, reasons = verdict(found + [Finding("read", "pair 0->1", "the bytes", "wrong", FAIL)], [peer])
    assert name == "NOT CERTIFIED" and "start nvidia-fabricmanager" in reasons[0]


def test_the_status_names_agree_with_rm_health():
    from rmpeer.judge import health as judge_health
    from rmpeer.rm import health

    assert (judge_health.OK, judge_health.NOT_RECORDED) == (health.OK, health.NOT_RECORDED)


def test_a_card_outside_the_fabric_is_not_blamed_for_fabric_manager():
    found, _ = judged(system_fact("fabric", state="UNINITIALIZED"))     # the card's probe: UNSUPPORTED
    assert [f.check for f in found if f.severity == FAIL] == ["fabric"]
    found, _ = judged(system_fact("fabric", state="UNINITIALIZED"), "nvswitch")
    assert [f.check for f in found if f.severity == FAIL] == ["fabric", "fabric-probe"]


def test_a_host_without_facts_adds_nothing_to_what_the_run_says():
    assert health_findings({}) == ([], [])


def test_a_recording_older_than_the_health_calls_is_one_unchecked_statement():
    """Every fact 'not recorded' (a recording made before rmpeer read them): one INFO finding
    and one not-checked entry for the whole host, not one per fact (14 on one card)."""
    def unrecorded(host):
        for facts in [host["health"], *(c["health"] for c in host["cards"])]:
            for name in facts:
                facts[name] = {"status": "not recorded", "reason": f"the recording has no {name} call"}
    found, not_checked = judged(unrecorded, cards=2)
    assert [(f.check, f.severity) for f in found] == [("health", INFO)]
    assert not_checked == [("health", "host: the recording has no health call")]
    one_known = lambda h: (unrecorded(h), h["cards"][1]["health"].__setitem__("mig", {"status": "NV_OK", "mode": "DISABLED"}))  # noqa: E731
    _, partly = judged(one_known, cards=2)
    assert ("health", "host: the recording has no health call") not in partly   # not all unrecorded: fact by fact


def test_refused_confidential_computing_capabilities_are_not_checked_on_any_host():
    """docs/health.md: "The Confidential Computing capabilities matter on every host": RM
    refusing them is an INFO finding and a not_checked entry, on a one-card host without a
    fabric too."""
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
    found, not_checked = judged(lambda h: h["health"].__setitem__("cc", dict(refused)))
    assert not_checked == [("confidential-compute", "host: answered NV_ERR_NOT_SUPPORTED")]
    assert [(f.check, f.severity) for f in found] == [("confidential-compute", INFO)]


def test_a_recovery_action_the_headers_do_not_name_degrades():
    """docs/health.md: "GPU_RESET, DRAIN_AND_RESET, or a value the headers do not name": DEGRADED."""
    found, _ = judged(card_fact("recovery", action="17"))
    assert [(f.check, f.severity) for f in found] == [("recovery-action", DEGRADE)]


def test_a_pcie_link_whose_width_rm_read_as_zero_is_not_checked():
    """docs/health.md: "a width of 0 is 'not read'" (rm.health keeps it as None): the link is
    not judged, and says so, rather than passing or failing."""
    found, not_checked = judged(card_fact("pcie", width=None))
    assert not_checked == [("pcie-link", "card 0: RM gave no link width")]
    assert [(f.check, f.severity) for f in found] == [("pcie-link", INFO)]


def test_every_card_is_judged_not_only_the_first():
    """Two cards of the real facts, the second needing a reset (docs/health.md: reset
    required, DEGRADED): the finding is card 1's."""
    def second_needs_reset(host):
        host["cards"][1]["health"]["reset"].update(required=True)

    found, not_checked = judged(second_needs_reset, cards=2)
    assert [(f.check, f.subject, f.severity) for f in found if f.severity != INFO] == [("reset", "card 1", DEGRADE)]
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
    _, not_checked = judged(lambda h: h["cards"][1]["health"].__setitem__("ecc", dict(refused)), cards=2)
    assert not_checked == [("ecc", "card 1: answered NV_ERR_NOT_SUPPORTED")]


def test_a_fabric_state_of_skip_needs_no_fabric():
    """docs/health.md: the fabric facts matter where RM reports a fabric state other than SKIP.
    The real host's state is SKIP, its probe UNSUPPORTED: a probe RM then refuses is not a check
    left out; on the same host with the fabric INITIALIZED it is (not_checked, INFO)."""
    refused = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}

    def probe_refused(state):
        def change(host):
            host["health"]["fabric"]["state"] = state
            host["cards"][0]["health"]["fabric_probe"] = dict(refused)
        return change

    assert PROBE["system"]["fabric"]["state"] == "SKIP"
    found, not_checked = judged(probe_refused("SKIP"))
    assert not_checked == [] and [f for f in found if f.check == "fabric-probe"] == []
    found, not_checked = judged(probe_refused("INITIALIZED"))
    assert not_checked == [("fabric-probe", "card 0: answered NV_ERR_NOT_SUPPORTED")]
    assert [f.severity for f in found if f.check == "fabric-probe"] == [INFO]


def test_ecc_disabled_is_recorded_not_judged():
    """docs/health.md: ECC disabled is recorded (info), no verdict of its own."""
    found, _ = judged(card_fact("ecc", enabled=False, units_enabled=0))
    assert [(f.check, f.subject, f.found, f.severity) for f in found] == [("ecc", "card 0", "ECC is disabled", INFO)]
