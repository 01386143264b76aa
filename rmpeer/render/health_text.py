"""The health facts (rm.health) in words, one line per card and one for the host: for
`rmpeer show`, the certify output and `rmpeer host --text`. Only renders: the judging is
rmpeer.judge.health's."""

from __future__ import annotations

OK = "NV_OK"
NOT_RECORDED = "not recorded"
GONE = "not recorded (the recording is older than rmpeer's health facts)"


def _all_unrecorded(facts: dict) -> bool:
    return bool(facts) and all(isinstance(f, dict) and f.get("status") == NOT_RECORDED for f in facts.values())


def _or_why(fact, render) -> str:
    if not isinstance(fact, dict):
        return "not read"
    return render(fact) if fact.get("status") == OK else f"not read ({fact.get('status')})"


def _pcie(f) -> str:
    def gen(g):
        return f"Gen{g}" if g is not None else "Gen?"

    def lanes(w):
        return f"x{w}" if w is not None else "x?"

    root = f", upstream port {gen(f['root_max_gen'])}" if f.get("root_max_gen") is not None else ""
    return f"{gen(f.get('gen'))} {lanes(f.get('width'))} of {gen(f.get('max_gen'))} {lanes(f.get('max_width'))}{root}"


def _fabric_probe(f) -> str:
    text = f"{f.get('state')}"
    if f.get("state") not in (None, "UNSUPPORTED"):
        text += f" ({f.get('probe_status')}, health {f.get('health_summary')}, clique {f.get('clique_id')})"
    return text


CARD_PARTS = (
    ("PCIe", "pcie", _pcie),
    ("ECC", "ecc", lambda f: f"{'on' if f.get('enabled') else 'off'}, {f.get('dbe')} uncorrectable, "
                             f"{f.get('sbe')} corrected since boot"),
    ("remapped rows", "remapped_rows", lambda f: f"{f.get('rows')}" + (", one pending" if f.get("pending") else "")
     + (", a remap FAILED" if f.get("failure") else "")),
    ("reset", "reset", lambda f: "required" if f.get("required") else "not required"),
    ("recovery", "recovery", lambda f: str(f.get("action"))),
    ("MIG", "mig", lambda f: str(f.get("mode"))),
    ("fabric probe", "fabric_probe", _fabric_probe),
)


def card_line(card: dict) -> str:
    h = card.get("health") or {}
    if not h:
        return f"  card {card.get('index')} health: not in this record"
    if _all_unrecorded(h):
        return f"  card {card.get('index')} health: {GONE}"
    return f"  card {card.get('index')} health: " + "; ".join(
        f"{label} {_or_why(h.get(key), render)}" for label, key, render in CARD_PARTS)


def host_line(facts: dict) -> str:
    h = facts.get("health") or {}
    if not h:
        return "  host health: not in this record"
    if _all_unrecorded(h):
        return f"  host health: {GONE}"
    fabric = _or_why(h.get("fabric"), lambda f: str(f.get("state")))
    cc = _or_why(h.get("cc"), lambda f: f"{f.get('feature')} (GPUs {f.get('gpus')}, CPU {f.get('cpu')}, "
                                        f"multi-GPU {f.get('multi_gpu', '?')})")
    return f"  host health: Fabric Manager {fabric}; Confidential Computing {cc}"


def health_lines(facts: dict) -> list[str]:
    """The host's line, then each card's."""
    return [host_line(facts)] + [card_line(c) for c in facts.get("cards", [])]
