"""The passive tier's rules: what RM said of the host, read by rmpeer.run.passive, to one
check per aspect and its findings (pure). Each aspect's reading is compared with what the
deeper tiers hold it to (rmpeer.judge.verdict's link and Xid rules, rmpeer.judge.health) and
with the last run's, kept in the state file: a card gone, a GPU on its bus that is not RM's,
a counter that grew, a link that went down. Fail closed: a reading RM refused, or one the
recording does not hold, is a finding that says so, never a pass."""

from __future__ import annotations

from rmpeer.judge.health import health_findings
from rmpeer.judge.scope import host_view, last_cards_here, other_cards_xids_dropped, some_cards
from rmpeer.judge.verdict import link_error_findings, link_state_findings, xid_findings
from rmpeer.model.result import FAIL, INFO, UNFINISHED, CheckResult, Finding

# the passive tier's checks, one per aspect, in the order the certificate lists them, with
# their areas (tools/manifest.py reads them into the checks rmpeer makes)
ASPECTS = {"cards": "host", "p2p-caps": "host", "nvlink": "fitness", "clocks": "fitness", "xids": "fitness",
           "gpu-processes": "host", "health": "fitness"}
UNREAD = "host"       # the one check of a host whose facts RM did not give at all


def checks_of(aspects: list) -> tuple[list, list]:
    """(CheckResults, findings) of [(name, area, findings)]: one check per aspect, failed when
    it found a problem, error when it could not tell, skipped when a replay's recording does
    not hold what it reads, passed otherwise."""
    checks, findings = [], []
    for name, area, found in aspects:
        mine = [f for f in found if f.severity != INFO]
        outcome = ("error" if any(f.severity == UNFINISHED for f in mine) else "failed" if mine else
                   "skipped" if any(f.found.startswith("not recorded") for f in found) else "passed")
        checks.append(CheckResult(f"passive/{name}", name, area, "host", outcome,
                                  "; ".join(f.text for f in mine)[:300], None, 0.0))
        findings.extend(found)
    return checks, findings


def unread(problems: list) -> tuple[list, list]:
    """RM gave no facts of the host at all: one check, which could not tell."""
    return checks_of([(UNREAD, "host", [Finding("rm", "host", "the host's facts through RM",
                                                "; ".join(problems) or "nothing read", UNFINISHED)])])


def passive_checks(read: dict, last: dict | None, history: list, topology, *, topology_asked: bool,
                   allowed_xids: set, replay: bool) -> tuple[list, list]:
    """Every aspect of a passive reading (rmpeer.run.passive.read_passive's dict, its facts
    present), in the order the certificate lists them; `history`: the state file's own
    findings (unreadable, or no earlier run)."""
    facts = read["facts"]
    problems = [Finding("rm", "host", "every passive reading", p, UNFINISHED) for p in read["problems"]]
    links = read.get("links", {})
    kind = (topology.links or {}).get("kind") if topology else None
    # health in the fitness area: the judge reads a failed check of it as DEGRADED at most, so a
    # health finding's own severity decides (Confidential Computing on: DEGRADED, never NOT
    # CERTIFIED); its INFO findings are the checks it could not make (rmpeer.judge.unchecked)
    found = {
        "cards": _card_findings(facts, read.get("proc_gpus"), last) + history + problems,
        "p2p-caps": _p2p_findings(facts, topology, topology_asked),
        "nvlink": _link_findings(links, (last or {}).get("links", {}), facts, topology),
        "clocks": _clock_findings(read.get("clocks")),
        "xids": _xid_findings(other_cards_xids_dropped(read.get("xids"), facts), facts, allowed_xids, replay),
        "gpu-processes": _process_findings(read.get("gpu_processes"), replay),
        "health": health_findings(facts.as_dict(), kind)[0],
    }
    return checks_of([(name, area, found[name]) for name, area in ASPECTS.items()])


