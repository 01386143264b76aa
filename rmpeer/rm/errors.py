"""RmError: an RM call that failed, told so a person can act on it."""

from __future__ import annotations

import errno as errno_names

from rmpeer.errors import EXIT_INCOMPLETE, RmpeerError


class RmError(RmpeerError):
    """A failed RM call: the step, the handles, the NV_ERR_* name and code, the request decoded."""

    # judged where a check meets it (NOT CERTIFIED); one that escapes every verdict is no
    # verdict of the host: exit 5, never 1 (exit 1 is the judge's alone)
    exit_code = EXIT_INCOMPLETE

    def __init__(self, label: str, handles: dict, record, *, struct=None, payload_struct=None):
        self.label, self.handles, self.record = label, handles, record
        self.status = record.status
        self.status_name = record.status_name or (
            f"errno {errno_names.errorcode.get(record.errno, record.errno)}" if record.errno else "?")
        lines = [f"{label}: {self.headline()}", f"  handles: {self.handles_text()}"]
        if struct is not None:
            req = bytes.fromhex(record.request)
            lines.append(f"  request {struct.name} ({struct.size} bytes), ioctl {record.request_code:#x}:")
            lines.append(struct.render(req, indent="    "))
        if payload_struct is not None and record.payload is not None:
            lines.append(f"  params {payload_struct.name} ({payload_struct.size} bytes):")
            lines.append(payload_struct.render(bytes.fromhex(record.payload.request), indent="    "))
        self.detail = "\n".join(lines)
        super().__init__(self.detail)

    def handles_text(self) -> str:
        return " ".join(f"{k}={v:#x}" if isinstance(v, int) else f"{k}={v}" for k, v in self.handles.items())

    def line(self) -> str:
        """The failure in one line, as a verdict's reason says it: the step, the NV_ERR_* name and
        the handles RM was given. Without the handles a refusal of one card's subdevice reads
        the same as another's, and the reason is all a run that stopped on it leaves (the
        request's bytes stay in the detail, and in a recording)."""
        return f"{self.label}: {self.headline()}; handles: {self.handles_text()}"

    def headline(self) -> str:
        if self.record.status:
            return f"{self.record.status_name} ({self.record.status:#x}: {self.record.status_text})"
        if self.record.errno:
            return f"ioctl failed with {self.status_name}"
        return "failed"
