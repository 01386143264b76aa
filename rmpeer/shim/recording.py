"""A recording as a replay's spec is built from it: read once, checked whole (its fields of
the kinds the recorder writes, rmpeer.shim.shape; its header against its content,
rmpeer.shim.replay.validate_recording), and held as one frozen value: its label, cards,
header and the host facts noted when the host opened. Everything the spec takes from a
recording (the target, the recorded layouts, the seed, boost, ABI and extent, the host's
facts) it takes from this value, never from the file again."""

from __future__ import annotations

from dataclasses import dataclass

from rmpeer.shim.replay import recorded_note, transcript_summary, validate_recording
from rmpeer.shim.shape import check_recording


@dataclass(frozen=True)
class Recording:
    path: str
    label: str
    cards: int
    header: dict
    host_facts: dict     # the 'host' note's facts (model.host.HostFacts.as_dict() when recorded)

    @property
    def run(self) -> dict:
        """The header's run: tier, layouts, extent, pattern_seed, forced_abi, boost."""
        return self.header.get("run", {})


def read_recording(path) -> Recording:
    """The recording at `path`, refused in one line (exit 2) before anything runs when a field
    is not of the recorder's kinds or its header does not describe its content."""
    path = str(path)
    check_recording(path)
    validate_recording(path)
    summary = transcript_summary(path)
    return Recording(path, summary["label"], summary["cards"], summary["header"],
                     recorded_note(path, "host").get("facts"))
