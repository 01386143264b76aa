"""`rmpeer diff` of two sets of hosts: a fleet before and after a driver upgrade, or the hosts
still on one release against the ones moved to the next. Pure: it compares Sides that
rmpeer.diff.load read, with rmpeer.diff.compare's comparison of two runs, host by host.

A host of B is matched with the host of A of the same node name, else with a host of A of
the same kind (as many cards of the same model), each host of A taken once while an
untaken one of that kind is left. What the pairs' comparisons found is then counted over
the set, so that a validator reads one line per change, not one diff per host:

- RM steps whose statuses changed (A's outcome -> B's), on how many hosts;
- struct sizes that changed (an ABI entry of the driver release), on how many hosts;
- any other aspect that differs (reply fields, clocks, links, test outcomes), by key;
- per kind of pair (the operation and size, the cards taken out), the bandwidth of A's
  hosts and of B's: median and minimum, and the matched hosts that moved most.

Behaviour differs (exit 1) when any matched pair's comparison differs, exactly as `rmpeer
diff A B` of that pair would say; a host without a match, or a file that could not be
read, is listed, never a difference."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from rmpeer.diff.compare import compare
from rmpeer.diff.side import Side

STEP_ASPECTS = ("RM statuses", "RM call counts")
STRUCT_ASPECT = "struct sizes"
MOVED_SHOWN = 3          # the hosts that moved most, per kind of pair
_PAIR = re.compile(r"(card (\d+)->(\d+)|s(\d+)->t(\d+))")


@dataclass(frozen=True)
class Host:
    name: str            # the node: a fleet folder's name, else the run's own
    kind: str            # "2 x NVIDIA H200": what a host is matched by when no node name matches
    side: Side


@dataclass
class Pair:
    a: Host
    b: Host
    by: str              # "node" | "host kind"
    aspects: list = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return any(x.differs for x in self.aspects)


@dataclass
class SetDiff:
    pairs: list                                        # [Pair]
    only_a: list = field(default_factory=list)        # [Host] with no match in B
    only_b: list = field(default_factory=list)
    changes: list = field(default_factory=list)       # [{aspect, key, a, b, hosts}] most hosts first
    bandwidth: list = field(default_factory=list)     # [{kind, a: {...}, b: {...}, moved: [...]}]
    not_comparable: dict = field(default_factory=dict)   # aspect -> hosts it could not be compared on

    @property
    def differs(self) -> bool:
        return any(p.differs for p in self.pairs)


def host_kind(side: Side) -> str:
    """'2 x NVIDIA H200', from the run's cards (the facts RM gave), else its label."""
    facts = side.facts if isinstance(side.facts, dict) else {}
    cards = facts.get("cards") if isinstance(facts.get("cards"), list) else []
    names = sorted({str(c.get("name")) for c in cards if isinstance(c, dict) and c.get("name")})
    count = side.context.get("cards") if isinstance(side.context.get("cards"), int) else len(cards)
    if names:
        return f"{count} x {' + '.join(names)}"
    return str(side.context.get("label") or "unknown host kind")


def hosts_of(found: list) -> list:
    """A Host of each (name, Side) rmpeer.diff.load.load_set found; a name met again (two runs
    of one node) gets #2, #3."""
    seen: dict = {}
    out = []
    for name, side in found:
        seen[name] = seen.get(name, 0) + 1
        out.append(Host(name if seen[name] == 1 else f"{name}#{seen[name]}", host_kind(side), side))
    return out


def match(a: list, b: list) -> tuple[list, list, list]:
    """(pairs [(Host of A, Host of B, by)], A's hosts matched by none, B's hosts without a match)."""
    by_name = {h.name: h for h in a}
    taken, pairs, lonely = set(), [], []
    for host in b:
        if host.name in by_name:
            pairs.append((by_name[host.name], host, "node"))
            taken.add(host.name)
    for host in b:
        if host.name in by_name:
            continue
        kin = [h for h in a if h.kind == host.kind]
        free = [h for h in kin if h.name not in taken]
        chosen = (free or kin or [None])[0]
        if chosen is None:
            lonely.append(host)
            continue
        taken.add(chosen.name)
        pairs.append((chosen, host, "host kind"))
    return pairs, [h for h in a if h.name not in taken], lonely


