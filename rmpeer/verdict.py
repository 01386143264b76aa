"""Compatibility for rmpeer.pytest_plugin.reporting's pair matrix until it renders the
RunResult (rmpeer.render.table.pair_cells): the card x card counts from the collector's test
entries, by each test's DECLARED check (its rm_check marker), never by its function name.
The verdict itself is rmpeer.judge."""

from __future__ import annotations

from collections import defaultdict

KINDS = {"setup:map": "setup", "setup:reservation": "setup", "read": "read", "write": "write"}


def pair_table(tests: list) -> dict:
    """(card s, card t) -> counts of setup/read/write outcomes and the steady GB/s seen."""
    table = defaultdict(lambda: {"setup": [0, 0], "read": [0, 0], "write": [0, 0], "gbps": []})
    for test in tests:
        p = test["params"]
        kind = KINDS.get(test.get("check"))
        if kind is None or "s" not in p or test["outcome"] == "skipped":
            continue
        cell = table[(p["cards"][p["s"]], p["cards"][p["t"]])]
        counts = cell[kind]
        counts[1] += 1
        counts[0] += test["outcome"] == "passed"
        bw = test.get("properties", {}).get("bandwidth")
        if bw and bw.get("steady_gbps"):
            cell["gbps"].append(bw["steady_gbps"])
    return table
