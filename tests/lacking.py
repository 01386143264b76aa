"""A tool a test needs is missing: outside CI the test skips, saying why; under CI (the CI
variable set), where .ci/run installs every tool, it fails instead (a CI run that skipped
the check has not passed it)."""

import os

import pytest


def lacking(why: str, under_ci: str):
    """Skip with `why`; under CI fail with `under_ci` (what CI should have installed)."""
    if os.environ.get("CI"):
        pytest.fail(under_ci)
    pytest.skip(why)
