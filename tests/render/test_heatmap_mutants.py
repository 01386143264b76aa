"""Tests that kill the mutants of rmpeer/render/heatmap.py (docs/mutation.md)."""

import pytest

pytestmark = pytest.mark.offline
