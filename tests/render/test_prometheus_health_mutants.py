"""Tests that kill the mutants of rmpeer/render/prometheus_health.py (docs/mutation.md): the health
series of hand-built health facts registered in a registry of their own, read back with
prometheus-client's parser of the text exposition format, each series, label and value written
out here from the module's docstring (dcgm-exporter's label names, an int per fact read, 1 with
the state as a label, no value for a fact not read), never taken from add_health."""

import pytest
from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from rmpeer.model.result import RunResult
from rmpeer.render.prometheus_health import add_health

pytestmark = pytest.mark.offline

OK = "NV_OK"
HELP = {
    "rmpeer_health_fact_read": "1 when RM gave the fact, 0 when not (status says why)",
    "rmpeer_pcie_link_gen": "PCIe generation the link runs at now (it drops at idle)",
    "rmpeer_pcie_link_width": "PCIe lanes the link runs at now",
    "rmpeer_pcie_max_link_gen": "the card's maximum PCIe generation",
    "rmpeer_pcie_max_link_width": "the card's maximum PCIe lanes",
    "rmpeer_row_remap_pending": "1 when a row remap waits for a reset",
    "rmpeer_row_remap_failure": "1 when a row remapping failed",
    "rmpeer_remapped_rows": "rows remapped so far",
    "rmpeer_ecc_dbe_volatile_total": "double-bit ECC errors since boot",
    "rmpeer_ecc_sbe_volatile_total": "single-bit ECC errors since boot",
    "rmpeer_ecc_enabled": "1 when ECC is on",
    "rmpeer_reset_required": "1 when RM says the card needs a reset",
    "rmpeer_drain_recommended": "1 when RM recommends a drain and reset",
    "rmpeer_recovery_action": "RM's recovery action for the card (1, the action as label)",
    "rmpeer_mig_mode": "the card's MIG mode (1, the mode as label)",
    "rmpeer_fabric_probe_state": "the card's fabric probe (1, its state as label)",
    "rmpeer_fabric_status": "Fabric Manager's state of the NVSwitch fabric (1, the state as label)",
    "rmpeer_cc_mode": "Confidential Computing's feature state (1, the state as label)",
}
GPU0 = {"gpu": "0", "UUID": "GPU-a", "pci_bus_id": "00000000:1B:00.0", "modelName": "NVIDIA H200"}
GPU1 = {"gpu": "1", "UUID": "GPU-b", "pci_bus_id": "00000000:2C:00.0", "modelName": "NVIDIA H200"}
CARDS = {0: GPU0, 1: GPU1, 2: {"gpu": "2", "UUID": "GPU-c", "pci_bus_id": "", "modelName": ""}}


def exposition(host):
    registry = CollectorRegistry()
    labels_asked = []

    def card_labels(cards, index):
        labels_asked.append(index)
        return cards[index]

    add_health(lambda name, text, labels=(): Gauge(name, text, labels, registry=registry), RunResult(host=host),
               CARDS, card_labels)
    families = list(text_string_to_metric_families(generate_latest(registry).decode()))
    helps = {f.name: f.documentation for f in families}
    series = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}
    return helps, series, labels_asked


def key(name, gpu=None, **labels):
    return name, tuple(sorted({**(gpu or {}), **labels}.items()))


