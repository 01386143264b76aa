"""CI never goes green with a part untested: under CI (the CI variable set) a tool the tests
need that cannot be installed fails the run before any test; elsewhere it is reported and
the tests that need it skip. pytest's exit 5 (no tests collected) is a failure.

The functions of .ci/tools.sh (which .ci/run sources) run here in bash, with a tool name
that exists nowhere, so nothing is installed."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.offline, pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")]
TOOLS = Path(__file__).resolve().parents[2] / ".ci" / "tools.sh"
NOWHERE = "rmpeer-test-no-such-tool"


def bash(script: str, *, ci: bool):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    done = subprocess.run(["bash", "-c", f"set -euo pipefail; source {TOOLS}; {script}"],
                          capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stderr


def test_under_ci_a_tool_that_cannot_be_installed_fails_the_run():
    rc, err = bash(f"need {NOWHERE}; fail_if_lacking_under_ci; echo tests-ran >&2", ci=True)
    assert rc == 1 and "tests-ran" not in err
    assert f"ci: FAIL: {NOWHERE} is missing and could not be installed" in err
    assert "ci: FAIL: under CI 1 tool(s) the tests need could not be installed" in err


def test_elsewhere_a_missing_tool_is_reported_and_its_tests_skip():
    rc, err = bash(f"need {NOWHERE}; fail_if_lacking_under_ci; echo tests-ran >&2", ci=False)
    assert rc == 0 and "tests-ran" in err
    assert f"ci: {NOWHERE} is missing and could not be installed: the tests that need it will skip, saying why" in err


def test_a_present_tool_or_one_of_its_alternatives_is_enough():
    rc, err = bash(f"need 'sh'; need '{NOWHERE}|bash'; fail_if_lacking_under_ci; echo tests-ran >&2", ci=True)
    assert (rc, err.strip()) == (0, "tests-ran")


@pytest.mark.parametrize("code,message", [(0, None), (1, "ci: FAIL: the tests exited 1"),
                                          (5, "ci: FAIL: pytest collected no tests (exit 5): nothing was tested")])
def test_the_run_ends_with_the_tests_status_and_no_tests_is_a_failure(code, message):
    rc, err = bash(f"run_tests bash -c 'exit {code}'", ci=False)
    assert rc == code
    assert (message in err) if message else err == ""


def test_ci_run_uses_the_functions_and_still_runs_pytest():
    """.ci/run sources the functions, fails before the tests when CI lacks a tool, and ends
    with run_tests (so a pytest exit of 5 is the run's)."""
    text = (TOOLS.parent / "run").read_text()
    assert "source .ci/tools.sh" in text and text.index("fail_if_lacking_under_ci") < text.index("run_tests ")
    assert text.rstrip().splitlines()[-1].startswith("run_tests ")
    assert "set -euo pipefail" in text


@pytest.mark.skipif(not os.environ.get("RMPEER_CI_WHEEL"), reason=".ci/run sets RMPEER_CI_WHEEL: this checks its test run")
@pytest.mark.parametrize("worker", range(4))     # several rows: under xdist, most workers run one
def test_under_ci_every_test_process_imports_the_installed_rmpeer(worker):
    """.ci/run tests the wheel a user gets, in every xdist worker too: a worker that imported
    the checkout's rmpeer would test code no user runs."""
    import rmpeer.paths

    assert rmpeer.paths.checkout_root() is None, f"this test process imports rmpeer from {rmpeer.paths.PACKAGE}"
