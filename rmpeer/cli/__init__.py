"""The `rmpeer` command."""

from __future__ import annotations

import argparse
import sys

from rmpeer import __version__
from rmpeer import errors
from rmpeer.errors import EXIT_CONFIG, EXIT_INCOMPLETE


def _exit_codes() -> str:
    """The exit-code table of rmpeer/errors.py's docstring (one source for --help and README)."""
    lines = errors.__doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  0  "))
    return "exit codes:\n" + "\n".join(line for line in lines[start:] if line.strip())


EXIT_CODES = _exit_codes()


def _card_count(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of cards (1 or more)")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rmpeer", description="Conformance of NVIDIA RM peer setup "
                                "(NV50_P2P + windows), driven by raw ioctls, on this host.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"rmpeer {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    from rmpeer.cli.certify_options import add_parser as add_certify
    from rmpeer.machine.selection import add_options as add_card_options

    add_card_options(add_certify(sub, EXIT_CODES))
    r = sub.add_parser("report", help="build the HTML report: one self-contained file, no network needed")
    r.add_argument("--results", nargs="+", default=["reports/allure-results"], metavar="DIR",
                   help="one run's Allure results (default: reports/allure-results, where certify writes them), "
                        "or several hosts' (folders, or one folder of per-host folders): one report")
    r.add_argument("--output", default="reports/report.html", help="the HTML file to write (default: reports/report.html)")
    r.add_argument("--title", default="rmpeer conformance report", help="the report's title")
    b = sub.add_parser("bench", help="measure copy-engine GB/s between and within the cards, and setup cost",
                       epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("--sizes", default="64MiB,256MiB,1GiB", help="copy sizes (default: 64MiB,256MiB,1GiB)")
    b.add_argument("--no-boost", action="store_true", help="measure at the clocks the host has")
    b.add_argument("--no-cuda", action="store_true", help="skip CUDA's own peer copy for comparison")
    b.add_argument("--record", help="also make a recording of every RM call in this folder")
    b.add_argument("--output", default="reports", help="where bench.json and bench.svg go (default: reports)")
    h = sub.add_parser("host", help="print what RM says about this host's driver, cards and P2P links")
    h.add_argument("--rm-abi")
    add_card_options(h)
    add_card_options(b)
    pl = sub.add_parser("plan", help="print the peer plan of a layout (no GPU needed)")
    pl.add_argument("cards", help="the card of each session, e.g. 0,1,1,0")
    pl.add_argument("--extent", default="64MiB", help="buffer size per session (default: 64MiB)")
    pl.add_argument("--host-cards", type=_card_count, metavar="N",
                    help="refuse the layout unless it fits a host of N cards")
    s = sub.add_parser("show", help="print a recording readably, field by field")
    s.add_argument("transcript", metavar="RECORDING")
    s.add_argument("--calls", action="store_true", help="every call, not only the summary")
    from rmpeer.abi.headers.fromheaders import add_parser as add_abi
    from rmpeer.diff.compare import add_parser as add_diff
    add_diff(sub)
    from rmpeer.cli.calibrate import add_parser as add_calibrate
    add_calibrate(sub)
    from rmpeer.abi.headers.fitnessfacts import add_parser as add_fitness_facts
    add_fitness_facts(add_abi(sub))
    from rmpeer.cli.fleet import add_parser as add_fleet
    add_fleet(sub)
    return p


def main(argv=None) -> int:
    """Run one command and return its exit code. Exit 1 comes from the judge alone: an error
    rmpeer expected is its documented code, a signal 5, anything else one line, a traceback
    file and 5 (rmpeer.machine.crash)."""
    args = build_parser().parse_args(argv)
    from rmpeer.cli.certify_options import guarded

    return guarded(args, _dispatch)


def entry() -> None:
    """The `rmpeer` command (console script and python -m rmpeer): every stop signal is
    rmpeer's from the first moment, and the process ends through interrupts.finish, which
    leaves no window for a signal after the verdict (rmpeer.machine.interrupts)."""
    from rmpeer.machine import interrupts

    interrupts.install()
    _standard_streams()
    try:
        code = main()
    except SystemExit as exc:          # argparse: --help, --version, a usage error
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_CONFIG)
    except KeyboardInterrupt:          # a signal while the options were read
        code = EXIT_INCOMPLETE
    interrupts.finish(code)


def _standard_streams() -> None:
    """A standard descriptor the caller closed (`rmpeer ... 2>&-`) is /dev/null from here on:
    Python left its stream None (pytest writes there), and a file rmpeer opens must never land
    on descriptor 1 or 2, where a print would write into it."""
    import os

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDWR)      # the lowest free descriptor: this one
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, open(fd, mode, closefd=False))


def _dispatch(args) -> int:
    if args.command == "certify":
        from rmpeer.cli.certify_options import run as run_certify
        return run_certify(args)
    if args.command == "bench":
        from rmpeer.cli.bench import bench
        return bench(args)
    if args.command == "report":
        from rmpeer.report.allure_html import main_report
        return main_report(args)
    if args.command == "host":
        from rmpeer.cli.commands import host
        return host(args)
    if args.command == "plan":
        from rmpeer.cli.commands import plan
        return plan(args)
    if args.command == "show":
        from rmpeer.cli.commands import show
        return show(args)
    if args.command == "calibrate":
        from rmpeer.cli.calibrate import run as run_calibrate
        return run_calibrate(args)
    if args.command == "diff":
        from rmpeer.diff.compare import run
        return run(args)
    if args.command == "fleet":
        from rmpeer.cli.fleet import run as run_fleet
        return run_fleet(args)
    if args.command == "abi" and args.abi_command == "fitness-facts":
        from rmpeer.abi.headers.fitnessfacts import run
        return run(args)
    if args.command == "abi":
        from rmpeer.abi.headers.fromheaders import run
        return run(args)
    return EXIT_CONFIG


if __name__ == "__main__":
    entry()
