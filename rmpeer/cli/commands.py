"""The small commands: host, plan, show."""

from __future__ import annotations

import json

from rmpeer.errors import EXIT_OK


def host(args) -> int:
    from rmpeer.rm.open import Runtime
    from rmpeer.machine.selection import Chooser, request_of_args
    from rmpeer.shim.live import LiveShim

    select = Chooser(request=request_of_args(args))
    with Runtime(LiveShim(), forced_abi=args.rm_abi, select=select) as runtime:
        print(json.dumps(runtime.facts.as_dict(), indent=1, default=str))
    return EXIT_OK


def plan(args) -> int:
    from rmpeer.tables.layouts import LayoutMatrix, parse_cards, parse_size, size_text
    from rmpeer.tables.plan import plan_peers

    layouts = LayoutMatrix()
    va = layouts.va
    cards = parse_cards(args.cards)
    extent = layouts.check_extent(parse_size(args.extent))
    p = plan_peers(cards, extent, va.window_fn(extent), page_size=va.page_size,
                   host_cards=args.host_cards, va_end=va.end)
    peer_maps = sum(op.peer for op in p.maps)
    print(f"layout    {','.join(map(str, cards))} (needs {max(cards) + 1} card(s)"
          + (f"; this host: {args.host_cards})" if args.host_cards else ")"))
    print(f"sessions  {len(cards)}: " + ", ".join(f"s{s.index} on card {s.card}" for s in p.sessions))
    print(f"extent    {size_text(extent)} per session; window(t) = {va.window_base:#x} + t * {va.stride(extent):#x}")
    print(f"ops       {len(p.pairs)} NV50_P2P pair(s), then {len(p.maps)} windows "
          f"({len(p.maps) - peer_maps} same card, {peer_maps} across cards)")
    print()
    for op in p.pairs:
        print(f"{op.label:<15} a={op.a} b={op.b} handle={op.handle:#x}")
    for op in p.maps:
        print(f"{op.reserve_label:<15} s={op.s} t={op.t} handle={op.handle:#x} [{op.offset:#x}, {op.limit:#x}]")
        print(f"{op.map_label:<15} s={op.s} t={op.t} flags={' | '.join(f'{k}={v}' for k, v in op.flags)}")
    return EXIT_OK


def show(args) -> int:
    from rmpeer.cli.show import show_transcript

    show_transcript(args.transcript, calls=args.calls)
    return EXIT_OK
