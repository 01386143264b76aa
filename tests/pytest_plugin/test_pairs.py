"""--rm-pairs-per-item, what certify runs (rmpeer/pytest_plugin/pairs.py): a check of pairs is one
pytest item per layout, and each pair is still logged as its own check. Held to the plain run,
one item per pair, under a real pytest on committed recordings: one where every check passes,
one whose read-backs hold another session's data (read checks fail), one whose host never
opens (every check errs at its set-up), and a 1-card one at idle clocks. Both runs must log the
same checks, under the same ids, in the same order, with the same outcomes, reasons, checks,
subjects and parameters; the expected values are the plain run's, never the code's under test."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rmpeer.pytest_plugin import pairs

pytestmark = pytest.mark.offline

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "fixtures/transcripts"
RECORDINGS = {
    "passing": "h200x2-20261130T005408Z.jsonl.gz",
    "wrong-memory": "derived/h200x2-20261130T005408Z-derived-wrong-memory.jsonl.gz",
    "refused-open": "derived/h200x2-20261130T005408Z-derived-refused-open.jsonl.gz",
    "1-card-noboost": "degraded/h200x1-20261130T003151Z-noboost.jsonl.gz",
}
QUIET = ["-p", "no:cacheprovider", "-q"]
PAIR_ID = re.compile(r"/s\d+->t\d+\]$")
# what a check is, as the Collector keeps it; not how long it took or in how many phases
SAME = ("nodeid", "outcome", "params", "check", "area", "subject", "layout", "message", "unexpected", "detail")


class Items:
    def __init__(self):
        self.items = []

    def pytest_collection_finish(self, session):
        self.items = [item.nodeid for item in session.items]


def _run(tmp_path: Path, recording: str, *extra) -> tuple:
    out, items = tmp_path / f"results{len(extra)}.json", Items()
    code = pytest.main([str(ROOT / "suites"), "-m", "hardware", "--rm-replay", str(TRANSCRIPTS / recording),
                        "--rm-results", str(out), *QUIET, *extra], plugins=[items])
    return code, json.loads(out.read_text())["tests"], items.items


@pytest.fixture(scope="module", params=sorted(RECORDINGS), ids=str)
def both(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    return (request.param, _run(tmp, RECORDINGS[request.param]),
            _run(tmp, RECORDINGS[request.param], "--rm-pairs-per-item"))


def _kept(tests: list) -> list:
    return [{k: t.get(k) for k in SAME} | {"made_its_check": "call" in t.get("phases", ())} for t in tests]


def test_every_check_is_logged_as_in_the_plain_run(both):
    name, (plain_code, plain, _), (code, per_item, _) = both
    assert code == plain_code
    assert _kept(per_item) == _kept(plain)
    outcomes = {t["outcome"] for t in plain}
    # the recordings reach what they are here for
    assert {"passing": "passed", "wrong-memory": "failed", "refused-open": "error",
            "1-card-noboost": "passed"}[name] in outcomes, outcomes


def test_a_layouts_pairs_are_one_item(both):
    _name, (_, plain, plain_items), (_, per_item, items) = both
    groups = {PAIR_ID.sub("]", nodeid) for nodeid in plain_items if PAIR_ID.search(nodeid)}
    singles = [nodeid for nodeid in plain_items if not PAIR_ID.search(nodeid)]
    assert groups, "no check of pairs ran"
    assert sorted(items) == sorted(singles + sorted(groups))
    assert len(per_item) == len(plain)


def test_a_signal_between_pairs_ends_the_run_with_the_pairs_before_it(tmp_path, monkeypatch):
    """KeyboardInterrupt (a stop signal) in the fifth pair's body: the four before it are
    logged as checks, the fifth made none, nothing after it ran, and pytest says interrupted."""
    bodies = []

    def cut_at_the_fifth(function, args):
        bodies.append((function.__name__, args["s"], args["t"]))
        if len(bodies) == 5:
            raise KeyboardInterrupt("SIGINT")
        function(**args)

    monkeypatch.setattr(pairs, "call", cut_at_the_fifth)
    code, tests, _ = _run(tmp_path, RECORDINGS["passing"], "--rm-pairs-per-item")
    assert code == pytest.ExitCode.INTERRUPTED
    made = [t for t in tests if "call" in t.get("phases", ())]
    pair_checks = [t for t in made if t["params"].get("s") is not None]
    assert [(t["params"]["s"], t["params"]["t"]) for t in pair_checks] == [(s, t) for _f, s, t in bodies[:4]]
    assert all(t["outcome"] == "passed" for t in pair_checks)
    assert len(bodies) == 5


def _terminal(recording: str, *extra) -> list:
    import subprocess
    import sys

    from rmpeer.paths import pytest_args

    done = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "suites"), "-m", "hardware", *pytest_args(),
                           "--rm-replay", str(TRANSCRIPTS / recording), "-p", "no:cacheprovider", "-rfs", *extra],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    # less what differs by nature: the items collected, the run's time, objects' addresses
    return [re.sub(r" at 0x[0-9a-f]+", "", re.sub(r" in [0-9.]+s", "", line))
            for line in done.stdout.splitlines() if not line.startswith("collected ")]


@pytest.mark.parametrize("name", ["passing", "wrong-memory"])
def test_the_terminal_shows_each_pair_as_the_plain_run_does(name):
    """pytest's own terminal: every pair's letter, each file's line, the progress reaching
    100% and no further, the failures' summary: the pairs' lines are written outside the
    capture of the item's call, and the run counts its checks, not its items."""
    plain = _terminal(RECORDINGS[name])
    assert any("[100%]" in line for line in plain)
    assert _terminal(RECORDINGS[name], "--rm-pairs-per-item") == plain


@pytest.mark.parametrize("other", [["--alluredir", "ALLURE"], ["-n", "2"]], ids=["allure-pytest", "xdist"])
def test_what_counts_items_is_refused_beside_it(tmp_path, capsys, other):
    """allure-pytest files one result per item, and pytest-xdist's workers send only their
    item's reports: beside either, --rm-pairs-per-item is a usage error, said in one line."""
    args = [str(tmp_path / a) if a == "ALLURE" else a for a in other]
    code = pytest.main([str(ROOT / "suites"), "-m", "hardware", "--rm-replay", str(TRANSCRIPTS / RECORDINGS["passing"]),
                        "--rm-pairs-per-item", *QUIET, *args])
    assert code == pytest.ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "--rm-pairs-per-item: each pair is logged as a report of its own" in err, err
    assert not (tmp_path / "ALLURE").exists()
