"""`rmpeer diff A B`: what changed in RM's behaviour between two runs; the comparison itself is
rmpeer.diff's (load, compare, render)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rmpeer.errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError

AGAINST = "--against"     # what `A... -- B...` becomes before the options are parsed (rmpeer.cli.main)
TOLERANCE_FORM = "give a percentage from 0% to 100%, written with %, such as 5%"


def parse_tolerance(text: str) -> float:
    """'5%' -> 0.05. A bare number is refused: 0.05 could mean 5% or 0.05%."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", str(text))
    if not m or float(m.group(1)) > 100:
        raise ConfigError(f"--tolerance {text}: {TOLERANCE_FORM}")
    return float(m.group(1)) / 100


def add_parser(sub) -> None:
    d = sub.add_parser("diff", help="what changed in RM's behaviour between two runs, or two sets of hosts",
                       usage="rmpeer diff [options] A B\n       rmpeer diff [options] --baseline DIR PATH...\n"
                             "       rmpeer diff [options] A... -- B...",
                       description="Compares two runs (transcripts or certificates): RM statuses per step label, "
                       "calls per step, struct sizes, reply fields of the host facts, clocks, links, test outcomes, "
                       "and bandwidth per pair. Volatile readings (timestamps, durations, free memory, idle clock "
                       "MHz) are left out; an aspect a file does not record is not comparable; runs of different "
                       "layouts compare the layouts both ran. Two sets of hosts (folders of certificates or "
                       "recordings, such as a fleet's <dir>/<node>/ folders, with --baseline DIR or A... -- B...) "
                       "are matched host by host (by node, else by host kind) and each change is counted over "
                       "the hosts it is on, with the bandwidth per kind of pair before and after.",
                       epilog="exit codes: 0 same behaviour, 1 behaviour differs (on any matched host), 2 usage "
                       "error (unreadable file, bad option)")
    # '--tolerance -1%' must reach parse_tolerance (one line), not argparse's "expected one argument".
    d._negative_number_matcher = re.compile(r"^-\d*\.?\d+%?$")
    d.add_argument("paths", metavar="PATH", nargs="+",
                   help="A and B: a transcript (*.jsonl[.gz]) or a certificate (*.json[.gz]) each, or two folders "
                        "of them (two sets of hosts)")
    d.add_argument("--baseline", metavar="DIR", help="set A: a folder (or file) of the runs before; the PATHs are B")
    d.add_argument(AGAINST, nargs="+", metavar="B", help=argparse.SUPPRESS)   # `A... -- B...` (rmpeer.cli.main)
    d.add_argument("--tolerance", default="5%",
                   help="change allowed in bandwidth per pair and in boosted clock MHz, 0%%..100%% (default 5%%)")
    d.add_argument("--json", metavar="FILE", help="also write every difference as JSON")
    d.add_argument("--alluredir", metavar="DIR", help="also write Allure results: one per aspect")
    d.add_argument("--limit", type=int, default=25, help="rows shown per aspect (default 25; 0: all)")


def run(args) -> int:
    from rmpeer.diff.load import load
    from rmpeer.diff.write import write_allure

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
    sets = _sets(args.paths, args.baseline, args.against)
    if sets is not None:
        return _set_diff(*sets, tolerance, args)
    a, b = load(args.paths[0]), load(args.paths[1])
    aspects, cover, table, doc = _compared(a, b, tolerance, args.limit)
    return _answer(any(x.differs for x in aspects), table, doc, args,
                   lambda folder: write_allure(folder, a, b, aspects, tolerance))


def _answer(differs: bool, table: str, doc: dict, args, allure) -> int:
    """The table on stdout, --json and --alluredir (allure(folder) writes its results), and
    the exit code: 1 when a behaviour differs."""
    from rmpeer.diff.write import write_json

    code = EXIT_NOT_CERTIFIED if differs else EXIT_OK
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
        allure(args.alluredir)
    return code


def _sets(paths: list, baseline: str | None, against: list | None):
    """(A's paths, B's paths) of a set diff, or None for `rmpeer diff A B` of two files."""
    if baseline is not None and against is not None:
        raise ConfigError("give set A once: --baseline DIR, or A... -- B..., not both")
    if baseline is not None:
        if not str(baseline).strip():
            raise ConfigError("--baseline needs a folder (an empty name would compare the current directory)")
        return [baseline], list(paths)
    if against is not None:
        return list(paths), list(against)
    if len(paths) != 2:
        raise ConfigError(f"diff takes two runs (A B), or two sets: --baseline DIR PATH..., or A... -- B... "
                          f"({len(paths)} path{'s' if len(paths) != 1 else ''} given)")
    if any(Path(p).is_dir() and not Path(p).is_symlink() for p in paths):
        return [paths[0]], [paths[1]]
    return None


def _set_diff(given_a: list, given_b: list, tolerance: float, args) -> int:
    """Two sets of hosts (rmpeer.diff.sets): the table, --json and --alluredir."""
    from rmpeer.diff.load import load_set
    from rmpeer.diff.render import render_set_table, set_to_json
    from rmpeer.diff.sets import compare_sets, hosts_of
    from rmpeer.diff.write import write_set_allure

    (found_a, bad_a), (found_b, bad_b) = load_set(given_a), load_set(given_b)
    a, b = hosts_of(found_a), hosts_of(found_b)
    try:
        found = compare_sets(a, b, tolerance)
        table = render_set_table(" ".join(given_a), " ".join(given_b), a, b, found, bad_a + bad_b, tolerance,
                                 limit=args.limit)
        doc = set_to_json(given_a, given_b, a, b, found, bad_a + bad_b, tolerance)
    except SHAPE_ERRORS as exc:
        from rmpeer.render.text import escaped

        raise ConfigError(f"a run of the sets holds a field that is not of the kind rmpeer writes "
                          f"({type(exc).__name__}: {escaped(str(exc)[:160])}): diff its files two by two to "
                          f"find it") from None
    return _answer(found.differs, table, doc, args, lambda folder: write_set_allure(folder, found, tolerance))


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


