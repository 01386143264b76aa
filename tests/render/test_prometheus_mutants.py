"""Tests that kill the mutants of rmpeer/render/prometheus.py (docs/mutation.md): every series of a
RunResult built by hand, read back with prometheus-client's parser of the text exposition format
(its own rules: # HELP, # TYPE, name{labels} value), each value and label worked out here by the
module's docstring (bytes per second, seconds, dcgm-exporter's label names and bus-id spelling,
medians) and the calendar, never taken from textfile."""

import calendar

import pytest
from prometheus_client.parser import text_string_to_metric_families

from rmpeer.model.result import (CERTIFIED, DEGRADED, NOT_CERTIFIED, CheckResult, PairResult, RunResult)
from rmpeer.render.prometheus import dcgm_bus_id, textfile

pytestmark = pytest.mark.offline

# the series of rmpeer/render/prometheus.py itself (the health series are prometheus_health.py's)
HELP = [
    ("rmpeer_certified", "1 when the host is CERTIFIED at this tier, else 0 (the verdict label says why)"),
    ("rmpeer_check_passed", "1 when every run of this declared check passed"),
    ("rmpeer_gpu_certified", "1 when this GPU's own checks passed (the verdict label says why not)"),
    ("rmpeer_gpu_pair_certified", "1 when the setup, reads, writes and bandwidth between gpu and peer_gpu passed"),
    ("rmpeer_p2p_copy_ok", "1 when every peer copy from gpu to peer_gpu was byte-exact"),
    ("rmpeer_p2p_bandwidth_bytes_per_second", "median copy bandwidth from gpu to peer_gpu"),
    ("rmpeer_bandwidth_floor_bytes_per_second", "the topology's floor for a copy of this op"),
    ("rmpeer_nvlink_active_links", "NVLinks RM reports active on this GPU"),
    ("rmpeer_run_duration_seconds", "how long the run took"),
    ("rmpeer_last_run_timestamp_seconds", "Unix time the run finished"),
    ("rmpeer_certificate_valid_until_timestamp_seconds", "Unix time the certificate expires"),
    ("rmpeer_build_info", "rmpeer's version and the driver it checked (always 1)"),
]
OWN = {name for name, _ in HELP}

CARD0 = {"gpu": "0", "UUID": "GPU-a", "pci_bus_id": "00000000:1B:00.0", "modelName": "NVIDIA H200"}
CARD1 = {"gpu": "1", "UUID": "GPU-b", "pci_bus_id": "00000000:2C:00.0", "modelName": "NVIDIA H200"}
NO_CARD = {"UUID": "", "pci_bus_id": "", "modelName": ""}


def cards():
    return [{"index": 0, "uuid": "GPU-a", "pci": "0000:1b:00.0", "name": "NVIDIA H200"},
            {"index": 1, "uuid": "GPU-b", "pci": "0000:2c:00.0", "name": "NVIDIA H200"}]


def check(name, outcome):
    return CheckResult(f"{name}/{outcome}", name, "host", "host", outcome)


def copy(src, dst, op, ok):
    return PairResult("one-per-card", src, dst, src, dst, op, ok, 1 << 26)


def figure(src, dst, op, gbps):
    return {"src_card": src, "dst_card": dst, "op": op, "bytes": 1 << 28, "gbps": gbps}


def full_run(**kw) -> RunResult:
    base = dict(
        node="n1", tier="quick", verdict=DEGRADED, started="2026-11-30T00:00:00Z", duration_s=30.5,
        valid_until="2026-12-07T00:00:00+00:00", version="0.2.0",
        host={"driver_version": "580.1", "cards": cards()},
        checks=[check("read", "passed"), check("read", "passed"), check("write", "passed"), check("write", "failed"),
                check("setup", "skipped"), check("bw", "error"), check("nvlink", "passed"), check("nvlink", "skipped"),
                check("ce", "passed"), check("ce", "error")],
        pairs=[copy(1, 1, "read", None), copy(0, 0, "read", False), copy(0, 0, "write", True), copy(0, 1, "read", True),
               copy(0, 1, "write", True), copy(1, 0, "read", True), copy(1, 0, "write", False)],
        bandwidth=[figure(0, 1, "read", 100.0), figure(0, 1, "read", 300.0), figure(0, 1, "read", 200.0),
                   figure(1, 0, "write", 50.5), figure(1, 0, "read", None), figure(7, 0, "read", 10)],
        topology={"floors": {"cross_card_gbps": 355, "same_card_gbps": None, "bidirectional_gbps": 650}},
        links={"0": {"supported": 18, "active": [0, 1, 2]}, "1": {"active": 18}, "2": None, "3": {"active": None}},
        by_card={"cards": [{"card": 0, "uuid": "GPU-a", "verdict": CERTIFIED},
                           {"card": 9, "uuid": "GPU-z", "verdict": DEGRADED}],
                 "pairs": [{"pair": "0-1", "cards": [0, 1], "uuids": ["GPU-a", "GPU-b"], "verdict": DEGRADED},
                           {"pair": "8-0", "cards": [8, 0], "uuids": ["GPU-y", "GPU-a"], "verdict": CERTIFIED}]})
    base.update(kw)
    return RunResult(**base)


