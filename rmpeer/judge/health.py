"""The health judge: pure functions from the health facts RM gave (rm.health, kept in the
result's host) to Findings, and to what could not be checked. docs/health.md holds the
table this implements: what each state means, the verdict it gives, whether hooks drain.

A fact RM did not give (NV_ERR_NOT_SUPPORTED, another error, a release without the control,
a recording without the call) is never a pass: where the fact matters for this host, it is an
INFO finding (rmpeer.judge.unchecked names it in the verdict line's "not checked") and a (check,
reason) entry of the second list health_findings returns; elsewhere the recorded status alone
says it (the certificate's host facts).
"""

from __future__ import annotations

from rmpeer.model.result import DEGRADE, FAIL, INFO, Finding

OK = "NV_OK"
NOT_RECORDED = "not recorded"     # rm.health's status for a fact a recording lacks
# Fabric Manager's states (NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS_*) in which the NVSwitch
# fabric cannot carry peer traffic yet.
FABRIC_NOT_READY = {"UNINITIALIZED": "Fabric Manager has not initialised the NVSwitch fabric: start "
                                     "nvidia-fabricmanager (systemctl start nvidia-fabricmanager), then run again",
                    "IN_PROGRESS": "Fabric Manager is still initialising the NVSwitch fabric: wait until "
                                   "nvidia-fabricmanager reports it ready, then run again"}
# RM's recovery actions (NV2080_CTRL_GPU_RECOVERY_ACTION_*): the severity and what to do.
RECOVERY = {"GPU_RESET": (DEGRADE, "RM asks for a GPU reset (nvidia-smi -r with no process on the card)"),
            "DRAIN_AND_RESET": (DEGRADE, "RM asks to drain the card's work and reset it"),
            "DRAIN_P2P": (FAIL, "RM asks to drain peer-to-peer traffic: the card must not be used for peer access"),
            "NODE_REBOOT": (FAIL, "RM asks for a node reboot: the card is unusable until then")}
MIG_ON = ("ENABLED", "DISABLE_PENDING")      # DISABLE_PENDING: on until the next reset
# Health mask fields (NV2080_CTRL_GPU_FABRIC_HEALTH_MASK) that say the card's fabric is unfit
MASK_FAIL = ("CONNECTION_UNHEALTHY",)
MASK_DEGRADE = {"DEGRADED_BW": "the fabric runs at degraded bandwidth",
                "ACCESS_TIMEOUT_RECOVERY": "the fabric is recovering from an access timeout",
                "ROUTE_UPDATE": "a fabric route update is in progress"}


def _read(fact) -> bool:
    return isinstance(fact, dict) and fact.get("status") == OK


def _why(fact) -> str:
    if not isinstance(fact, dict):
        return "not read"
    return fact.get("reason") or fact.get("status") or "not read"


def needs_fabric(host: dict, topology_links: str | None = None) -> bool:
    """Whether this host's cards reach each other through an NVSwitch fabric that Fabric
    Manager must set up: the topology says so, or RM does (a fabric state other than SKIP,
    a card whose fabric probe is not UNSUPPORTED)."""
    if topology_links == "nvswitch":
        return True
    fabric = (host.get("health") or {}).get("fabric")
    if _read(fabric) and fabric.get("state") not in ("SKIP",):
        return True
    return any(_read(p) and p.get("state") != "UNSUPPORTED"
               for p in ((c.get("health") or {}).get("fabric_probe") for c in host.get("cards", [])))


def _unread(check: str, subject: str, fact, matters: bool, out: list, not_checked: list) -> None:
    why = _why(fact)
    # "not recorded": a replay of a recording older than the fact (the passive check skips)
    said = "not recorded" if isinstance(fact, dict) and fact.get("status") == NOT_RECORDED else "not read"
    if matters:     # an INFO finding is a check not made: rmpeer.judge.unchecked names it in the verdict line
        out.append(Finding(check, subject, f"{check} from RM", f"{said}: {why}", INFO))
        not_checked.append((check, f"{subject}: {why}"))


