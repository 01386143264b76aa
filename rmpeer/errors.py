"""Errors a user can act on, each with the exit code `rmpeer` documents.

Exit codes (README and `rmpeer --help`). A scheduler acts on the number alone: 1 drains a
node; 4 is soft (slower than its floors); 2, 3, 5, 6, 7 and 8 say the tool could not give a
verdict of the host, and never drain it. `rmpeer diff` keeps 0 (same), 1 (differs), 2.
  0  CERTIFIED (or the command succeeded; certify --if-stale: the certificate is fresh)
  1  NOT CERTIFIED: a conformance check failed
  2  usage or configuration error (bad option, malformed matrix or recording, unknown driver)
  3  no access to the GPUs (no /dev/nvidiactl, no permission)
  4  DEGRADED: correct, but below the host's floors, a link down or erring, an unexpected Xid
  5  INCOMPLETE: cut short (SIGINT, SIGTERM, an internal error), no check ran, or one stopped on rmpeer's own error
  6  BUSY: another rmpeer run holds this host's lock (after --wait seconds)
  7  NOT IDLE: --require-idle, and other processes hold the GPUs
  8  UNCHECKED: --require-complete, and a check could not run (the verdict line names it)
"""

def quoted(text, limit: int = 60) -> str:
    """Input as an error line quotes it: its repr, cut to `limit` characters (a name or a
    number given may be thousands long; the line stays one clear line)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):    # a number reads as one
        shown = str(text)
        return shown if len(shown) <= limit else shown[: limit - 3] + "..."
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


EXIT_OK = 0
EXIT_NOT_CERTIFIED = 1
EXIT_CONFIG = 2
EXIT_NO_ACCESS = 3
EXIT_DEGRADED = 4
EXIT_INCOMPLETE = 5
EXIT_BUSY = 6
EXIT_NOT_IDLE = 7
EXIT_UNCHECKED = 8


class RmpeerError(Exception):
    """Base of every error rmpeer reports as a message rather than a traceback."""

    exit_code = EXIT_CONFIG


class ConfigError(RmpeerError):
    """Bad option, malformed matrix, or a plan the suite cannot express."""


class MatrixError(ConfigError):
    """A matrix file failed its schema check: names the file, the entry and the fault."""

    def __init__(self, path, entry, problem):
        self.path, self.entry, self.problem = str(path), entry, problem
        super().__init__(f"{self.path}: {entry}: {problem}")


class UnknownDriverError(ConfigError):
    """The running driver's branch has no ABI entry in matrices/drivers.yaml."""


class BadVersionError(ConfigError, ValueError):
    """A driver version that is not dotted numbers (from RM, /proc, --rm-abi or a matrix)."""


class PlanError(ConfigError):
    """A layout, extent or window function the peer plan cannot express."""


class TranscriptError(ConfigError, ValueError):
    """A recording that cannot be read: names the file, the line and what is wrong.
    (A ValueError too, for callers that caught the plain ValueError it replaced.)"""


class NoDeviceError(RmpeerError):
    """No NVIDIA device node: nothing to certify on this machine."""

    exit_code = EXIT_NO_ACCESS


class AccessError(RmpeerError):
    """The device nodes exist but this user may not open them."""

    exit_code = EXIT_NO_ACCESS


class ReplayMismatch(RmpeerError):
    """A request differs from the recording being replayed. certify judges it (a check that
    fails on it, or a failed close: NOT CERTIFIED); one that escapes every verdict is exit 5,
    never 1 (a replay cut by a signal diverges where it was cut)."""

    exit_code = EXIT_INCOMPLETE


class BusyError(RmpeerError):
    """Another rmpeer run holds this host's lock: names the holder's pid and command."""

    exit_code = EXIT_BUSY


class NotIdleError(RmpeerError):
    """--require-idle, and other processes hold the GPUs: names them."""

    exit_code = EXIT_NOT_IDLE
