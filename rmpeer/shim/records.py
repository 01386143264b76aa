"""What the shim records of every call, and recordings: JSON lines of those records.

A recording starts with one header line (tool, version, host, driver, the
run: its pattern seed among them); every later line is one record. Bytes are hex; big buffers are never
stored, only a sampled digest of them (fixtures/transcripts/README.md).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rmpeer import __version__
from rmpeer.errors import TranscriptError
from rmpeer.machine.slices import count_up, pool
from rmpeer.shim.observed import INT64, kind_of, misfit
from rmpeer.model.steps import manifest

FORMAT = "rmpeer-transcript/2"
# /2: data read back is kept as word runs (mem.view), host observations as records, and a
# closing {"note": "end"} line tells a complete recording from a cut one.
END_NOTE = "end"


@dataclass
class Payload:
    """A block a struct points at (alloc or control params), before and after the call."""

    struct: str
    request: str
    reply: str


@dataclass
class CallRecord:
    seq: int
    op: str                          # ioctl, open, close, mmap, munmap, mem.*
    label: str = ""                  # the step, e.g. alloc:p2p, dma-map-peer
    fd: int | None = None
    path: str | None = None
    escape: int | None = None
    request_code: int | None = None  # the full ioctl request number
    struct: str | None = None
    request: str = ""                # hex
    reply: str = ""                  # hex
    payload: Payload | None = None
    result: int = 0                  # return value, fd, or address
    errno: int = 0
    status: int | None = None
    status_name: str | None = None
    status_text: str | None = None
    duration_ns: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def refused(self) -> str | None:
        """Why the call went unanswered ("errno 22", an NV_ERR_* name), None when answered:
        the one reading of a call's outcome for every caller that goes on without it."""
        if self.errno:
            return f"errno {self.errno}"
        if self.status:
            return self.status_name or f"status {self.status:#x}"
        return None

    def to_json(self) -> str:
        """Empty and default fields are left out to keep recordings small; an RM status
        is always kept, 0 included."""
        d = {k: v for k, v in asdict(self).items()
             if k in ("seq", "op") or (k == "status" and v is not None) or v not in (None, "", {}, 0)}
        return json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict) -> "CallRecord":
        d = dict(d)
        if d.get("status_name") is not None and "status" not in d:
            d["status"] = 0   # the first recordings left a zero status out
        if d.get("payload"):
            d["payload"] = Payload(**d["payload"])
        return cls(**d)


def sampled_digest(data) -> str:
    """crc32 over the length and 64 evenly spaced 4 KiB samples: cheap on 64 MiB, and
    every sample covers words whose values encode their own offset and owner."""
    view = memoryview(data).cast("B")
    n, chunk = len(view), 4096
    crc = zlib.crc32(n.to_bytes(8, "little"))
    if n <= 64 * chunk:
        return f"crc32s:{zlib.crc32(view, crc):08x}"
    step = (n - chunk) // 63
    for i in range(64):
        at = i * step
        crc = zlib.crc32(view[at:at + chunk], crc)
    return f"crc32s:{crc:08x}"


# A block read back is kept as runs of 64-bit words that count up by one from a first value:
# the suite's patterns are such runs, so a correct block is one run and a wrong one a few.
# Past MAX_RUNS the block is not one the suite wrote; only the runs found so far are kept.
MAX_RUNS = 64
_RUN_SLICE = 1 << 20   # words per thread


