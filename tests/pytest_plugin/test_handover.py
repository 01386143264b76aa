"""A check's fixtures are handed over by the plugin's `_segment` (rmpeer/pytest_plugin/plugin.py,
_hand_over), not built one by one by pytest, and every HostRun is closed by a finalizer of the
session node, not by a fixture in every check. The suites run here under a real pytest against
a committed 2-card recording; what a check would have been given is asked of pytest's own
fixture machinery (request.getfixturevalue), never of the code under test."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from rmpeer.pytest_plugin import plugin

pytestmark = pytest.mark.offline

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "fixtures/transcripts/h200x2-20261130T005408Z.jsonl.gz"
QUIET = ["-p", "no:cacheprovider", "-q"]


class Probe:
    """Per check: the fixtures pytest set up for it, and the values it was handed beside the
    values pytest's fixtures give for the same names; at the end, whether each HostRun closed."""

    def __init__(self):
        self.set_up, self.handed, self.plain, self.closed = defaultdict(list), {}, {}, None
        self.calling = False

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if not self.calling:     # set up for the check (not built by this probe at its call)
            self.set_up[request.node.nodeid].append(fixturedef.argname)
        yield

    def pytest_runtest_teardown(self, item):
        self.calling = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        self.calling = True
        handed = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        self.handed[pyfuncitem.nodeid] = handed
        # built now the plain way: each name through pytest's fixture machinery
        self.plain[pyfuncitem.nodeid] = {name: pyfuncitem._request.getfixturevalue(name) for name in handed}

    def pytest_sessionfinish(self, session):
        self.closed = {t.label: r.closed for t, r in session.config.stash[plugin.HOST_RUNS].items()}


def _run(probe, *args) -> int:
    return pytest.main([str(ROOT / "suites"), "-m", "hardware", "--rm-replay", str(RECORDING), *QUIET, *args],
                       plugins=[probe])


@pytest.fixture(scope="module")
def probed():
    probe = Probe()
    assert _run(probe) == pytest.ExitCode.OK
    return probe


def test_every_check_is_handed_what_its_fixtures_give(probed):
    assert probed.handed, "no check ran"
    differing = [(nodeid, name) for nodeid, values in probed.handed.items() for name, value in values.items()
                 if probed.plain[nodeid][name] is not value and probed.plain[nodeid][name] != value]
    assert differing == []
    names = {name for values in probed.handed.values() for name in values}
    assert {"layout_run", "peers", "s", "t", "host_run", "fitness"} <= names


def test_a_read_check_has_pytest_set_up_its_stretch_alone(probed):
    reads = {nodeid: names for nodeid, names in probed.set_up.items() if "::test_read[" in nodeid}
    assert reads, "no read check ran"
    assert set(map(tuple, reads.values())) == {("_segment",)}


def test_every_host_run_is_closed_at_the_sessions_end(probed):
    assert probed.closed and all(probed.closed.values()), probed.closed


def test_a_run_of_two_checks_closes_its_host_run_too():
    probe = Probe()
    assert _run(probe, "-k", "test_read and one-per-card and s1-") == pytest.ExitCode.OK
    assert len(probe.handed) == 2 and probe.closed and all(probe.closed.values()), probe.closed


def test_each_checks_location_is_the_one_pytest_computes():
    """The plugin shares a test function's file and line among its checks; each check's
    location is still what pytest's own `location` computes for it."""
    seen = {}

    class Locations:
        def pytest_collection_finish(self, session):       # after every plugin's modifyitems
            compute = type(session.items[0]).location.func   # pytest's own, not the shared value
            seen.update({item.nodeid: (item.location, compute(item)) for item in session.items})

    assert _run(Locations(), "--collect-only") == pytest.ExitCode.OK
    assert len(seen) > 100
    assert [nodeid for nodeid, (shared, own) in seen.items() if shared != own] == []
    assert len({own[2] for _shared, own in seen.values()}) == len(seen)    # a name of its own each
