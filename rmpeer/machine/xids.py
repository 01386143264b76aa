"""The NVRM Xid lines the kernel logs while the suite runs, read from /dev/kmsg or dmesg.

The driver prints (src/nvidia/src/kernel/gpu/rc/kernel_rc.c):
    NVRM: Xid (PCI:0000:18:00): 31, pid=1234, name=python3, Ch 00000008, ...
    NVRM: Xid (PCI:0000:18:00 GPU-I:05): 94, pid=..., ...         (a MIG instance)
The PCI address there is domain:bus:device, without the function.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess

KMSG = "/dev/kmsg"
_RECORD_MAX = 8192        # a /dev/kmsg read returns one record; this holds the longest
XID_LINE = re.compile(r"NVRM: Xid \(PCI:(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?"
                      r"(?: GPU-I:(?P<gi>\d+))?(?: GPU-CI:(?P<ci>\d+))?\): (?P<xid>\d+),? ?(?P<text>.*)")


def parse_xid(line: str) -> dict | None:
    """{pci, xid, text} of one log line, or None when it is not an Xid line."""
    m = XID_LINE.search(line)
    if not m:
        return None
    out = {"pci": m.group("pci").lower(), "xid": int(m.group("xid")), "text": m.group("text").strip()}
    if m.group("gi") is not None:
        out["gpu_instance"] = int(m.group("gi"))
    if m.group("ci") is not None:
        out["compute_instance"] = int(m.group("ci"))
    return out


def kmsg_records(data: bytes) -> list[tuple[int | None, str]]:
    """(sequence number, text) of each /dev/kmsg record: each is 'prio,seq,usec,flags;text',
    and the ' KEY=value' lines that may follow it (they start with a space) are left out."""
    out = []
    for line in data.decode(errors="replace").split("\n"):
        if not line or line.startswith(" "):
            continue
        head, sep, text = line.partition(";")
        fields = head.split(",")
        seq = int(fields[1]) if sep and len(fields) > 1 and fields[1].isdigit() else None
        out.append((seq, text if sep else line))
    return out


def kmsg_messages(data: bytes) -> list[str]:
    """The texts of /dev/kmsg records (kmsg_records without the sequence numbers)."""
    return [text for _, text in kmsg_records(data)]


def read_kmsg_all(path: str = KMSG) -> bytes:
    """Every record the kernel's ring buffer still holds, oldest first (a new /dev/kmsg
    reader starts at the oldest); records overwritten while reading are passed over."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    data = bytearray()
    try:
        while True:
            try:
                chunk = os.read(fd, _RECORD_MAX)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    continue
                raise
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return bytes(data)


def _run_dmesg() -> list[str]:
    done = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"dmesg exited {done.returncode}")
    return done.stdout.splitlines()


class XidWatcher:
    """start() marks the end of the kernel log; stop() returns the Xid lines logged since.

    /dev/kmsg first (a non-blocking reader placed at the end), `dmesg` text otherwise;
    when neither can be read the result says so instead of claiming there were none."""

    def __init__(self, kmsg: str = KMSG, dmesg=_run_dmesg):
        self.kmsg_path, self.dmesg = kmsg, dmesg
        self.fd: int | None = None
        self.baseline: list[str] | None = None
        self.source: str | None = None
        self.reasons: list[str] = []

    def start(self) -> "XidWatcher":
        try:
            self.fd = os.open(self.kmsg_path, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
            self.source = "kmsg"
            return self
        except OSError as exc:
            self._close()
            root = " (the kernel log needs root)" if exc.errno in (errno.EACCES, errno.EPERM) else ""
            self.reasons.append(f"{self.kmsg_path}: {exc.strerror or exc}{root}")
        try:
            self.baseline = self.dmesg()
            self.source = "dmesg"
        except (OSError, subprocess.SubprocessError) as exc:
            self.reasons.append(f"dmesg: {exc}")
        return self

    def stop(self) -> dict:
        """{readable, source, reason, xids: [{pci, xid, text}]}; lines: every new Xid line."""
        lines, reason = [], None
        if self.source == "kmsg":
            lines, reason = self._read_kmsg()
        elif self.source == "dmesg":
            try:
                lines = _new_lines(self.baseline or [], self.dmesg())
            except (OSError, subprocess.SubprocessError) as exc:
                reason = f"dmesg: {exc}"
        else:
            reason = "; ".join(self.reasons) or "not started"
        self._close()
        xids = [x for x in (parse_xid(line) for line in lines) if x]
        return {"readable": reason is None, "source": self.source, "reason": reason, "xids": xids}

    def _read_kmsg(self) -> tuple[list[str], str | None]:
        data = bytearray()
        while True:
            try:
                chunk = os.read(self.fd, _RECORD_MAX)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:     # records overwritten before we read them: go on
                    continue
                return kmsg_messages(bytes(data)), f"{self.kmsg_path}: {exc.strerror or exc}"
            if not chunk:
                break
            data += chunk
        return kmsg_messages(bytes(data)), None

    def close(self) -> None:
        """Stop watching without reading (the run ended before anyone asked)."""
        self._close()

    def _close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _new_lines(before: list[str], after: list[str]) -> list[str]:
    """Lines of `after` logged since `before` was taken: after its last line, or, when the
    ring buffer has rotated that line away, every line `before` did not have."""
    if before and before[-1] in after:
        at = len(after) - 1 - after[::-1].index(before[-1])
        return after[at + 1:]
    seen = set(before)
    return [line for line in after if line not in seen]
