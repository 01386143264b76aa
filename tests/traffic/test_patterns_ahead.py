"""rmpeer.traffic.patterns.Ahead: the run's patterns made on a thread of their own from the
run's start, each made once, whoever asks first; the words the same as the seed's layout
(word = seed 16 | kind 4 | owner 4 | spare 4 | index 36, the module's docstring)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rmpeer.traffic import patterns

pytestmark = pytest.mark.offline

MiB = 1 << 20


def _word(seed, kind, owner, index) -> int:
    return (seed & 0xFFFF) << 48 | kind << 44 | owner << 40 | index


@pytest.fixture
def made(monkeypatch):
    """Each pattern made, by the thread that made it; the previous plan dropped."""
    log = []
    make = patterns.make
    monkeypatch.setattr(patterns, "make", lambda *key, **kw: log.append((key, threading.current_thread().name))
                        or make(*key, **kw))
    monkeypatch.setattr(patterns, "_AHEAD", None)
    return log


def test_the_planned_patterns_are_made_on_their_own_thread_with_the_seeds_words(made):
    keys = [(953, kind, owner, 2 * MiB) for owner in range(3) for kind in (patterns.KIND_BUFFER, patterns.KIND_WRITE)]
    patterns.ahead(keys)
    patterns._AHEAD._thread.join(30)
    got = {key: patterns.cached(*key) for key in keys}
    assert [key for key, _ in made] == keys                          # in the plan's order, once each
    assert {name for _, name in made} == {"rmpeer-patterns"}
    for (seed, kind, owner, length), words in got.items():
        n = length // 8
        assert words.size == n and not words.flags.writeable
        for i in (0, 1, n // 2, n - 1):
            assert int(words[i]) == _word(seed, kind, owner, i)


def test_a_pattern_asked_before_its_thread_reaches_it_is_made_by_the_asker_once(made, monkeypatch):
    """The thread held on its first pattern: the run asks for the second, makes it itself (on
    the run's threads), and the thread, let go, skips it."""
    hold, holding = threading.Event(), threading.Event()
    make = patterns.make

    def held(*key, **kw):
        if key[2] == 0:
            holding.set()
            hold.wait(30)
        return make(*key, **kw)

    monkeypatch.setattr(patterns, "make", held)      # held, then the fixture's (which logs it)
    first, second = (7, patterns.KIND_BUFFER, 0, MiB), (7, patterns.KIND_BUFFER, 1, MiB)
    patterns.ahead([first, second])
    assert holding.wait(30)
    words = patterns.cached(*second)
    hold.set()
    patterns._AHEAD._thread.join(30)
    assert sorted(made) == [(first, "rmpeer-patterns"), (second, threading.current_thread().name)], made
    assert int(words[5]) == _word(7, patterns.KIND_BUFFER, 1, 5)
    assert patterns.cached(*first) is patterns.cached(*first)
    assert len(made) == 2


def test_the_run_waits_for_a_pattern_its_thread_is_making_and_never_makes_it_again(made, monkeypatch):
    hold, holding = threading.Event(), threading.Event()
    make = patterns.make

    def held(*key, **kw):
        holding.set()
        hold.wait(30)
        return make(*key, **kw)

    monkeypatch.setattr(patterns, "make", held)
    key = (9, patterns.KIND_WRITE, 2, MiB)
    patterns.ahead([key])
    assert holding.wait(30)
    threading.Timer(0.2, hold.set).start()
    words = patterns.cached(*key)
    assert made == [(key, "rmpeer-patterns")]
    assert int(words[-1]) == _word(9, patterns.KIND_WRITE, 2, MiB // 8 - 1)


def test_a_pattern_not_planned_is_made_and_kept_as_before(made):
    patterns.ahead([(1, patterns.KIND_BUFFER, 0, MiB)])
    patterns._AHEAD._thread.join(30)
    other = (1, patterns.KIND_BUFFER, 0, 2 * MiB)
    assert patterns.cached(*other) is patterns.cached(*other)
    assert np.array_equal(patterns.cached(*other)[:4], [_word(1, 1, 0, i) for i in range(4)])


def test_a_runs_patterns_are_each_sessions_two_in_its_layouts_order():
    layout = lambda n: type("Layout", (), {"cards": [0] * n})()
    cases = [type("Case", (), {"layout": layout(n), "extent": e})() for n, e in ((1, 64 * MiB), (2, 16 * MiB))]
    assert patterns.run_keys(5, cases) == [
        (5, 1, 0, 64 * MiB), (5, 2, 0, 64 * MiB), (5, 1, 0, 16 * MiB), (5, 2, 0, 16 * MiB),
        (5, 1, 1, 16 * MiB), (5, 2, 1, 16 * MiB)]


def test_the_hosts_open_plans_the_runs_patterns_before_rms_open(monkeypatch):
    """HostRun.open (a replay's: RM's open recorded) plans the patterns of its spec's layouts
    at its start, so that their thread has RM's open, the staging buffers and pytest's start
    to make them in (measured so: docs/evidence/h100x1-20261205T2221Z-ahead)."""
    from rmpeer.paths import transcripts_dir
    from rmpeer.run import hostrun
    from rmpeer.run.hostrun import HostRun
    from rmpeer.run.spec import replay_spec

    events = []
    real_open = hostrun.Runtime.open
    monkeypatch.setattr(patterns, "ahead", lambda keys: events.append(("ahead", keys)))
    monkeypatch.setattr(hostrun.Runtime, "open", lambda self: events.append(("RM",)) or real_open(self))
    host = HostRun(replay_spec(str(transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"), tier="quick"))
    try:
        host.open()
    finally:
        host.abandon()
    keys = patterns.run_keys(host.spec.pattern_seed, host.spec.cases)
    assert keys and events == [("ahead", keys), ("RM",)], events


def test_a_pattern_its_thread_could_not_make_is_made_by_the_run_without_a_traceback(made, monkeypatch):
    """The thread failing (here: no memory for its words) ends it quietly (no exception left
    to Python's thread hook, which prints a traceback); the run makes the pattern itself when
    it asks for it, as if none had been planned."""
    make = patterns.make

    def no_memory(*key, threads=True):
        if not threads:           # the thread's one pass; the run's own make succeeds
            raise MemoryError
        return make(*key, threads=threads)

    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    monkeypatch.setattr(patterns, "make", no_memory)
    key = (3, patterns.KIND_BUFFER, 1, MiB)
    patterns.ahead([key, (3, patterns.KIND_WRITE, 1, MiB)])
    patterns._AHEAD._thread.join(30)
    words = patterns.cached(*key)
    assert int(words[7]) == _word(3, patterns.KIND_BUFFER, 1, 7)
    assert escaped == []
