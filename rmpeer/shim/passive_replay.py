"""A recording served to a passive run (rmpeer.run.passive): a recording of any tier replays
it, since the passive calls are a subset, in order, of the recording's runtime:open stretch.
The calls the passive run does not make (the boost, the staging buffers, the layouts) are
passed over; every call it makes is checked field by field as in any replay."""

from __future__ import annotations

import copy

from rmpeer.errors import ReplayMismatch
from rmpeer.model.steps import check_label
from rmpeer.shim.replay import ReplayShim

# A recording holds the clocks read at the run's start as "idle"; a passive run calls its
# own reading "passive" (a job may be running), and a replay serves the recorded one.
OBSERVE_ALIASES = {"host:clocks:passive": "host:clocks:idle"}


class PassiveReplay(ReplayShim):
    """A recording served to a passive run: calls the passive run does not make (the boost,
    the staging buffers, the layouts) are passed over; every call it makes must be in the
    recording's current stretch, in order, and is checked field by field as in any replay.
    An observation the stretch lacks is None ("not recorded")."""

    def _next(self, op: str, label: str):
        check_label(label)
        for i in range(self.pos, len(self.lines)):
            line = self.lines[i]
            if isinstance(line, dict):
                if line.get("note") == "segment":
                    break
                continue
            if line.op == op and line.label == label:
                self.pos = i + 1
                return copy.copy(line)

        raise ReplayMismatch(f"replay of {self.path}: in {self.current_segment!r} the passive run made a {op} "
                             f"call ({label}) that the recording does not have there")

    def end_segment(self, *, abandoned: bool = False) -> None:
        self.segment_checked = True      # a subset: the calls passed over are not owed

    def observe(self, label: str, read):
        for name in (label, OBSERVE_ALIASES.get(label)):
            if name is not None:
                try:
                    return super().observe(name, read)
                except ReplayMismatch:
                    pass
        # not in this stretch: a recording of a deeper tier read the kernel log at its end,
        # and those Xids are that run's own (its detection tests provoke some), not the
        # host's since an earlier run: they do not stand in for a passive reading
        return None
