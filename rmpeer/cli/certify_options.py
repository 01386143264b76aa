"""`rmpeer certify`'s command line: its options, its --if-stale fast path, and the guard every
command runs under (exit 1 from the judge alone). Below both rmpeer.cli, which adds it to
every other command, and rmpeer.fleet.node, which runs certify in its own process (a prolog's
budget has no room for a second interpreter): neither imports the other."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from rmpeer import errors
from rmpeer.cli.cards import request_of_args, add_options as add_card_options
from rmpeer.errors import EXIT_INCOMPLETE, EXIT_OK, RmpeerError
from rmpeer.model.result import node_name, NODE_ENV
from rmpeer.model.spec import CertifyRequest


def add_parser(sub, epilog: str):
    """The certify subcommand and its options; returns it (rmpeer.machine.selection adds --cards)."""
    c = sub.add_parser("certify", help="run the suites on this host and write a certificate",
                       epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    c.add_argument("--drift-fails", action="store_true",
                   help="a figure that fell from this host's own history (--drift-margin) makes it DEGRADED "
                        "(default: a warning that never drains)")
    c.add_argument("--drift-margin", default="5%", metavar="PCT",
                   help="how far below this host's median of its last runs a figure may fall (default 5%%)")
    c.add_argument("--drift-runs", type=int, default=10, metavar="N",
                   help="how many of this host's last runs the median is of, 3 to 50 (default 10)")
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
    return c


def cards_of(args):
    """The selection.Request of the command's --cards, --all-cards and --cards-env."""
    return request_of_args(args)


def certify_request(args):
    """certify's arguments as plain values (rmpeer.model.spec.CertifyRequest): nothing below
    the command line sees the argparse Namespace."""
    return CertifyRequest(
        output=args.output, layouts=tuple(args.layout or ()), expect_topology=args.expect_topology,
        rm_abi=args.rm_abi, extent=args.extent, record=args.record, replay=args.replay,
        tier=getattr(args, "tier", None), quick=bool(getattr(args, "quick", False)),
        require_idle=bool(getattr(args, "require_idle", False)), no_floors=bool(getattr(args, "no_floors", False)),
        wait=getattr(args, "wait", 0), no_boost=bool(args.no_boost),
        drift_fails=bool(getattr(args, "drift_fails", False)), drift_margin=getattr(args, "drift_margin", "5%"),
        drift_runs=getattr(args, "drift_runs", 10), valid_for=getattr(args, "valid_for", None),
        deadline=getattr(args, "deadline", None), require_complete=bool(getattr(args, "require_complete", False)),
        json=bool(args.json), junit=getattr(args, "junit", None), prometheus=getattr(args, "prometheus", None),
        cards_given=getattr(args, "cards", None) is not None, cards=None if args.replay else cards_of(args),
        if_stale=getattr(args, "if_stale", None))


def still_holds(request) -> tuple[bool, list]:
    """certify --if-stale CERT: (whether it still holds, why not). The fast path reads /proc
    and /sys only (no RM, no pytest), so a prolog pays for a run only when the platform, the
    tier or the clock says so."""
    from rmpeer.run.freshness import check_fresh
    from rmpeer.run.spec import tier_of

    tier = tier_of(request.tier, request.quick)
    holds, why = check_fresh(request.if_stale, tier, node=node_name(), cards=request.cards)
    from rmpeer.render.text import escaped      # the path and the reasons (the certificate's fields) are input

    said = sys.stderr if request.json else sys.stdout
    if holds:
        print(f"rmpeer: {escaped(request.if_stale)} still holds for this platform (tier {tier}): nothing to run",
              file=said)
        return True, []
    shown = "; ".join(why[:3]) + (f"; and {len(why) - 3} more" if len(why) > 3 else "")

    print(f"rmpeer: running the {tier} tier: {escaped(shown)}", file=said)
    return False, list(why)


def folders(args) -> list:
    """Where an internal error's traceback goes: the command's output folder, else the state folder."""
    import os

    return [getattr(args, "output", None), getattr(args, "shared", None), os.environ.get("RMPEER_STATE_DIR")]


def check_environment() -> None:
    """What rmpeer reads from the environment and writes into every output must be text: a
    node name of bytes that are not UTF-8 is refused (exit 2), never written half."""
    import os

    for name in (NODE_ENV, "SLURMD_NODENAME", "NODE_NAME"):
        value = os.environ.get(name, "").strip()
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            shown = value.encode("utf-8", "surrogateescape")[:60]
            raise errors.ConfigError(f"{name} is not UTF-8 text ({shown!r}): set it to the node's name") from None
        # C0, DEL, C1 (U+009B is an 8-bit CSI) and the format characters (a right-to-left
        # override would show another name): a node's name is plain text
        if any(not c.isprintable() for c in value):
            raise errors.ConfigError(f"{name} holds control characters ({ascii(value[:60])}): set it to the node's name")


