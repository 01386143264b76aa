"""The health facts (rm.health) as Prometheus series, beside rmpeer.prom's others.

Per-GPU series carry dcgm-exporter's label names (gpu, UUID, pci_bus_id, modelName); the
series mirror the DCGM fields that hold the same fact (DCGM_FI_DEV_PCIE_LINK_GEN, ..._WIDTH,
..._PCIE_MAX_LINK_GEN, ..._MAX_LINK_WIDTH, ..._ROW_REMAP_PENDING, ..._ROW_REMAP_FAILURE,
..._ECC_DBE_VOL_TOTAL, ..._ECC_SBE_VOL_TOTAL, ..._MIG_MODE, ..._CC_MODE, ..._GET_GPU_RECOVERY_ACTION)
under rmpeer's own names, since RM, not DCGM, read them. A fact RM did not give has no value
series: `rmpeer_health_fact_read` says, per fact, whether it was read (1) or not (0, `status`
naming why)."""

from __future__ import annotations

OK = "NV_OK"
# series name, help, fact, field (the value is that field, an int; booleans as 0/1)
CARD_VALUES = (
    ("rmpeer_pcie_link_gen", "PCIe generation the link runs at now (it drops at idle)", "pcie", "gen"),
    ("rmpeer_pcie_link_width", "PCIe lanes the link runs at now", "pcie", "width"),
    ("rmpeer_pcie_max_link_gen", "the card's maximum PCIe generation", "pcie", "max_gen"),
    ("rmpeer_pcie_max_link_width", "the card's maximum PCIe lanes", "pcie", "max_width"),
    ("rmpeer_row_remap_pending", "1 when a row remap waits for a reset", "remapped_rows", "pending"),
    ("rmpeer_row_remap_failure", "1 when a row remapping failed", "remapped_rows", "failure"),
    ("rmpeer_remapped_rows", "rows remapped so far", "remapped_rows", "rows"),
    ("rmpeer_ecc_dbe_volatile_total", "double-bit ECC errors since boot", "ecc", "dbe"),
    ("rmpeer_ecc_sbe_volatile_total", "single-bit ECC errors since boot", "ecc", "sbe"),
    ("rmpeer_ecc_enabled", "1 when ECC is on", "ecc", "enabled"),
    ("rmpeer_reset_required", "1 when RM says the card needs a reset", "reset", "required"),
    ("rmpeer_drain_recommended", "1 when RM recommends a drain and reset", "drain", "recommended"),
)
# series name, help, fact, field: 1 with the state as a label
CARD_STATES = (
    ("rmpeer_recovery_action", "RM's recovery action for the card (1, the action as label)", "recovery", "action"),
    ("rmpeer_mig_mode", "the card's MIG mode (1, the mode as label)", "mig", "mode"),
    ("rmpeer_fabric_probe_state", "the card's fabric probe (1, its state as label)", "fabric_probe", "state"),
)
HOST_STATES = (
    ("rmpeer_fabric_status", "Fabric Manager's state of the NVSwitch fabric (1, the state as label)", "fabric", "state"),
    ("rmpeer_cc_mode", "Confidential Computing's feature state (1, the state as label)", "cc", "feature"),
)


def add_health(gauge, result, cards: dict, card_labels) -> None:
    """Registers the health series through `gauge(name, help, labels)`; `cards`: dcgm labels by
    card index; `card_labels(cards, index)`: one card's labels."""
    gpu = ("gpu", "UUID", "pci_bus_id", "modelName")
    read = gauge("rmpeer_health_fact_read", "1 when RM gave the fact, 0 when not (status says why)",
                 (*gpu, "fact", "status"))
    values = {name: gauge(name, text, gpu) for name, text, _, _ in CARD_VALUES}
    states = {name: gauge(name, text, (*gpu, "state")) for name, text, _, _ in CARD_STATES}
    for c in result.host.get("cards", []):
        labels = card_labels(cards, int(c["index"]))
        facts = c.get("health") or {}
        for fact, body in sorted(facts.items()):
            status = (body or {}).get("status", "not read")
            read.labels(**labels, fact=fact, status=status).set(int(status == OK))
        for name, _, fact, key in CARD_VALUES:
            value = (facts.get(fact) or {}).get(key)
            if (facts.get(fact) or {}).get("status") == OK and value is not None:
                values[name].labels(**labels).set(int(value))
        for name, _, fact, key in CARD_STATES:
            body = facts.get(fact) or {}
            if body.get("status") == OK:
                states[name].labels(**labels, state=str(body.get(key))).set(1)
    host = result.host.get("health") or {}
    for name, text, fact, key in HOST_STATES:
        body = host.get(fact) or {}
        series = gauge(name, text, ("state", "status"))
        series.labels(state=str(body.get(key, "")), status=body.get("status", "not read")).set(
            int(body.get("status") == OK))
