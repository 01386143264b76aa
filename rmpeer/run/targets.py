"""What a run checks: this host's GPUs, or recordings of real hosts, and which layouts of
matrices/layouts.yaml each one gets (a Case: target x layout x extent).

Everything here is known before any test runs, so that layouts can be filtered, refused
and named at collection time, before any ioctl."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.model.target import Case, Target
from rmpeer.paths import transcripts_dir
from rmpeer.rm.client import CTL_PATH
from rmpeer.shim.recording import Recording, read_recording
from rmpeer.tables.layouts import Layout, LayoutMatrix, parse_layout_option


NO_GPU_REASON = ("no /dev/nvidiactl: this machine has no NVIDIA GPU or driver, so the hardware suites "
                 "cannot run live (pass --rm-replay TRANSCRIPT to replay a recording of a real host)")


def short_model(name: str) -> str:
    """'NVIDIA H200' -> 'h200'; 'NVIDIA H100 80GB HBM3' -> 'h100'."""
    m = re.search(r"\b([A-Z]+\d+[A-Z]*)\b", name.replace("NVIDIA", ""))
    return (m.group(1) if m else "gpu").lower()


def live_target() -> Target | None:
    if not os.path.exists(CTL_PATH):
        return None
    infos = sorted(glob.glob("/proc/driver/nvidia/gpus/*/information"))
    model = "gpu"
    for path in infos[:1]:
        m = re.search(r"^Model:\s*(.+)$", Path(path).read_text(), re.M)
        model = short_model(m.group(1)) if m else model
    cards = len(infos) or len(glob.glob("/dev/nvidia[0-9]*"))
    return Target("live", f"{model}x{cards}", cards)


def replay_target(path: str) -> Target:
    """The target of the recording at `path` (checked whole first: exit 2)."""
    return recorded_target(read_recording(path))


def recorded_target(recording: Recording) -> Target:
    return Target("replay", f"replay:{recording.label}", recording.cards, recording.path)


def committed_transcripts() -> list[str]:
    return sorted(str(p) for p in transcripts_dir().glob("*.jsonl*"))


# what each folder of the bundled recordings shows (fixtures/transcripts/README.md says more)
BUNDLED_KINDS = {"": "a healthy host: CERTIFIED", "degraded": "recorded with --no-boost (idle clocks): DEGRADED",
                 "passive": "a passive run", "derived": "derived from a real recording, one thing changed "
                 "(its header's `derived` says what)"}


def bundled_recordings() -> list[Path]:
    """Every recording shipped with rmpeer (fixtures/transcripts/ and its folders)."""
    return sorted(transcripts_dir().rglob("*.jsonl.gz"))


def bundled(name: str) -> str | None:
    """A bundled recording named by its file name or its path under fixtures/transcripts/
    ('h200x2-20261130T151653Z.jsonl.gz', 'degraded/h200x2-20261130T003733Z-noboost'), for a
    --replay that names no file here; None when no one recording is meant."""
    wanted = name.removesuffix(".gz").removesuffix(".jsonl")
    root = transcripts_dir()
    found = [p for p in bundled_recordings()
             if wanted in (p.relative_to(root).as_posix().removesuffix(".jsonl.gz"), p.name.removesuffix(".jsonl.gz"))]
    return str(found[0]) if len(found) == 1 else None


def cases_for(target: Target, layout_options: list, extent: int | None,
              matrix: LayoutMatrix, tier: str = "full") -> tuple[list[Case], list[str]]:
    """The cases this host runs, and what was left out and why: the layouts asked for (names
    or card lists), else every layout that fits, each planned once here so that a layout RM
    could not be given is refused before any call. Each at --extent, else at its extent for
    the tier (LayoutMatrix.tier_extent)."""
    if layout_options:
        layouts, left_out = [parse_layout_option(text, matrix, target.cards) for text in layout_options], []
    else:
        layouts, reasons = matrix.fitting_with_reasons(target.cards)
        left_out = [f"{name}: {why}" for name, why in reasons]
    cases = [Case(target, layout, extent or matrix.tier_extent(layout, tier, target.cards)) for layout in layouts]
    for case in cases:
        matrix.plan(case.layout.cards, case.extent, host_cards=target.cards)   # refuses what RM cannot be given
    return cases, left_out


def recorded_cases(target: Target, run: dict, layout_options: list) -> list[Case]:
    """A recording's cases: the layouts its header's run lists, picked by name or by card list."""
    recorded = [Layout(entry[0], tuple(entry[1]), extent=(entry[2] if len(entry) > 2 else run["extent"]))
                for entry in run.get("layouts", [])]
    return [Case(target, layout, layout.extent) for layout in _pick_recorded(target, recorded, layout_options)]


def _pick_recorded(target, recorded, wanted) -> list[Layout]:
    if not wanted:
        return recorded
    chosen = []
    for text in wanted:
        found = [l for l in recorded if l.name == text or ",".join(map(str, l.cards)) == text.replace(" ", "")]
        if not found:
            have = ", ".join(f"{l.name} ({','.join(map(str, l.cards))})" for l in recorded) or "none"
            raise ConfigError(f"--layout {text!r}: the recording {target.path} holds no such layout "
                              f"(it has: {have})")
        chosen += [l for l in found if l not in chosen]
    return chosen
