"""Tests that kill the mutants of rmpeer/render/table.py (docs/mutation.md)."""

import pytest

pytestmark = pytest.mark.offline
