"""Tests that kill the mutants of rmpeer/render/health_text.py (docs/mutation.md): health facts
built by hand (the shape rm.health records, as docs/evidence/h200x1-20261201T0928Z-health-probe/
host.txt holds it), each line written out here from the module's docstring and the facts' words,
never taken from health_lines, card_line or host_line."""

import pytest

from rmpeer.render.health_text import card_line, health_lines, host_line

pytestmark = pytest.mark.offline

GONE = "not recorded (the recording is older than rmpeer's health facts)"
OK = "NV_OK"

CARD = {"pcie": {"status": OK, "gen": 4, "width": 8, "max_gen": 5, "max_width": 16, "root_max_gen": 3},
        "ecc": {"status": OK, "enabled": False, "dbe": 2, "sbe": 7},
        "remapped_rows": {"status": OK, "rows": 3, "pending": True, "failure": True},
        "reset": {"status": OK, "required": True},
        "recovery": {"status": OK, "action": "GPU_RESET"},
        "mig": {"status": OK, "mode": "ENABLED"},
        "fabric_probe": {"status": OK, "state": "COMPLETE", "probe_status": "NV_OK", "health_summary": "HEALTHY",
                         "clique_id": 3}}


def test_each_fact_of_a_card_in_words():
    assert card_line({"index": 2, "health": CARD}) == (
        "  card 2 health: PCIe Gen4 x8 of Gen5 x16, upstream port Gen3; ECC off, 2 uncorrectable, 7 corrected since "
        "boot; remapped rows 3, one pending, a remap FAILED; reset required; recovery GPU_RESET; MIG ENABLED; "
        "fabric probe COMPLETE (NV_OK, health HEALTHY, clique 3)")


def test_a_card_with_the_other_values_and_facts_missing_or_refused():
    health = {"pcie": {"status": OK, "root_max_gen": 0},
              "ecc": {"status": OK, "enabled": True, "dbe": 0, "sbe": 0},
              "remapped_rows": {"status": OK, "rows": 0, "pending": False, "failure": False},
              "reset": {"status": OK, "required": False},
              "recovery": {"status": "NV_ERR_NOT_SUPPORTED", "action": "NONE"},
              "mig": "DISABLED",                                     # not a dict: never read as one
              "fabric_probe": {"status": OK, "state": "UNSUPPORTED", "probe_status": "x"}}
    assert card_line({"index": 0, "health": health}) == (
        "  card 0 health: PCIe Gen? x? of Gen? x?, upstream port Gen0; ECC on, 0 uncorrectable, 0 corrected since boot; "
        "remapped rows 0; reset not required; recovery not read (NV_ERR_NOT_SUPPORTED); MIG not read; "
        "fabric probe UNSUPPORTED")
    assert card_line({"index": 1, "health": {"ecc": {"enabled": True}, "fabric_probe": {"status": OK}}}) == (
        "  card 1 health: PCIe not read; ECC not read (None); remapped rows not read; reset not read; "
        "recovery not read; MIG not read; fabric probe None")


def test_a_fabric_probe_of_another_state_gives_its_details():
    health = {"fabric_probe": {"status": OK, "state": "NOT_STARTED"}}
    assert card_line({"index": 0, "health": health}).endswith("; fabric probe NOT_STARTED (None, health None, clique None)")


@pytest.mark.parametrize("card, line", [
    ({"index": 3}, "  card 3 health: not in this record"),
    ({"index": 3, "health": None}, "  card 3 health: not in this record"),
    ({"index": 3, "health": {}}, "  card 3 health: not in this record"),
    ({}, "  card None health: not in this record"),
    ({"index": 3, "health": {"pcie": {"status": "not recorded"}, "ecc": {"status": "not recorded"}}},
     f"  card 3 health: {GONE}"),
])
def test_a_card_without_health_facts(card, line):
    assert card_line(card) == line


def test_a_card_with_some_facts_not_recorded_shows_the_others():
    assert card_line({"index": 0, "health": {"pcie": {"status": "not recorded"}, "reset": {"status": OK}}}) == (
        "  card 0 health: PCIe not read (not recorded); ECC not read; remapped rows not read; reset not required; "
        "recovery not read; MIG not read; fabric probe not read")
    assert card_line({"index": 0, "health": {"pcie": {"status": "not recorded"}, "mig": "not recorded"}}).startswith(
        "  card 0 health: PCIe not read (not recorded); ECC not read;")


def test_the_host_line():
    facts = {"health": {"fabric": {"status": OK, "state": "COMPLETED"},
                        "cc": {"status": OK, "feature": "ENABLED", "gpus": "HCC", "cpu": "SEV-SNP"}}}
    assert host_line(facts) == ("  host health: Fabric Manager COMPLETED; Confidential Computing ENABLED (GPUs HCC, "
                                "CPU SEV-SNP, multi-GPU ?)")
    facts = {"health": {"fabric": {"status": "NV_ERR_NOT_READY"},
                        "cc": {"status": OK, "feature": "DISABLED", "gpus": "NONE", "cpu": "NONE", "multi_gpu": "PPCIE"}}}
    assert host_line(facts) == ("  host health: Fabric Manager not read (NV_ERR_NOT_READY); Confidential Computing "
                                "DISABLED (GPUs NONE, CPU NONE, multi-GPU PPCIE)")
    assert host_line({"health": {"cc": "x"}}) == "  host health: Fabric Manager not read; Confidential Computing not read"


@pytest.mark.parametrize("facts, line", [
    ({}, "  host health: not in this record"),
    ({"health": None}, "  host health: not in this record"),
    ({"health": {"fabric": {"status": "not recorded"}, "cc": {"status": "not recorded"}}}, f"  host health: {GONE}"),
    ({"health": {"fabric": {"status": "not recorded"}, "cc": None}},
     "  host health: Fabric Manager not read (not recorded); Confidential Computing not read"),
])
def test_a_host_without_health_facts(facts, line):
    assert host_line(facts) == line


def test_the_host_line_then_each_cards():
    facts = {"health": {"fabric": {"status": OK, "state": "SKIP"}},
             "cards": [{"index": 1}, {"index": 0, "health": {"reset": {"status": "not recorded"}}}]}
    assert health_lines(facts) == ["  host health: Fabric Manager SKIP; Confidential Computing not read",
                                   "  card 1 health: not in this record", f"  card 0 health: {GONE}"]
    assert health_lines({}) == ["  host health: not in this record"]
