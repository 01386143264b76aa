"""What a clock reading says of what holds the card's clocks (rmpeer.run.fitness.read_clocks:
NVML's clock-event reasons, each of a kind of matrices/nvml.yaml, with the power draw and
limit), in words the judge and every output share."""

from __future__ import annotations


def events(reading: dict, kind: str) -> list:
    """The texts of a reading's clock-event reasons of one kind (cap, slowdown, setting), or []
    where none were read."""
    return [e.get("text", "?") for e in reading.get("clock_events") or () if e.get("kind") == kind]


def held_text(reading: dict) -> str:
    """', at its SW power cap (698 of 700 W)' where NVML says the card holds its clocks at its
    own power limit (a `cap` reason), else ''. Short: it follows each card's MHz in a line."""
    cap = events(reading, "cap")
    if not cap:
        return ""
    power, limit = reading.get("power_mw"), reading.get("power_limit_mw")
    watts = f" ({power / 1000:.0f} of {limit / 1000:.0f} W)" if power is not None and limit else ""
    return f", at its {' and '.join(cap)}{watts}"
