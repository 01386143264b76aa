"""Python work (a run's imports) on a thread of its own, beside this thread's calls into the
driver.

RM's open, the host's reads, the boost and the staging buffers are ioctls, and cffi lets go
of the GIL for each: while this thread waits on the driver, the other thread imports what the
run needs next (certify's pytest and its plugin, about 0.1 s). This thread takes the GIL back
at each ioctl's return, but an importing thread gives it up only every switch interval (5 ms
by default): that interval is made short (SWITCH_S) while the work runs, so the ioctls are not
kept waiting. wait() ends the work, puts the interval back, and gives the work's exception,
if any, to this thread."""

from __future__ import annotations

import sys
import threading

# the longest a thread running Python keeps the GIL from one back from the driver (5 ms by
# default, the length of several ioctls)
SWITCH_S = 0.0002


class Beside:
    def __init__(self, work, name: str):
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._interval = sys.getswitchinterval()
        self._restored = False
        sys.setswitchinterval(min(self._interval, SWITCH_S))
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self._thread.start()

    def _run(self, work) -> None:
        try:
            work()
        except BaseException as exc:   # noqa: BLE001 - handed to the waiting thread by wait()
            self._error = exc
        finally:
            self._done.set()

    def wait(self, *, raising: bool = True) -> None:
        """The work ended (a signal interrupts the wait), then the switch interval put back;
        the work's exception raised here (`raising`). A caller stopping on a failure of its
        own ends the work without raising (the first failure is the one to report) and
        before importing anything else: the two threads never import one module at once."""
        try:
            self._done.wait()
        finally:
            if not self._restored:
                self._restored = True
                sys.setswitchinterval(self._interval)
        if raising and self._error is not None:
            raise self._error