def families(result):
    return list(text_string_to_metric_families(textfile(result).decode()))


def series(result) -> dict:
    """name -> sorted [(labels as sorted items, value)] of the module's own series."""
    out = {}
    for family in families(result):
        for s in family.samples:
            if s.name in OWN:
                out.setdefault(s.name, []).append((tuple(sorted(s.labels.items())), s.value))
    return {k: sorted(v) for k, v in out.items()}


def rows(*pairs):
    return sorted((tuple(sorted(labels.items())), value) for labels, value in pairs)


def test_every_series_of_a_run_written_out():
    at = calendar.timegm((2026, 11, 30, 0, 0, 0))
    assert series(full_run()) == {
        "rmpeer_certified": rows(({"tier": "quick", "verdict": DEGRADED}, 0.0)),
        "rmpeer_check_passed": rows(({"check": "bw"}, 0.0), ({"check": "ce"}, 0.0), ({"check": "nvlink"}, 1.0), ({"check": "read"}, 1.0),
                                    ({"check": "write"}, 0.0)),
        "rmpeer_gpu_certified": rows(({**CARD0, "verdict": CERTIFIED}, 1.0),
                                     ({"gpu": "9", "UUID": "GPU-z", "pci_bus_id": "", "modelName": "",
                                       "verdict": DEGRADED}, 0.0)),
        "rmpeer_gpu_pair_certified": rows(({**CARD0, "peer_gpu": "1", "verdict": DEGRADED}, 0.0),
                                          ({"gpu": "8", "UUID": "GPU-y", "pci_bus_id": "", "modelName": "",
                                            "peer_gpu": "0", "verdict": CERTIFIED}, 1.0)),
        "rmpeer_p2p_copy_ok": rows(({**CARD0, "peer_gpu": "0"}, 0.0), ({**CARD0, "peer_gpu": "1"}, 1.0),
                                   ({**CARD1, "peer_gpu": "0"}, 0.0)),
        "rmpeer_p2p_bandwidth_bytes_per_second": rows(
            ({**CARD0, "peer_gpu": "1", "op": "read", "Hostname": "n1"}, 200e9),
            ({**CARD1, "peer_gpu": "0", "op": "write", "Hostname": "n1"}, 50.5e9),
            ({"gpu": "7", **NO_CARD, "peer_gpu": "0", "op": "read", "Hostname": "n1"}, 10e9)),
        "rmpeer_bandwidth_floor_bytes_per_second": rows(({"op": "bidirectional"}, 650e9), ({"op": "read"}, 355e9),
                                                        ({"op": "write"}, 355e9)),
        "rmpeer_nvlink_active_links": rows((CARD0, 3.0), (CARD1, 18.0)),
        "rmpeer_run_duration_seconds": [((), 30.5)],
        "rmpeer_last_run_timestamp_seconds": [((), at + 30.5)],
        "rmpeer_certificate_valid_until_timestamp_seconds": [((), float(calendar.timegm((2026, 12, 7, 0, 0, 0))))],
        "rmpeer_build_info": rows(({"version": "0.2.0", "driver_version": "580.1"}, 1.0)),
    }


def test_each_series_says_what_it_is_and_is_a_gauge():
    own = [(f.name, f.documentation, f.type) for f in families(full_run()) if f.name in OWN]
    assert own == [(name, text, "gauge") for name, text in HELP]


