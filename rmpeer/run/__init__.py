"""One run: the RunSpec built from the request, the host run, the tiers' steps, the fingerprint and freshness."""
