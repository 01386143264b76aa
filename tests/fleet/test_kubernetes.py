"""The Kubernetes side of fleet mode, offline (no cluster is reachable here): every shipped
manifest validates against a pinned Kubernetes with kubernetes-validate; the Job's
podFailurePolicy covers rmpeer's exit codes as documented; the node-problem-detector plugin
answers NPD's contract (0 OK, 1 problem, else unknown; stdout the message); and the label and
taint patches computed from recorded results are what the scheme says."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_nodes import RMPEER, make_sweep
from lacking import lacking
from slurm.recordings import HEALTHY, IDLE_CLOCKS

from rmpeer import errors
from rmpeer.fleet import label as lb
from rmpeer.fleet.files import copy_out
from rmpeer.fleet.checks import load_sweep

KUBERNETES = "1.33.0"     # the version the manifests are validated against


def kubernetes_validate():
    try:
        import kubernetes_validate as kv
    except ImportError:
        lacking("no kubernetes-validate: pip install 'rmpeer[fleet]'",
                "CI installs kubernetes-validate (.ci/run, the `fleet` extra)")
    return kv


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    out = tmp_path_factory.mktemp("k8s")
    copy_out("kubernetes", out)
    return out


def documents(manifests):
    for path in sorted(manifests.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                yield path.name, doc


def test_every_manifest_validates_against_a_pinned_kubernetes(manifests):
    kv = kubernetes_validate()
    kinds = []
    for name, doc in documents(manifests):
        kv.validate(doc, KUBERNETES, strict=True)       # raises ValidationError with the field
        kinds.append(doc["kind"])
    assert sorted(kinds) == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "Job", "Namespace", "ServiceAccount"]


def test_a_broken_manifest_is_refused(manifests):
    """The validation above can fail: a Job whose podFailurePolicy misses a required field."""
    kv = kubernetes_validate()
    job = next(d for _, d in documents(manifests) if d["kind"] == "Job")
    del job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"]
    with pytest.raises(kv.ValidationError):
        kv.validate(job, KUBERNETES, strict=True)


def test_the_job_takes_all_gpus_one_pod_per_node_and_maps_every_exit_code(manifests):
    job = next(d for _, d in documents(manifests) if d["kind"] == "Job")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimitPerIndex"] == 1
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] >= 1
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"
    assert any(t["key"] == lb.TAINT and t["operator"] == "Exists" for t in pod["tolerations"]), \
        "the sweep can run on a node rmpeer tainted, so the node can come back"
    actions = {}
    for rule in spec["podFailurePolicy"]["rules"]:
        for code in rule.get("onExitCodes", {}).get("values", []):
            actions[code] = rule["action"]
    assert actions == {errors.EXIT_NOT_CERTIFIED: "FailIndex", errors.EXIT_CONFIG: "FailIndex",
                       errors.EXIT_NO_ACCESS: "FailIndex", errors.EXIT_NOT_IDLE: "FailIndex",
                       errors.EXIT_DEGRADED: "Count", errors.EXIT_INCOMPLETE: "Count", errors.EXIT_BUSY: "Count"}
    assert pod["containers"][0]["command"][:3] == ["rmpeer", "fleet", "node"]


def test_the_rbac_grants_node_get_and_patch_only(manifests):
    role = next(d for _, d in documents(manifests) if d["kind"] == "ClusterRole")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]}]


def test_the_npd_configmap_carries_the_shipped_plugin(manifests):
    cm = next(d for _, d in documents(manifests) if d["kind"] == "ConfigMap")
    config = json.loads(cm["data"]["rmpeer-p2p.json"])
    assert config["plugin"] == "custom" and config["rules"][0]["path"].endswith("/rmpeer-npd.sh")
    assert cm["data"]["rmpeer-npd.sh"] == (manifests / "npd" / "rmpeer-npd.sh").read_text()
    assert config["pluginConfig"]["timeout"] == "5s"


def test_the_npd_configmap_holds_only_the_shipped_files_whatever_the_folder_holds(tmp_path):
    """DIR may be a folder others write (a shared one): a file planted in DIR/npd, here a link
    to a root-only file, was read into the ConfigMap (0644) with the shipped ones."""
    secret = tmp_path / "secret"
    secret.write_text("root's secret\n")
    secret.chmod(0o600)
    (tmp_path / "out" / "npd").mkdir(parents=True)
    (tmp_path / "out" / "npd" / "zz-planted").symlink_to(secret)
    copy_out("kubernetes", tmp_path / "out")
    cm = yaml.safe_load((tmp_path / "out" / "rmpeer-npd-configmap.yaml").read_text())
    shipped = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "rmpeer/integrations/kubernetes/npd")
                     .iterdir() if p.is_file() and not p.name.startswith(("_", ".")))
    assert sorted(cm["data"]) == shipped and "secret" not in json.dumps(cm)


def npd(manifests, tmp_path, recording):
    env = {"PATH": os.environ["PATH"], "RMPEER": RMPEER, "RMPEER_STATE_DIR": str(tmp_path), "NODE_NAME": "n1",
           **({"RMPEER_STAND_IN": str(recording)} if recording else {})}
    done = subprocess.run([str(manifests / "npd" / "rmpeer-npd.sh")], env=env, capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stdout.strip()


def test_the_npd_plugin_answers_npds_contract(manifests, tmp_path):
    assert npd(manifests, tmp_path, HEALTHY) == (0, "rmpeer: passive checks pass")
    rc, out = npd(manifests, tmp_path, IDLE_CLOCKS)
    assert rc == 1 and out.startswith("rmpeer: bandwidth-floor: ")
    garbage = tmp_path / "g.jsonl.gz"
    garbage.write_text("not a recording\n")
    rc, out = npd(manifests, tmp_path, garbage)
    assert rc == 2 and out.startswith("rmpeer: tool: no verdict (exit 2)"), "a tool error is Unknown, not a problem"

def test_the_npd_plugin_says_unknown_without_rmpeer(manifests, tmp_path):
    env = {"PATH": os.environ["PATH"], "RMPEER": str(tmp_path / "no-such-rmpeer")}
    done = subprocess.run([str(manifests / "npd" / "rmpeer-npd.sh")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stdout.strip() == "rmpeer: tool: rmpeer is not installed in this container"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    shared, _ = make_sweep(tmp_path_factory.mktemp("sweep"))
    return shared, {o.node: o for o in load_sweep(shared)}


def test_the_label_patches_follow_the_scheme(recorded):
    shared, nodes = recorded
    want = {n: lb.desired(o, shared / n) for n, o in nodes.items()}
    assert {n: w["labels"][lb.RESULT] for n, w in want.items()} == {
        "gpu-ok": "pass", "gpu-slow": "degraded", "gpu-bad": "fail", "gpu-tool": "error"}
    assert want["gpu-bad"]["taint"] == {"key": "rmpeer.io/p2p", "value": "failed", "effect": "NoSchedule"}
    assert want["gpu-slow"]["taint"] == {"key": "rmpeer.io/p2p", "value": "degraded", "effect": "PreferNoSchedule"}
    assert want["gpu-ok"]["taint"] is None and want["gpu-tool"]["taint"] == "keep"
    assert want["gpu-tool"]["labels"][lb.CERTIFICATE] is None, "no certificate: the label is removed"
    for w in want.values():
        for value in w["labels"].values():
            assert value is None or lb._LABEL_VALUE.match(value) and len(value) <= 63, value
        assert w["labels"][lb.CHECKED_AT].startswith("20") and w["labels"][lb.CHECKED_AT].endswith("Z")


def test_a_patch_keeps_other_taints_and_a_tool_error_keeps_them_all(recorded):
    shared, nodes = recorded
    theirs = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ours = {"key": lb.TAINT, "value": "failed", "effect": "NoSchedule"}
    ok = lb.node_patch(lb.desired(nodes["gpu-ok"], shared / "gpu-ok"), [theirs, ours])
    assert ok["spec"]["taints"] == [theirs], "a pass removes rmpeer's taint, and only it"
    bad = lb.node_patch(lb.desired(nodes["gpu-bad"], shared / "gpu-bad"), [theirs])
    assert bad["spec"]["taints"] == [theirs, ours]
    same = lb.node_patch(lb.desired(nodes["gpu-bad"], shared / "gpu-bad"), [theirs, ours])
    assert "spec" not in same, "nothing to change: no taint patch"
    tool = lb.node_patch(lb.desired(nodes["gpu-tool"], shared / "gpu-tool"), [ours])
    assert "spec" not in tool and tool["metadata"]["labels"][lb.RESULT] == "error"


def test_label_prints_one_patch_per_node(recorded):
    shared, _ = recorded
    done = subprocess.run([RMPEER, "fleet", "label", str(shared)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert sorted(x["node"] for x in lines) == ["gpu-bad", "gpu-ok", "gpu-slow", "gpu-tool"]
    bad = next(x for x in lines if x["node"] == "gpu-bad")
    assert bad["patch"]["spec"]["taints"][0]["value"] == "failed"
