"""Mutants of rmpeer/judge/health.py (issue 47, item 9; docs/mutation.md): each finding written
out whole (check, subject, expected, found, severity), its order, and what matters where, on
the real facts of 1 x H200 (docs/evidence/h200x1-20261201T0928Z-health-probe/nobody.json) with
one fact changed. The severities are docs/health.md's table; the words are written here by hand,
never taken from the judge's answer."""

import copy
import json
from pathlib import Path

import pytest

from rmpeer.judge import health as h
from rmpeer.judge.health import health_findings, needs_fabric
from rmpeer.model.result import DEGRADE, FAIL, INFO, Finding

pytestmark = pytest.mark.offline
PROBE = json.loads((Path(__file__).resolve().parents[2] / "docs" / "evidence" /
                    "h200x1-20261201T0928Z-health-probe" / "nobody.json").read_text())
REFUSED = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "answered NV_ERR_NOT_SUPPORTED"}
COMPLETE = {"status": "NV_OK", "state": "COMPLETE", "probe_status": "NV_OK", "health_summary": "HEALTHY"}


def host(cards=1):
    return {"health": copy.deepcopy(PROBE["system"]),
            "cards": [{"index": i, "health": copy.deepcopy(PROBE["cards"][0]["health"])} for i in range(cards)]}


def card(hst, i=0):
    return hst["cards"][i]["health"]


def judged_not_info(hst, links=None):
    found, not_checked = health_findings(hst, links)
    return [f for f in found if f.severity != INFO], not_checked


# -- what was read, and why not --------------------------------------------------------------

def test_a_fact_is_read_only_as_a_dict_whose_status_is_nv_ok():
    assert h._read({"status": "NV_OK"}) is True
    assert h._read({"status": "NV_ERR_NOT_SUPPORTED"}) is False
    assert h._read({}) is False
    assert h._read(None) is False and h._read("NV_OK") is False and h._read(["NV_OK"]) is False


def test_why_a_fact_was_not_read():
    assert h._why(None) == "not read" and h._why("x") == "not read"
    assert h._why({"status": "NV_ERR_X", "reason": "answered NV_ERR_X"}) == "answered NV_ERR_X"
    assert h._why({"status": "NV_ERR_X", "reason": ""}) == "NV_ERR_X"
    assert h._why({"status": "NV_ERR_X"}) == "NV_ERR_X"
    assert h._why({}) == "not read" and h._why({"status": "", "reason": None}) == "not read"


def test_an_unread_fact_that_matters_is_an_info_finding_and_an_entry():
    out, entries = [], []
    h._unread("ecc", "card 3", {"status": "not recorded", "reason": "no ecc call"}, True, out, entries)
    h._unread("mig", "card 4", {"status": "NV_ERR_X", "reason": "answered NV_ERR_X"}, True, out, entries)
    h._unread("reset", "card 5", None, True, out, entries)
    h._unread("drain", "card 6", REFUSED, False, out, entries)          # does not matter: nothing
    assert out == [Finding("ecc", "card 3", "ecc from RM", "not recorded: no ecc call", INFO),
                   Finding("mig", "card 4", "mig from RM", "not read: answered NV_ERR_X", INFO),
                   Finding("reset", "card 5", "reset from RM", "not read: not read", INFO)]
    assert entries == [("ecc", "card 3: no ecc call"), ("mig", "card 4: answered NV_ERR_X"), ("reset", "card 5: not read")]


# -- whether the host needs the fabric --------------------------------------------------------

def test_the_fabric_is_needed_by_the_topology_or_by_what_rm_says():
    real = host()              # fabric SKIP, the probe UNSUPPORTED
    assert needs_fabric(real) is False and needs_fabric(real, "pcie") is False
    assert needs_fabric(real, "nvswitch") is True
    for state in ("UNINITIALIZED", "IN_PROGRESS", "INITIALIZED"):
        changed = host()
        changed["health"]["fabric"]["state"] = state
        assert needs_fabric(changed) is True, state
    refused = host()
    refused["health"]["fabric"] = dict(REFUSED, state="INITIALIZED")    # not read: not RM's word
    assert needs_fabric(refused) is False
    probed = host(2)
    card(probed, 1)["fabric_probe"]["state"] = "COMPLETE"                # the second card's probe
    assert needs_fabric(probed) is True
    unread_probe = host()
    card(unread_probe)["fabric_probe"] = dict(REFUSED, state="COMPLETE")
    assert needs_fabric(unread_probe) is False
    assert needs_fabric({}) is False
    assert needs_fabric({"health": None, "cards": [{"index": 0}, {"index": 1, "health": None}]}) is False


