"""A hard deadline on every run: a hung ioctl or a copy that never completes must not block a
prolog until the scheduler kills it.

A watchdog thread waits for the run's deadline (--deadline, else the tier's default). When the
run reaches its verdict first, the run disarms it (rmpeer.run.execute). When the deadline comes first, the watchdog
writes the INCOMPLETE outputs (certificate, JUnit, Prometheus: "the run did not end within
its deadline"), prints the verdict line and ends the process with os._exit(5). That is the
only way out of a call that never returns (the main thread may sit in the kernel): the
process exits, and the kernel frees what the RM client held.

Test-only: RMPEER_REPLAY_STALL_AT, read by the replay backend alone (shim/replay.py), makes
a replay stall at the named call, as a hung ioctl would; a live run never reads it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from rmpeer.errors import EXIT_INCOMPLETE, ConfigError

DEFAULT_S = {"passive": 5.0, "quick": 60.0, "full": 600.0, "partial": 600.0}
REPLAY_FACTOR = 10      # a replay stands in for no host's budget, and CI replays on loaded machines
MAX_S = 86400.0


def parse_deadline(text, tier: str, *, replay: bool = False) -> float:
    """--deadline SECONDS (a number, at most a day), else the tier's default (ten times it
    for a replay)."""
    if text is None:
        return DEFAULT_S.get(tier, DEFAULT_S["full"]) * (REPLAY_FACTOR if replay else 1)
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"--deadline {text!r}: give a number of seconds, e.g. 60") from None
    if not 0 < seconds <= MAX_S:
        raise ConfigError(f"--deadline {text!r}: more than 0 and at most {MAX_S:.0f} seconds")
    return seconds


# What a caller in the same process owes before a deadline ends it (rmpeer.fleet.node: its
# status.json, which the hooks read): run on the watchdog thread after the run's own outputs.
_BEFORE_EXIT: list = []


@contextlib.contextmanager
def owed_at_exit(fn):
    """fn(seconds) runs if a deadline inside this block ends the process."""
    _BEFORE_EXIT.append(fn)
    try:
        yield
    finally:
        _BEFORE_EXIT.remove(fn)


class Watchdog:
    def __init__(self, seconds: float, on_deadline):
        """on_deadline(seconds) writes the INCOMPLETE outputs; it runs on the watchdog thread."""
        self.seconds, self.on_deadline = seconds, on_deadline
        self.lock = threading.Lock()
        self.armed = True
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._wait, name="rmpeer-deadline", daemon=True)

    def start(self) -> "Watchdog":
        self.thread.start()
        return self

    def _wait(self) -> None:
        # the stop signals stay the main thread's (rmpeer.machine.interrupts)
        signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
        if self.ended.wait(self.seconds):
            return
        with self.lock:
            if not self.armed:
                return
            for write in (self.on_deadline, *_BEFORE_EXIT):
                try:
                    write(self.seconds)
                except BaseException as exc:   # noqa: BLE001 - the exit below is what matters
                    try:
                        print(f"rmpeer: the deadline's outputs could not be written: {exc}", file=sys.stderr)
                    except (OSError, ValueError):
                        pass
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(EXIT_INCOMPLETE)

    def __enter__(self) -> "Watchdog":
        return self.start()

    def __exit__(self, *exc) -> None:
        """The run's block has ended, by its verdict or by an error before it (a refusal such as
        NOT IDLE, an internal error): the deadline no longer applies, so a caller in the same
        process (fleet node, a test) is never ended by a deadline of a run already over."""
        self.disarm()

    def disarm(self) -> None:
        """The run reached its verdict: the deadline no longer applies (waits for a watchdog
        that is writing its outputs, which then exits the process)."""
        with self.lock:
            self.armed = False
        self.ended.set()


def writer(stream):
    """A line writer to a copy of stream's descriptor (made now), else to stream itself."""
    try:
        fd = os.dup(stream.fileno())
    except (AttributeError, OSError, ValueError):   # io.UnsupportedOperation is both
        fd = None

    def write(text=""):
        try:
            if fd is None:
                print(text, file=stream, flush=True)
            else:
                os.write(fd, (text + "\n").encode("utf-8", "replace"))
        except (OSError, ValueError):
            pass
    return write


def wait_forever() -> None:
    """What a stalled call does (test-only, via RMPEER_REPLAY_STALL_AT): never return."""
    while True:
        time.sleep(3600)