def test_a_run_of_nothing_has_the_certified_duration_and_build_series_alone():
    got = series(RunResult(verdict=CERTIFIED, duration_s=1, started="not a time", tier="full"))
    assert got == {"rmpeer_certified": rows(({"tier": "full", "verdict": CERTIFIED}, 1.0)),
                   "rmpeer_run_duration_seconds": [((), 1.0)],
                   "rmpeer_build_info": rows(({"version": "", "driver_version": ""}, 1.0))}


def test_an_expiry_that_is_no_time_has_no_series():
    got = series(RunResult(verdict=NOT_CERTIFIED, started="2026-11-30T00:00:00+01:00", valid_until="soon"))
    assert got["rmpeer_last_run_timestamp_seconds"] == [((), float(calendar.timegm((2026, 11, 29, 23, 0, 0))))]
    assert "rmpeer_certificate_valid_until_timestamp_seconds" not in got
    assert got["rmpeer_certified"] == rows(({"tier": "full", "verdict": NOT_CERTIFIED}, 0.0))


def test_a_subset_run_names_its_cards_by_the_hosts_numbers():
    host = {"cards": cards(), "selection": {"cards": [4, 6]}}
    per = {"cards": [{"card": 6, "uuid": "GPU-b", "verdict": CERTIFIED}], "pairs": []}
    got = series(RunResult(verdict=CERTIFIED, host=host, links={"0": {"active": 1}, "1": {"active": (1, 2)}},
                           by_card=per))
    assert got["rmpeer_nvlink_active_links"] == rows(({**CARD0, "gpu": "4"}, 1.0), ({**CARD1, "gpu": "6"}, 2.0))
    assert got["rmpeer_gpu_certified"] == rows(({**CARD1, "gpu": "6", "verdict": CERTIFIED}, 1.0))


def test_a_subset_run_names_both_cards_of_a_pair_by_the_hosts_numbers():
    """On a run of cards 1 and 3 of a host, the copy from the run's card 0 to its card 1 is
    host card 1 to host card 3: gpu and peer_gpu both the host's numbers (peer_gpu was the
    run's own number, so the pair read 1 -> 1), as dcgm-exporter numbers them."""
    host = {"cards": cards(), "selection": {"cards": [1, 3]}}
    got = series(RunResult(verdict=CERTIFIED, host=host, pairs=[copy(0, 1, "read", True)],
                           bandwidth=[figure(0, 1, "read", 395.0)], node="n1"))
    assert got["rmpeer_p2p_copy_ok"] == rows(({**CARD0, "gpu": "1", "peer_gpu": "3"}, 1.0))
    assert got["rmpeer_p2p_bandwidth_bytes_per_second"] == rows(
        ({**CARD0, "gpu": "1", "peer_gpu": "3", "op": "read", "Hostname": "n1"}, 395e9))


def test_a_selection_shorter_than_the_cards_numbers_the_rest_by_their_index():
    got = series(RunResult(verdict=CERTIFIED, host={"cards": cards(), "selection": {"cards": [5]}},
                           links={"0": {"active": 1}, "1": {"active": 2}}))
    assert got["rmpeer_nvlink_active_links"] == rows(({**CARD0, "gpu": "5"}, 1.0), (CARD1, 2.0))


def test_a_card_without_its_facts_has_empty_labels():
    got = series(RunResult(verdict=CERTIFIED, host={"cards": [{"index": 0}]}, links={"0": {"active": 4}}))
    assert got["rmpeer_nvlink_active_links"] == rows(({"gpu": "0", **NO_CARD}, 4.0))


@pytest.mark.parametrize("pci, bus", [("0000:1b:00.0", "00000000:1B:00.0"), ("0001:c3:1f.7", "00000001:C3:1F.7"),
                                      ("000a:1b:00.0", "0000000A:1B:00.0"), ("0010:1b:00.0", "00000010:1B:00.0"),
                                      ("", ""), ("1b00", "1b00"), ("zz:1b:00.0", "zz:1b:00.0")])
def test_the_bus_id_as_dcgm_spells_it(pci, bus):
    assert dcgm_bus_id(pci) == bus


def test_a_start_of_none_has_no_last_run_series():
    got = series(RunResult(verdict=CERTIFIED, started=None, duration_s=1))
    assert "rmpeer_last_run_timestamp_seconds" not in got and got["rmpeer_run_duration_seconds"] == [((), 1.0)]