def pair_kind(key: str) -> tuple[str, str] | None:
    """('read 256 MiB', '0->1') for 'read card 0->1 256 MiB': the kind of pair is the figure's
    key with its cards taken out (same-card figures say so); None for a key with no pair."""
    m = _PAIR.search(key)
    if not m:
        return None
    src, dst = (m[2], m[3]) if m[2] is not None else (m[4], m[5])
    kind = " ".join((key[:m.start()] + key[m.end():]).split())
    return (kind if src != dst or "same-card" in kind else f"{kind} (same card)"), f"{src}->{dst}"


def _spread(values: list) -> dict:
    return {"hosts": len(values), "median": round(statistics.median(values), 1) if values else None,
            "min": round(min(values), 1) if values else None}


def bandwidth_by_kind(pairs: list, a: list, b: list, tolerance: float) -> list:
    """Per kind of pair: the figures of every host of A and of B (each host's median over its
    pairs of that kind), the matched hosts whose figure moved beyond the tolerance, and the
    ones that moved most, largest drop first."""
    def per_host(hosts):
        out: dict = {}
        for h in hosts:
            by_kind: dict = {}
            for key, gbps in (h.side.bandwidth or {}).items():
                kind = pair_kind(key)
                if kind is not None:
                    by_kind.setdefault(kind[0], []).append(gbps)
            for kind, values in by_kind.items():
                out.setdefault(kind, {})[h.name] = statistics.median(values)
        return out

    before, after = per_host(a), per_host(b)
    rows = []
    for kind in sorted(set(before) | set(after)):
        moved, changes = [], []
        for pa, pb in ((p.a, p.b) for p in pairs):
            va, vb = before.get(kind, {}).get(pa.name), after.get(kind, {}).get(pb.name)
            if va and vb is not None:
                changes.append((vb - va) / va)
                moved.append({"a": pa.name, "b": pb.name, "a_gbps": round(va, 1), "b_gbps": round(vb, 1),
                              "change": round(changes[-1], 4)})
        moved.sort(key=lambda m: m["change"])
        # beyond the tolerance by the change itself, as each pair's comparison counts it
        # (compare._beyond), not by the four places shown: 400 -> 379.99 is beyond 5%
        rows.append({"kind": kind, "a": _spread(list(before.get(kind, {}).values())),
                     "b": _spread(list(after.get(kind, {}).values())), "compared": len(moved),
                     "beyond": sum(abs(c) > tolerance for c in changes), "moved": moved[:MOVED_SHOWN]})
    return rows


def changes_of(pairs: list) -> tuple[list, dict]:
    """Every difference of the matched pairs, counted over the set: [{aspect, key, a, b,
    hosts}] (most hosts first), and aspect -> the B hosts it was not comparable on."""
    seen: dict = {}
    unknown: dict = {}
    for p in pairs:
        for x in p.aspects:
            if x.not_comparable:
                unknown.setdefault(x.name, []).append(p.b.name)
            for key, va, vb in x.differences:
                if x.name.startswith("bandwidth"):
                    continue            # counted per kind of pair instead (bandwidth_by_kind)
                row = seen.setdefault((x.name, str(key), str(va), str(vb)), [])
                row.append(p.b.name)
    order = {name: i for i, name in enumerate((*STEP_ASPECTS, STRUCT_ASPECT))}
    changes = [{"aspect": aspect, "key": key, "a": va, "b": vb, "hosts": hosts}
               for (aspect, key, va, vb), hosts in seen.items()]
    changes.sort(key=lambda c: (order.get(c["aspect"], len(order)), -len(c["hosts"]), c["aspect"], c["key"]))
    return changes, unknown


def compare_sets(a: list, b: list, tolerance: float = 0.05) -> SetDiff:
    """The set diff of A's hosts and B's (each a list of Host)."""
    matched, only_a, only_b = match(a, b)
    pairs = [Pair(ha, hb, by, compare(ha.side, hb.side, tolerance)) for ha, hb, by in matched]
    changes, unknown = changes_of(pairs)
    return SetDiff(pairs, only_a, only_b, changes, bandwidth_by_kind(pairs, a, b, tolerance), unknown)
