"""What RM says about the host: driver, cards and the P2P capability matrix; attached to
the report, and checked against the topology the host matches or must match."""

import json

import allure
import pytest

pytestmark = pytest.mark.hardware


@pytest.mark.rm_layouts("one-per-card")
def test_host_facts(runtime, topology, request):
    facts = runtime.facts
    allure.attach(json.dumps(facts.as_dict(), indent=1, default=str), name="host facts",
                  attachment_type=allure.attachment_type.JSON)
    from rmpeer.report.heatmap import p2p_matrix_svg

    allure.attach(p2p_matrix_svg(facts), name="P2P capability matrix", attachment_type=allure.attachment_type.SVG)
    assert facts.cards, "RM lists no card"
    assert all(c.name and c.uuid.startswith("GPU-") for c in facts.cards)
    assert len({c.uuid for c in facts.cards}) == len(facts.cards)
    n = len(facts.cards)
    assert set(facts.p2p) == {(a, b) for a in range(n) for b in range(n)}
    forced = request.config.getoption("--rm-topology")
    if forced:
        from rmpeer.topology import TopologyMatrix

        problems = TopologyMatrix().get(forced).mismatches(facts)
        assert not problems, f"host is not {forced}: " + "; ".join(problems)
