"""Lines to a stream its reader may have left: a full disk, a closed pipe (`| head`), a
terminal gone with SIGHUP. A failed write never stops a command, its files or its actions,
and never changes its exit code: the first failure is kept (`Say.lost`), and said once on
stderr beside the answer that stands."""

from __future__ import annotations

import sys

from rmpeer.errors import EXIT_INCOMPLETE


class Say:
    def __init__(self, stream):
        self.stream, self.lost = stream, None

    def __call__(self, text=""):
        try:
            print(text, file=self.stream, flush=True)
        except (OSError, ValueError) as exc:     # ValueError: the stream was closed
            self.lost = self.lost or exc

    def why(self) -> str:
        return str(getattr(self.lost, "strerror", None) or self.lost)


def said_on_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):   # stderr gone too: the exit code remains
        pass


def output_lost(what: str, exc: OSError) -> int:
    """stdout full or closed under output that is the command's answer: it is incomplete
    (exit 5), said in one line; no fault of rmpeer's, so no traceback file."""
    said_on_stderr(f"rmpeer: {what} could not be written to stdout ({exc.strerror or exc}): "
                   f"INCOMPLETE (exit {EXIT_INCOMPLETE})")
    return EXIT_INCOMPLETE


class Stdout:
    """sys.stdout for one command, which remembers the write that failed (`lost`): the
    command's guard then tells a full disk or a closed stdout from an error of rmpeer's own,
    and says it in one line, with no traceback file."""

    def __init__(self, stream):
        self.stream, self.lost = stream, None

    def write(self, text):
        try:
            return self.stream.write(text)
        except OSError as exc:
            self.lost = exc
            raise

    def flush(self):
        try:
            return self.stream.flush()
        except OSError as exc:
            self.lost = exc
            raise

    def __getattr__(self, name):
        return getattr(self.stream, name)
