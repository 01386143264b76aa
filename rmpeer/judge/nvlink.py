"""What counts as a healthy NVLink, as pure comparisons of rm.nvlink's readings (dicts in,
sentences out): the judge uses them; the words both sides share are rmpeer.model.nvlink's.
Nothing here reads a device."""

from __future__ import annotations

from rmpeer.model.nvlink import UP_STATES

# Judged: the counters nvidia-smi reports as NVLink errors (flit CRC, replay, recovery).
# Per-lane CRC and ECC counts are what the link's forward error correction repaired: they
# grow under healthy traffic (seen on 2 x H200, 580.159.04: 11 -> 33 over one run while
# nvidia-smi showed 0 CRC errors) and are reported, not judged.
JUDGED_COUNTERS = ("crc", "replay_tx", "replay_rx", "recovery")


def check_active(health: dict, expected: int | None) -> list[str]:
    """Problems with the links RM says are enabled on the card: each must be up, on any host
    (a topology or none). `expected` (the topology's count) only says whether NVLinks are
    expected at all: a link disabled by design (12 of 18 on H100 PCIe NVL) is not in RM's
    enabled mask and is no down link."""
    if not health.get("supported"):
        return []
    enabled = health["links"]
    problems = [f"card {health.get('card')}: link {link['index']} is {link['state']}"
                f"{'' if link['connected'] else ', not connected'} (up: {' or '.join(UP_STATES)}, connected)"
                for link in enabled if not link["active"]]
    if problems:
        problems.insert(0, f"card {health.get('card')}: {health['active']} of {len(enabled)} enabled NVLinks active")
    elif not enabled and expected:
        problems.append(f"card {health.get('card')}: RM enables no NVLink on this card ({expected} expected)")
    return problems


def compare_counters(before: dict, after: dict) -> list[str]:
    """Every error counter that grew between two link_health readings of one card, and every
    link that stopped being active: 'card 0 link 3: crc 0 -> 5'."""
    card = after.get("card", before.get("card"))
    was = {link["index"]: link for link in before.get("links", [])}
    problems = []
    for link in after.get("links", []):
        old = was.get(link["index"])
        if old is None:
            continue
        if old.get("active") and not link.get("active"):
            problems.append(f"card {card} link {link['index']}: went from {old['state']} to {link['state']}")
        for name, value in (link.get("counters") or {}).items():
            if name not in JUDGED_COUNTERS:
                continue
            start = (old.get("counters") or {}).get(name)
            if start is not None and value > start:
                problems.append(f"card {card} link {link['index']}: {name} {start} -> {value}")
    for index in sorted(set(was) - {link["index"] for link in after.get("links", [])}):
        problems.append(f"card {card} link {index}: no longer enabled")
    return problems