def word_runs(data) -> dict:
    """{"runs": [[first_word_index, count, first_value], ...], "complete": bool} of a block
    whose length is a multiple of 8 bytes."""
    import numpy as np

    words = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint64)
    n = int(words.size)
    if n == 0:
        return {"runs": [], "complete": True}
    # A run breaks at i where words[i] != words[i-1] + 1; found in slices on several threads
    # (numpy lets go of the GIL), since a 64 MiB block is 8M words.
    def breaks(lo):
        hi = min(n, lo + _RUN_SLICE + 1)
        return (np.flatnonzero(words[lo + 1:hi] - words[lo:hi - 1] != 1) + lo + 1)[: MAX_RUNS + 1]

    starts = [0]
    for found in pool().map(breaks, range(0, n - 1, _RUN_SLICE)):
        starts.extend(int(i) for i in found)
        if len(starts) > MAX_RUNS:
            break
    complete = len(starts) <= MAX_RUNS
    starts = starts[:MAX_RUNS]
    ends = starts[1:] + [n if complete else starts[-1] + 1]
    return {"runs": [[a, b - a, int(words[a])] for a, b in zip(starts, ends)], "complete": complete}


def words_from_runs(runs: list, nbytes: int, out=None):
    """The block word_runs described (into `out` when given); words no run covers are zero
    (they decode as data this suite never wrote)."""
    import numpy as np

    words = np.zeros(nbytes // 8, dtype=np.uint64) if out is None else out
    if out is not None and not (len(runs) == 1 and runs[0][1] == words.size):
        words[:] = 0
    for first, count, value in runs:
        count_up(words[first:first + count], value)
    return words


PROC_VERSION = "/proc/driver/nvidia/version"   # the kernel module's own line


def read_proc_version_text(path: str = PROC_VERSION) -> str:
    try:
        return open(path).read().strip()
    except OSError:
        return ""


def host_header(**extra) -> dict:
    """A recording's header: the run, the machine, and what this rmpeer makes (its manifest,
    which `rmpeer diff` reads to tell a step this rmpeer never made from one it did not call)."""
    import platform       # a recording's alone: a run that records nothing never loads it

    uname = os.uname()    # its nodename is gethostname()'s on Linux
    return {"format": FORMAT, "tool": "rmpeer", "version": __version__, "manifest": manifest(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "hostname": uname.nodename, "kernel": uname.release,
            "machine": uname.machine, "python": platform.python_version(), **extra}


def new_transcript(folder, target, run: dict, *, kind: str = "") -> "TranscriptWriter":
    """A recording of this live run of `target` in `folder`, named by its label, its kind
    (e.g. "passive") and the time, with the host header every recording carries."""
    from pathlib import Path

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = "-".join(part for part in (target.label, kind, stamp) if part)
    header = host_header(label=target.label, cards=target.cards, driver_text=read_proc_version_text(), run=run)
    for n in range(1, 100):        # made new (O_EXCL): a second recording in the same second gets -2
        try:
            return TranscriptWriter(Path(folder) / f"{name}{'' if n == 1 else f'-{n}'}.jsonl.gz", header)
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder}: 99 recordings named {name}* already")


class TranscriptWriter:
    """Streams records to a JSON-lines file as they happen (a crash keeps what came before)."""

    def __init__(self, path: Path, header: dict):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # streamed, not renamed at the end (a crash keeps what came before), so made new:
        # O_EXCL|O_NOFOLLOW, never through a link or over a file someone planted at the name
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        self._raw = os.fdopen(fd, "wb")
        self._file = (gzip.open(self._raw, "wt", compresslevel=6) if self.path.suffix == ".gz"
                      else io.TextIOWrapper(self._raw, encoding="utf-8"))
        self._file.write(json.dumps({"header": header}) + "\n")

    def note(self, kind: str, **data) -> None:
        """A line that is not a call: host facts, a segment boundary, a test's verdict."""
        self._file.write(json.dumps({"note": kind, "t_ns": time.monotonic_ns(), **data}) + "\n")
        self._file.flush()

    def write(self, record: CallRecord) -> None:
        self._file.write(record.to_json() + "\n")
        if record.op != "mem.write":
            self._file.flush()

    def close(self) -> None:
        """Closes with the end marker: a recording without it was cut short."""
        if not self._file.closed:
            self.note(END_NOTE)
            self._file.close()
            self._raw.close()       # gzip leaves a file object it was given open


GZIP_MAGIC = b"\x1f\x8b"


# A recording is read whole into memory, so what it may unpack to is bounded: a 2-card full
# run unpacks to 24 MiB with lines under 300 KiB (a read-back's word runs); an 8-card one is
# projected below 500 MiB. Past either limit the file is refused (exit 2), never read on.
MAX_UNPACKED = 1 << 30      # 1 GiB
MAX_LINE = 16 << 20         # 16 MiB
MAX_BLANK = 64              # blank lines a recording may hold (rmpeer writes none)


def _bounded_lines(path, f):
    total, n = 0, 0
    while True:
        line = f.readline(MAX_LINE + 1)
        if not line:
            return
        n += 1
        total += len(line)
        if len(line) > MAX_LINE:
            raise TranscriptError(f"{path}: line {n} is longer than {MAX_LINE >> 20} MiB: not a recording "
                                  f"rmpeer wrote (refused unread)")
        if total > MAX_UNPACKED:
            raise TranscriptError(f"{path}: unpacks to more than {MAX_UNPACKED >> 30} GiB by line {n}: not a "
                                  f"recording rmpeer wrote (a compression bomb?); refused unread")
        yield line


def read_unpacked(path) -> bytes:
    """A whole file (a recording or a certificate, gzip or not), unpacked, of at most
    MAX_UNPACKED bytes: past that it is refused unread (TranscriptError), so that a small
    compressed file cannot fill the memory."""
    with open(path, "rb") as raw:
        compressed = raw.read(2) == GZIP_MAGIC
    with (gzip.open(path, "rb") if compressed else open(path, "rb")) as f:
        data = f.read(MAX_UNPACKED + 1)
    if len(data) > MAX_UNPACKED:
        raise TranscriptError(f"{path}: unpacks to more than {MAX_UNPACKED >> 30} GiB: not a file rmpeer wrote "
                              f"(a compression bomb?); refused unread")
    return data


def _opened(path: Path, follow: bool):
    """The file at `path` opened for reading; follow=False: never through a link (ELOOP, an
    OSError), and a regular file only (a FIFO never blocks the open)."""
    if follow:
        return path.open("rb")
    raw = os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb")
    if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
        raw.close()
        raise TranscriptError(f"{path}: not a regular file")
    return raw


def read_transcript(path: Path, *, follow: bool = True) -> tuple[dict, list]:
    """(header, lines): each later line a CallRecord or a note dict. Whatever is wrong with
    the file is a TranscriptError naming the file and the line; a recording that was cut
    short says "truncated". follow=False: a recording found in a folder, never read through
    a link."""
    path = Path(path)
    if not path.exists():
        raise TranscriptError(f"{path}: no such file")
    if not path.is_file():
        raise TranscriptError(f"{path}: not a file")
    header, lines, n = None, [], 0
    try:
        with _opened(path, follow) as raw:
            compressed = raw.read(2) == GZIP_MAGIC     # by content: a misnamed file still reads
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
            blank = 0
            for n, raw_line in enumerate(_bounded_lines(path, f), 1):
                if not raw_line.strip():
                    # rmpeer writes no blank line: a few are let be (an editor's), a flood is a
                    # bomb that costs a readline each (50 MiB of newlines took 37 s to refuse)
                    blank += len(raw_line) < 4096    # long ones are cheap a byte: the size bound has them
                    if blank > MAX_BLANK:
                        raise TranscriptError(f"{path}: more than {MAX_BLANK} blank lines by line {n}: not a "
                                              f"recording rmpeer wrote; refused unread")
                    continue
                d = _parse_line(path, n, raw_line, after_header=header is not None)
                if header is None:
                    if n != 1 or "header" not in d or not isinstance(d["header"], dict) \
                            or d["header"].get("format") != FORMAT:
                        raise TranscriptError(f"{path}: line {n}: not an {FORMAT} recording "
                                              f"(its first line must be the header)")
                    header = d["header"]
                elif "note" in d:
                    lines.append(_note(path, n, d))
                else:
                    lines.append(_record(path, n, d))
    except EOFError:
        raise TranscriptError(f"{path}: truncated: the compressed data stops after line {n} "
                              f"(the file was cut short)") from None
    except (zlib.error, gzip.BadGzipFile) as exc:
        where = f"after line {n}" if n else "from the start"
        raise TranscriptError(f"{path}: corrupt compressed data {where} ({exc}); the file is damaged") from None
    except OSError as exc:
        raise TranscriptError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if header is None:
        raise TranscriptError(f"{path}: empty, not a recording")
    return header, lines


def _parse_line(path, n, raw_line: bytes, *, after_header: bool) -> dict:
    try:
        d = json.loads(raw_line.decode("utf-8"))
    except UnicodeDecodeError:
        raise TranscriptError(f"{path}: line {n}: not text (not an {FORMAT} recording)") from None
    except RecursionError:
        raise TranscriptError(f"{path}: line {n}: nested deeper than any line rmpeer writes") from None
    except ValueError as exc:
        if after_header and not raw_line.endswith(b"\n"):
            raise TranscriptError(f"{path}: line {n}: truncated: the last line is cut off "
                                  f"(the recording stopped mid-write)") from None
        what = "" if after_header else f"; not an {FORMAT} recording"
        if not isinstance(exc, json.JSONDecodeError):     # Python's own bound: a number past 4300 digits
            raise TranscriptError(f"{path}: line {n}: a number longer than any rmpeer writes{what}") from None
        raise TranscriptError(f"{path}: line {n}: not JSON ({exc.msg} at column {exc.colno}){what}") from None
    if not isinstance(d, dict):
        raise TranscriptError(f"{path}: line {n}: not a JSON object")
    return d


def _note(path, n, d: dict) -> dict:
    """A note line: its kind is text, and a segment's key (the replay looks segments up by
    it, and prints it) one line of printable text."""
    kind, key = d["note"], d.get("key")
    if not isinstance(kind, str):
        raise TranscriptError(f"{path}: line {n}: its note is {str(kind)[:40]!r}, not text")
    if kind == "segment" and not (isinstance(key, str) and key.isprintable()):
        raise TranscriptError(f"{path}: line {n}: not a segment note (its key is {str(key)[:40]!r}, not text)")
    return d


def _record(path, n, d: dict) -> CallRecord:
    try:
        rec = CallRecord.from_dict(d)
    except TypeError as exc:
        raise TranscriptError(f"{path}: line {n}: not a call record ({exc})") from None
    if not isinstance(rec.seq, int) or not isinstance(rec.op, str):
        raise TranscriptError(f"{path}: line {n}: not a call record (seq {rec.seq!r}, op {rec.op!r})")
    bad = _bad_field(rec)
    if bad:
        raise TranscriptError(f"{path}: line {n}: not a call record ({bad})")
    return rec


# hex digits, counted even apart: one character class is 5x faster to match than the pairs'
# group, and a replay's reader checks every request and reply of every record with it
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*")
_NUMBERS = ("result", "errno", "duration_ns")          # always a number (0 when left out)
_NUMBERS_OR_NONE = ("fd", "escape", "request_code", "status")
MAX_ERRNO = 4095            # the kernel's largest errno (include/linux/err.h)


# The numbers a memory call's extra holds, which the replay compares with the run's and
# prints in hex: each a count or an offset of 0 to 2**64 - 1 where the recorder wrote it.
_EXTRA_NUMBERS = {"mem.write": ("offset",), "mem.read": ("offset", "length"), "mem.wait": ("offset", "want", "seen"),
                  "mem.fill": ("offset", "length"), "mem.view": ("offset", "length"), "mmap": ("length",)}
_UNLESS_NUMBERS = ("offset", "seen")     # the error notifier a wait watched


def uint64(value) -> bool:
    """A whole number of 0 to 2**64 - 1, as the recorder writes counts and offsets (no bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 * INT64


def _bad_extra(rec: CallRecord) -> str:
    for name in _EXTRA_NUMBERS.get(rec.op, ()):
        if name in rec.extra and not uint64(rec.extra[name]):
            return f"its extra {name} is {str(rec.extra[name])[:40]!r}, not a count or offset of 64 bits"
    if rec.op == "mem.view" and "runs" in rec.extra:
        bad = _bad_runs(rec.extra["runs"], rec.extra.get("length"))
        if bad:
            return f"its extra runs {bad}"
    unless = rec.extra.get("unless") if rec.op == "mem.wait" else None
    if unless is not None:
        if not isinstance(unless, dict) or not isinstance(unless.get("label", ""), str):
            return f"its extra unless is {str(unless)[:40]!r}, not the error notifier a wait watched"
        for name in _UNLESS_NUMBERS:
            if name in unless and not uint64(unless[name]):
                return f"its extra unless {name} is {str(unless[name])[:40]!r}, not a count or offset of 64 bits"
    return ""


def _bad_runs(runs, length) -> str:
    """A read-back's runs as word_runs writes them: [first word, count, first value] each, in
    order, within the block's `length` bytes (issue 47, row 10: "garbage", or a count of 10**12,
    was an unexpected error in the middle of a run, never a refusal before it)."""
    if not isinstance(runs, list):
        return f"are {str(runs)[:40]!r}, not a list of [first, count, value]"
    words = length // 8 if uint64(length) else None
    end = 0
    for i, run in enumerate(runs):
        if not (isinstance(run, list) and len(run) == 3 and all(uint64(x) for x in run) and run[1] > 0):
            return f"[{i}] is {str(run)[:40]!r}, not [first, count, value] of whole numbers"
        if run[0] < end or (words is not None and run[0] + run[1] > words):
            return f"[{i}] ({run[0]}, {run[1]}) overlaps another or runs past the block's {words} words"
        end = run[0] + run[1]
    return ""


_TEXTS = ("label",)                                    # always text ("" when left out)
_TEXTS_OR_NONE = ("path", "struct", "status_name", "status_text")


def _bad_field(rec: CallRecord) -> str:
    """The first field of a record not of the kind the recorder writes (the replay reads the
    bytes as hex, the numbers as numbers, the names as text and extra and payload as mappings:
    another kind there was an internal error, exit 5)."""
    for name in _TEXTS + _TEXTS_OR_NONE:
        value = getattr(rec, name)
        if (value is not None or name in _TEXTS) and not isinstance(value, str):
            return f"its {name} is {str(value)[:40]!r}, not text"
    for name, value, kind in (("extra", rec.extra, dict), ("payload", rec.payload, (Payload, type(None)))):
        if not isinstance(value, kind):
            return f"its {name} is {str(value)[:40]!r}, not a mapping"
    blocks = [("request", rec.request), ("reply", rec.reply)]
    if rec.payload is not None:
        blocks += [("payload request", rec.payload.request), ("payload reply", rec.payload.reply)]
    for name, value in blocks:
        if not isinstance(value, str) or len(value) % 2 or not _HEX_DIGITS.fullmatch(value):
            return f"its {name} is not hex bytes: {str(value)[:40]!r}"
    for name in _NUMBERS + _NUMBERS_OR_NONE:
        value = getattr(rec, name)
        if (value is not None or name in _NUMBERS) and (isinstance(value, bool) or not isinstance(value, int)):
            return f"its {name} is {str(value)[:40]!r}, not a number"
        if value is not None and not -INT64 <= value < INT64:
            return f"its {name} is {str(value)[:40]}, beyond 64 bits"
    if not 0 <= rec.errno <= MAX_ERRNO:
        return f"its errno is {rec.errno}, not an errno the kernel gives"
    bad = _bad_extra(rec)
    if bad:
        return bad
    if rec.op == "observe" and (kind := kind_of(rec.label)) is not None:
        return misfit(rec.extra.get("value"), kind, f"the value it observed ({rec.label})")
    return ""
