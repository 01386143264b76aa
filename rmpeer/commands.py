"""The small commands: host, plan, show."""

from __future__ import annotations

import json

from .errors import EXIT_OK


def host(args) -> int:
    from .runtime import Runtime
    from .shim.live import LiveShim

    with Runtime(LiveShim(), forced_abi=args.rm_abi) as runtime:
        print(json.dumps(runtime.facts.as_dict(), indent=1, default=str))
    return EXIT_OK


def plan(args) -> int:
    from .layouts import LayoutMatrix, parse_size
    from .plan import plan_peers

    va = LayoutMatrix().va
    extent = parse_size(args.extent)
    cards = [int(c) for c in args.cards.split(",")]
    p = plan_peers(cards, extent, va.window_fn(extent), page_size=va.page_size)
    for op in p.pairs:
        print(f"{op.label:<15} a={op.a} b={op.b} handle={op.handle:#x}")
    for op in p.maps:
        print(f"{op.reserve_label:<15} s={op.s} t={op.t} handle={op.handle:#x} [{op.offset:#x}, {op.limit:#x}]")
        print(f"{op.map_label:<15} s={op.s} t={op.t} flags={' | '.join(f'{k}={v}' for k, v in op.flags)}")
    return EXIT_OK


def show(args) -> int:
    from .transcripts import show_transcript

    show_transcript(args.transcript, calls=args.calls)
    return EXIT_OK
