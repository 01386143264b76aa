"""Frozen types every layer shares: the RunResult, and the words of NVLink. Imports nothing of rmpeer but errors."""
