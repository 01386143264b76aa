"""`rmpeer fleet label DIR`: Kubernetes node labels and taints from collected results.

Scheme (no standard GPU-health label exists; rmpeer uses its own domain, as CHS, HyperPod and
Autopilot do):
  rmpeer.io/result       pass | degraded | fail | error
  rmpeer.io/checked-at   when the node's run ended, UTC, e.g. 20261130T003650Z
  rmpeer.io/certificate  the certificate's id (removed when the run left none)
  taint rmpeer.io/p2p    failed:NoSchedule (fail), degraded:PreferNoSchedule (degraded),
                         removed on pass; an `error` (the tool gave no verdict) leaves the
                         node's taints as they are: a tool error never taints nor untaints.
Without --apply the patches are printed, one JSON line per node; with --apply they are sent
with the kubernetes client (pip install 'rmpeer[fleet]'), reading each node's taints first
(a node's taint list is replaced whole by a patch, so the others are kept as they are)."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import time
from pathlib import Path

from rmpeer.errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError
from rmpeer.fleet.collect import gather
from rmpeer.fleet.outcome import DEGRADED_STATE, ERROR, FAIL_STATE, PASS, NodeOutcome, read_status
from rmpeer.machine.signing import VERIFIED
from rmpeer.render.text import escaped

DOMAIN = "rmpeer.io"
RESULT, CHECKED_AT, CERTIFICATE, TAINT = (f"{DOMAIN}/result", f"{DOMAIN}/checked-at", f"{DOMAIN}/certificate",
                                          f"{DOMAIN}/p2p")
TAINTS = {FAIL_STATE: ("failed", "NoSchedule"), DEGRADED_STATE: ("degraded", "PreferNoSchedule")}
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def label_value(text: str) -> str:
    """A string as a valid label value: 63 characters at most, [A-Za-z0-9._-], alphanumeric ends."""
    value = re.sub(r"[^A-Za-z0-9._-]", "-", text)[:63].strip("-_.")
    assert _LABEL_VALUE.match(value), value
    return value


def checked_at(outcome: NodeOutcome, folder: Path) -> str:
    stamp = str(read_status(folder).get("at") or "")     # a cut status.json: no stamp, never a traceback
    if not stamp and outcome.result is not None:
        stamp = outcome.result.started
    if not stamp and outcome.certificate and outcome.result is not None:
        # the certificate itself (lstat: a link planted at its name lends no target's time)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.lstat(outcome.certificate).st_mtime))
    return label_value(stamp.replace("-", "").replace(":", "").split(".")[0].removesuffix("Z") + "Z") if stamp else ""


def certificate_id(outcome: NodeOutcome) -> str | None:
    if outcome.result is not None and outcome.result.certificate_id:
        return label_value(outcome.result.certificate_id)
    # a certificate the collector did not read (refused: a link, too large, malformed) is never
    # read here either (issue 47, row 5: label hashed a planted link's 300 MB target whole)
    return None


def desired(outcome: NodeOutcome, folder: Path) -> dict:
    """What the node should carry: labels (None removes one) and the rmpeer taint
    ({value, effect}, None to remove it, or "keep")."""
    labels = {RESULT: outcome.state, CHECKED_AT: checked_at(outcome, folder) or None,
              CERTIFICATE: certificate_id(outcome)}
    if outcome.state == ERROR:
        taint = "keep"
    elif outcome.state == PASS:
        taint = None
    else:
        value, effect = TAINTS[outcome.state]
        taint = {"key": TAINT, "value": value, "effect": effect}
    return {"node": outcome.node, "labels": labels, "taint": taint,
            "signature": outcome.trust or "no certificate"}


def node_patch(want: dict, current_taints: list[dict]) -> dict:
    """The patch for one node, given the taints it has now (dicts with key, value, effect)."""
    patch = {"metadata": {"labels": dict(want["labels"])}}
    if want["taint"] == "keep":
        return patch
    others = [t for t in current_taints if t.get("key") != TAINT]
    new = others + ([want["taint"]] if want["taint"] else [])
    if new != list(current_taints):
        patch["spec"] = {"taints": new}
    return patch


def _kubeconfig_files_are_files() -> None:
    """KUBECONFIG's files (else ~/.kube/config), as the kubernetes client finds them: a FIFO or
    a device there would hang --apply or be read without end, before a word is said."""
    for name in (os.environ.get("KUBECONFIG") or "~/.kube/config").split(os.pathsep):
        try:
            st = os.stat(Path(name).expanduser()) if name else None    # the user's own config: a link is theirs
        except OSError:
            continue        # absent: the client says so
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"--apply: the kubeconfig {escaped(name)} is not a regular file")


def _apply(wants: list[dict]) -> list[str]:
    try:
        import yaml
        from kubernetes import client, config
    except ImportError:
        raise ConfigError("--apply needs the kubernetes client: pip install 'rmpeer[fleet]'") from None
    try:
        config.load_incluster_config()
    except config.ConfigException:
        _kubeconfig_files_are_files()
        try:
            config.load_kube_config()
        except (config.ConfigException, OSError) as exc:
            raise ConfigError(f"--apply: no cluster configuration (in-cluster or kubeconfig): {exc}") from None
        except (yaml.YAMLError, ValueError, TypeError, AttributeError, KeyError) as exc:    # its YAML, its kinds
            raise ConfigError(f"--apply: the kubeconfig cannot be read ({type(exc).__name__}: "
                              f"{escaped(str(exc).splitlines()[0] if str(exc) else '')})") from None
    api = client.CoreV1Api()
    done = []
    for want in wants:
        try:
            node = api.read_node(want["node"])
            taints = [{k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v is not None}
                      for t in (node.spec.taints or [])]
            # A JSON merge patch (RFC 7386): a label set to null is removed, the taint list is
            # replaced whole (it holds the node's other taints as read above). Named, because
            # the client would otherwise pick json-patch+json, which wants a list of operations.
            api.patch_node(want["node"], node_patch(want, taints), _content_type="application/merge-patch+json")
            done.append(f"{want['node']}: {want['labels'][RESULT]}: patched")
        except client.ApiException as exc:
            done.append(f"{want['node']}: not patched: {exc.status} {exc.reason}")
    return done


def main_label(folder: str, *, apply: bool = False) -> int:
    shared = Path(folder).resolve()
    if not shared.is_dir():
        raise ConfigError(f"{shared}: no such folder")
    # as collect reads it: a status of another sweep's run, a shallower tier, a node named but
    # missing, each an error (issue 47, row 6: label took them as they were)
    outcomes, _ = gather(shared)
    if not outcomes:
        raise ConfigError(f"{shared}: no node's result in it (<dir>/<node>/status.json)")
    wants = [desired(o, shared / o.node) for o in outcomes]

    for o in outcomes:      # on stderr, one line each: stdout stays the patches (or what --apply did)
        if o.state == ERROR and o.line:     # a node's folder name and status line are input: escaped
            print(f"{escaped(o.node)}: error: {escaped(o.line)}", file=sys.stderr)
        if o.trust and o.signature != VERIFIED:
            print(f"{escaped(o.node)}: {escaped(o.trust)}", file=sys.stderr)
    if apply:
        for line in _apply(wants):
            print(escaped(line))
    else:
        for want in wants:
            print(json.dumps({"node": want["node"], "patch": node_patch(want, []), "taint": want["taint"],
                              "signature": want["signature"]}))
    return EXIT_NOT_CERTIFIED if any(o.state in (FAIL_STATE, DEGRADED_STATE) for o in outcomes) else EXIT_OK
