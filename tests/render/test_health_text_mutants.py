"""Tests that kill the mutants of rmpeer/render/health_text.py (docs/mutation.md)."""

import pytest

pytestmark = pytest.mark.offline
