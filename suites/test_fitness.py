"""Fitness of a correct host, judged apart from conformance (a failure here is DEGRADED):
clocks raised and recorded, every pair's bandwidth against the topology's floors, NVLink
links active with no new errors, and no Xid but those a detection test provokes.

The library measures (rmpeer.run.fitness) and judges (rmpeer.judge.verdict); each test asserts that
its part of the judgement found nothing (the report attaches the readings, from the
RunResult: rmpeer.render.allure). These run after every layout of the host
(rm_last), so the link counters and the kernel log cover the whole run."""

import pytest

from rmpeer.judge.verdict import bandwidth_findings, boost_findings, figure_subject, link_findings, xid_findings

pytestmark = [pytest.mark.hardware, pytest.mark.rm_last, pytest.mark.rm_fitness]


def _text(findings) -> str:
    return "; ".join(f.text for f in findings)


@pytest.mark.rm_check("clocks", area="fitness")
@pytest.mark.rm_per_target
def test_clocks_raised_and_recorded(fitness):
    """RM's boost accepted on every card (unless --no-boost); the P-state read through RM."""
    findings = boost_findings(fitness)
    assert fitness.clocks.get("idle"), "expected the idle clocks read at the run's start, found none"
    assert not findings, _text(findings)
    if not fitness.boost_asked:
        pytest.skip("--no-boost: the host measured at the clocks it had")


@pytest.mark.rm_check("bandwidth-floor", area="fitness")
@pytest.mark.rm_per_target("figures")
def test_bandwidth_meets_the_floor(fitness, host_run, topology, figure, request):
    """Against the host's floors: calibrated (topologies.yaml), else derived from RM's facts."""
    src, dst, op = figure
    figures = fitness.bandwidth()
    mine = [f for f in figures if (f["src_card"], f["dst_card"], f["op"]) == (src, dst, op)]
    assert mine, f"expected a {op} figure for {src}->{dst}, found none measured"
    request.node.user_properties.append(("fitness_bandwidth", mine[0]))
    floors = host_run.floors[0]
    findings = [f for f in bandwidth_findings(floors if floors is not None else topology, figures, fitness.clocks,
                                              boost_asked=fitness.boost_asked)
                if f.subject == figure_subject(src, dst, op)]
    assert not findings, _text(findings)


@pytest.mark.rm_check("nvlink-active", area="fitness")
@pytest.mark.rm_per_target("cards")
def test_nvlinks_active(fitness, topology, card):
    health = fitness.links_before[card]
    findings = link_findings(card, health, None, topology)
    assert not findings, _text(findings)
    if not health["supported"]:
        pytest.skip(f"card {card}: no NVLink ({health['reason']}); nothing to judge")


@pytest.mark.rm_check("nvlink-errors", area="fitness")
@pytest.mark.rm_per_target("cards")
def test_nvlink_error_counters_did_not_grow(fitness, card):
    before = fitness.links_before[card]
    if not before["supported"]:
        pytest.skip(f"card {card}: no NVLink ({before['reason']})")
    after = fitness.links_now()[card]
    findings = [f for f in link_findings(card, before, after, None) if f.check == "nvlink-errors"]
    assert not findings, _text(findings)


@pytest.mark.rm_check("xid", area="fitness")
@pytest.mark.rm_per_target
def test_no_unexpected_xid(fitness):
    """Every Xid logged during the run is one a detection test that ran provoked on purpose."""
    seen = fitness.xids()
    if not seen.get("readable"):
        pytest.skip(f"the kernel log could not be read: {seen.get('reason')}")
    findings = xid_findings(seen, fitness.cards, fitness.expected_xids, fitness.recorded_provokers)
    assert not findings, _text(findings)
