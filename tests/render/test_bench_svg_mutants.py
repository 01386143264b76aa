"""Tests that kill the mutants of rmpeer/render/bench_svg.py (docs/mutation.md)."""

import pytest

pytestmark = pytest.mark.offline
