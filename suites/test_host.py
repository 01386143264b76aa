"""What RM says about the host: driver, cards and the P2P capability table (the report
attaches them, from the RunResult: rmpeer.render.allure), checked against the kernel module's own account of the cards, and against the
topology the host must match."""

import pytest

pytestmark = pytest.mark.hardware


@pytest.mark.rm_check("host-facts", area="host")
@pytest.mark.rm_layouts("one-per-card")
def test_host_facts(host_run):
    facts = host_run.facts
    assert facts.cards, "RM lists no card"
    n = len(facts.cards)
    missing = sorted({(a, b) for a in range(n) for b in range(n)} - set(facts.p2p))
    assert not missing, f"RM gave no P2P capabilities for the card pairs {missing}"
    assert len({c.uuid for c in facts.cards}) == n, f"{n} cards but {len({c.uuid for c in facts.cards})} UUIDs"


@pytest.mark.rm_check("cards-match-proc", area="host")
@pytest.mark.rm_layouts("one-per-card")
def test_cards_agree_with_the_kernel_module(host_run):
    """RM's names, UUIDs and PCI addresses are the ones /proc/driver/nvidia/gpus lists."""
    proc = host_run.proc_gpus
    assert proc, "the kernel module lists no GPU in /proc/driver/nvidia/gpus"
    by_bus = {p["bus"].lower(): p for p in proc}
    from rmpeer.judge.scope import some_cards

    if not some_cards(host_run.facts):      # a run of some cards checks those (below) alone
        assert len(by_bus) == len(host_run.facts.cards), \
            f"RM lists {len(host_run.facts.cards)} cards, /proc/driver/nvidia/gpus {len(by_bus)}"
    for card in host_run.facts.cards:
        p = by_bus.get(card.pci.lower())
        assert p is not None, f"card {card.index} at {card.pci}: not in /proc ({sorted(by_bus)})"
        assert (card.name, card.uuid) == (p["model"], p["uuid"]), f"card {card.index}"


@pytest.mark.rm_check("topology", area="host")
@pytest.mark.rm_layouts("one-per-card")
def test_host_is_the_topology_asked_for(host_run):
    """With --rm-topology / --expect-topology NAME: the host is that entry."""
    spec = host_run.spec
    if not spec.topology_name:
        pytest.skip("no topology asked for (--expect-topology NAME)")
    problems = spec.topology_problems()
    assert not problems, f"expected the topology {spec.topology_name}, found: " + "; ".join(problems)
