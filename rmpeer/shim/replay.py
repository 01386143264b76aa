"""The replay shim: serves, call by call, what RM answered on a real host, and stops at the
first request whose bytes differ from the recording, naming the field and both values.

Handles and addresses RM chose in the recording come back from it; big buffers are
compared by their recorded digests (records.sampled_digest), never stored.
"""

from __future__ import annotations

import copy
import os
import re
from functools import lru_cache

from rmpeer.errors import ConfigError, ReplayMismatch, TranscriptError
from rmpeer.machine.deadline import wait_forever
from rmpeer.model.steps import check_label
from rmpeer.shim.records import END_NOTE, CallRecord, read_transcript, sampled_digest, words_from_runs


@lru_cache(maxsize=16)
def _load(path: str):
    try:
        return read_transcript(path)
    except TranscriptError as exc:
        # read_transcript's message already starts with the path: said once
        problem = str(exc).removeprefix(f"{path}: ")
        raise TranscriptError(f"recording {path} cannot be replayed: {problem}") from None
    except (OSError, ValueError, EOFError) as exc:
        raise ConfigError(f"recording {path} cannot be replayed: {exc}") from None


def transcript_summary(path) -> dict:
    """The header's facts the suites need at collection time."""
    header, _ = _load(str(path))
    return {"label": header.get("label", os.path.basename(str(path))), "cards": header.get("cards", 0),
            "run": header.get("run", {}), "header": header}


def recorded_note(path, kind: str) -> dict:
    """The first note of `kind` in a recording (e.g. the host facts noted when the host opened)."""
    _, lines = _load(str(path))
    note = next((line for line in lines if isinstance(line, dict) and line.get("note") == kind), None)
    if note is None:
        raise ConfigError(f"recording {path} holds no {kind!r} note (was it cut short?)")
    return note


# A card's device node: /dev/nvidia<minor> (nvidiactl, nvidia-uvm and the like are not cards).
_CARD_NODE = re.compile(r"/dev/nvidia(\d+)$")


def _line_no(index: int) -> int:
    """The file line of lines[index]: the header is line 1 and the writer never writes a
    blank line, so the n-th later line is line n + 1."""
    return index + 2


def validate_recording(path) -> None:
    """Refuse, before anything runs or is written, a recording whose header does not
    describe its own content: TranscriptError (exit 2) with one line naming the problem.

    Checked: the file reads whole (read_transcript refuses a line cut mid-write); it ends
    with its end line (else it was cut at a line boundary); the header's `cards` equals the
    cards of the recorded host facts, and every card device node the calls open is one of
    those cards; every layout in the header uses only those cards and has its setup segment.
    One pass: the parse is the one the replay itself then uses (_load is cached)."""
    path = str(path)
    header, lines = _load(path)
    name = f"recording {path}"
    if is_truncated(lines):
        raise TranscriptError(f"{name} is truncated: no {END_NOTE!r} line after line {_line_no(len(lines) - 1)} "
                              f"(the recording was cut short)")
    cards = header.get("cards")
    if isinstance(cards, bool) or not isinstance(cards, int) or cards < 1:
        raise TranscriptError(f"{name}: its header says cards: {cards!r}, not a card count")
    host_at, minors, setups, opened = None, set(), set(), {}
    for i, line in enumerate(lines):
        if isinstance(line, dict):
            if line.get("note") == "host" and host_at is None:
                host_at = i
                recorded = (line.get("facts") or {}).get("cards")
                if not isinstance(recorded, list):
                    raise TranscriptError(f"{name}: its host facts (line {_line_no(i)}) list no cards")
                if len(recorded) != cards:
                    raise TranscriptError(f"{name} says cards: {cards} but records {len(recorded)} card(s) "
                                          f"(host facts at line {_line_no(i)})")
                numbers = [c.get("minor", c.get("index")) if isinstance(c, dict) else None for c in recorded]
                if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
                    raise TranscriptError(f"{name}: its host facts (line {_line_no(i)}) list a card without a "
                                          f"device number")
                minors = set(numbers)
            elif line.get("note") == "segment" and str(line.get("key", "")).startswith("setup:"):
                setups.add(line["key"].removeprefix("setup:"))
        elif line.op == "open" and line.path and (node := _CARD_NODE.match(line.path)):
            opened.setdefault(int(node.group(1)), (i, line.path))
    if host_at is None:
        raise TranscriptError(f"{name} holds no host facts (no 'host' note): not a recording certify can replay")
    stray = sorted((i, node) for minor, (i, node) in opened.items() if minor not in minors)
    if stray:
        i, node = stray[0]
        raise TranscriptError(f"{name} says cards: {cards} but opens {node} (line {_line_no(i)}), none of the "
                              f"cards of its host facts (line {_line_no(host_at)})")
    run = header.get("run") if isinstance(header.get("run"), dict) else {}
    for entry in run.get("layouts") or []:
        if not (isinstance(entry, list) and len(entry) >= 2 and isinstance(entry[1], list)):
            raise TranscriptError(f"{name}: its header lists a layout of an unexpected shape: {entry!r}")
        layout, used = entry[0], entry[1]
        if not used:    # the recorder writes the card of each session: a layout has one at least
            raise TranscriptError(f"{name}: its header's layout {layout} uses no card (a layout has a session "
                                  f"at least)")
        beyond = [c for c in used if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < cards]
        if beyond:
            raise TranscriptError(f"{name}: its header's layout {layout} uses card {beyond[0]!r}, but the "
                                  f"recording has {cards} card(s)")
        if layout not in setups:
            raise TranscriptError(f"{name}: its header lists layout {layout}, but the recording never sets it "
                                  f"up (no 'setup:{layout}' segment; it sets up: "
                                  f"{', '.join(sorted(setups)) or 'nothing'})")


