"""--rm-pairs-per-item (what `rmpeer certify` runs): a check of pairs (an `rm_pairs` test) is one
pytest item per layout, and each of its pairs is still a check of its own. The item's call runs
the test function once per pair, each in its own stretch of the recording (the key a pair has
as an item of its own, so recordings replay unchanged), and logs each pair's outcome at once as
its own report, under the id the pair has as an item of its own
(`test_read[h200x1/two-per-card/s1->t2]`), with its own check, subject, reason and span. So
certify's lines, its Collector, the deadline's partial result and every output rendered from
the RunResult (the certificate, JUnit, Allure) count and name each pair as before, and pytest's
run-test protocol, hooks and fixture set-up cost once per layout instead of once per pair
(issue 46: about 0.5 ms a check of a 4 s full run).

The item's own reports are not logged: a set-up that failed or skipped is logged once for each
of its pairs, as each pair's own set-up failed before; any other failure of the item itself
(no pair's) under the item's id. A plain `pytest suites` run keeps one item per pair, where
pytest's own terminal, JUnit and allure-pytest count items."""

from __future__ import annotations

import contextlib
import time

import pytest
# runtestprotocol: pytest's own protocol, run with its logging left to this module
from _pytest.runner import runtestprotocol

from rmpeer.machine import interrupts
from rmpeer.pytest_plugin.plugin import (CHECK, PAIRS, begin_segment, check_of, host_run_of, item_segment_key,
                                         moved_layout, pair_id)
from rmpeer.pytest_plugin.results import PARAMS, params_of

# what ends the run where it stands, as it does between items (a stop signal's
# KeyboardInterrupt, pytest.exit); anything else a pair's body raises is its check's outcome
# (RM's refusals, asserts, pytest.fail and pytest.skip)
_STOPS = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def pytest_configure(config):
    if not config.getoption("rm_pairs_per_item"):
        return
    if config.getoption("allure_report_dir", None):
        # allure-pytest files a result per item, and would file a layout's pairs as one
        raise pytest.UsageError("--rm-pairs-per-item: each pair is logged as a report of its own, which "
                                "allure-pytest does not see; run without it for --alluredir (rmpeer certify "
                                "draws its Allure results from its RunResult)")
    if config.getoption("numprocesses", None) or hasattr(config, "workerinput"):
        # pytest-xdist's workers send a report only for the item they run, by its id
        raise pytest.UsageError("--rm-pairs-per-item: each pair is logged as a report of its own, which "
                                "pytest-xdist's workers refuse; run without -n")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """The run's tests are its checks: each item of pairs counts as its pairs (pytest's
    terminal shows its progress against this count)."""
    session.testscollected = sum(len(item.stash.get(PAIRS, ())) or 1 for item in session.items)


def pair_nodeid(item, pair: tuple) -> str:
    """The id a pair of `item` has as an item of its own: its case's id and the pair."""
    return f"{item.nodeid[:-1]}/{pair_id(*pair)}]"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if PAIRS not in item.stash:
        return None
    reports = runtestprotocol(item, nextitem=nextitem, log=False)
    setup = reports[0]
    if not setup.passed:
        check = dict(setup.user_properties).get(CHECK, {})
        for pair in item.stash[PAIRS]:
            _log(item, pair, setup.outcome, setup.longrepr, "setup", {**check, "subject": pair_id(*pair)},
                 setup.start, setup.duration)
    for report in reports[1:]:
        if report.failed:       # the item's own error, no pair's
            item.ihook.pytest_runtest_logreport(report=report)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    pairs = pyfuncitem.stash.get(PAIRS, None)
    if pairs is None:
        return None
    case = pyfuncitem.callspec.params["peer_case"]
    run = host_run_of(pyfuncitem.config, case.target)
    layout = moved_layout(pyfuncitem, run, case)
    # the function's own arguments, as pytest's pytest_pyfunc_call takes them
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    for pair in pairs:
        args["s"], args["t"] = pair
        _one(pyfuncitem, args, pair, run, layout)
    return True


def call(function, args: dict) -> None:
    """One pair's check: the test function's body (tools/overhead.py times it as work)."""
    function(**args)


def _one(item, args: dict, pair: tuple, run, layout) -> None:
    start, began = time.time(), time.perf_counter()
    try:
        begin_segment(run, layout, item_segment_key(item, "test", pair))
    except _STOPS:
        raise
    except BaseException as exc:    # noqa: BLE001 - the pair's set-up failed (a replay's drift): its outcome
        _log_outcome(item, pair, "setup", exc, start, began)
        return
    try:
        call(item.obj, args)
        failure = None
    except _STOPS:
        # cut by a signal: its stretch is abandoned and it made no check (as an item cut
        # between its set-up and its call), the run ends INCOMPLETE. Nothing the stretch's end
        # raises takes the stop's place: the run ends here, and the verdict says why
        try:
            run.shim.end_segment(abandoned=True)
        except Exception:   # noqa: BLE001 - the stop's consequence, said by the INCOMPLETE verdict
            pass
        raise
    except BaseException as exc:    # noqa: BLE001 - the check's own outcome: failed or skipped
        failure = exc
    _log_outcome(item, pair, "call", failure, start, began)
    try:
        failed = failure is not None and not isinstance(failure, pytest.skip.Exception)
        run.shim.end_segment(abandoned=failed or bool(interrupts.seen()))
    except _STOPS:
        raise
    except BaseException as exc:    # noqa: BLE001 - a replay's calls not all made: the pair's teardown error
        _log_outcome(item, pair, "teardown", exc, start, began)


def _log_outcome(item, pair, when: str, exc, start: float, began: float) -> None:
    excinfo = pytest.ExceptionInfo.from_exception(exc) if exc is not None else None
    if excinfo is None:
        outcome, longrepr = "passed", None
    elif isinstance(exc, pytest.skip.Exception):
        path, line, _name = item.location
        outcome, longrepr = "skipped", (path, (line or 0) + 1, f"Skipped: {exc.msg}")
    else:
        outcome, longrepr = "failed", item.repr_failure(excinfo)
    _log(item, pair, outcome, longrepr, when, check_of(item, excinfo, pair), start,
         time.perf_counter() - began)


def _log(item, pair, outcome: str, longrepr, when: str, check: dict, start: float, duration: float) -> None:
    nodeid, (path, line, name) = pair_nodeid(item, pair), item.location
    location = (path, line, f"{name[:-1]}/{pair_id(*pair)}]")     # as the pair's own item has it
    keywords, params = _kept(item)
    report = pytest.TestReport(nodeid, location, keywords, outcome, longrepr, when,
                               duration=duration, start=start, stop=start + duration,
                               user_properties=[(PARAMS, {**params, "s": pair[0], "t": pair[1]}), (CHECK, check)])
    ihook = item.ihook
    # logged inside the item's call, where a plain pytest run captures the output: the
    # terminal's lines for the pair go out as between items (certify runs with no capture)
    capture = item.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        ihook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=nodeid, location=location)


_KEPT = pytest.StashKey[tuple]()


def _kept(item) -> tuple:
    """(the item's keywords, its parameters as results records them), read once an item."""
    kept = item.stash.get(_KEPT, None)
    if kept is None:
        kept = item.stash[_KEPT] = ({name: 1 for name in item.keywords}, params_of(item))
    return kept