def _card_findings(facts, proc_gpus, last) -> list:
    out = []
    if proc_gpus is None:
        out.append(Finding("cards", "host", "the kernel module's list of GPUs", "not recorded", UNFINISHED))
    else:
        by_bus = {g["bus"].lower(): g for g in proc_gpus}
        for card in facts.cards:
            g = by_bus.get(card.pci.lower())
            if g is None or g["uuid"] != card.uuid:
                out.append(Finding("cards", f"card {card.index}", f"{card.uuid} at {card.pci} in /proc/driver/nvidia",
                                   f"{g['uuid'] if g else 'no GPU'} there", FAIL))
        # a run of some cards checks those alone (a container's /proc may list no other)
        if len(by_bus) != len(facts.cards) and not some_cards(facts):
            out.append(Finding("cards", "host", f"{len(facts.cards)} GPUs (RM's count) in /proc/driver/nvidia",
                               f"{len(by_bus)}", FAIL))
    now = {c.uuid for c in facts.cards}
    for card in last_cards_here(facts, (last or {}).get("cards", [])):
        if card["uuid"] not in now:
            out.append(Finding("cards", f"card {card['index']} ({card['pci']})",
                               f"{card['uuid']}, present at the last run ({last.get('at')})", "it is gone", FAIL))
    return out


def _p2p_findings(facts, topology, topology_asked: bool) -> list:
    out = [Finding("p2p-caps", f"cards {a}->{b}", "RM's P2P capabilities", f"RM refused: {v['error']}", UNFINISHED)
           for (a, b), v in sorted(facts.p2p.items()) if v.get("error")]
    if topology is not None and topology_asked:
        out += [Finding("topology", "host", f"the topology {topology.name}", p, FAIL)
                for p in topology.mismatches(host_view(facts))]
    elif topology is None:
        out.append(Finding("topology", "host", "a topology of matrices/topologies.yaml",
                           "none matches: active NVLinks not judged", INFO))
    return out


def _link_findings(links: dict, last_links: dict, facts, topology) -> list:
    """Each card's links now (rmpeer.judge.verdict's rules), and their counters since the last run's reading."""
    out = []
    for card in facts.cards:
        health = links.get(card.index, {})
        out += link_state_findings(card.index, health, topology)
        if health.get("supported"):
            out += link_error_findings(card.index, last_links.get(card.uuid), health, since=" since the last run")
    return out


def _clock_findings(clocks: dict | None) -> list:
    if clocks is None:
        return [Finding("clocks", "host", "each card's clocks and P-state", "not read (see the rm finding)",
                        UNFINISHED)]
    out = []
    for card, r in clocks.items():
        if not r.get("pstate"):
            out.append(Finding("clocks", f"card {card}", "a P-state from RM",
                               r.get("rm_reasons", {}).get("pstate", "none"), UNFINISHED))
        if r.get("graphics_mhz") is None:
            out.append(Finding("clocks", f"card {card}", "clocks in MHz from NVML",
                               r.get("nvml_reason") or "none reported", UNFINISHED))
    return out


def _xid_findings(xids: dict | None, facts, allowed: set, replay: bool) -> list:
    """The Xids since the last run (rmpeer.judge.verdict's rule); a passive run that could not read
    them has not made its check."""
    if not xids:
        return [Finding("xid", "host", "the Xids since the last run", "not recorded by a passive run",
                        INFO if replay else UNFINISHED)]
    but = f" but {sorted(allowed)}" if allowed else ""
    return xid_findings(xids, facts.cards, (), allowed, wanted=f"no Xid since the last run{but}",
                        since=" since the last run", unreadable=UNFINISHED)


def _process_findings(procs: dict | None, replay: bool) -> list:
    if procs is None:
        return [Finding("gpu-processes", "host", "the other GPU processes", "not recorded",
                        INFO if replay else UNFINISHED)]
    if not procs.get("available"):
        return [Finding("gpu-processes", "host", "the other GPU processes", procs.get("reason", "not available"),
                        UNFINISHED)]
    return []
