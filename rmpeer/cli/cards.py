"""The card options of certify, bench, host and fleet node (--cards, --all-cards,
--cards-env), and what a parsed command's options mean: a selection.Request, or certify's
arguments again (fleet node runs certify). rmpeer.machine.selection takes plain values."""

from __future__ import annotations

from rmpeer.machine.selection import CUDA, NVIDIA, SLURM, Request, request_of


def add_options(parser, *, env_help: bool = True) -> None:
    """--cards and --all-cards (certify, bench, host, fleet node)."""
    parser.add_argument("--cards", metavar="LIST",
                        help="only these cards: rmpeer's card numbers (as `rmpeer host` lists them), GPU UUIDs "
                             "(GPU-..., or an unambiguous prefix) or PCI bus ids, comma-separated; nothing is "
                             "done on the others (docs/cards.md)"
                             + (". Without it: CUDA_VISIBLE_DEVICES when set" if env_help else ""))
    parser.add_argument("--all-cards", action="store_true", help="every card of the host, whatever the environment says")
    parser.add_argument("--cards-env", metavar="VARS",
                        help="without --cards, the first of these variables that is set names the cards "
                             f"(default {CUDA}; the Slurm prolog: {SLURM},{CUDA}; Kubernetes: {NVIDIA})")


def request_of_args(args, environ=None) -> Request:
    """The Request of a command's --cards, --all-cards and --cards-env (selection.request_of)."""
    return request_of(getattr(args, "cards", None), all_cards=bool(getattr(args, "all_cards", False)),
                      cards_env=getattr(args, "cards_env", None), environ=environ)


def passed_on(args) -> tuple:
    """A command's card options as certify's arguments (fleet node runs certify)."""
    out = []
    if getattr(args, "cards", None) is not None:
        out += ["--cards", args.cards]
    if getattr(args, "all_cards", False):
        out.append("--all-cards")
    if getattr(args, "cards_env", None):
        out += ["--cards-env", args.cards_env]
    return tuple(out)
