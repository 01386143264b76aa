"""The renderers of rmpeer.render, fed the RunResult of a real recording (certify --replay of
the two-card recording, one layout): the table shows every card pair the result holds, the
fitness lines say what the result says, and certificate.json reads back as the same result.
Expected values come from the recording (its cards, its /proc account of them), not from the
renderers."""

import dataclasses
import gzip
import json
import subprocess
import sys

import pytest

from rmpeer.render.table import pair_cells, render_fitness, render_table, use_colour
from rmpeer.paths import transcripts_dir
from rmpeer.model.result import RunResult

pytestmark = pytest.mark.offline
TWO = sorted(transcripts_dir().glob("h200x2-*.jsonl.gz"))


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    if not TWO:
        pytest.skip("no two-card recording")
    out = tmp_path_factory.mktemp("render")
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(TWO[0]), "--layout",
                           "one-per-card", "--output", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return RunResult.load(out / "replay-certificate.json")


def _proc_gpus(path):
    for line in gzip.open(path, "rt"):
        if '"host:proc-gpus"' in line:
            return json.loads(line)
    return None


def test_the_certificate_keeps_the_cards_uuids(result):
    """The UUIDs RM gave, as the kernel module's /proc account of the cards in the recording has them."""
    proc = _proc_gpus(TWO[0])
    assert proc is not None, "the recording holds no /proc account of the cards"
    uuids = {g["uuid"] for g in proc["extra"]["value"]}
    assert len(uuids) == 2, proc
    assert {c["uuid"] for c in result.host["cards"]} == uuids


def test_the_table_has_a_cell_per_card_pair(result):
    cells = pair_cells(result)
    cards = len(result.host["cards"])
    assert set(cells) == {(a, b) for a in range(cards) for b in range(cards)}
    for cell in cells.values():
        assert cell["read"][0] == cell["read"][1] > 0 and cell["write"][0] == cell["write"][1] > 0
        assert cell["setup"][0] == cell["setup"][1] > 0
    text = render_table(result)
    assert text.count("R:ok") == cards * cards and "FAIL" not in text


def test_a_failed_pair_shows_in_its_cell(result):
    at = next(i for i, p in enumerate(result.pairs) if p.op == "read" and p.src_card != p.dst_card)
    pairs = list(result.pairs)
    pairs[at] = dataclasses.replace(pairs[at], ok=False)
    assert "R:FAIL 1/" in render_table(dataclasses.replace(result, pairs=pairs))


def test_the_fitness_lines_say_the_boost_was_released(result):
    text = render_fitness(result)
    assert "boost: asked; released" in text
    broken = dataclasses.replace(result, boost=dict(result.boost, released=False))
    assert "NOT released" in render_fitness(broken)
    for figure in result.bandwidth:
        assert f"{figure['gbps']:7.1f}" in text


def test_the_certificate_reads_back_as_the_same_result(result):
    again = RunResult.from_dict(json.loads(json.dumps(result.to_dict(), default=str)))
    assert again == result


def test_no_colour_with_NO_COLOR(monkeypatch):
    class Tty:
        def isatty(self):
            return True
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Tty())


def test_a_cell_with_one_failed_copy_of_two_says_fail():
    """A hand-made two-session layout on one card (interleaved sessions 0 and 2 share card 0):
    of the two reads that land in cell (0, 0), one held the wrong bytes; the cell says so, and
    a setup check that was skipped (the map refused as the topology expects) is not counted."""
    from rmpeer.model.result import CheckResult, LayoutResult, PairResult

    result = RunResult(layouts=[LayoutResult("interleaved", [0, 1, 0, 1], 1 << 26)],
                       pairs=[PairResult("interleaved", 0, 2, 0, 0, "read", True),
                              PairResult("interleaved", 2, 0, 0, 0, "read", False)],
                       checks=[CheckResult("setup:map/interleaved/s0->t2", "setup:map", "setup", "pair 0->2", "passed",
                                           layout="interleaved", s=0, t=2),
                               CheckResult("setup:map/interleaved/s2->t0", "setup:map", "setup", "pair 2->0",
                                           "skipped", layout="interleaved", s=2, t=0)])
    cell = pair_cells(result)[(0, 0)]
    assert (cell["read"], cell["setup"]) == ([1, 2], [1, 1])
    assert "R:FAIL 1/2" in render_table(result) and "R:ok" not in render_table(result)