def is_truncated(lines) -> bool:
    """Whether a recording's lines stop without their end line (cut at a line boundary)."""
    return not (lines and isinstance(lines[-1], dict) and lines[-1].get("note") == END_NOTE)


class ReplayBuffer:
    _next_address = 0x7E5700000000   # a stand-in: pointers are never compared

    def __init__(self, data):
        self.size = data if isinstance(data, int) else len(data)
        self.data = bytearray(self.size) if isinstance(data, int) else bytearray(data)
        ReplayBuffer._next_address += 0x1000
        self.address = ReplayBuffer._next_address

    def read(self) -> bytes:
        return bytes(self.data)

    def write(self, data) -> None:
        self.data[: len(data)] = data


class ReplayShim:
    mode = "replay"

    def __init__(self, path):
        self.path = str(path)
        self.header, self.lines = _load(self.path)
        self.truncated = is_truncated(self.lines)
        self.pos = 0
        self.current_segment = "(start)"
        self.segment_checked = True
        self.segments: dict[str, list[int]] = {}   # key -> where each occurrence begins
        # test-only (rmpeer.machine.deadline): stall at this call's label, as a hung ioctl would
        self.stall_at = os.environ.get("RMPEER_REPLAY_STALL_AT") or None
        for i, line in enumerate(self.lines):
            if isinstance(line, dict) and line.get("note") == "segment":
                self.segments.setdefault(line["key"], []).append(i)

    # -- bookkeeping -----------------------------------------------------------------
    @property
    def recording(self) -> bool:
        return False

    def note(self, kind: str, **data) -> None:
        pass

    def finish(self) -> None:
        """The replay is over: the stretch it stood in must have been served whole."""
        self.end_segment()

    def segment(self, key: str, state=None):
        """Jump to where the recording's segment `key` begins: (its recorded state, whether the
        recording goes straight on there from the stretch just served)."""
        self.end_segment()
        starts = self.segments.get(key, [])
        if not starts:
            cut = (f"; the recording is truncated (it ends without its {END_NOTE!r} line), so it may "
                   f"simply stop before this point") if self.truncated else (
                   " (it was recorded with other tests, layouts or options)")
            raise ReplayMismatch(f"replay of {self.path}: the run reached {key!r}, which the recording "
                                 f"never did{cut}")
        # the next occurrence after where the replay stands, else the first one
        i = next((at for at in starts if at >= self.pos), starts[0])
        contiguous = i == self._next_segment_at(self.pos)
        self.pos, self.current_segment, self.segment_checked = i + 1, key, False
        return self.lines[i].get("state"), contiguous

    def _next_segment_at(self, pos: int) -> int | None:
        for i in range(pos, len(self.lines)):
            line = self.lines[i]
            if isinstance(line, dict) and line.get("note") == "segment":
                return i
        return None

    def end_segment(self, *, abandoned: bool = False) -> None:
        """The stretch being served is over: every call recorded in it must have been made,
        unless it was abandoned (its test failed half way and has said so already)."""
        if self.segment_checked:
            return
        self.segment_checked = True
        if abandoned:
            return
        line = next(self.calls_ahead(), None)
        if line is not None:
            raise ReplayMismatch(
                f"replay of {self.path}: in {self.current_segment!r} the recording has calls the run never "
                f"made; the first is call {line.seq}: {line.op} {line.label!r}")

    def calls_ahead(self):
        """The recorded calls from where the replay stands to the end of its stretch (the next
        segment note), in order. Walked by index: a slice would copy the rest of the recording
        at every check."""
        for i in range(self.pos, len(self.lines)):
            line = self.lines[i]
            if isinstance(line, CallRecord):
                yield line
            elif isinstance(line, dict) and line.get("note") == "segment":
                return

    def _next(self, op: str, label: str) -> CallRecord:
        check_label(label)              # as the live shim: an undeclared family is rmpeer's bug
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if isinstance(line, dict):
                if line.get("note") == "segment":
                    break
                self.pos += 1
                continue
            self.pos += 1
            if self.stall_at is not None and label == self.stall_at:
                wait_forever()
            if line.op != op:
                raise self._diverged(label, f"a {op} call", line)
            return copy.copy(line)
        cut = (" and the recording is truncated there (no end line)"
               if self.truncated and self.pos >= len(self.lines) else "")
        raise ReplayMismatch(f"replay of {self.path}: in {self.current_segment!r} the run made a {op} call "
                             f"({label}) after everything the recording has there{cut}")

    def _diverged(self, label, what, rec) -> ReplayMismatch:
        return ReplayMismatch(f"replay of {self.path}: in {self.current_segment!r}, call {rec.seq}: the run made "
                              f"{what} ({label}) where the recording has {rec.op} {rec.label!r}")

    def _field_check(self, rec, struct, sent: bytes, recorded_hex: str, what: str) -> None:
        recorded = bytes.fromhex(recorded_hex)
        if len(sent) != len(recorded):
            raise ReplayMismatch(
                f"replay of {self.path}: call {rec.seq} ({rec.label}): {what} {struct.name} is {len(sent)} bytes, "
                f"the recording sent {len(recorded)}: the struct's size differs from the recorded driver's "
                f"(matrices/drivers.yaml)")
        fields = struct.differing_fields(sent, recorded)
        if fields:
            f = fields[0]
            raise ReplayMismatch(
                f"replay of {self.path}: call {rec.seq} ({rec.label}): {what} {struct.name} field {f.name} "
                f"(offset {f.offset}): the run sent {f.render(sent)}, the recording has {f.render(recorded)}\n"
                + struct.render(sent, indent="    ", compare=recorded))

    # -- the shim's calls ----------------------------------------------------------------
    def buffer(self, data) -> ReplayBuffer:
        return ReplayBuffer(data)

    def open(self, path: str, *, label: str = "open") -> int:
        rec = self._next("open", label)
        if rec.path != path:
            raise self._diverged(label, f"open({path})", rec)
        if rec.errno:
            raise OSError(rec.errno, os.strerror(rec.errno), path)
        return rec.result

    def close(self, fd: int, *, label: str = "close") -> None:
        self._next("close", label)

    def ioctl(self, fd, request, top, *, label, escape, struct, payload=None, payload_struct=None,
              status_field="status") -> CallRecord:
        rec = self._next("ioctl", label)
        if rec.escape != escape or rec.struct != struct.name:
            raise self._diverged(label, f"ioctl {escape:#x} with {struct.name}", rec)
        if rec.request_code != request:
            raise ReplayMismatch(f"replay of {self.path}: call {rec.seq} ({label}): ioctl request {request:#x}, "
                                 f"recorded {rec.request_code:#x} (the size or escape differs)")
        self._field_check(rec, struct, top.read(), rec.request, "request")
        if payload is not None:
            if rec.payload is None or rec.payload.struct != payload_struct.name:
                raise self._diverged(label, f"params {payload_struct.name}", rec)
            self._field_check(rec, payload_struct, payload.read(), rec.payload.request, "params")
            payload.write(bytes.fromhex(rec.payload.reply))
        top.write(bytes.fromhex(rec.reply))
        rec.label = label
        return rec

    def mmap(self, fd: int, length: int, *, label: str):
        rec = self._next("mmap", label)
        if rec.extra.get("length") != length:
            raise self._diverged(label, f"mmap of {length:#x} bytes", rec)
        if rec.errno:
            raise OSError(rec.errno, os.strerror(rec.errno), f"mmap {label}")
        return ReplayMapping(self, fd, rec.result, length, label)

    def munmap(self, mapping) -> None:
        self._next("munmap", mapping.label)

    def observe(self, label: str, read):
        return self._next("observe", label).extra.get("value")


