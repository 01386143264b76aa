"""The kinds of a recording's header fields, checked before a replay runs.

shim.replay.validate_recording checks that a header agrees with the calls it heads; this
checks that each field the replay reads is of the kind the recorder writes. A recording is
input: a string where the extent or the pattern seed belongs, or a label holding terminal
escapes or line breaks, is refused in one line (TranscriptError, exit 2), not met later as an
internal error inside a check (exit 5) or a check's failure (exit 1), and never printed into
the run's output as if it were rmpeer's own line."""

from __future__ import annotations

from rmpeer.errors import TranscriptError, ConfigError
from rmpeer.model.result import TIERS
from rmpeer.shim.records import uint64
from rmpeer.shim.replay import recorded_note, transcript_summary

# Header strings printed on one line of certify's output and written into the certificate.
ONE_LINE = ("label", "hostname", "created", "kernel", "machine", "version", "tool")
# The driver's own text spans lines (NVRM's banner, then GCC's): only a terminal's controls
# are refused in it.
MULTI_LINE = ("driver_text",)


def _printable(text: str, *, lines: bool) -> bool:
    return all(c.isprintable() or (lines and c in "\n\t") for c in text)


def _uint(value, *, low: int = 0) -> bool:
    return uint64(value) and value >= low


def check_recording(path: str) -> None:
    """The header and the host note of the recording at `path` (read once: the replay's own
    cached parse), checked before validate_recording and the replay read them."""
    header = transcript_summary(path)["header"]
    try:
        host_note = recorded_note(path, "host")
    except ConfigError:       # no host note: validate_recording names it
        host_note = None
    check_header(path, header, host_note)


def check_header(path: str, header: dict, host_note: dict | None) -> None:
    """TranscriptError naming the field when the header (or the host note) is not of the
    recorder's kinds."""
    name = f"recording {path}"
    for key in ONE_LINE + MULTI_LINE:
        value = header.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not _printable(value, lines=key in MULTI_LINE):
            raise TranscriptError(f"{name}: its header's {key} is {str(value)[:60]!r}, not "
                                  + ("text" if key in MULTI_LINE else "one line of printable text"))
    run = header.get("run", {})
    if not isinstance(run, dict):
        raise TranscriptError(f"{name}: its header's run is {str(run)[:60]!r}, not a mapping")
    if "tier" in run and run["tier"] not in TIERS:     # written by the passive recorder alone
        raise TranscriptError(f"{name}: its header's run tier is {str(run['tier'])[:60]!r}, not one of "
                              f"{', '.join(TIERS)}")
    # a passive run allocates no video memory: its recorder writes extent 0 and no layouts
    if "extent" in run and not _uint(run["extent"], low=0 if run.get("tier") == "passive" else 1):
        raise TranscriptError(f"{name}: its header's run extent is {str(run['extent'])[:60]!r}, not a size in bytes")
    if not isinstance(run.get("layouts", []), list):
        raise TranscriptError(f"{name}: its header's run layouts is {str(run['layouts'])[:60]!r}, not a list of layouts")
    for entry in run.get("layouts") or []:
        if isinstance(entry, list) and entry and not (isinstance(entry[0], str) and _printable(entry[0], lines=False)):
            raise TranscriptError(f"{name}: its header lists a layout named {str(entry[0])[:60]!r}, not one line of "
                                  f"printable text")
        if isinstance(entry, list) and len(entry) > 2 and not _uint(entry[2], low=1):
            raise TranscriptError(f"{name}: its header's layout {str(entry[0])[:40]} has extent "
                                  f"{str(entry[2])[:60]!r}, not a size in bytes")
    for key in ("pattern_seed", "seed"):
        if key in run and not _uint(run[key]):
            raise TranscriptError(f"{name}: its header's run {key} is {str(run[key])[:60]!r}, not a whole number")
    for key in ("boost", "gated"):
        if key in run and not isinstance(run[key], bool):
            raise TranscriptError(f"{name}: its header's run {key} is {str(run[key])[:60]!r}, not true or false")
    if host_note is not None and not isinstance(host_note.get("facts"), dict):
        raise TranscriptError(f"{name}: its host note's facts are {str(host_note.get('facts'))[:60]!r}, not a mapping")
    facts = host_note["facts"] if host_note is not None else {}
    # the P2P matrix always (every card pair); the selection only when the run took some cards
    for key, value in (("p2p", facts.get("p2p", {})), ("selection", facts.get("selection") or {})):
        if not isinstance(value, dict):
            raise TranscriptError(f"{name}: its host note's facts {key} is {str(value)[:60]!r}, not a mapping")
