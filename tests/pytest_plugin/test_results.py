"""The run's CheckResults come from pytest's own reports (rmpeer/pytest_plugin/results.py):
a test file written here runs under a real pytest with the Collector, and each outcome is
the one pytest's report phases give (setup, call, teardown: a failure outside the call is an
error, a failure in the call a failed check, a skip a skip). A check that broke in its
fixture's teardown (e.g. RM objects left behind) never reads as passed."""

import pytest

from rmpeer.pytest_plugin.results import Collector

pytestmark = pytest.mark.offline

TESTS = '''
import pytest

@pytest.fixture
def leaves_objects():
    yield
    raise RuntimeError("teardown: 3 objects still allocated")

@pytest.fixture
def refused():
    raise RuntimeError("setup: RM refused the alloc")

def test_clean():
    pass

def test_teardown_breaks(leaves_objects):
    pass

def test_setup_breaks(refused):
    pass

def test_wrong_memory():
    assert False, "wrong memory"

def test_not_asked():
    pytest.skip("not asked for")
'''


def test_each_outcome_is_the_one_pytests_report_phases_give(tmp_path):
    (tmp_path / "test_outcomes.py").write_text(TESTS)
    collector = Collector()
    code = pytest.main([str(tmp_path), "-p", "no:cacheprovider", "-p", "no:terminal", "--rootdir", str(tmp_path)],
                       plugins=[collector])
    assert code == pytest.ExitCode.TESTS_FAILED
    got = {c.id.rsplit("::", 1)[-1].split("/")[0]: c.outcome for c in collector.checks()}
    assert got == {"test_clean": "passed", "test_teardown_breaks": "error", "test_setup_breaks": "error",
                   "test_wrong_memory": "failed", "test_not_asked": "skipped"}