def health_findings(host: dict, topology_links: str | None = None) -> tuple[list, list]:
    """(findings, not_checked) for a host's facts (HostFacts.as_dict()); `topology_links`: the
    matched topology's link kind, where one matched."""
    out, not_checked = [], []
    health = host.get("health") or {}
    cards = host.get("cards", [])
    if not cards:     # discovery found no card or failed: the run's own findings say so
        return out, not_checked
    facts = [*health.values(), *(f for c in cards for f in (c.get("health") or {}).values())]
    if not facts or all(isinstance(f, dict) and f.get("status") == NOT_RECORDED for f in facts):
        # a recording made before rmpeer read them: one statement, not one per fact
        out.append(Finding("health", "host", "RM's health facts", "not recorded: the recording has no health call", INFO))
        return out, [("health", "host: the recording has no health call")]
    fabric_needed = needs_fabric(host, topology_links)
    _fabric(health.get("fabric"), fabric_needed, out, not_checked)
    _cc(health.get("cc"), len(cards), out, not_checked)
    for c in cards:
        _card(c.get("index"), c.get("health") or {}, fabric_needed, topology_links == "nvswitch", out, not_checked)
    return out, not_checked


def _fabric(fact, needed: bool, out, not_checked) -> None:
    if not _read(fact):
        _unread("fabric", "host", fact, needed, out, not_checked)
        return
    state = fact.get("state")
    if needed and state in FABRIC_NOT_READY:
        out.append(Finding("fabric", "host", "the NVSwitch fabric initialised by Fabric Manager (INITIALIZED)",
                           f"{state}: {FABRIC_NOT_READY[state]}", FAIL))


def _cc(fact, n_cards: int, out, not_checked) -> None:
    if not _read(fact):
        _unread("confidential-compute", "host", fact, True, out, not_checked)
        return
    feature = fact.get("feature")
    if feature != "DISABLED":
        mode = fact.get("multi_gpu", "NONE")
        if n_cards > 1 and mode == "NONE":
            out.append(Finding("confidential-compute", "host", "Confidential Computing off, or on with a multi-GPU mode",
                               f"Confidential Computing is on ({feature}) with no multi-GPU mode: "
                               "the cards have no peer access", FAIL))
        else:
            out.append(Finding("confidential-compute", "host", "Confidential Computing off (feature DISABLED)",
                               f"it is on ({feature}, multi-GPU mode {mode}): copies are encrypted, "
                               "the floors do not hold", DEGRADE))
    if fact.get("devtools") not in (None, "DISABLED"):
        out.append(Finding("confidential-compute", "host", "dev tools mode off",
                           f"dev tools mode {fact.get('devtools')}", INFO))


def _card(index, h: dict, fabric_needed: bool, nvswitch: bool, out, not_checked) -> None:
    subject = f"card {index}"
    mig = h.get("mig")
    mig_on = _read(mig) and mig.get("mode") in MIG_ON
    if not _read(mig):
        _unread("mig", subject, mig, True, out, not_checked)
    elif mig_on:
        out.append(Finding("mig", subject, "MIG disabled (peer access needs the whole card)",
                           f"MIG is {mig.get('mode')}: the card has no peer access, the peer checks do not apply; "
                           "disable it (nvidia-smi -i N -mig 0) and reset the card", FAIL))
    elif mig.get("mode") == "ENABLE_PENDING":
        out.append(Finding("mig", subject, "MIG disabled", "MIG is enabled at the next GPU reset", DEGRADE))
    _fabric_probe(subject, h.get("fabric_probe"), fabric_needed, nvswitch, out, not_checked)
    _rows(subject, h.get("remapped_rows"), out, not_checked)
    reset = h.get("reset")
    if not _read(reset):
        _unread("reset", subject, reset, True, out, not_checked)
    elif reset.get("required"):
        out.append(Finding("reset", subject, "no reset required", "RM says the card needs a reset", DEGRADE))
    drain = h.get("drain")
    if not _read(drain):
        _unread("drain", subject, drain, mig_on, out, not_checked)   # RM drains only MIG cards
    elif drain.get("recommended"):
        out.append(Finding("drain", subject, "no drain recommended", "RM recommends a drain and reset", DEGRADE))
    _recovery(subject, h.get("recovery"), out, not_checked)
    _ecc(subject, h.get("ecc"), out, not_checked)
    _pcie(subject, h.get("pcie"), out, not_checked)


