"""rmpeer.machine.interrupts: a stop signal that lands inside a finalizer (a __del__, a
generator the collector closes) is where Python can only print the KeyboardInterrupt as
"Exception ignored" with a traceback and go on: the run then ran to its end with the signal
noted, and the traceback reached the output (the signal sweep saw it twice under load). The
signal is raised again where the main thread stands, and nothing is printed. Each case is a
process of its own, as certify is."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    from rmpeer.machine import interrupts

    class Finalized:
        def __del__(self):
            signal.raise_signal(signal.{sig})   # the signal arrives while the finalizer runs
            for _ in range(1000):               # ... and Python's handler runs inside it
                pass

    interrupts.install()
    with interrupts.during_run():
        try:
            item = Finalized()
            del item                            # the finalizer swallows the KeyboardInterrupt
            time.sleep(30)                      # the run's own work, which the signal must end
            print("the run went on to its end")
        except KeyboardInterrupt as exc:
            print(f"the run stopped in its own code: {{exc}}")
    print("seen:", interrupts.seen())
""")


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_inside_a_finalizer_still_stops_the_run_and_prints_nothing(sig):
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(sig=sig)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == [f"the run stopped in its own code: {sig}", f"seen: {sig}"], done.stdout
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


CLEANUP = textwrap.dedent("""
    import signal, sys
    from rmpeer.machine import interrupts

    class Broken:
        def __del__(self):
            raise AttributeError("a plugin's clean-up of the step the signal cut")

    interrupts.install()
    item = Broken(); del item                  # no signal yet: Python says it, as ever
    print("before", flush=True)
    with interrupts.during_run():
        try:
            signal.raise_signal(signal.SIGTERM)
            for _ in range(1000):
                pass
        except KeyboardInterrupt:
            pass
    item = Broken(); del item                  # after the signal: its consequence, not a traceback
    print("after", interrupts.seen())
""")


def test_after_a_stop_signal_a_failed_finalizer_prints_no_traceback():
    done = subprocess.run([sys.executable, "-c", CLEANUP], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines() == ["before", "after SIGTERM"], done.stdout
    assert done.stderr.count("Traceback") == 1 and done.stderr.count("plugin's clean-up") == 1, done.stderr