def test_every_series_of_a_card_with_every_fact_read_and_one_with_some_refused():
    host = {"cards": [
        {"index": 0, "health": {
            "pcie": {"status": OK, "gen": 4, "width": 8, "max_gen": 5, "max_width": 16},
            "remapped_rows": {"status": OK, "pending": True, "failure": False, "rows": 3},
            "ecc": {"status": OK, "dbe": 2, "sbe": 7, "enabled": True},
            "reset": {"status": OK, "required": False},
            "drain": {"status": OK, "recommended": True},
            "recovery": {"status": OK, "action": "NONE"},
            "mig": {"status": OK, "mode": "DISABLED"},
            "fabric_probe": {"status": OK, "state": "COMPLETE"}}},
        {"index": "1", "health": {
            "pcie": {"status": "NV_ERR_NOT_SUPPORTED", "gen": 3},
            "ecc": {"status": OK, "dbe": None, "sbe": 0, "enabled": False},
            "remapped_rows": None,
            "mig": {"status": "NV_ERR_INVALID_STATE", "mode": "ENABLED"},
            "recovery": {},
            "fabric_probe": {"status": OK}}},
        {"index": 2, "health": None}],
        "health": {"fabric": {"status": OK, "state": "COMPLETED"},
                   "cc": {"status": "NV_ERR_NOT_SUPPORTED", "feature": "ON"}}}
    helps, series, asked = exposition(host)
    assert helps == HELP
    assert asked == [0, 1, 2]
    read = "rmpeer_health_fact_read"
    assert series == {
        **{key(read, GPU0, fact=fact, status=OK): 1.0
           for fact in ("drain", "ecc", "fabric_probe", "mig", "pcie", "recovery", "remapped_rows", "reset")},
        key("rmpeer_pcie_link_gen", GPU0): 4.0, key("rmpeer_pcie_link_width", GPU0): 8.0,
        key("rmpeer_pcie_max_link_gen", GPU0): 5.0, key("rmpeer_pcie_max_link_width", GPU0): 16.0,
        key("rmpeer_row_remap_pending", GPU0): 1.0, key("rmpeer_row_remap_failure", GPU0): 0.0,
        key("rmpeer_remapped_rows", GPU0): 3.0, key("rmpeer_ecc_dbe_volatile_total", GPU0): 2.0,
        key("rmpeer_ecc_sbe_volatile_total", GPU0): 7.0, key("rmpeer_ecc_enabled", GPU0): 1.0,
        key("rmpeer_reset_required", GPU0): 0.0, key("rmpeer_drain_recommended", GPU0): 1.0,
        key("rmpeer_recovery_action", GPU0, state="NONE"): 1.0, key("rmpeer_mig_mode", GPU0, state="DISABLED"): 1.0,
        key("rmpeer_fabric_probe_state", GPU0, state="COMPLETE"): 1.0,
        key(read, GPU1, fact="ecc", status=OK): 1.0,
        key(read, GPU1, fact="fabric_probe", status=OK): 1.0,
        key(read, GPU1, fact="mig", status="NV_ERR_INVALID_STATE"): 0.0,
        key(read, GPU1, fact="pcie", status="NV_ERR_NOT_SUPPORTED"): 0.0,
        key(read, GPU1, fact="recovery", status="not read"): 0.0,
        key(read, GPU1, fact="remapped_rows", status="not read"): 0.0,
        key("rmpeer_ecc_sbe_volatile_total", GPU1): 0.0, key("rmpeer_ecc_enabled", GPU1): 0.0,
        key("rmpeer_fabric_probe_state", GPU1, state="None"): 1.0,
        key("rmpeer_fabric_status", state="COMPLETED", status=OK): 1.0,
        key("rmpeer_cc_mode", state="ON", status="NV_ERR_NOT_SUPPORTED"): 0.0}


def test_a_host_without_health_facts_says_each_host_fact_was_not_read():
    helps, series, asked = exposition({})
    assert helps == HELP and asked == []
    assert series == {key("rmpeer_fabric_status", state="", status="not read"): 0.0,
                      key("rmpeer_cc_mode", state="", status="not read"): 0.0}
    _, series, _ = exposition({"health": {"fabric": None, "cc": {"state": "x", "feature": "OFF"}}, "cards": []})
    assert series == {key("rmpeer_fabric_status", state="", status="not read"): 0.0,
                      key("rmpeer_cc_mode", state="OFF", status="not read"): 0.0}


def test_the_value_is_the_fields_integer():
    _, series, _ = exposition({"cards": [{"index": 1, "health": {"ecc": {"status": OK, "dbe": 2.9, "sbe": "12"}}}]})
    assert series[key("rmpeer_ecc_dbe_volatile_total", GPU1)] == 2.0
    assert series[key("rmpeer_ecc_sbe_volatile_total", GPU1)] == 12.0
