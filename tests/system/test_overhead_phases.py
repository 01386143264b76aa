"""tools/overhead.py's wall, part by part (issue 46): every part it times names a function the
run still calls (a rename would otherwise show a part as 0 s on a lent device), and the parts
add up as the times a child wrote say, worked here by hand."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "overhead.py"
if not TOOL.is_file():
    pytest.skip("tools/ is in the checkout, not in the installed package", allow_module_level=True)
pytestmark = pytest.mark.offline


def overhead():
    spec = importlib.util.spec_from_file_location("rmpeer_overhead_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name,module,attribute", overhead().PHASES, ids=lambda v: str(v).strip())
def test_each_timed_part_is_a_function_of_the_run(name, module, attribute):
    owner = importlib.import_module(module)
    for part in attribute.split("."):
        owner = getattr(owner, part)
    assert callable(owner), f"{module}.{attribute} ({name.strip()})"


def test_the_parts_in_order_from_a_childs_times():
    # a child's times.json: the process began at 100.0; the host opened at 100.4 for 0.05 s
    # (RM discovery 0.02 s of it); pytest's session ran 100.5-103.5, its first check at 100.6;
    # after it: host close 0.1 s, certificate 0.2 s, report 0.3 s, and the exit at 104.2
    t = {"process": 100.0, "session_start": 100.5, "first_check": 100.6, "session_end": 103.5, "exit": 104.2,
         "work_s": 2.0, "phases": {"host open": [0.05, 1, 100.4], "  RM discovery": [0.02, 1, 100.41],
                                   "host close": [0.1, 1, 103.6], "certificate and files": [0.2, 1, 103.7],
                                   "report results (Allure)": [0.3, 1, 103.9]}}
    parts = overhead().phases_of(t, 4.5)                               # the parent saw 4.5 s
    names = list(parts)
    assert parts[names[0]] == pytest.approx(0.3)                       # 4.5 - (104.2 - 100.0)
    assert parts[names[1]] == pytest.approx(0.4)                       # 100.4 - 100.0
    assert parts["host open"] == 0.05 and parts["  RM discovery"] == 0.02
    assert parts["pytest: session start to the first check"] == pytest.approx(0.1)
    assert parts["pytest: the checks (the session's work and machinery above)"] == pytest.approx(2.9)
    assert parts["host close"] == 0.1 and parts["judge and history"] == 0.0
    # 104.2 - 103.5 = 0.7 after the session, of which 0.6 is timed
    assert parts["the rest after the session (the table, the JSON line)"] == pytest.approx(0.1)
    assert names.index("host open") < names.index("pytest: session start to the first check") \
        < names.index("host close") < names.index("the rest after the session (the table, the JSON line)")


def test_the_rig_is_timed_inside_the_checks_with_its_calls():
    # the bandwidth rig built once (0.05 s) and 6 copies measured (0.012 s) inside the checks
    tool = overhead()
    rig, one = tool.DURING[0], tool.DURING[1]
    t = {"process": 100.0, "session_start": 100.5, "first_check": 100.6, "session_end": 103.5, "exit": 104.0,
         "work_s": 2.0, "phases": {"host open": [0.05, 1, 100.4], rig: [0.05, 1, 103.0], one: [0.012, 6, 103.1]}}
    parts, calls = tool.phases_of(t, 4.1), tool.calls_of(t)
    names = list(parts)
    checks = "pytest: the checks (the session's work and machinery above)"
    assert names.index(checks) < names.index(rig) < names.index(one) < names.index("host close")
    assert parts[one] == 0.012 and calls == {rig: 1, one: 6}
    assert "bandwidth" in rig and "built" in rig and "measured" in one


def test_a_plain_runs_rig_prices_its_sessions_and_measures():
    # one card: the rig of 2 sessions built in 0.05 s and closed in 0.01 s; 6 measures took
    # 3.5 ms of wall, of which the copies' own GPU time was 3.0 ms
    tool = overhead()
    t = {"phases": {tool.DURING[0]: [0.05, 1, 1.0], tool.DURING[1]: [0.0035, 6, 1.1], tool.DURING[3]: [0.01, 1, 1.2]},
         "rig_one_gpu_s": 0.003, "rig_cards": 1}
    rig = tool.rig_prices(t)
    # bench's setup table (docs/evidence/projection-20261205/bench.json): 2 sessions, 4 windows
    setup = 2 * 0.001711590517 + 4 * 0.000303
    assert rig["sessions"] == 2 and rig["measures"] == 6
    assert rig["per_session_s"] == pytest.approx((0.06 - setup) / 2)
    assert rig["per_measure_s"] == pytest.approx(0.0005 / 6)
    assert tool.rig_prices({"phases": {}}) is None                    # a passive run: no rig


def test_the_projection_reprices_the_rig_from_a_plain_run():
    tool = overhead()
    bench = tool.CHECKOUT / tool.DEFAULT_BENCH
    cheap = tool.projection(bench, 2.3, {"per_session_s": 0.005, "per_measure_s": 0.0001})
    fitted = cheap["per_measure_ms_fitted"]
    assert fitted > 0.1 and cheap["per_measure_ms"] == 0.1
    assert cheap["rig_repriced"]["8"]["full"] < cheap["lowered"]["8"]["full"]
    same = tool.projection(bench, 2.3, {"per_session_s": cheap["rig_per_session_ms_fitted"] / 1e3,
                                        "per_measure_s": fitted / 1e3})
    assert same["rig_repriced"] == same["lowered"]


def test_work_outside_the_pytest_session_is_not_the_sessions():
    # certify opens the host before its pytest session and closes it after: a wrapped open
    # that ran outside the session is no part of the session's work
    tool = overhead()
    marks = {}
    clock = tool._Clock(inside=lambda: "session_start" in marks and "session_end" not in marks)
    step = clock.wrap(lambda: None)
    step()                                   # the host's open, before the session
    assert clock.work == 0.0
    marks["session_start"] = 1.0
    step()                                   # a layout's build, inside it
    assert clock.work > 0.0
    inside = clock.work
    marks["session_end"] = 2.0
    step()                                   # the host's close, after it
    assert clock.work == inside