# -- the host as a whole ----------------------------------------------------------------------

def test_no_card_adds_nothing_and_no_fact_at_all_is_one_statement():
    assert health_findings({"health": {"fabric": dict(REFUSED)}, "cards": []}) == ([], [])
    statement = ([Finding("health", "host", "RM's health facts", "not recorded: the recording has no health call", INFO)],
                 [("health", "host: the recording has no health call")])
    assert health_findings({"cards": [{"index": 0}]}) == statement
    assert health_findings({"health": {}, "cards": [{"index": 0, "health": {}}]}) == statement
    # one fact that is not a dict among the unrecorded ones: judged fact by fact
    odd = {"health": {"fabric": "junk"}, "cards": [{"index": 0, "health": {"ecc": {"status": "not recorded"}}}]}
    found, _ = health_findings(odd)
    assert ("health", "host") not in [(f.check, f.subject) for f in found]
    assert [f.check for f in found] == ["confidential-compute", "mig", "row-remap", "reset", "recovery-action", "ecc",
                                        "pcie-link"]


def test_every_unread_fact_of_a_card_in_the_order_judged():
    hst = {"health": {"fabric": {"status": "NV_ERR_F", "reason": "f"}, "cc": {"status": "NV_ERR_C"}},
           "cards": [{"index": 7, "health": {"fabric_probe": {"status": "NV_ERR_P", "reason": "p"}}}]}
    found, not_checked = health_findings(hst, "nvswitch")
    assert [(f.check, f.subject, f.expected, f.found, f.severity) for f in found] == [
        ("fabric", "host", "fabric from RM", "not read: f", INFO),
        ("confidential-compute", "host", "confidential-compute from RM", "not read: NV_ERR_C", INFO),
        ("mig", "card 7", "mig from RM", "not read: not read", INFO),
        ("fabric-probe", "card 7", "fabric-probe from RM", "not read: p", INFO),
        ("row-remap", "card 7", "row-remap from RM", "not read: not read", INFO),
        ("reset", "card 7", "reset from RM", "not read: not read", INFO),
        ("recovery-action", "card 7", "recovery-action from RM", "not read: not read", INFO),
        ("ecc", "card 7", "ecc from RM", "not read: not read", INFO),
        ("pcie-link", "card 7", "pcie-link from RM", "not read: not read", INFO)]
    assert not_checked == [("fabric", "host: f"), ("confidential-compute", "host: NV_ERR_C"), ("mig", "card 7: not read"),
                           ("fabric-probe", "card 7: p"), ("row-remap", "card 7: not read"), ("reset", "card 7: not read"),
                           ("recovery-action", "card 7: not read"), ("ecc", "card 7: not read"),
                           ("pcie-link", "card 7: not read")]


# -- the fabric and Confidential Computing ----------------------------------------------------

@pytest.mark.parametrize("state, words", [
    ("UNINITIALIZED", "Fabric Manager has not initialised the NVSwitch fabric: start nvidia-fabricmanager "
                      "(systemctl start nvidia-fabricmanager), then run again"),
    ("IN_PROGRESS", "Fabric Manager is still initialising the NVSwitch fabric: wait until nvidia-fabricmanager "
                    "reports it ready, then run again")])
def test_a_fabric_not_ready_is_one_fail_in_words(state, words):
    hst = host()
    hst["health"]["fabric"]["state"] = state
    card(hst)["fabric_probe"].update(COMPLETE)
    found, _ = judged_not_info(hst)
    assert found == [Finding("fabric", "host", "the NVSwitch fabric initialised by Fabric Manager (INITIALIZED)",
                             f"{state}: {words}", FAIL)]


def test_a_fabric_state_matters_only_where_the_fabric_is_needed():
    out = []
    h._fabric({"status": "NV_OK", "state": "UNINITIALIZED"}, False, out, [])
    h._fabric({"status": "NV_OK", "state": "INITIALIZED"}, True, out, [])
    h._fabric({"status": "NV_OK", "state": "SKIP"}, True, out, [])
    assert out == []


