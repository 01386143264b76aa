"""rmpeer diff: two runs' words loaded, compared, rendered."""
