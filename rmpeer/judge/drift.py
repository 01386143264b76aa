"""A host against its own past: each bandwidth figure of a run against this host's median of
its recent runs, and the corrected-ECC and remapped-row counts against its last run (issue 45).
A floor catches a pair that falls below what any healthy host of its kind reaches; this catches
one that falls from what this host reached, before it crosses the floor (395 -> 360 GB/s on a
floor of 355 GB/s).

A drift is INFO: said, never a drain. With --drift-fails it is DEGRADE. Only runs of the same
driver and the same cards (their UUIDs) are compared: a driver or card change starts a new
baseline, said once; a reboot between runs is named in the warning. Pure: the history's runs
(rmpeer.machine.history reads and writes them) and this run's entry, in; Findings, out.

Defaults (docs/history.md): a figure more than DRIFT_MARGIN below the median of the last
DRIFT_RUNS runs, once at least MIN_RUNS are there. The committed recordings' figures of one
host kind spread by at most 0.11% run to run (tests/judge/test_drift.py measures it), so a 5%
margin is far outside a healthy host's noise and well inside the 10% a floor allows."""

from __future__ import annotations

import statistics

from rmpeer.model.result import DEGRADE, INFO, Finding

DRIFT_MARGIN = 0.05
DRIFT_RUNS = 10
MIN_RUNS = 3
CHECK = "drift"


def figure_key(f: dict) -> str:
    """'read 0->1 (256 MiB)': a figure's op, pair and size (the key of a history's figures)."""
    size = f.get("bytes")
    where = "all" if f.get("op") == "all" else f"{f.get('src_card')}->{f.get('dst_card')}"
    return f"{f.get('op')} {where}" + (f" ({size >> 20} MiB)" if isinstance(size, int) and size else "")


def _card_health(result, field: str, inner: str) -> dict:
    out = {}
    for card in (result.host or {}).get("cards") or []:
        value = ((card.get("health") or {}).get(field) or {}).get(inner)
        if isinstance(value, int) and not isinstance(value, bool):
            out[str(card.get("index"))] = value
    return out


def entry_of(result) -> dict:
    """What a run leaves in its host's history: each figure, the boosted clocks, the active
    links, the corrected-ECC and remapped-row counts, and what decides whether two runs compare
    (driver, cards, boot)."""
    host = result.host or {}
    boosted = (result.clocks or {}).get("boosted") or {}
    return {"started": result.started, "certificate_id": result.certificate_id, "tier": result.tier,
            "verdict": result.verdict, "driver": host.get("driver_version"),
            "cards": [c.get("uuid") for c in host.get("cards") or []],
            "boot": (result.fingerprint or {}).get("boot"),
            "figures": {figure_key(f): f["gbps"] for f in result.bandwidth or []
                        if isinstance(f.get("gbps"), (int, float)) and not isinstance(f.get("gbps"), bool)},
            "boosted_mhz": {str(c): r.get("graphics_mhz") for c, r in boosted.items() if isinstance(r, dict)},
            "active_links": {str(c): r.get("active") for c, r in (result.links or {}).items() if isinstance(r, dict)},
            "ecc_corrected": _card_health(result, "ecc", "sbe"),
            "remapped_rows": _card_health(result, "remapped_rows", "rows")}


def comparable(runs: list, entry: dict) -> tuple[list, str]:
    """The earlier runs this one compares with (same driver, same cards), and a line when the
    history holds runs this one does not compare with (a new baseline)."""
    same = [r for r in runs if r.get("driver") == entry["driver"] and r.get("cards") == entry["cards"]]
    if runs and not same:
        last = runs[-1]
        what = ("driver " + f"{last.get('driver')} -> {entry['driver']}" if last.get("driver") != entry["driver"]
                else "cards changed")
        return [], f"history: a new baseline ({what}): the earlier runs of this host are not compared"
    return same, ""


def drift_findings(runs: list, entry: dict, *, margin: float = DRIFT_MARGIN, window: int = DRIFT_RUNS,
                   fails: bool = False) -> list:
    """Findings of this run's entry against the history's runs (oldest first)."""
    earlier, _ = comparable(runs, entry)
    recent = earlier[-window:]
    severity = DEGRADE if fails else INFO
    out = []
    if len(recent) >= MIN_RUNS:
        since = str(recent[0].get("started") or "")[:10]
        rebooted = entry.get("boot") and any(r.get("boot") and r.get("boot") != entry["boot"] for r in recent)
        for key, value in sorted(entry["figures"].items()):
            past = [r["figures"][key] for r in recent if isinstance((r.get("figures") or {}).get(key), (int, float))]
            if len(past) < MIN_RUNS:
                continue
            median = statistics.median(past)
            if median > 0 and value < median * (1 - margin):
                drop = (median - value) / median
                out.append(Finding(CHECK, key, f"at least {median * (1 - margin):.1f} GB/s (within {margin:.0%} of this "
                                   f"host's median of its last {len(past)} runs, {median:.1f} GB/s, since {since})",
                                   f"{value:.1f} GB/s, {drop:.0%} below that median"
                                   + (" (the host rebooted since some of them)" if rebooted else ""),
                                   severity, cause=f"drift: {drop:.0%} below this host's own median"))
    if earlier:
        last = earlier[-1]
        for field, words in (("ecc_corrected", "corrected ECC errors"), ("remapped_rows", "remapped rows")):
            for card, now in sorted((entry.get(field) or {}).items()):
                before = (last.get(field) or {}).get(card)
                if isinstance(before, int) and now > before:
                    out.append(Finding(CHECK, f"card {card}", f"{words} as at the last run ({before}, "
                                       f"{str(last.get('started') or '')[:10]})", f"{now}: {now - before} more",
                                       severity, cause=f"drift: {words} grew"))
    return out


def trend_rows(runs: list) -> list:
    """[(figure key, [GB/s per run, None where absent])] over the runs, for `rmpeer history`."""
    keys = sorted({k for r in runs for k in (r.get("figures") or {})})
    return [(k, [(r.get("figures") or {}).get(k) for r in runs]) for k in keys]