def test_confidential_computing_on_each_case_in_words():
    def cc(cards, **fact):
        hst = host(cards)
        hst["health"]["cc"] = {"status": "NV_OK", **fact}
        return [f for f in health_findings(hst)[0] if f.check == "confidential-compute"]

    assert cc(2, feature="HCC_ENABLED", multi_gpu="NONE", devtools="DISABLED") == [Finding(
        "confidential-compute", "host", "Confidential Computing off, or on with a multi-GPU mode",
        "Confidential Computing is on (HCC_ENABLED) with no multi-GPU mode: the cards have no peer access", FAIL)]
    assert cc(2, feature="APM_ENABLED") == cc(2, feature="APM_ENABLED", multi_gpu="NONE")      # no mode given: NONE
    assert cc(1, feature="HCC_ENABLED", multi_gpu="NONE") == [Finding(
        "confidential-compute", "host", "Confidential Computing off (feature DISABLED)",
        "it is on (HCC_ENABLED, multi-GPU mode NONE): copies are encrypted, the floors do not hold", DEGRADE)]
    assert cc(1, feature="APM_ENABLED") == [Finding(
        "confidential-compute", "host", "Confidential Computing off (feature DISABLED)",
        "it is on (APM_ENABLED, multi-GPU mode NONE): copies are encrypted, the floors do not hold", DEGRADE)]
    assert cc(2, feature="HCC_ENABLED", multi_gpu="PROTECTED_PCIE") == [Finding(
        "confidential-compute", "host", "Confidential Computing off (feature DISABLED)",
        "it is on (HCC_ENABLED, multi-GPU mode PROTECTED_PCIE): copies are encrypted, the floors do not hold", DEGRADE)]
    assert cc(2, feature="DISABLED", multi_gpu="NONE") == []
    assert cc(1, feature="DISABLED", devtools="ENABLED") == [Finding(
        "confidential-compute", "host", "dev tools mode off", "dev tools mode ENABLED", INFO)]
    assert cc(1, feature="DISABLED") == [] and cc(1, feature="DISABLED", devtools="DISABLED") == []


# -- a card -----------------------------------------------------------------------------------

MIG_FAIL = ("MIG is {}: the card has no peer access, the peer checks do not apply; disable it "
            "(nvidia-smi -i N -mig 0) and reset the card")


@pytest.mark.parametrize("mode", ["ENABLED", "DISABLE_PENDING"])
def test_mig_on_is_a_fail_and_makes_the_drain_status_matter(mode):
    hst = host()
    card(hst)["mig"]["mode"] = mode
    card(hst)["drain"] = dict(REFUSED)
    found, not_checked = health_findings(hst)
    assert found == [Finding("mig", "card 0", "MIG disabled (peer access needs the whole card)", MIG_FAIL.format(mode), FAIL),
                     Finding("drain", "card 0", "drain from RM", "not read: answered NV_ERR_NOT_SUPPORTED", INFO)]
    assert not_checked == [("drain", "card 0: answered NV_ERR_NOT_SUPPORTED")]


def test_mig_pending_or_off_and_an_unread_mig():
    hst = host()
    card(hst)["mig"]["mode"] = "ENABLE_PENDING"
    card(hst)["drain"] = dict(REFUSED)                  # MIG is not on yet: the drain does not matter
    assert health_findings(hst) == ([Finding("mig", "card 0", "MIG disabled", "MIG is enabled at the next GPU reset",
                                             DEGRADE)], [])
    for mode in ("DISABLED", "UNSUPPORTED"):
        hst = host()
        card(hst)["mig"]["mode"] = mode
        assert health_findings(hst) == ([], [])
    hst = host()
    card(hst)["mig"] = {"status": "NV_ERR_X", "mode": "ENABLED"}     # not read: not on, not a fail
    card(hst)["drain"] = dict(REFUSED)
    assert health_findings(hst) == ([Finding("mig", "card 0", "mig from RM", "not read: NV_ERR_X", INFO)],
                                    [("mig", "card 0: NV_ERR_X")])


def test_a_drain_recommended_and_a_reset_required_in_words():
    hst = host()
    card(hst)["drain"]["recommended"] = True
    card(hst)["reset"]["required"] = True
    assert health_findings(hst)[0] == [
        Finding("reset", "card 0", "no reset required", "RM says the card needs a reset", DEGRADE),
        Finding("drain", "card 0", "no drain recommended", "RM recommends a drain and reset", DEGRADE)]


def test_rows_remapped_in_words():
    hst = host()
    card(hst)["remapped_rows"].update(failure=True, pending=True, rows=3)
    assert judged_not_info(hst)[0] == [Finding(
        "row-remap", "card 0", "no row-remapping failure",
        "a row remapping failed (3 rows remapped): the memory has no spare row left for a failing one; "
        "the card needs service", FAIL)]
    card(hst)["remapped_rows"].update(failure=False, rows=2)
    assert judged_not_info(hst)[0] == [Finding(
        "row-remap", "card 0", "no row remap pending",
        "a row remap is pending (2 rows remapped): reset the card to apply it", DEGRADE)]


