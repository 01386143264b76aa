"""`rmpeer fleet label --apply` through the real kubernetes client, against a small HTTP
server on 127.0.0.1 that answers as the API server does for nodes (GET returns the node,
PATCH applies an RFC 7386 merge patch and returns it). No cluster is reachable here: this
checks what the client sends (method, path, content type, body) and that the node ends with
the labels and taints the scheme says; it is not a Kubernetes API server."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fleet_nodes import RMPEER, make_sweep

try:
    import kubernetes  # noqa: F401 - the client `label --apply` runs with
except ImportError:
    if os.environ.get("CI"):
        raise RuntimeError("CI installs the kubernetes client (.ci/run, the `fleet` extra)") from None
    pytest.skip("no kubernetes client: pip install 'rmpeer[fleet]'", allow_module_level=True)

THEIRS = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def merge(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


class Nodes(BaseHTTPRequestHandler):
    nodes: dict = {}
    seen: list = []

    def log_message(self, *args):
        pass

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _node(self):
        name = self.path.split("?")[0].removeprefix("/api/v1/nodes/")
        return name, self.nodes.get(name)

    def do_GET(self):
        name, node = self._node()
        self.seen.append(("GET", name, None, None))
        if node is None:
            return self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                    "code": 404, "message": f'nodes "{name}" not found'})
        self._send(200, node)

    def do_PATCH(self):
        name, node = self._node()
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(("PATCH", name, self.headers["Content-Type"], body))
        if self.headers["Content-Type"] != "application/merge-patch+json":
            return self._send(415, {"kind": "Status", "code": 415, "message": "unsupported patch type"})
        self.nodes[name] = merge(node, body)
        self._send(200, self.nodes[name])


def node(name, labels=None, taints=None):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []}}


@pytest.fixture
def api(tmp_path):
    Nodes.seen = []
    Nodes.nodes = {
        "gpu-ok": node("gpu-ok", {"rmpeer.io/result": "fail"},
                       [THEIRS, {"key": "rmpeer.io/p2p", "value": "failed", "effect": "NoSchedule"}]),
        "gpu-slow": node("gpu-slow", taints=[THEIRS]),
        "gpu-bad": node("gpu-bad"),
        "gpu-tool": node("gpu-tool", {"rmpeer.io/result": "fail", "rmpeer.io/certificate": "old"},
                         [{"key": "rmpeer.io/p2p", "value": "failed", "effect": "NoSchedule"}]),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), Nodes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "t",
        "clusters": [{"name": "t", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
        "users": [{"name": "u", "user": {"token": "test"}}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u"}}]}))
    yield kubeconfig
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return make_sweep(tmp_path_factory.mktemp("sweep"))[0]


def test_apply_patches_each_node_by_the_scheme_and_keeps_other_taints(api, shared):
    env = {"KUBECONFIG": str(api), "PATH": "/usr/bin:/bin", "HOME": str(api.parent)}
    done = subprocess.run([RMPEER, "fleet", "label", str(shared), "--apply"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert sorted(done.stdout.splitlines()) == ["gpu-bad: fail: patched", "gpu-ok: pass: patched",
                                                "gpu-slow: degraded: patched", "gpu-tool: error: patched"]
    patches = [s for s in Nodes.seen if s[0] == "PATCH"]
    assert {s[2] for s in patches} == {"application/merge-patch+json"}
    n = Nodes.nodes
    label = lambda name: n[name]["metadata"]["labels"]["rmpeer.io/result"]
    assert [label(x) for x in ("gpu-ok", "gpu-slow", "gpu-bad", "gpu-tool")] == ["pass", "degraded", "fail", "error"]
    assert n["gpu-ok"]["spec"]["taints"] == [THEIRS], "a pass lifts rmpeer's taint, and only it"
    assert n["gpu-slow"]["spec"]["taints"] == [THEIRS, {"key": "rmpeer.io/p2p", "value": "degraded",
                                                        "effect": "PreferNoSchedule"}]
    assert n["gpu-bad"]["spec"]["taints"] == [{"key": "rmpeer.io/p2p", "value": "failed", "effect": "NoSchedule"}]
    assert n["gpu-tool"]["spec"]["taints"] == [{"key": "rmpeer.io/p2p", "value": "failed", "effect": "NoSchedule"}], \
        "a tool error neither taints nor untaints"
    assert "rmpeer.io/certificate" not in n["gpu-tool"]["metadata"]["labels"], "no certificate: the label goes"
    assert all(x["metadata"]["labels"]["rmpeer.io/checked-at"].endswith("Z") for x in n.values())


def test_a_node_the_cluster_does_not_know_is_reported_not_patched(api, shared):
    del Nodes.nodes["gpu-bad"]
    env = {"KUBECONFIG": str(api), "PATH": "/usr/bin:/bin", "HOME": str(api.parent)}
    done = subprocess.run([RMPEER, "fleet", "label", str(shared), "--apply"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert "gpu-bad: not patched: 404" in done.stdout, done.stdout + done.stderr
    assert "gpu-ok: pass: patched" in done.stdout