def _fabric_probe(subject, fact, needed: bool, nvswitch: bool, out, not_checked) -> None:
    if not _read(fact):
        _unread("fabric-probe", subject, fact, needed, out, not_checked)
        return
    state = fact.get("state")
    # UNSUPPORTED: RM says this card takes no part in a fabric; wrong only where the topology
    # puts it behind NVSwitch
    if not needed or (state == "UNSUPPORTED" and not nvswitch):
        return
    if state != "COMPLETE":
        out.append(Finding("fabric-probe", subject, "the card registered with Fabric Manager (probe COMPLETE)",
                           f"probe {state}: Fabric Manager has not answered the card's probe; check "
                           "nvidia-fabricmanager's log", FAIL))
        return
    if fact.get("probe_status") != OK:
        out.append(Finding("fabric-probe", subject, "Fabric Manager's probe answer NV_OK",
                           f"{fact.get('probe_status')}: the card cannot take part in peer traffic", FAIL))
    summary = fact.get("health_summary")
    if summary == "UNHEALTHY":
        out.append(Finding("fabric-health", subject, "fabric health HEALTHY", "UNHEALTHY", FAIL))
    elif summary == "LIMITED_CAPACITY":
        out.append(Finding("fabric-health", subject, "fabric health HEALTHY", "LIMITED_CAPACITY", DEGRADE))
    mask = fact.get("health_mask") or {}
    for name in MASK_FAIL:
        if mask.get(name) == "TRUE":
            out.append(Finding("fabric-health", subject, f"{name} FALSE", f"{name} TRUE", FAIL))
    config = mask.get("INCORRECT_CONFIGURATION")
    if config not in (None, "NOT_SUPPORTED", "NONE"):
        out.append(Finding("fabric-health", subject, "no incorrect fabric configuration",
                           f"INCORRECT_CONFIGURATION {config}", FAIL))
    for name, what in MASK_DEGRADE.items():
        if mask.get(name) == "TRUE":
            out.append(Finding("fabric-health", subject, f"{name} FALSE", what, DEGRADE))


def _rows(subject, fact, out, not_checked) -> None:
    if not _read(fact):
        _unread("row-remap", subject, fact, True, out, not_checked)
        return
    if fact.get("failure"):
        out.append(Finding("row-remap", subject, "no row-remapping failure",
                           f"a row remapping failed ({fact.get('rows')} rows remapped): the memory has no "
                           "spare row left for a failing one; the card needs service", FAIL))
    elif fact.get("pending"):
        out.append(Finding("row-remap", subject, "no row remap pending",
                           f"a row remap is pending ({fact.get('rows')} rows remapped): reset the card to apply it",
                           DEGRADE))


def _recovery(subject, fact, out, not_checked) -> None:
    if not _read(fact):
        _unread("recovery-action", subject, fact, True, out, not_checked)
        return
    action = fact.get("action")
    if action == "NONE":
        return
    severity, what = RECOVERY.get(action, (DEGRADE, f"RM names recovery action {action}, which this "
                                                    "release's headers do not name"))
    out.append(Finding("recovery-action", subject, "recovery action NONE", f"{action}: {what}", severity))


def _ecc(subject, fact, out, not_checked) -> None:
    if not _read(fact):
        _unread("ecc", subject, fact, True, out, not_checked)
        return
    if fact.get("units_supported") and not fact.get("enabled"):
        out.append(Finding("ecc", subject, "ECC enabled", "ECC is disabled", INFO))
    if fact.get("uncorrectable") == "TRUE" or fact.get("dbe"):
        out.append(Finding("ecc", subject, "no uncorrectable ECC error",
                           f"uncorrectable errors: {fact.get('dbe')} double-bit since boot "
                           f"(RM's flag {fact.get('uncorrectable')})", DEGRADE))
    if fact.get("fatal_poison"):
        out.append(Finding("ecc", subject, "no fatal poison error", "RM reports a fatal poison error", DEGRADE))


def _pcie(subject, fact, out, not_checked) -> None:
    """Judged at rest: the width against the card's maximum, and the card's maximum speed
    against its upstream port's. The current generation drops at idle (power saving), so it
    is recorded and not judged."""
    if not _read(fact) or fact.get("width") is None or fact.get("max_width") is None:
        _unread("pcie-link", subject, fact if not _read(fact) else {"reason": "RM gave no link width"},
                True, out, not_checked)
        return
    if fact["width"] < fact["max_width"]:
        out.append(Finding("pcie-link", subject, f"a x{fact['max_width']} PCIe link (the card's maximum)",
                           f"x{fact['width']}: the link trained below its width", DEGRADE))
    root, card_max = fact.get("root_max_gen"), fact.get("max_gen")
    if root is not None and card_max is not None and root < card_max:
        out.append(Finding("pcie-link", subject, f"an upstream port of Gen{card_max} (the card's maximum)",
                           f"Gen{root}: the link cannot train above Gen{root}", DEGRADE))
