"""rmpeer.machine.lines: a line to a stream that cannot take it (a full disk: /dev/full; a
closed stream) never raises; the first failure is kept and named. The guard's Stdout re-raises
the write's error and remembers it, so the guard can tell it from an error of rmpeer's own."""

import contextlib
import errno
import io
import os

import pytest

from rmpeer.machine.lines import Say, Stdout

FULL = "/dev/full"


@contextlib.contextmanager
def full_disk():
    """/dev/full as a text stream; its close flushes what the failed writes left, and fails too."""
    stream = open(FULL, "w")
    try:
        yield stream
    finally:
        with contextlib.suppress(OSError):
            stream.close()


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this machine")
def test_say_to_a_full_disk_keeps_the_first_failure():
    with full_disk() as full:
        say = Say(full)
        say("a line")
        say("another")
    assert isinstance(say.lost, OSError) and say.lost.errno == errno.ENOSPC
    assert say.why() == os.strerror(errno.ENOSPC)


def test_say_to_a_closed_stream_keeps_the_failure():
    stream = io.StringIO()
    stream.close()
    say = Say(stream)
    say("x")
    assert isinstance(say.lost, ValueError)


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full on this machine")
def test_stdout_remembers_the_write_that_failed_and_raises_it():
    with full_disk() as full:
        out = Stdout(full)
        with pytest.raises(OSError) as caught:
            out.write("x" * 10000)
            out.flush()
        assert out.lost is caught.value and out.fileno() == full.fileno()
