"""Fitness of a correct host, judged apart from conformance (a failure here is DEGRADED):
clocks raised and recorded, every pair's bandwidth against the topology's floors, NVLink
links active with no new errors, and no Xid but the one a detection test provokes.

These run after every layout of the host (rm_last), so the link counters and the kernel
log cover the whole run."""

import json

import allure
import pytest

from rmpeer.floors import FAIL, OUTLIER, judge_bandwidth
from rmpeer.rm.nvlink import check_active, compare_counters

pytestmark = [pytest.mark.hardware, pytest.mark.rm_last, pytest.mark.rm_fitness]


def _clocks_text(fitness) -> str:
    phase = "after-traffic" if "after-traffic" in fitness.clocks else next(reversed(fitness.clocks), None)
    cards = fitness.clocks.get(phase, {})
    return f"clocks ({phase}): " + ", ".join(
        f"card {c} {r['graphics_mhz']} MHz graphics / {r['memory_mhz']} MHz memory, {r['pstate']}"
        for c, r in cards.items())


@pytest.mark.rm_per_target
def test_clocks_raised_and_recorded(fitness):
    """RM's boost accepted on every card (unless --no-boost); the P-state read through RM."""
    allure.attach(json.dumps(fitness.clocks, indent=1, default=str), name="clocks",
                  attachment_type=allure.attachment_type.JSON)
    idle = fitness.clocks["idle"]
    assert all(r["pstate"] for r in idle.values()), f"RM gave no P-state: {idle}"
    if not fitness.host.boost:
        pytest.skip(f"--no-boost: the host measured at the clocks it had; {_clocks_text(fitness)}")
    assert not fitness.boost.failures, f"RM refused the boost: {fitness.boost.failures}"
    boosted = fitness.clocks["boosted"]
    for card, reading in boosted.items():
        before, now = idle[card]["graphics_mhz"], reading["graphics_mhz"]
        if before is not None and now is not None:
            assert now >= before, f"card {card}: graphics clock {before} -> {now} MHz after the boost"


@pytest.mark.rm_per_target("figures")
def test_bandwidth_meets_the_floor(fitness, topology, figure, request):
    src, dst, op = figure
    figures = fitness.bandwidth()
    mine = [f for f in figures if (f["src_card"], f["dst_card"], f["op"]) == (src, dst, op)]
    assert mine, f"no {op} figure measured for {src}->{dst}"
    request.node.user_properties.append(("fitness_bandwidth", mine[0]))
    findings = [x for x in judge_bandwidth(topology, figures)
                if (x["pair"], x["op"]) == (f"{src}->{dst}", op)]
    bad = [x["message"] for x in findings if x["level"] in (FAIL, OUTLIER)]
    for warning in (x["message"] for x in findings if x["level"] not in (FAIL, OUTLIER)):
        print(f"warning: {warning}")
    assert not bad, f"DEGRADED: {'; '.join(bad)}; {_clocks_text(fitness)}"


@pytest.mark.rm_per_target("cards")
def test_nvlinks_active(fitness, topology, card):
    health = fitness.links_before[card]
    expected = topology.expected_nvlinks if topology else None
    if not health["supported"]:
        assert not expected, f"card {card}: the topology expects {expected} NVLinks; RM: {health['reason']}"
        pytest.skip(f"card {card}: no NVLink ({health['reason']}); nothing to judge")
    problems = check_active(health, expected)
    assert not problems, "; ".join(problems)


@pytest.mark.rm_per_target("cards")
def test_nvlink_error_counters_did_not_grow(fitness, card):
    before = fitness.links_before[card]
    if not before["supported"]:
        pytest.skip(f"card {card}: no NVLink ({before['reason']})")
    after = fitness.read_links()[card]
    allure.attach(json.dumps({"before": before, "after": after}, indent=1, default=str), name=f"card {card} links",
                  attachment_type=allure.attachment_type.JSON)
    assert before["counters_reason"] is None, before["counters_reason"]
    problems = compare_counters(before, after)
    assert not problems, "; ".join(problems)


@pytest.mark.rm_per_target
def test_no_unexpected_xid(fitness):
    """Every Xid logged during the run is one a detection test provoked on purpose."""
    from rmpeer.xids import by_card

    seen = fitness.xids()
    if not seen.get("readable"):
        pytest.skip(f"the kernel log could not be read: {seen.get('reason')}")
    cards = fitness.host.facts.cards
    allowed = list(fitness.expected_xids)
    unexpected = []
    for card, xids in sorted(by_card(seen["xids"], cards).items(), key=lambda kv: str(kv[0])):
        for x in xids:
            if (card, x["xid"]) in allowed:
                allowed.remove((card, x["xid"]))
            else:
                unexpected.append(f"card {card}: Xid {x['xid']}: {x['text'][:160]}")
    assert not unexpected, "; ".join(unexpected)
