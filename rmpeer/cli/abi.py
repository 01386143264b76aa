"""`rmpeer abi ...`: driver ABIs read from NVIDIA's headers with the C compiler. The readers
are rmpeer.abi.headers' (fromheaders: a release's drivers.yaml entry; fitnessfacts: the
perf/NVLink facts of many tags); this module is their command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rmpeer.errors import EXIT_NOT_CERTIFIED, EXIT_OK, ConfigError, UnknownDriverError
from rmpeer.paths import fitness_facts_file, fitness_names_file   # the fixtures' paths, not their readers

if TYPE_CHECKING:   # annotations only: the readers load when the command runs (tests/cli/test_parser.py)
    from rmpeer.abi.drivers import DriverMatrix


def add_parser(sub) -> None:
    """`rmpeer abi`: its subcommands from-headers and fitness-facts."""
    a = sub.add_parser("abi", help="driver ABIs from NVIDIA's headers (matrices/drivers.yaml)")
    asub = a.add_subparsers(dest="abi_command", required=True)
    f = asub.add_parser("from-headers", help="print a release's drivers.yaml entry, read from its headers "
                        "with the C compiler; with --check, verify drivers.yaml against them")
    f.add_argument("src", help="an open-gpu-kernel-modules source tree at a release tag")
    f.add_argument("--check", action="store_true",
                   help="verify that drivers.yaml's ABI for this release equals the headers' (exit 1 if not)")
    f.add_argument("--release", help="the release the tree is (default: NVIDIA_VERSION in its version.mk)")
    _add_fitness_facts(asub)


def _add_fitness_facts(asub) -> None:
    f = asub.add_parser("fitness-facts", help="write the perf/NVLink facts of many tags, read from their headers "
                        "with the C compiler (fixtures/abi/fitness-facts.json, the fitness tests' oracle)")
    f.add_argument("src", nargs="?", help="a clone of open-gpu-kernel-modules (default: $RMPEER_DRIVER_SRC)")
    f.add_argument("--tags", nargs="+", metavar="TAG",
                   help="the tags to read (default: every drivers.yaml entry plus each branch's first and last tag)")
    f.add_argument("--names", help=f"the names to measure (default: {fitness_names_file().name} beside the fixture)")
    f.add_argument("-o", "--output", default=str(fitness_facts_file()), help="where to write the JSON (default: the fixture)")


def run(args) -> int:
    if args.abi_command == "fitness-facts":
        return fitness_facts(args)
    return from_headers(args)


def from_headers(args, out=print, matrix: DriverMatrix | None = None) -> int:
    """`rmpeer abi from-headers SRC [--check] [--release X]`."""
    from rmpeer.abi.drivers import SECTIONS, DriverMatrix, parse_version
    from rmpeer.abi.headers.fromheaders import check, entry_for, render_entry, tree_abi
    from rmpeer.abi.headers.probe import check_tree, tree_release

    src = Path(args.src)
    check_tree(src)
    release = args.release or tree_release(src)
    if not release:
        raise ConfigError(f"{src}: no version.mk saying which release it is; name it with --release X")
    parse_version(release)
    matrix = matrix or DriverMatrix()
    tree = tree_abi(src, matrix)
    if args.check:
        problems = check(matrix, release, tree)
        chosen = matrix.choose(release)
        for p in problems:
            out(f"  {p}")
        verdict = "differs from" if problems else "equals"
        print(f"{release}: drivers.yaml's ABI ({chosen.release}) {verdict} the headers' "
              f"({sum(len(tree[s]) for s in SECTIONS)} keys compared)", file=sys.stderr)
        return EXIT_NOT_CERTIFIED if problems else EXIT_OK
    entry, gone = entry_for(matrix, release, tree)
    base = matrix.merged(entry["parent"]) if entry.get("parent") else {s: {} for s in SECTIONS}
    changed = [s for s in SECTIONS if entry.get(s)]
    try:
        matrix.choose(release)
        selectable = True
    except UnknownDriverError:   # a new branch (or older than its branch's first entry)
        selectable = False
    if not changed and not gone and selectable:
        out(f"# {release}: nothing differs from {entry.get('parent')}: no entry needed")
        return EXIT_OK
    exists = release in matrix.by_version
    notes = [(f"{release} ({'an existing entry' if exists else 'not in drivers.yaml yet'}), "
              f"against its parent {entry.get('parent')}")]
    if not selectable:
        notes.append(f"drivers.yaml has no entry {release} can select: add this one, in version order, "
                     f"even where it states no change")
    out(render_entry(entry, gone=gone, notes=notes, base=base).rstrip("\n"))
    return EXIT_OK


def fitness_facts(args, out=print) -> int:
    """`rmpeer abi fitness-facts [SRC] [--tags ...] [--names FILE] [-o FILE]`."""
    from rmpeer.abi.drivers import DriverMatrix
    from rmpeer.abi.headers.fitnessfacts import NAMES, collect, default_tags, load_names, render
    from rmpeer.abi.headers.sources import driver_source, tags_of
    from rmpeer.machine.writable import writable
    from rmpeer.safewrite import make_folder, write_file

    output = writable("-o", args.output, folder=False)      # before the work: exit 2 at once
    src = driver_source(args.src)
    names = load_names(Path(args.names) if args.names else NAMES)
    tags = args.tags or default_tags(tags_of(src), DriverMatrix())
    data = render(collect(src, tags, names))
    try:
        make_folder(output.parent, what="-o")
        write_file(output, data)
    except OSError as exc:
        raise ConfigError(f"-o {output}: cannot write it ({exc.strerror or exc})") from None
    out(f"{len(tags)} tags ({tags[0]} .. {tags[-1]}) -> {args.output} ({len(data)} bytes)")
    return EXIT_OK
