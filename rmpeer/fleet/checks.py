"""What a collector can check of node folders it did not write (docs/threat-model.md).

The head node that collects a sweep does not hold the nodes' keys (each node's key stays on
it, readable by its root alone), so a certificate's signature can be verified only on its
own node (`certify --if-stale` there). Here, every certificate is checked for what needs no
key:
- it is of the node whose folder holds it (the certificate's node, and status.json's);
- its verdict is what its own findings and checks give (rmpeer.judge.verdict is pure): a verdict
  flipped by hand, with its failed checks still inside, is caught;
- no GPU UUID appears under two nodes (live certificates; a replay's UUIDs are the
  recorded host's): a folder copied from another node is an error for both;
- a signature made with a key this machine has (the collector's own node) must verify.
Each failure makes that node an `error`: never drained, never resumed, never a pass."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.judge.verdict import unfollowed
from rmpeer.fleet.outcome import ERROR, NodeOutcome, load_node, reason_line


def _error(o: NodeOutcome, check: str, detail: str) -> NodeOutcome:
    return NodeOutcome(o.node, ERROR, o.verdict, o.reasons, reason_line(check, detail), exit_code=o.exit_code,
                       duration_s=o.duration_s, certificate=o.certificate, result=None, replay_of=o.replay_of,
                       trust=o.trust, signature=o.signature)


def own_problem(o: NodeOutcome) -> str | None:
    """Why a node's certificate is not a consistent certificate of that node, or None."""
    r = o.result
    if r is None:
        return None
    if r.node != o.node:
        return f"the certificate in folder {o.node} is of node {r.node or '(unnamed)'}: a copied folder?"
    if o.status_node and o.status_node != o.node:
        return f"status.json in folder {o.node} is of node {o.status_node}: a copied folder?"
    return unfollowed(r)


def uuids_of(o: NodeOutcome) -> set:
    r = o.result
    if r is None or r.is_replay:
        return set()
    cards = (r.host or {}).get("cards") or (r.fingerprint or {}).get("cards") or []
    # from_dict checks the host's cards, not the fingerprint's: those are as the file has them,
    # and only a list of cards with a text UUID names a GPU (a planted one never stops collect)
    if not isinstance(cards, list):
        return set()
    return {c["uuid"] for c in cards if isinstance(c, dict) and isinstance(c.get("uuid"), str) and c["uuid"]}


def cross_check(outcomes: list[NodeOutcome]) -> list[NodeOutcome]:
    """The outcomes, with every node whose certificate fails a check above made an error."""
    checked = []
    for o in outcomes:
        problem = own_problem(o)
        checked.append(_error(o, "certificate", problem) if problem else o)
    owners = defaultdict(set)
    for o in outcomes:          # as read: a copy made an error above still names its GPUs
        for uuid in uuids_of(o):
            owners[uuid].add(o.node)
    out = []
    for o, read in zip(checked, outcomes):
        shared = sorted({(u, n) for u in uuids_of(read) for n in owners[u] if n != o.node})
        if shared and o is read:      # an error already says its first reason
            uuid, other = shared[0]
            o = _error(o, "certificate", f"GPU {uuid} is also in node {other}'s certificate: one of the "
                                         f"folders is a copy (both are errors)")
        out.append(o)
    return out


def load_sweep(shared: Path) -> list[NodeOutcome]:
    """Every node folder under a sweep's shared folder: every folder in it (an empty one is a
    node that left no result: an error), checked against each other (rmpeer.fleet.checks)."""
    try:        # a sweep's folder this user may not list (another user's, 0700): one line, exit 2
        entries = sorted(Path(shared).iterdir())
    except OSError as exc:
        raise ConfigError(f"{shared}: cannot list the sweep's folder ({exc.strerror or exc})") from None
    folders = [p for p in entries if p.is_dir() and not p.name.startswith(".")]
    return cross_check([_linked(p) if p.is_symlink() else load_node(p) for p in folders])


def _linked(folder: Path) -> NodeOutcome:
    """A node folder planted as a link would vouch for another folder's result: an error."""
    return NodeOutcome(folder.name, ERROR, line=reason_line("tool", f"{folder} is a symbolic link, not the node's "
                                                                    "own folder: not read"))