class ReplayMapping:
    def __init__(self, shim: ReplayShim, fd, base, length, label):
        self.shim, self.fd, self.base, self.length, self.label = shim, fd, base, length, label
        self._block, self._holds = None, None     # the rebuilt read-back, and the word runs it holds

    def _rec(self, op, offset, what):
        rec = self.shim._next(op, self.label)
        if rec.extra.get("offset") != offset:
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): {what} at offset "
                                 f"{offset:#x}, the recording at {rec.extra.get('offset', 0):#x}")
        return rec

    def write(self, offset: int, data: bytes) -> None:
        rec = self._rec("mem.write", offset, "a write")
        if rec.request != bytes(data).hex():
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): wrote "
                                 f"{bytes(data).hex()} at {offset:#x}, the recording wrote {rec.request}")

    def read(self, offset: int, n: int) -> bytes:
        return bytes.fromhex(self._rec("mem.read", offset, "a read").reply)

    def write32(self, offset: int, value: int) -> None:
        self.write(offset, value.to_bytes(4, "little"))


    def wait32(self, offset: int, value: int, timeout_s: float, *, unless=None):
        rec = self._rec("mem.wait", offset, "a wait")
        if rec.extra.get("want") != value:
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): waited for "
                                 f"{value:#x}, the recording for {rec.extra.get('want', 0):#x}")
        recorded = rec.extra.get("unless")
        # recordings made before the wait watched the error notifier have no "unless": the
        # wait they recorded ran to its timeout, and the replay serves that
        if recorded is not None and unless is not None and (recorded.get("label"), recorded.get("offset")) != (
                unless[0].label, unless[1]):
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): the wait watched "
                                 f"{unless[0].label} at {unless[1]:#x}, the recording "
                                 f"{recorded.get('label')} at {recorded.get('offset', 0):#x}")
        return bool(rec.result), rec.extra.get("seen", 0), rec.duration_ns

    def _digest_check(self, rec, data, what):
        digest = sampled_digest(data)
        if rec.extra.get("digest") != digest or rec.extra.get("length") != len(memoryview(data).cast("B")):
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): {what} of "
                                 f"{len(memoryview(data).cast('B')):#x} bytes with digest {digest}, the recording "
                                 f"{rec.extra.get('length', 0):#x} bytes with {rec.extra.get('digest')}")

    def fill(self, offset: int, data) -> None:
        self._digest_check(self._rec("mem.fill", offset, "a fill"), data, "filled")

    def view(self, offset: int, n: int):
        """The block the live run read back, rebuilt from its recorded word runs: the same
        comparison then runs on the same bytes."""
        rec = self._rec("mem.view", offset, "a read-back")
        if rec.extra.get("length") != n:
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): read back {n:#x} "
                                 f"bytes, the recording {rec.extra.get('length', 0):#x}")
        if "runs" not in rec.extra:
            raise ReplayMismatch(f"replay of {self.shim.path}: call {rec.seq} ({self.label}): the recording "
                                 f"kept no data of this read-back (made without --record?)")
        # rebuilt into one buffer per mapping: like the live mapping's bytes, a view holds
        # until the next read-back changes them
        runs = rec.extra["runs"]
        if self._block is None or self._block.size != n // 8:
            import numpy as np

            self._block, self._holds = np.empty(n // 8, dtype=np.uint64), None
        if runs != self._holds:
            # A read-back the same as the last one (a check read twice) holds those bytes
            # already. The block is read-only between views, so none of its readers can
            # have changed them.
            self._block.flags.writeable = True
            words_from_runs(runs, n, out=self._block)
            self._block.flags.writeable = False
            self._holds = runs
        return self._block.view("u1")


def recorded_next(shim, op: str, label: str) -> bool:
    """Live: True. Replay: whether the recording's next call (in this stretch) is `op`
    labelled `label`, i.e. whether the recorded run made this optional reading here."""
    if getattr(shim, "mode", "live") != "replay":
        return True
    line = next(shim.calls_ahead(), None)
    return line is not None and line.op == op and line.label == label
