"""The `rmpeer` command."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from . import errors
from .errors import EXIT_CONFIG, EXIT_INCOMPLETE, EXIT_OK, RmpeerError


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
    c = sub.add_parser("certify", help="run the suites on this host and write a certificate",
                       epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--layout", action="append", help="only this layout (a name or a card list such as 0,1,1,0)")
    c.add_argument("--expect-topology", help="fail unless the host is this entry of matrices/topologies.yaml")
    c.add_argument("--rm-abi", help="force this release's ABI (the certificate says it was forced)")
    c.add_argument("--extent", help="buffer size per session, e.g. 64MiB")
    c.add_argument("--record", help="also record a transcript of every RM call into this folder")
    c.add_argument("--replay", help="certify a recording (a transcript) instead of this host")
    c.add_argument("--output", default="reports", help="where the certificate and results go (default: reports)")
    c.add_argument("--quick", action="store_true",
                   help="only the one-per-card and interleaved layouts (with the detection and fitness checks); "
                        "the same as --tier quick")
    c.add_argument("--tier", metavar="TIER",
                   help="how deep: passive (RM facts only: no video memory, no copy, no boost; under 1 s), "
                        "quick (the one-per-card and interleaved layouts with every check and the fitness "
                        "checks; under 4 s) or full (default: every layout that fits; under 15 s). Budgets on "
                        "2 x H200; a deeper tier's certificate satisfies a shallower one (docs/tiers.md)")
    c.add_argument("--require-idle", action="store_true",
                   help="refuse (exit 7) when other processes hold the GPUs")
    c.add_argument("--no-floors", action="store_true",
                   help="a host without bandwidth floors is judged without them, not DEGRADED")
    c.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="wait up to this long for another rmpeer run on this host to finish (default 0)")
    c.add_argument("--no-boost", action="store_true",
                   help="measure the host at the clocks it has (default: RM's boost to maximum clocks)")
    c.add_argument("--if-stale", metavar="CERT",
                   help="exit 0 at once when CERT still holds for this platform and tier (or a deeper one); "
                        "else run the tier and say why")
    c.add_argument("--valid-for", metavar="TIME",
                   help="how long the certificate holds, e.g. 24h (default), 90m, 2d")
    c.add_argument("--deadline", metavar="SECONDS",
                   help="end the run INCOMPLETE (exit 5) if it has not ended by then, a hung call included "
                        "(default: passive 5, quick 60, full 600; a replay ten times as long)")
    c.add_argument("--require-complete", action="store_true",
                   help="refuse (exit 8) a run that would be CERTIFIED while a check could not run (the verdict "
                        "line names each: e.g. xid, when the kernel log needs root)")
    c.add_argument("--json", action="store_true",
                   help="one JSON line on stdout (node, tier, verdict, reasons, duration, certificate, exit code)")
    c.add_argument("--junit", metavar="FILE", help="also write JUnit XML: one testsuite per host")
    c.add_argument("--prometheus", metavar="DIR",
                   help="also write DIR/rmpeer.prom for node_exporter's textfile collector")
    from .selection import add_options as add_card_options
    add_card_options(c)
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
    b.add_argument("--record", help="also record a transcript of every RM call into this folder")
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
    s = sub.add_parser("show", help="print a transcript readably, field by field")
    s.add_argument("transcript")
    s.add_argument("--calls", action="store_true", help="every call, not only the summary")
    from .abi.fromheaders import add_parser as add_abi
    from .diff import add_parser as add_diff
    add_diff(sub)
    from .calibrate import add_parser as add_calibrate
    add_calibrate(sub)
    from .abi.fitnessfacts import add_parser as add_fitness_facts
    add_fitness_facts(add_abi(sub))
    from .fleet.cli import add_parser as add_fleet
    add_fleet(sub)
    return p


def _still_holds(args) -> bool:
    """certify --if-stale CERT: the fast path reads /proc and /sys only (no RM, no pytest), so a
    prolog pays for a run only when the platform, the tier or the clock says so."""
    from .result import node_name
    from .spec import tier_of
    from .staleness import check_fresh

    from .selection import request_of_args

    tier = tier_of(args)
    holds, why = check_fresh(args.if_stale, tier, node=node_name(), cards=request_of_args(args))
    if holds:
        print(f"rmpeer: {args.if_stale} still holds for this platform (tier {tier}): nothing to run",
              file=sys.stderr if args.json else sys.stdout)
        return True
    args.ran_because = why
    shown = "; ".join(why[:3]) + (f"; and {len(why) - 3} more" if len(why) > 3 else "")
    print(f"rmpeer: running the {tier} tier: {shown}", file=sys.stderr if args.json else sys.stdout)
    return False


def _folders(args) -> list:
    """Where an internal error's traceback goes: the command's output folder, else the state folder."""
    import os

    return [getattr(args, "output", None), getattr(args, "shared", None), os.environ.get("RMPEER_STATE_DIR")]


def _check_environment() -> None:
    """What rmpeer reads from the environment and writes into every output must be text: a
    node name of bytes that are not UTF-8 is refused (exit 2), never written half."""
    import os

    from .result import NODE_ENV

    for name in (NODE_ENV, "SLURMD_NODENAME", "NODE_NAME"):
        value = os.environ.get(name, "").strip()
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            shown = value.encode("utf-8", "surrogateescape")[:60]
            raise errors.ConfigError(f"{name} is not UTF-8 text ({shown!r}): set it to the node's name") from None
        if any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise errors.ConfigError(f"{name} holds control characters ({value[:60]!r}): set it to the node's name")


def main(argv=None) -> int:
    """Run one command and return its exit code. Exit 1 comes from the judge alone: an error
    rmpeer expected is its documented code, a signal 5, anything else one line, a traceback
    file and 5 (rmpeer.crash)."""
    args = build_parser().parse_args(argv)
    try:
        _check_environment()
        return _dispatch(args)
    except RmpeerError as exc:
        print(f"rmpeer: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        from . import interrupts

        why = interrupts.seen() or str(exc) or "SIGINT"
        print(f"rmpeer: {args.command}: stopped by {why}: INCOMPLETE (exit {EXIT_INCOMPLETE})", file=sys.stderr)
        return EXIT_INCOMPLETE
    except BrokenPipeError:   # the reader went away (rmpeer show ... | head)
        if args.command in ("certify", "fleet"):
            from .crash import internal_error

            return internal_error(args.command, sys.exc_info()[1], _folders(args))
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - unexpected: never a verdict, never exit 1
        from .crash import internal_error

        step = args.command + (f" {args.fleet_command}" if args.command == "fleet" else "")
        return internal_error(step, exc, _folders(args))


def entry() -> None:
    """The `rmpeer` command (console script and python -m rmpeer): every stop signal is
    rmpeer's from the first moment, and the process ends through interrupts.finish, which
    leaves no window for a signal after the verdict (rmpeer.interrupts)."""
    from . import interrupts

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
        if args.if_stale and _still_holds(args):
            return EXIT_OK
        from .certify import certify
        return certify(args)
    if args.command == "bench":
        from .bench import bench
        return bench(args)
    if args.command == "report":
        from .report.allure_html import main_report
        return main_report(args)
    if args.command == "host":
        from .commands import host
        return host(args)
    if args.command == "plan":
        from .commands import plan
        return plan(args)
    if args.command == "show":
        from .commands import show
        return show(args)
    if args.command == "calibrate":
        from .calibrate import run as run_calibrate
        return run_calibrate(args)
    if args.command == "diff":
        from .diff import run
        return run(args)
    if args.command == "fleet":
        from .fleet.cli import run as run_fleet
        return run_fleet(args)
    if args.command == "abi" and args.abi_command == "fitness-facts":
        from .abi.fitnessfacts import run
        return run(args)
    if args.command == "abi":
        from .abi.fromheaders import run
        return run(args)
    return EXIT_CONFIG


if __name__ == "__main__":
    entry()