@pytest.mark.parametrize("action, severity, words", [
    ("GPU_RESET", DEGRADE, "RM asks for a GPU reset (nvidia-smi -r with no process on the card)"),
    ("DRAIN_AND_RESET", DEGRADE, "RM asks to drain the card's work and reset it"),
    ("DRAIN_P2P", FAIL, "RM asks to drain peer-to-peer traffic: the card must not be used for peer access"),
    ("NODE_REBOOT", FAIL, "RM asks for a node reboot: the card is unusable until then"),
    ("17", DEGRADE, "RM names recovery action 17, which this release's headers do not name")])
def test_each_recovery_action_in_words(action, severity, words):
    hst = host()
    card(hst)["recovery"]["action"] = action
    assert health_findings(hst) == ([Finding("recovery-action", "card 0", "recovery action NONE", f"{action}: {words}",
                                             severity)], [])


def test_ecc_each_case_in_words():
    def ecc(**fact):
        hst = host()
        card(hst)["ecc"].update(fact)
        return health_findings(hst)[0]

    assert ecc(dbe=2, uncorrectable="FALSE") == [Finding(
        "ecc", "card 0", "no uncorrectable ECC error", "uncorrectable errors: 2 double-bit since boot (RM's flag FALSE)",
        DEGRADE)]
    assert ecc(uncorrectable="TRUE") == [Finding(
        "ecc", "card 0", "no uncorrectable ECC error", "uncorrectable errors: 0 double-bit since boot (RM's flag TRUE)",
        DEGRADE)]
    assert ecc(fatal_poison=True) == [Finding("ecc", "card 0", "no fatal poison error", "RM reports a fatal poison error",
                                              DEGRADE)]
    assert ecc(enabled=False) == [Finding("ecc", "card 0", "ECC enabled", "ECC is disabled", INFO)]
    assert ecc(enabled=False, units_supported=0) == []       # no unit supports ECC: nothing to enable
    assert ecc(enabled=True) == []


def test_pcie_each_case_in_words():
    def pcie(**fact):
        hst = host()
        card(hst)["pcie"].update(fact)
        return health_findings(hst)

    assert pcie(width=8, root_max_gen=4) == ([
        Finding("pcie-link", "card 0", "a x16 PCIe link (the card's maximum)", "x8: the link trained below its width",
                DEGRADE),
        Finding("pcie-link", "card 0", "an upstream port of Gen5 (the card's maximum)",
                "Gen4: the link cannot train above Gen4", DEGRADE)], [])
    assert pcie(width=16, root_max_gen=5) == ([], []) and pcie(width=16, root_max_gen=6) == ([], [])
    assert pcie(width=16, max_width=16, root_max_gen=4, max_gen=None) == ([], [])
    no_width = [Finding("pcie-link", "card 0", "pcie-link from RM", "not read: RM gave no link width", INFO)], [
        ("pcie-link", "card 0: RM gave no link width")]
    assert pcie(width=None) == no_width and pcie(max_width=None) == no_width
    hst = host()
    card(hst)["pcie"] = {"status": "NV_ERR_X", "reason": "answered NV_ERR_X", "width": 8, "max_width": 16}
    assert health_findings(hst) == ([Finding("pcie-link", "card 0", "pcie-link from RM", "not read: answered NV_ERR_X",
                                             INFO)], [("pcie-link", "card 0: answered NV_ERR_X")])


# -- a card's fabric probe --------------------------------------------------------------------

def probe(links="nvswitch", **fact):
    hst = host()
    card(hst)["fabric_probe"] = {**COMPLETE, **fact}
    return health_findings(hst, links)


def test_a_probe_matters_only_where_the_fabric_is_needed():
    out, entries = [], []
    h._fabric_probe("card 0", {**COMPLETE, "state": "NOT_STARTED"}, False, True, out, entries)
    h._fabric_probe("card 0", {**COMPLETE, "health_summary": "UNHEALTHY"}, False, True, out, entries)
    h._fabric_probe("card 0", dict(REFUSED), False, True, out, entries)
    assert out == [] and entries == []
    # a probe RM answered other than UNSUPPORTED says the host needs the fabric (needs_fabric)
    assert probe(None, state="NOT_STARTED")[0][0].found.startswith("probe NOT_STARTED: ")
    # UNSUPPORTED: no part in a fabric, wrong only behind NVSwitch; a fabric INITIALIZED needs it too
    hst = host()
    hst["health"]["fabric"]["state"] = "INITIALIZED"
    card(hst)["fabric_probe"]["state"] = "UNSUPPORTED"
    assert health_findings(hst) == ([], [])
    assert probe(state="UNSUPPORTED") == ([Finding(
        "fabric-probe", "card 0", "the card registered with Fabric Manager (probe COMPLETE)",
        "probe UNSUPPORTED: Fabric Manager has not answered the card's probe; check nvidia-fabricmanager's log", FAIL)], [])
    assert probe() == ([], [])


