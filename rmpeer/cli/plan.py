"""`rmpeer plan CARDS`: the peer plan of a layout (rmpeer.tables.plan), printed; no GPU needed."""

from __future__ import annotations

import argparse

from rmpeer.errors import EXIT_OK


def _card_count(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of cards (1 or more)")
    return int(text)


def add_parser(sub):
    pl = sub.add_parser("plan", help="print the peer plan of a layout (no GPU needed)")
    pl.add_argument("cards", help="the card of each session, e.g. 0,1,1,0")
    pl.add_argument("--extent", default="64MiB", help="buffer size per session (default: 64MiB)")
    pl.add_argument("--host-cards", type=_card_count, metavar="N",
                    help="refuse the layout unless it fits a host of N cards")
    return pl


def run(args) -> int:
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
