"""Tests that kill the mutants of rmpeer/render/prometheus_health.py (docs/mutation.md)."""

import pytest

pytestmark = pytest.mark.offline
