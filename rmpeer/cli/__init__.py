"""The `rmpeer` command."""

from __future__ import annotations

import argparse
import sys

from rmpeer import __version__
from rmpeer import errors
from rmpeer.errors import EXIT_CONFIG, EXIT_INCOMPLETE, EXIT_OK


def _exit_codes() -> str:
    """The exit-code table of rmpeer/errors.py's docstring (one source for --help and README)."""
    lines = errors.__doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  0  "))
    return "exit codes:\n" + "\n".join(line for line in lines[start:] if line.strip())


EXIT_CODES = _exit_codes()


class HelpNotWritten(Exception):
    """--help or --version could not reach stdout (argparse itself would swallow the error)."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose help and version text on stdout is the command's answer: a
    write that fails there is raised (HelpNotWritten), said by `entry`, never passed over
    with exit 0. Its subcommands' parsers are of this class too (add_subparsers)."""

    def _print_message(self, message, file=None):
        if not message or file is not sys.stdout:
            return super()._print_message(message, file)
        try:
            file.write(message)
            file.flush()
        except OSError as exc:
            raise HelpNotWritten(exc) from None


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="rmpeer", description="Conformance of NVIDIA RM peer setup "
                                "(NV50_P2P + windows), driven by raw ioctls, on this host.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"rmpeer {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    from rmpeer.cli.certify_options import add_parser as add_certify
    from rmpeer.cli.cards import add_options as add_card_options

    add_card_options(add_certify(sub, EXIT_CODES))
    r = sub.add_parser("report", help="build the HTML report: one self-contained file, no network needed")
    r.add_argument("--results", nargs="+", default=["reports/allure-results"], metavar="DIR",
                   help="one run's Allure results (default: reports/allure-results, where certify writes them), "
                        "or several hosts' (folders, or one folder of per-host folders): one report")
    r.add_argument("--output", default="reports/report.html", help="the HTML file to write (default: reports/report.html)")
    r.add_argument("--title", default="rmpeer conformance report", help="the report's title")
    r.add_argument("--history", metavar="FILE", help="Allure's history of earlier reports of the same host(s), kept in "
                   "FILE and extended: each result shows its trend across runs (the last 10 reports)")
    b = sub.add_parser("bench", help="measure copy-engine GB/s between and within the cards, and setup cost",
                       epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("--sizes", default="64MiB,256MiB,1GiB", help="copy sizes (default: 64MiB,256MiB,1GiB)")
    b.add_argument("--no-boost", action="store_true", help="measure at the clocks the host has")
    b.add_argument("--no-cuda", action="store_true", help="skip CUDA's own peer copy for comparison")
    b.add_argument("--record", help="also make a recording of every RM call in this folder")
    b.add_argument("--output", default="reports", help="where bench.json and bench.svg go (default: reports)")
    from rmpeer.cli import abi, calibrate, diff, fleet, history, host, plan, show

    add_card_options(host.add_parser(sub))
    add_card_options(b)
    plan.add_parser(sub)
    show.add_parser(sub)
    diff.add_parser(sub)
    calibrate.add_parser(sub)
    abi.add_parser(sub)
    fleet.add_parser(sub)
    history.add_parser(sub)
    return p


def main(argv=None) -> int:
    """Run one command and return its exit code. Exit 1 comes from the judge alone: an error
    rmpeer expected is its documented code, a signal 5, anything else one line, a traceback
    file and 5 (rmpeer.machine.crash)."""
    args = build_parser().parse_args(_sets_split(sys.argv[1:] if argv is None else list(argv)))
    from rmpeer.cli.certify_options import guarded

    return guarded(args, _dispatch)


def _sets_split(argv: list) -> list:
    """`rmpeer diff A... -- B...`: the first bare `--` after `diff` splits the two sets of
    hosts (argparse would drop it and run the sets together)."""
    if argv[:1] == ["diff"] and "--" in argv:
        from rmpeer.cli.diff import AGAINST

        at = argv.index("--")
        return argv[:at] + [AGAINST] + argv[at + 1:]
    return argv


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
    except HelpNotWritten as lost:     # a reader gone took what it wanted; a full disk is said
        from rmpeer.machine.lines import output_lost

        code = EXIT_OK if isinstance(lost.args[0], BrokenPipeError) else \
            output_lost("its help or version text", lost.args[0])
    except Exception as exc:  # noqa: BLE001 - before the command's own guard (its parser, its modules' import)
        from rmpeer.machine.crash import internal_error

        code = internal_error("rmpeer", exc)   # never Python's exit 1, which only the judge may say
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
        return main_report(args.results, args.output, title=args.title, history=args.history)
    from rmpeer.cli import abi, calibrate, diff, fleet, history, host, plan, show

    # each of these modules is one command: add_parser(sub) above, run(args) here
    command = {"host": host, "plan": plan, "show": show, "diff": diff, "calibrate": calibrate, "abi": abi,
               "fleet": fleet, "history": history}.get(args.command)
    if command is not None:
        return command.run(args)
    return EXIT_CONFIG


if __name__ == "__main__":
    entry()