def run(args) -> int:
    """certify, after its fast path: exit 0 at once while --if-stale's certificate holds."""
    return outcome(args).code


def outcome(args):
    """certify's RunOutcome (rmpeer.model.result), after its fast path: exit 0 and no run
    while --if-stale's certificate holds."""
    from rmpeer.cli.certify import certified
    from rmpeer.model.result import RunOutcome

    if args.if_stale and args.replay:    # this host's certificate would skip the recording's replay
        raise errors.ConfigError("--if-stale: a replay repeats the recorded run exactly (its ABI, extent, boost, "
                                 "cards and calls); these options cannot apply to it")
    request = certify_request(args)
    if request.if_stale:
        holds, why = still_holds(request)
        if holds:
            return RunOutcome(EXIT_OK)
        request = dataclasses.replace(request, ran_because=tuple(why))
    return certified(request)


def run_argv(argv: list):
    """`rmpeer certify ARGV...` in this process, guarded as the command line runs it, for
    rmpeer.fleet.node (certify's options alone, no other command's): its RunOutcome, the
    judged RunResult in it, and the one-line error it ended on, never its printed lines."""
    from rmpeer.model.result import RunOutcome

    parser = argparse.ArgumentParser(prog="rmpeer")
    add_card_options(add_parser(parser.add_subparsers(dest="command", required=True), ""))
    ran, said = [], []

    def dispatch(args) -> int:
        ran.append(outcome(args))
        return ran[-1].code
    code = guarded(parser.parse_args(argv), dispatch, said=said)
    kept = ran[-1] if ran and ran[-1].code == code else RunOutcome(code)   # an error after the run: no verdict
    return dataclasses.replace(kept, error=said[-1] if said else "")


def guarded(args, dispatch, said: list | None = None) -> int:
    """dispatch(args), its errors turned into their documented exit codes: an error rmpeer
    expected is its own code, a signal 5, anything else one line, a traceback file and 5
    (rmpeer.machine.crash). Exit 1 comes from the judge alone. The one line an error gave
    is appended to `said`, for a caller in this process (fleet node)."""
    from rmpeer.machine.crash import internal_error
    from rmpeer.machine.lines import Stdout, output_lost

    said = [] if said is None else said
    out = sys.stdout = Stdout(sys.stdout)
    try:
        check_environment()
        return dispatch(args)
    except RmpeerError as exc:     # its text may quote a file another user wrote: never sent raw
        from rmpeer.render.text import escaped

        said.append(f"rmpeer: {escaped((str(exc).splitlines() or [''])[0])}")
        print(f"rmpeer: {escaped(exc, lines=True)}", file=sys.stderr)   # an RmError spans lines
        return exc.exit_code
    except KeyboardInterrupt as exc:
        from rmpeer.machine import interrupts

        why = interrupts.seen() or str(exc) or "SIGINT"
        said.append(f"rmpeer: {args.command}: stopped by {why}")
        print(f"rmpeer: {args.command}: stopped by {why}: INCOMPLETE (exit {EXIT_INCOMPLETE})", file=sys.stderr)
        return EXIT_INCOMPLETE
    except BrokenPipeError as exc:   # the reader went away (rmpeer show ... | head)
        # it took what it wanted; only a verdict's run (certify, fleet node) keeps its code
        if args.command != "certify" and getattr(args, "fleet_command", None) != "node":
            sys.stderr.close()
            return EXIT_OK
        return output_lost(f"{_step(args)}: its output", exc) if exc is out.lost else \
            internal_error(args.command, exc, folders(args))
    except Exception as exc:  # noqa: BLE001 - unexpected: never a verdict, never exit 1
        said.append(f"rmpeer: {_step(args)}: " + ("its output was lost" if exc is out.lost else
                                                  f"internal error ({type(exc).__name__})"))
        if exc is out.lost:
            return output_lost(f"{_step(args)}: its output", exc)
        return internal_error(_step(args), exc, folders(args))
    finally:
        if sys.stdout is out:
            sys.stdout = out.stream


def _step(args) -> str:
    return args.command + (f" {args.fleet_command}" if args.command == "fleet" else "")


