"""`--prometheus DIR`: the run as node_exporter's textfile collector reads it (DIR/rmpeer.prom).

Rendered with prometheus-client (a registry of gauges, `generate_latest`) and written by
rmpeer.run.outputs through rmpeer.safewrite: a new temporary file of unpredictable name beside
the destination (ending in .tmp, a name the collector ignores), renamed into place, so a scrape
never reads half a file (prometheus-client's own write_to_textfile uses a predictable
temporary name). The format
carries no timestamps and no host label (the scrape adds the instance); values are in base
units (bytes per second, seconds). Per-GPU series carry dcgm-exporter's label names (gpu, UUID, pci_bus_id,
modelName, and peer_gpu for a pair) in dcgm-exporter's spelling, so they join with DCGM's
series; join on UUID where RM's card order and NVML's index could differ."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from statistics import median

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from rmpeer.model.result import CERTIFIED, RunResult
from rmpeer.render.prometheus_health import add_health
from rmpeer.render.verdict import NO_CARDS

FILENAME = "rmpeer.prom"
GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "modelName")
GB = 1e9       # rmpeer's GB/s are bytes per nanosecond (rmpeer/traffic/bandwidth.py): decimal gigabytes


def dcgm_bus_id(pci: str) -> str:
    """RM's "0000:19:00.0" as NVML and dcgm-exporter write it: "00000000:19:00.0"."""
    domain, sep, rest = (pci or "").partition(":")
    try:
        return f"{int(domain, 16):08X}:{rest.upper()}" if sep else pci
    except ValueError:
        return pci


def gpu_labels(result: RunResult) -> dict[int, dict]:
    """card index -> its dcgm-style labels; `gpu` is the host's number of the card (on a run
    of some of the cards, not the run's own 0..k-1)."""
    hosts = (result.host.get("selection") or {}).get("cards")
    number = lambda i: str(hosts[i]) if hosts and i < len(hosts) else str(i)   # noqa: E731
    return {int(c["index"]): {"gpu": number(int(c["index"])), "UUID": c.get("uuid", ""),
                              "pci_bus_id": dcgm_bus_id(c.get("pci", "")), "modelName": c.get("name", "")}
            for c in result.host.get("cards", [])}


def _card_labels(cards: dict, card: int) -> dict:
    return cards.get(card, {"gpu": str(card), "UUID": "", "pci_bus_id": "", "modelName": ""})


def check_passed(result: RunResult) -> dict[str, int]:
    """Per declared check name: 1 when at least one of its checks passed and none failed or
    errored, else 0. A check that only skipped (not asked for, as the topology check without
    --expect-topology) has shown nothing either way and has no series."""
    seen: dict[str, set] = defaultdict(set)
    for c in result.checks:
        seen[c.check].add(c.outcome)
    return {name: int("passed" in outcomes and not outcomes & {"failed", "error"})
            for name, outcomes in seen.items() if outcomes - {"skipped"}}


def copy_ok(result: RunResult) -> dict[tuple[int, int], int]:
    """Per card pair: 1 when every copy between them was byte-exact, 0 when one was not.
    A pair with no copy run (refused as the topology expects, or skipped) has no series."""
    out: dict = {}
    for p in result.pairs:
        if p.ok is None:
            continue
        key = (p.src_card, p.dst_card)
        out[key] = out.get(key, 1) & int(bool(p.ok))
    return out


def bandwidth(result: RunResult) -> dict[tuple[int, int, str], float]:
    """(card, peer card, op) -> the median bytes per second of the run's bandwidth figures."""
    figures = defaultdict(list)
    for f in result.bandwidth:
        if f.get("gbps") is not None:
            figures[(int(f["src_card"]), int(f["dst_card"]), f["op"])].append(float(f["gbps"]) * GB)
    return {k: median(v) for k, v in figures.items()}


def floors(result: RunResult) -> dict[str, float]:
    """op -> the topology's floor in bytes per second; read and write share the cross-card floor,
    so a floor joins the bandwidth series on op."""
    given = (result.topology or {}).get("floors") or {}
    out = {}
    for ops, key in ((("read", "write"), "cross_card_gbps"), (("same-card",), "same_card_gbps"),
                     (("bidirectional",), "bidirectional_gbps")):
        if given.get(key) is not None:
            out.update({op: float(given[key]) * GB for op in ops})
    return out


def active_links(result: RunResult) -> dict[int, int]:
    out = {}
    for card, state in result.links.items():
        active = (state or {}).get("active")
        if active is not None:
            out[int(card)] = len(active) if isinstance(active, (list, tuple)) else int(active)
    return out


