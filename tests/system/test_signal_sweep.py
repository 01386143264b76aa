"""Signals at any moment (issue 23): SIGINT, SIGTERM and SIGHUP, once or twice, swept over a
whole `certify --replay` of the quick 2-card recording, as a user would send them (a process
of its own, `python -m rmpeer`). Every signal the process took gives exit 5 and leaves no
CERTIFIED certificate, JUnit or Prometheus file.

The signal times follow the run's own progress, not the clock (a loaded CI machine stretches
a run): an unsignalled run first counts its output lines; the sweep then signals after line
k for 10 values of k per signal spread from the first line to the last progress line (the
fitness checks'), the three signals' values interleaved so that together they stop the run
at 30 moments (one handler takes all three: each signal at every one of them would be the
same test three times over), then 0, 30, 60 and 100 ms after that last progress line (the window between the
verdict and the process's exit that issue 23 found unguarded: the judge and the outputs),
and right after the verdict line. From the last progress line on, the process may pass its
last check before the signal arrives (the reader lags the writer; a signal after that check
stays blocked and dies with the process): such a point may be exit 0, CERTIFIED, with no
signal named, but only if its verdict line was already written when the signal was sent
(what the pipe held then: tools/signal_points.py's `signalled`); an exit 0 before it is a
signal lost. Every other point must be exit 5 with no CERTIFIED file, and at least 10
points per signal must have taken it; each signal also comes twice once, at a quarter, half
or three quarters of the run. (A signal before the interpreter reaches rmpeer's
entry, in Python's own start-up, kills the process by default: nothing is open or written
then; the sweep starts at the first line.) The runs go in parallel to keep CI time down."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rmpeer.paths import transcripts_dir

# the signalling and the rule of each point, shared with the device's sweep
_spec = importlib.util.spec_from_file_location("signal_points", Path(__file__).resolve().parents[2] / "tools"
                                               / "signal_points.py")
signal_points = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(signal_points)

pytestmark = pytest.mark.offline
RECORDING = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
needs_recording = pytest.mark.skipif(not RECORDING.is_file(), reason=f"no {RECORDING.name} in fixtures/transcripts/")
POINTS = 10     # per signal, interleaved: 30 moments of the run in all
AFTER_LAST_PROGRESS_S = (0.0, 0.03, 0.06, 0.1)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POOL = max(2, min(8, os.cpu_count() or 2))   # CPU-bound runs: one per core


def _command(out: Path) -> list:
    return [sys.executable, "-u", "-m", "rmpeer", "certify", "--replay", str(RECORDING), "--output", str(out),
            "--junit", str(out / "rmpeer.xml"), "--prometheus", str(out / "prom")]


def _env():
    root = str(Path(__file__).resolve().parents[2])
    return dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _run(out: Path, sigs, *, after_line: int | None = None, delay_s: float = 0.0, gap_s: float = 0.2) -> dict:
    """One run, signalled delay_s after its `after_line`-th output line (None: its verdict
    line); `sigs` are sent gap_s apart."""
    done = signal_points.signalled(_command(out), sigs, after_line=after_line, delay_s=delay_s, gap_s=gap_s,
                                   env=_env(), timeout=300)
    return dict(done, certified=signal_points.certified_files(out))


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    """The unsignalled run: its lines (where the sweep's points go) and its own outcome."""
    out = tmp_path_factory.mktemp("whole")
    started = time.monotonic()
    done = _run(out, ())
    done["wall_s"] = time.monotonic() - started
    assert done["rc"] == 0 and done["certified"], done["text"][-2000:]
    lines = done["text"].splitlines()
    done["last_progress"] = 1 + max(i for i, line in enumerate(lines) if signal_points.PROGRESS.match(line))
    return done


def _line_counts(last: int, nth: int) -> list:
    """The nth signal's POINTS line counts: every len(SIGNALS)-th of len(SIGNALS) x POINTS
    moments spread from the first line to the last progress line, from the nth on."""
    slots = len(SIGNALS) * POINTS
    return sorted({1 + round(i * (last - 1) / (slots - 1)) for i in range(nth, slots, len(SIGNALS))})


def _check(point: str, done: dict, *, may_end_first: bool) -> str | None:
    """A problem with one point's outcome, or None."""
    found = signal_points.problems(done, done["certified"], may_end_first=may_end_first)
    if not found:
        return None
    text = done["text"]
    at = text.find("Traceback")      # the traceback itself, whatever follows it
    return f"{point}: {'; '.join(found)}: " + (text[max(0, at - 300):at + 2000] if at >= 0 else text[-600:])


@needs_recording
@pytest.mark.parametrize("sig", SIGNALS, ids=[s.name for s in SIGNALS])
def test_a_signal_at_any_moment_gives_incomplete_and_no_certified_file(tmp_path, whole_run, sig):
    last = whole_run["last_progress"]
    nth = SIGNALS.index(sig)
    counts = _line_counts(last, nth)
    assert len(counts) >= POINTS, counts
    jobs = [(f"after line {k}", dict(after_line=k), [sig], k == last) for k in counts]
    jobs += [(f"{s * 1000:.0f} ms after the last progress line", dict(after_line=last, delay_s=s), [sig], True)
             for s in AFTER_LAST_PROGRESS_S]
    jobs += [("right after the verdict line", dict(after_line=None), [sig], True)]
    twice = counts[(nth + 1) * len(counts) // (len(SIGNALS) + 1)]     # a quarter, half, three quarters in
    jobs += [(f"twice, after line {twice}", dict(after_line=twice), [sig, sig], False)]

    def one(i_job):
        i, (name, when, sigs, may_end_first) = i_job
        out = tmp_path / f"p{i}"
        return name, _run(out, sigs, **when), may_end_first

    started = time.monotonic()
    with ThreadPoolExecutor(POOL) as pool:
        outcomes = list(pool.map(one, enumerate(jobs)))
    wall = time.monotonic() - started
    problems = [p for p in (_check(name, done, may_end_first=m) for name, done, m in outcomes) if p]
    signalled = sum(1 for _, done, _ in outcomes if done["sent"])
    taken = sum(1 for _, done, _ in outcomes if done["sent"] and done["rc"] == 5)
    print(f"{sig.name}: {len(jobs)} points, {signalled} signalled, {taken} exit 5, in {wall:.1f} s "
          f"(an unsignalled run: {whole_run['wall_s']:.1f} s, last progress line {last})")
    assert not problems, "\n".join(problems)
    assert taken >= POINTS, f"only {taken} points took the signal"
