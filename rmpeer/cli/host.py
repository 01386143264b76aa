"""`rmpeer host`: what RM says about this host's driver, cards and P2P links, as JSON."""

from __future__ import annotations

import json

from rmpeer.cli.cards import request_of_args
from rmpeer.errors import EXIT_OK


def add_parser(sub):
    """The host subcommand; returns it (rmpeer.cli adds the card options)."""
    h = sub.add_parser("host", help="print what RM says about this host's driver, cards and P2P links")
    h.add_argument("--rm-abi")
    return h


def run(args) -> int:
    from rmpeer.machine.selection import Chooser
    from rmpeer.rm.open import Runtime

    from rmpeer.shim.live import LiveShim

    select = Chooser(request=request_of_args(args))
    with Runtime(LiveShim(), forced_abi=args.rm_abi, select=select) as runtime:
        print(json.dumps(runtime.facts.as_dict(), indent=1, default=str))
    return EXIT_OK
