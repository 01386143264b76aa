"""The health facts in every output: `rmpeer show` and the certify text, the Prometheus file
(dcgm-exporter's label names), `rmpeer diff` (behaviour, volatile counters left out) and the
fingerprint. The facts are those `rmpeer host` printed on 1 x H200
(docs/evidence/h200x1-20261201T0928Z-health-probe/host.txt); expected values are NVML's
(nvidia-smi-q.txt there) or the headers' names."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.render.health_text import health_lines
from rmpeer.model.result import RunResult

pytestmark = pytest.mark.offline
REPO = Path(__file__).resolve().parents[2]
EVIDENCE = REPO / "docs" / "evidence" / "h200x1-20261201T0928Z-health-probe"
HOST = json.loads((EVIDENCE / "host.txt").read_text())
OLD_RECORDING = REPO / "fixtures" / "transcripts" / "h200x1-20261130T003119Z.jsonl.gz"


def result_with(host: dict) -> RunResult:
    return RunResult(node="n", tier="passive", version="0", host=copy.deepcopy(host), verdict="CERTIFIED")


def test_the_text_names_each_fact_as_rm_gave_it():
    host, card = health_lines(HOST)
    assert host == "  host health: Fabric Manager SKIP; Confidential Computing DISABLED (GPUs HCC, CPU NONE, multi-GPU NONE)"
    assert card == ("  card 0 health: PCIe Gen5 x16 of Gen5 x16; ECC on, 0 uncorrectable, 0 corrected since boot; "
                    "remapped rows 0; reset not required; recovery NONE; MIG DISABLED; fabric probe UNSUPPORTED")


def test_a_refused_fact_is_shown_as_not_read_with_its_status():
    host = copy.deepcopy(HOST)
    host["cards"][0]["health"]["remapped_rows"] = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "x"}
    assert "remapped rows not read (NV_ERR_NOT_SUPPORTED)" in health_lines(host)[1]


def test_show_says_a_recording_is_older_than_the_health_facts():
    done = subprocess.run([sys.executable, "-m", "rmpeer", "show", str(OLD_RECORDING)], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "  card 0 health: not in this record" in done.stdout


def test_prometheus_series_carry_dcgm_labels_and_nvml_values():
    from prometheus_client import generate_latest

    from rmpeer.render.prometheus import registry_of

    text = generate_latest(registry_of(result_with(HOST))).decode()
    labels = 'UUID="GPU-4956b4a0-1fda-6ceb-9afb-340e1e05cea3",gpu="0",modelName="NVIDIA H200",pci_bus_id="00000000:00:06.0"'
    for series, value in (("rmpeer_pcie_max_link_gen", 5.0), ("rmpeer_pcie_max_link_width", 16.0),
                          ("rmpeer_pcie_link_width", 16.0), ("rmpeer_row_remap_pending", 0.0),
                          ("rmpeer_row_remap_failure", 0.0), ("rmpeer_ecc_dbe_volatile_total", 0.0),
                          ("rmpeer_ecc_enabled", 1.0)):
        assert f"{series}{{{labels}}} {value}" in text, series
    assert f'rmpeer_mig_mode{{{labels},state="DISABLED"}} 1.0' in text
    assert f'rmpeer_recovery_action{{{labels},state="NONE"}} 1.0' in text
    assert 'rmpeer_fabric_status{state="SKIP",status="NV_OK"} 1.0' in text
    assert ('rmpeer_health_fact_read{UUID="GPU-4956b4a0-1fda-6ceb-9afb-340e1e05cea3",fact="pcie",gpu="0",'
            'modelName="NVIDIA H200",pci_bus_id="00000000:00:06.0",status="NV_OK"} 1.0') in text   # labels sorted


def test_prometheus_gives_no_value_for_a_fact_not_read():
    from prometheus_client import generate_latest

    from rmpeer.render.prometheus import registry_of

    host = copy.deepcopy(HOST)
    host["cards"][0]["health"]["remapped_rows"] = {"status": "NV_ERR_NOT_SUPPORTED", "reason": "x"}
    text = generate_latest(registry_of(result_with(host))).decode()
    assert "rmpeer_row_remap_pending{" not in text
    assert 'fact="remapped_rows",gpu="0",modelName="NVIDIA H200",pci_bus_id="00000000:00:06.0",status="NV_ERR_NOT_SUPPORTED"} 0.0' in text


def _diff(tmp_path, a: dict, b: dict):
    pa, pb, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "diff.json"
    pa.write_text(json.dumps(result_with(a).to_dict()))
    pb.write_text(json.dumps(result_with(b).to_dict()))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "diff", str(pa), str(pb), "--json", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert "Traceback" not in done.stderr, done.stderr
    facts = next(x for x in json.loads(out.read_text())["aspects"] if x["name"].startswith("reply fields"))
    return done.returncode, {d["key"] for d in facts["differences"]}


def test_diff_leaves_out_the_counters_and_the_idle_generation(tmp_path):
    b = copy.deepcopy(HOST)
    h = b["cards"][0]["health"]
    h["ecc"]["sbe"], h["pcie"]["gen"] = 12, 1
    h["pcie"]["raw"]["ctrl_status"] ^= 0x40000
    rc, keys = _diff(tmp_path, HOST, b)
    assert (rc, keys) == (0, set())


def test_diff_names_a_health_behaviour_change(tmp_path):
    b = copy.deepcopy(HOST)
    b["cards"][0]["health"]["remapped_rows"]["pending"] = True
    b["cards"][0]["health"]["pcie"]["width"] = 8
    rc, keys = _diff(tmp_path, HOST, b)
    assert rc == 1 and keys == {"cards[0].health.remapped_rows.pending", "cards[0].health.pcie.width"}


def test_the_fingerprint_keeps_the_platform_facts_and_staleness_names_a_change():
    from rmpeer.run.fingerprint import recorded_fingerprint
    from rmpeer.model.host import HostFacts
    from rmpeer.judge.freshness import fingerprint_changes

    facts = HostFacts.from_dict(HOST)
    fp = recorded_fingerprint(facts, matrices="m")
    uuid = "GPU-4956b4a0-1fda-6ceb-9afb-340e1e05cea3"
    assert fp["health"] == {uuid: {"pcie_max": "Gen5 x16", "mig": "DISABLED", "ecc": "on"},
                            "confidential_compute": "DISABLED"}
    moved = copy.deepcopy(HOST)
    moved["cards"][0]["health"]["pcie"]["max_width"] = 8
    changed = recorded_fingerprint(HostFacts.from_dict(moved), matrices="m")
    # a recorded fingerprint's unread values (kernel, module: "not recorded") match nothing
    # (rmpeer.judge.freshness.unread_value): only RM's health lines are this test's
    rm_lines = lambda changes: [line for line in changes if line.startswith("RM's")]   # noqa: E731
    assert rm_lines(fingerprint_changes(fp, changed)) == [f"RM's {uuid} pcie_max changed Gen5 x16 -> Gen5 x8"]
    assert rm_lines(fingerprint_changes({k: v for k, v in fp.items() if k != "health"}, changed)) == []


def test_show_calls_names_each_list_element_and_its_bits():
    """The reply bytes of the real driver, as `rmpeer show --calls` prints the lists: NVML said
    Gen5 (32 GT/s) x16 and MIG disabled."""
    from rmpeer.abi import DriverMatrix
    from rmpeer.render.health_calls import describe_lists

    calls = {c["label"]: bytes.fromhex(c["reply"])
             for c in json.loads((EVIDENCE / "nobody.json").read_text())["calls"]}
    abi = DriverMatrix().abi_for_driver("580.159.04")
    pcie = describe_lists(abi, "NV2080_CTRL_BUS_GET_INFO_V2_PARAMS", calls["health:pcie:card0"])
    assert pcie[0].startswith("      [0] index 7 (PCIE_GPU_LINK_CTRL_STATUS) data 0x11050000 (")
    assert "LINK_WIDTH=X16" in pcie[0] and "LINK_SPEED=32000MBPS" in pcie[0]
    assert "MAX_WIDTH=16" in pcie[1] and "MAX_SPEED=32000MBPS" in pcie[1] and "(PCIE_GPU_LINK_CAPS)" in pcie[1]
    mig = describe_lists(abi, "NV2080_CTRL_GPU_GET_INFO_V2_PARAMS", calls["health:mig:card0"])
    assert mig == ["      [0] index 42 (GPU_SMC_MODE) data 0x2 (DISABLED)"]
    units = describe_lists(abi, "NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS", calls["health:ecc:card0"])
    assert len(units) == 20 and all("enabled=1" in u and "dbe.count=0" in u for u in units)