def _epoch(iso: str) -> float | None:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() if iso else None
    except ValueError:
        return None


def registry_of(result: RunResult) -> CollectorRegistry:
    reg = CollectorRegistry()
    gauge = lambda name, doc, labels=(): Gauge(name, doc, labels, registry=reg)
    cards = gpu_labels(result)

    gauge("rmpeer_certified", "1 when the host is CERTIFIED at this tier, else 0 (the verdict label says why)",
          ("tier", "verdict")).labels(tier=result.tier, verdict=result.verdict).set(int(result.verdict == CERTIFIED))
    passed = gauge("rmpeer_check_passed", "1 when every run of this declared check passed", ("check",))
    for name, value in sorted(check_passed(result).items()):
        passed.labels(check=name).set(value)
    _per_card_series(result, gauge, cards)
    ok = gauge("rmpeer_p2p_copy_ok", "1 when every peer copy from gpu to peer_gpu was byte-exact",
               (*GPU_LABELS, "peer_gpu"))
    for (src, dst), value in sorted(copy_ok(result).items()):
        ok.labels(**_card_labels(cards, src), peer_gpu=_card_labels(cards, dst)["gpu"]).set(value)
    # dcgm-exporter's label names, Hostname too: Grafana draws a pair's trend across runs and hosts
    bw = gauge("rmpeer_p2p_bandwidth_bytes_per_second", "median copy bandwidth from gpu to peer_gpu",
               (*GPU_LABELS, "peer_gpu", "op", "Hostname"))
    for (src, dst, op), value in sorted(bandwidth(result).items()):
        bw.labels(**_card_labels(cards, src), peer_gpu=_card_labels(cards, dst)["gpu"], op=op,
                  Hostname=result.node).set(value)
    floor = gauge("rmpeer_bandwidth_floor_bytes_per_second", "the topology's floor for a copy of this op", ("op",))
    for op, value in sorted(floors(result).items()):
        floor.labels(op=op).set(value)
    links = gauge("rmpeer_nvlink_active_links", "NVLinks RM reports active on this GPU", GPU_LABELS)
    for card, n in sorted(active_links(result).items()):
        links.labels(**_card_labels(cards, card)).set(n)

    add_health(gauge, result, cards, _card_labels)
    gauge("rmpeer_run_duration_seconds", "how long the run took").set(float(result.duration_s))
    started = _epoch(result.started)
    if started is not None:
        # when the run ended: an alert on "no run for N hours" compares time() with this
        gauge("rmpeer_last_run_timestamp_seconds", "Unix time the run finished").set(started + float(result.duration_s))
    until = _epoch(result.valid_until or "")
    if until is not None:
        gauge("rmpeer_certificate_valid_until_timestamp_seconds", "Unix time the certificate expires").set(until)
    gauge("rmpeer_build_info", "rmpeer's version and the driver it checked (always 1)",
          ("version", "driver_version")).labels(version=result.version,
                                                driver_version=result.host.get("driver_version", "")).set(1)
    return reg


def _per_card_series(result: RunResult, gauge, cards: dict) -> None:
    """rmpeer_gpu_certified per card and rmpeer_gpu_pair_certified per pair (the judge's
    RunResult.by_card: a result never judged has neither)."""
    per = result.by_card or NO_CARDS
    by_host = {labels["gpu"]: labels for labels in cards.values()}
    one = gauge("rmpeer_gpu_certified", "1 when this GPU's own checks passed (the verdict label says why not)",
                (*GPU_LABELS, "verdict"))
    for c in per["cards"]:
        labels = by_host.get(str(c["card"]), {"gpu": str(c["card"]), "UUID": c["uuid"], "pci_bus_id": "",
                                              "modelName": ""})
        one.labels(**labels, verdict=c["verdict"]).set(int(c["verdict"] == CERTIFIED))
    two = gauge("rmpeer_gpu_pair_certified", "1 when the setup, reads, writes and bandwidth between gpu and "
                "peer_gpu passed", (*GPU_LABELS, "peer_gpu", "verdict"))
    for p in per["pairs"]:
        a, b = (str(x) for x in p["cards"])
        labels = by_host.get(a, {"gpu": a, "UUID": p["uuids"][0], "pci_bus_id": "", "modelName": ""})
        two.labels(**labels, peer_gpu=b, verdict=p["verdict"]).set(int(p["verdict"] == CERTIFIED))


def textfile(result: RunResult) -> bytes:
    """The text node_exporter's textfile collector reads (rmpeer.run.outputs writes it)."""
    return generate_latest(registry_of(result))
