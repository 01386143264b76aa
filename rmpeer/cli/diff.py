"""`rmpeer diff A B`: what changed in RM's behaviour between two runs; the comparison itself is
rmpeer.diff's (load, compare, render)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from rmpeer.errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError

TOLERANCE_FORM = "give a percentage from 0% to 100%, written with %, such as 5%"


def parse_tolerance(text: str) -> float:
    """'5%' -> 0.05. A bare number is refused: 0.05 could mean 5% or 0.05%."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", str(text))
    if not m or float(m.group(1)) > 100:
        raise ConfigError(f"--tolerance {text}: {TOLERANCE_FORM}")
    return float(m.group(1)) / 100


def add_parser(sub) -> None:
    d = sub.add_parser("diff", help="what changed in RM's behaviour between two runs (transcripts or certificates)",
                       description="Compares two runs (transcripts or certificates): RM statuses per step label, "
                       "calls per step, struct sizes, reply fields of the host facts, clocks, links, test outcomes, "
                       "and bandwidth per pair. Volatile readings (timestamps, durations, free memory, idle clock "
                       "MHz) are left out; an aspect a file does not record is not comparable; runs of different "
                       "layouts compare the layouts both ran.",
                       epilog="exit codes: 0 same behaviour, 1 behaviour differs, 2 usage error "
                       "(unreadable file, bad option)")
    # '--tolerance -1%' must reach parse_tolerance (one line), not argparse's "expected one argument".
    d._negative_number_matcher = re.compile(r"^-\d*\.?\d+%?$")
    d.add_argument("a", metavar="A", help="a transcript (*.jsonl[.gz]) or a certificate (*.json[.gz])")
    d.add_argument("b", metavar="B", help="the run to compare it with")
    d.add_argument("--tolerance", default="5%",
                   help="change allowed in bandwidth per pair and in boosted clock MHz, 0%%..100%% (default 5%%)")
    d.add_argument("--json", metavar="FILE", help="also write every difference as JSON")
    d.add_argument("--alluredir", metavar="DIR", help="also write Allure results: one per aspect")
    d.add_argument("--limit", type=int, default=25, help="rows shown per aspect (default 25; 0: all)")


def run(args) -> int:
    from rmpeer.diff.load import load
    from rmpeer.diff.write import write_allure, write_json

    tolerance = parse_tolerance(args.tolerance)
    for flag, given in (("--json", args.json), ("--alluredir", args.alluredir)):
        if given is not None and not str(given).strip():     # `--json "$UNSET"`: never silently nothing
            raise ConfigError(f"{flag} needs a name (an empty one writes nothing)")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        raise ConfigError(f"--json {args.json}: its folder does not exist")
    if args.json:       # refused now, before anything is compared or printed (rmpeer.safewrite)
        from rmpeer.safewrite import target_problem

        problem = target_problem(Path(args.json))
        if problem:
            raise ConfigError(f"--json {args.json}: refused: {problem}; rmpeer writes only regular files")
    if args.alluredir and Path(args.alluredir).exists() and not Path(args.alluredir).is_dir():
        raise ConfigError(f"--alluredir {args.alluredir}: exists and is not a folder")
    a, b = load(args.a), load(args.b)
    aspects, cover, table, doc = _compared(a, b, tolerance, args.limit)
    code = EXIT_NOT_CERTIFIED if any(x.differs for x in aspects) else EXIT_OK
    try:
        print(table, flush=True)
    except OSError as exc:
        # the exit code is the answer: a reader gone (`| head`) or a full disk never turns
        # "differs" into "same" (the guard's exit 0 for a broken pipe) or an internal error
        from rmpeer.machine.lines import said_on_stderr

        said_on_stderr(f"rmpeer: diff: the table could not be written to stdout ({exc.strerror or exc}); the "
                       f"answer stands: {'behaviour differs' if code else 'same behaviour'} (exit {code})")
    if args.json:
        write_json(args.json, doc)
    if args.alluredir:
        write_allure(args.alluredir, a, b, aspects, tolerance)
    return code


# What a field of the wrong kind raises in the comparison: the loaders check each file's
# shape, the comparison reads its fields; either way a file another user wrote is input.
SHAPE_ERRORS = (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError)


def _compared(a, b, tolerance, limit):
    """(aspects, coverage, the table, the JSON document) of A and B. A field of a kind rmpeer
    never writes is exit 2 naming the file that holds it (each file compared with itself
    shows which), never an internal error."""
    from rmpeer.diff.compare import compare, coverage
    from rmpeer.diff.render import render_table, to_json

    try:
        aspects, cover = compare(a, b, tolerance), coverage(a, b)
        return aspects, cover, render_table(a, b, aspects, cover, tolerance, limit=limit), \
            to_json(a, b, aspects, cover, tolerance)
    except SHAPE_ERRORS as exc:
        from rmpeer.render.text import escaped

        culprit = None
        for side in (a, b):
            try:
                render_table(side, side, compare(side, side, tolerance), coverage(side, side), tolerance)
            except SHAPE_ERRORS:
                culprit = side
                break
        where = culprit.path if culprit is not None else f"{a.path} or {b.path}"
        raise ConfigError(f"{where}: not a readable rmpeer recording or certificate: a field is not of the kind "
                          f"rmpeer writes ({type(exc).__name__}: {escaped(str(exc)[:160])})") from None


