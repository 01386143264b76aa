"""The boost judged against what the card can reach under its power limit (issue 47, item 8):
a boosted clock below the idle sample is no fault where NVML says the card holds its clocks at
its own power limit (clock-event reason SW power cap, matrices/nvml.yaml kind `cap`), and the
clocks text says so; a slowdown by the hardware (thermal, power brake, HW slowdown) at any
reading is a fault of its own, also on a card another process used. Readings hand-made in the
shape rmpeer.run.fitness.read_clocks gives; the reasons decoded by the table from nvml.h's bits."""

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from rmpeer.judge.sharedhost import name_other_users
from rmpeer.judge.verdict import boost_findings, clocks_text
from rmpeer.model.result import DEGRADE, INFO
from rmpeer.tables.nvml import clock_events, load_nvml

pytestmark = pytest.mark.offline
SW_POWER_CAP, GPU_IDLE, HW_THERMAL = 0x4, 0x1, 0x40          # nvml.h's nvmlClocksEventReason* bits


def reading(mhz: int, mask: int | None = None, power_w: float = 698.5, limit_w: float = 700.0) -> dict:
    r = {"pstate": "P0", "graphics_mhz": mhz, "memory_mhz": 3201}
    if mask is not None:
        r.update(max_graphics_mhz=1980, power_mw=round(power_w * 1000), power_limit_mw=round(limit_w * 1000),
                 clock_events=clock_events(mask, load_nvml()))
    return r


def fitness(idle: dict, boosted: dict, **more) -> SimpleNamespace:
    return SimpleNamespace(clocks={"idle": {0: idle}, "boosted": {0: boosted}, **more},
                           boost=SimpleNamespace(failures={}))


def test_a_boost_held_at_the_power_limit_is_what_the_card_can_reach():
    """A job's load raised the idle sample to 1980 MHz; after the boost the card sits at its
    700 W limit at 1755 MHz: no finding."""
    assert boost_findings(fitness(reading(1980), reading(1755, SW_POWER_CAP))) == []


def test_the_same_drop_with_no_limit_named_still_degrades():
    for boosted in (reading(1755), reading(1755, 0), reading(1755, GPU_IDLE)):
        got = boost_findings(fitness(reading(1980), boosted))
        assert [(f.check, f.expected, f.found, f.severity) for f in got] == [
            ("boost", "a graphics clock of at least 1980 MHz after the boost", "1755 MHz", DEGRADE)], boosted


def test_the_clocks_text_says_the_card_was_held_at_its_power_cap():
    clocks = {"after-traffic": {0: reading(1755, SW_POWER_CAP, 698.5, 700.0)}}
    assert clocks_text(clocks) == ("clocks (after-traffic): card 0 1755 MHz graphics / 3201 MHz memory, P0, "
                                   "at its SW power cap (698 of 700 W)")
    assert clocks_text({"after-traffic": {0: reading(1980)}}) == (
        "clocks (after-traffic): card 0 1980 MHz graphics / 3201 MHz memory, P0")


def test_a_hardware_slowdown_at_any_reading_degrades_naming_the_reason_and_the_reading():
    f = fitness(reading(1980, 0), reading(1980, 0), **{"after-traffic": {0: reading(1200, HW_THERMAL | SW_POWER_CAP)}})
    got = boost_findings(f)
    assert [(x.check, x.subject, x.found, x.severity) for x in got] == [
        ("clocks", "card 0", "HW thermal slowdown at the after-traffic reading (1200 of 1980 MHz)", DEGRADE)]


def test_a_slowdown_is_judged_on_a_card_another_process_used_and_the_process_named():
    """A boost below the idle sample on a busy card is not judged (INFO, named); a hardware
    slowdown there is still a fault (the card's cooling or power), named too."""
    proc = {"pid": 4242, "command": "python3 matmul_load.py", "cards": [0]}
    f = fitness(reading(1980), reading(1700, 0), **{"after-traffic": {0: reading(1200, HW_THERMAL)}})
    named = name_other_users(boost_findings(f), before=[proc])
    by_check = {x.check: x for x in named}
    assert by_check["boost"].severity == INFO and "pid 4242" in by_check["boost"].found
    assert by_check["clocks"].severity == DEGRADE and by_check["clocks"].found.endswith(
        " while pid 4242 (python3 matmul_load.py) held card 0")


BUSY = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261205T0424Z-drift-busy" / "busy"


@pytest.mark.skipif(not BUSY.is_dir(), reason="docs/evidence (a checkout, not a wheel)")
@pytest.mark.parametrize("run", [2, 5])
def test_the_live_runs_beside_a_matmul_job_held_at_the_power_limit_judge_clean(run):
    """Runs 2 and 5 of five full certifies beside a bf16 matmul on the same H200 (driver
    580.159.04): the boosted reading is 15 MHz below the idle sample (1440 against 1455, 1455
    against 1470), both taken at the card's 700 W limit with NVML's SW power cap. Judged clean, as
    the live run was (CERTIFIED, nothing not checked); the same readings without the reasons
    (what the earlier rule saw) are the boost finding that rule gave."""
    doc = json.loads(gzip.open(BUSY / f"certificate-busy-{run}.json.gz").read())
    assert doc["verdict"] == "CERTIFIED" and doc["not_checked"] == []
    clocks = {phase: {int(c): r for c, r in cards.items()} for phase, cards in doc["clocks"].items()}
    idle, boosted = clocks["idle"][0], clocks["boosted"][0]
    assert boosted["graphics_mhz"] < idle["graphics_mhz"]
    assert [e["reason"] for e in boosted["clock_events"]] == ["sw_power_cap"]
    live = SimpleNamespace(clocks=clocks, boost=SimpleNamespace(failures={}))
    assert boost_findings(live) == []
    blind = {p: {c: {k: v for k, v in r.items() if k != "clock_events"} for c, r in cards.items()}
             for p, cards in clocks.items()}
    got = boost_findings(SimpleNamespace(clocks=blind, boost=SimpleNamespace(failures={})))
    assert [(f.check, f.found) for f in got] == [("boost", f"{boosted['graphics_mhz']} MHz")]


@pytest.mark.skipif(not BUSY.is_dir(), reason="docs/evidence (a checkout, not a wheel)")
def test_the_terminal_s_clock_lines_of_the_busy_run_say_the_card_was_at_its_power_cap():
    from rmpeer.model.result import RunResult
    from rmpeer.render.table import render_fitness

    result = RunResult.from_dict(json.loads(gzip.open(BUSY / "certificate-busy-2.json.gz").read()))
    lines = render_fitness(result).splitlines()
    assert "  boosted       card 0: 1440/3201 MHz P0, at its SW power cap (691 of 700 W)" in lines, lines[:6]
    assert all(len(x) <= 80 for x in lines[:5]), lines[:5]
