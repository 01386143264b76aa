"""Signals at any moment: SIGINT, SIGTERM and SIGHUP, once or several times, anywhere in a
command's life, end it INCOMPLETE (exit 5) and never leave a CERTIFIED output behind.

One process-wide record of the stop signals seen, in three phases:
  - from the command's entry (`install`) until a run begins, and during the run
    (`with during_run():`), the first signal raises KeyboardInterrupt where the main thread
    stands: the run ends there and its RM client is freed; later ones are only noted (a
    second Ctrl-C must not cut the clean-up short);
  - after the run (the verdict and the outputs), signals are only noted: the outputs check
    `seen()` before they are written and say INCOMPLETE when one came;
  - at the very end (`finish`), the signals are blocked, anything noted or pending turns the
    written outputs INCOMPLETE (`after_late_signal` callbacks) and the exit code 5, and the
    process exits at once (os._exit): no window is left in which a signal kills the process
    with a CERTIFIED file on disk (a signal that arrives after the check stays blocked and
    dies with the process).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

from rmpeer.errors import EXIT_INCOMPLETE

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Record:
    def __init__(self):
        self.seen: list[str] = []
        self.raising = True           # the first signal raises KeyboardInterrupt
        self.installed = False
        self.late: list = []          # callbacks: (signal name) -> None, run by finish
        self.again = False            # the first one landed in a finalizer: raise it once more
        self.in_hook = False          # the unraisable hook is running: no signal may land in it


_record = _Record()


def _on_signal(signum, frame):
    name = signal.Signals(signum).name
    again, _record.again = _record.again, False
    first = not _record.seen
    if not again:
        _record.seen.append(name)
    if (first or again) and _record.raising:
        raise KeyboardInterrupt(_record.seen[0])


def _unraisable(hook):
    """sys.unraisablehook: a stop signal whose KeyboardInterrupt was raised inside a finalizer
    (a __del__, a generator the collector closed), where Python can only print it and go on,
    is raised again where the main thread then stands (the run still ends there, and nothing
    is printed). Once a stop signal came, what another finalizer fails to do (a plugin's
    clean-up of the step the signal cut) is its consequence, said by the INCOMPLETE verdict,
    not as a traceback; before one, anything is Python's to say."""
    if _record.seen:
        if isinstance(hook.exc_value, KeyboardInterrupt) and _record.raising:
            # not from here: a handler that ran inside this hook would be swallowed the same way
            _record.again = _record.in_hook = True
            try:
                threading.Thread(target=_raise_again, daemon=True).start()
            finally:
                _record.in_hook = False
        return
    sys.__unraisablehook__(hook)


def _raise_again() -> None:
    """The stop signal sent to the main thread once it has left the hook: on a loaded machine
    a timer alone could fire while the hook still ran, and that signal was swallowed too."""
    time.sleep(RAISE_AGAIN_S)
    while _record.in_hook:
        time.sleep(RAISE_AGAIN_S)
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


RAISE_AGAIN_S = 0.01    # long after the hook has returned, and no stop a person or a scheduler would notice


def install() -> None:
    """At a command's entry, before anything else: every stop signal is rmpeer's from here."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_signal)
    sys.unraisablehook = _unraisable
    _record.installed = True


def seen() -> str | None:
    """The first stop signal seen so far (its name), else None."""
    return _record.seen[0] if _record.seen else None


@contextmanager
def during_run():
    """The run: the first signal (if none came before) ends it where it stands, as a
    KeyboardInterrupt; once the run is over, signals are only noted (the outputs phase)."""
    previous = unraisable = None
    if not _record.installed:      # called in-process (a test): ours for the run, then given back
        previous, unraisable = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}, sys.unraisablehook
        _record.seen.clear()       # an earlier in-process run's signals are not this run's
        install()
    _record.raising = True
    try:
        yield _record
    finally:
        _record.raising = False
        if previous is not None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sys.unraisablehook = unraisable
            _record.installed = False


def after_late_signal(callback) -> None:
    """`callback(signal_name)` runs in `finish` when a signal came after the outputs were
    written with no signal seen: it rewrites them as INCOMPLETE."""
    _record.late.append(callback)


def _pending() -> str | None:
    pending = signal.sigpending() & set(STOP_SIGNALS)
    return signal.Signals(min(pending)).name if pending else None


def finish(code: int) -> "NoReturn":   # noqa: F821
    """The process's last step: block the stop signals, let any signal that came turn the
    outputs INCOMPLETE and the exit code 5, flush and exit now."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    late = seen() or _pending()
    if late and _record.installed:
        for callback in _record.late:
            try:
                callback(late)
            except Exception as exc:   # noqa: BLE001 - the exit code still says INCOMPLETE
                print(f"rmpeer: after {late}: could not mark an output INCOMPLETE: {exc}", file=sys.stderr)
        if code != EXIT_INCOMPLETE:
            print(f"rmpeer: {late} before the process ended: INCOMPLETE (exit {EXIT_INCOMPLETE})",
                  file=sys.stderr)
        code = EXIT_INCOMPLETE
    for stream in (sys.stdout, sys.stderr):
        if stream is None:         # started with that descriptor closed (`rmpeer ... >&-`)
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def reset_for_tests() -> None:
    """A new record (in-process tests only)."""
    global _record
    _record = _Record()
