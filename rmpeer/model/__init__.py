"""Frozen types every layer shares: the RunResult, and the words of NVLink (nvlink). Imports nothing of rmpeer but errors."""