def test_a_probe_not_complete_is_one_fail_and_nothing_else_is_judged():
    assert probe(state="IN_PROGRESS", probe_status="NV_ERR_X", health_summary="UNHEALTHY") == ([Finding(
        "fabric-probe", "card 0", "the card registered with Fabric Manager (probe COMPLETE)",
        "probe IN_PROGRESS: Fabric Manager has not answered the card's probe; check nvidia-fabricmanager's log", FAIL)], [])


def test_a_complete_probe_each_fault_in_words_in_order():
    mask = {"CONNECTION_UNHEALTHY": "TRUE", "INCORRECT_CONFIGURATION": "NO_PARTITION", "DEGRADED_BW": "TRUE",
            "ACCESS_TIMEOUT_RECOVERY": "TRUE", "ROUTE_UPDATE": "TRUE"}
    found, _ = probe(probe_status="NV_ERR_INVALID_STATE", health_summary="UNHEALTHY", health_mask=mask)
    assert found == [
        Finding("fabric-probe", "card 0", "Fabric Manager's probe answer NV_OK",
                "NV_ERR_INVALID_STATE: the card cannot take part in peer traffic", FAIL),
        Finding("fabric-health", "card 0", "fabric health HEALTHY", "UNHEALTHY", FAIL),
        Finding("fabric-health", "card 0", "CONNECTION_UNHEALTHY FALSE", "CONNECTION_UNHEALTHY TRUE", FAIL),
        Finding("fabric-health", "card 0", "no incorrect fabric configuration", "INCORRECT_CONFIGURATION NO_PARTITION",
                FAIL),
        Finding("fabric-health", "card 0", "DEGRADED_BW FALSE", "the fabric runs at degraded bandwidth", DEGRADE),
        Finding("fabric-health", "card 0", "ACCESS_TIMEOUT_RECOVERY FALSE",
                "the fabric is recovering from an access timeout", DEGRADE),
        Finding("fabric-health", "card 0", "ROUTE_UPDATE FALSE", "a fabric route update is in progress", DEGRADE)]
    assert probe(health_summary="LIMITED_CAPACITY")[0] == [
        Finding("fabric-health", "card 0", "fabric health HEALTHY", "LIMITED_CAPACITY", DEGRADE)]


def test_a_probe_mask_of_false_none_or_not_supported_is_healthy():
    for config in (None, "NOT_SUPPORTED", "NONE"):
        assert probe(health_mask={"INCORRECT_CONFIGURATION": config})[0] == [], config
    assert probe(health_mask={name: "FALSE" for name in ("CONNECTION_UNHEALTHY", "DEGRADED_BW",
                                                         "ACCESS_TIMEOUT_RECOVERY", "ROUTE_UPDATE")})[0] == []
    assert probe(health_mask=None)[0] == [] and probe(health_summary=None)[0] == []
    assert probe(health_mask={"DEGRADED_BW": "NOT_SUPPORTED", "CONNECTION_UNHEALTHY": "NOT_SUPPORTED"})[0] == []


def test_a_probe_status_that_is_missing_is_not_nv_ok():
    fact = dict(COMPLETE)
    del fact["probe_status"]
    hst = host()
    card(hst)["fabric_probe"] = fact
    assert health_findings(hst, "nvswitch")[0] == [Finding(
        "fabric-probe", "card 0", "Fabric Manager's probe answer NV_OK", "None: the card cannot take part in peer traffic",
        FAIL)]


def test_an_unread_probe_where_the_fabric_is_needed_is_not_checked():
    hst = host()
    card(hst)["fabric_probe"] = {"status": "not recorded", "reason": "no probe call"}
    assert health_findings(hst, "nvswitch") == ([Finding("fabric-probe", "card 0", "fabric-probe from RM",
                                                         "not recorded: no probe call", INFO)],
                                                [("fabric-probe", "card 0: no probe call")])


def test_cards_are_judged_each_with_its_own_index():
    hst = host(3)
    hst["cards"][2]["index"] = 5
    card(hst, 2)["reset"]["required"] = True
    card(hst, 0)["reset"]["required"] = True
    assert [f.subject for f in health_findings(hst)[0]] == ["card 0", "card 5"]
