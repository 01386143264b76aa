"""matrices/layouts.yaml: virtual-rank layouts resolved against a host's card count."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rmpeer.tables.load import MATRICES, load_yaml, require
from rmpeer.errors import ConfigError, MatrixError, quoted
from rmpeer.model.result import PARTIAL, TIERS
from rmpeer.tables.lines import entry_keys, with_line
from rmpeer.tables.plan import MAX_SESSIONS, VA_LIMIT, linear_windows, plan_peers

FORMS = ("per_card", "sessions", "cards")
QUICK_LAYOUTS = ("one-per-card", "interleaved")     # the quick tier's layouts (docs/tiers.md)
KEYS = set(FORMS) | {"order", "on_card", "min_cards", "description", "extent", "quick_extent", "quick_from_cards"}


@dataclass(frozen=True)
class Layout:
    name: str
    cards: tuple          # card of each session
    description: str = ""
    extent: int | None = None   # the layout's own buffer size (layouts.yaml), if it has one
    quick_extent: int | None = None     # the quick tier's, on hosts of quick_from_cards cards or more
    quick_from_cards: int | None = None

    @property
    def sessions(self) -> int:
        return len(self.cards)


@dataclass(frozen=True)
class VaPlan:
    vaspace_base: int
    vaspace_size: int
    page_size: int
    window_base: int
    private_base: int
    private_size: int

    @property
    def end(self) -> int:
        """The first address past the sessions' address space (plan_peers' va_end)."""
        return self.vaspace_base + self.vaspace_size

    def stride(self, extent: int) -> int:
        return -(-extent // self.page_size) * self.page_size

    def window_fn(self, extent: int):
        return linear_windows(self.window_base, self.stride(extent))


class LayoutMatrix:
    def __init__(self, path: Path | None = None):
        self.path = Path(path or MATRICES / "layouts.yaml")
        data = load_yaml(self.path)
        va = require(self.path, "file", data, "va", dict)
        self.va = VaPlan(**{k: require(self.path, "va", va, k, int)
                            for k in VaPlan.__dataclass_fields__})
        self._check_va()
        ext = require(self.path, "file", data, "extent", dict)
        self.minimum_extent = require(self.path, "extent", ext, "minimum", int)
        self.maximum_extent = require(self.path, "extent", ext, "maximum", int)
        self.default_extent = require(self.path, "extent", ext, "default", int)
        self._check_extent_bounds()
        self.entries = require(self.path, "file", data, "layouts", dict)
        for name, spec in self.entries.items():
            try:
                self._check(name, spec)
            except MatrixError as exc:
                raise with_line(exc, entry_keys(exc.entry, "layout", name, "layouts")) from None

    def _check_va(self):
        va = self.va
        for key in VaPlan.__dataclass_fields__:   # RM takes each as an unsigned 64-bit value
            if not 0 <= getattr(va, key) < VA_LIMIT:
                raise MatrixError(self.path, f"va.{key}", f"must fit 64 bits (0 to 2**64 - 1), "
                                  f"found {quoted(getattr(va, key))}")
        for key in ("vaspace_size", "page_size", "private_size"):
            if getattr(va, key) <= 0:
                raise MatrixError(self.path, f"va.{key}", f"must be positive, found {getattr(va, key)}")
        if va.page_size & (va.page_size - 1):
            raise MatrixError(self.path, "va.page_size", f"must be a power of two, found {va.page_size:#x}")
        if va.end > VA_LIMIT:
            raise MatrixError(self.path, "va", f"the address space ends at {va.end:#x}, beyond 64 bits")
        for key in ("window_base", "private_base"):
            if getattr(va, key) % va.page_size:
                raise MatrixError(self.path, f"va.{key}", f"{getattr(va, key):#x} is not a multiple of "
                                  f"page_size {va.page_size:#x}")
        if va.private_base < va.vaspace_base or va.private_base + va.private_size > va.end:
            # each session's copy-engine objects are mapped in its own address space
            raise MatrixError(self.path, "va.private_base", f"the private range [{va.private_base:#x}, "
                              f"{va.private_base + va.private_size:#x}) is outside the address space "
                              f"[{va.vaspace_base:#x}, {va.end:#x})")

    def _check_extent_bounds(self):
        """minimum <= default <= maximum, page multiples, and the windows of the most sessions
        at the maximum extent inside the address space, clear of the private range."""
        va, page = self.va, self.va.page_size
        for key in ("minimum", "maximum", "default"):
            value = getattr(self, f"{key}_extent")
            if value <= 0 or value % page:
                raise MatrixError(self.path, f"extent.{key}", f"{size_text(value)} is not a positive "
                                  f"multiple of va.page_size {size_text(page)}")
        if not self.minimum_extent <= self.default_extent <= self.maximum_extent:
            raise MatrixError(self.path, "extent.default", f"{size_text(self.default_extent)} is not between "
                              f"minimum {size_text(self.minimum_extent)} and maximum {size_text(self.maximum_extent)}")
        end = va.window_base + MAX_SESSIONS * va.stride(self.maximum_extent)
        if va.window_base < va.vaspace_base or end > va.end:
            raise MatrixError(self.path, "extent.maximum", f"{MAX_SESSIONS} windows of {size_text(self.maximum_extent)} "
                              f"from va.window_base {va.window_base:#x} end at {end:#x}, outside the address space "
                              f"[{va.vaspace_base:#x}, {va.end:#x})")
        if va.window_base < va.private_base + va.private_size and va.private_base < end:
            raise MatrixError(self.path, "va.private_base", f"the private range [{va.private_base:#x}, "
                              f"{va.private_base + va.private_size:#x}) overlaps the windows [{va.window_base:#x}, {end:#x})")

    def check_extent(self, extent: int) -> int:
        """A buffer size given by a user (--extent), refused unless the plan can use it."""
        page = self.va.page_size
        if extent < self.minimum_extent:
            raise ConfigError(f"extent {size_text(extent)} is below the minimum {size_text(self.minimum_extent)} "
                              f"({self.path.name} extent.minimum)")
        if extent > self.maximum_extent:
            raise ConfigError(f"extent {size_text(extent)} is above the maximum {size_text(self.maximum_extent)} "
                              f"({self.path.name} extent.maximum)")
        if extent % page:
            raise ConfigError(f"extent {size_text(extent)} is not a multiple of the page size {size_text(page)}")
        return extent

    def _check(self, name, spec):
        where = f"layout {name}"
        if not isinstance(spec, dict):
            raise MatrixError(self.path, where, "must be a mapping")
        unknown = [key for key in spec if key not in KEYS]
        if unknown:   # named at the first unknown key, so its line is the typo's
            raise MatrixError(self.path, f"{where}.{unknown[0]}", f"unknown keys {sorted(unknown)} "
                              f"(known: {sorted(KEYS)})")
        forms = [f for f in FORMS if f in spec]
        if len(forms) != 1:
            raise MatrixError(self.path, where, f"needs exactly one of {FORMS}, found {forms or 'none'}")
        if "cards" in spec:
            cards = require(self.path, where, spec, "cards", list)
            if not cards or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in cards):
                raise MatrixError(self.path, f"{where}.cards", f"must be a non-empty list of card numbers, found {cards!r}")
            count = len(cards)
        else:
            count = require(self.path, where, spec, forms[0], int)
            if count < 1:   # a layout of no sessions would check nothing and pass
                raise MatrixError(self.path, f"{where}.{forms[0]}", f"must be at least 1, found {count}: "
                                  f"a layout of no sessions checks nothing")
        # per_card sessions on a host of one card, or sessions: beyond the limit on every host
        # (and resolve would build a tuple of that many sessions before seeing it)
        if count > MAX_SESSIONS:
            found = f"{count} cards" if forms[0] == "cards" else quoted(count)
            raise MatrixError(self.path, f"{where}.{forms[0]}", f"must be at most {MAX_SESSIONS}, found {found}: "
                              f"a layout runs at most {MAX_SESSIONS} sessions (the seed's pair handles "
                              f"collide beyond {MAX_SESSIONS})")
        order = spec.get("order", "blocked")
        if order not in ("blocked", "interleaved"):
            raise MatrixError(self.path, f"{where}.order", f"must be blocked or interleaved, found {order!r}")
        if ("quick_extent" in spec) != ("quick_from_cards" in spec):
            raise MatrixError(self.path, f"{where}.quick_extent", "quick_extent and quick_from_cards go together: "
                              "the quick tier's buffer size, and from how many cards it applies")
        for key, least in (("on_card", 0), ("min_cards", 1), ("extent", None), ("quick_extent", None),
                           ("quick_from_cards", 1)):
            if key in spec:
                value = require(self.path, where, spec, key, int)
                if least is not None and value < least:
                    raise MatrixError(self.path, f"{where}.{key}", f"must be at least {least}, found {value}")
        for key in ("extent", "quick_extent"):
            if key in spec:
                try:
                    self.check_extent(spec[key])
                except ConfigError as exc:
                    raise MatrixError(self.path, f"{where}.{key}", str(exc)) from None

    @property
    def names(self) -> list[str]:
        return list(self.entries)

    def resolve(self, name: str, host_cards: int) -> Layout | None:
        """The layout on a host of `host_cards` cards, or None where it does not fit."""
        return self.resolve_with_reason(name, host_cards)[0]

    def resolve_with_reason(self, name: str, host_cards: int) -> tuple[Layout | None, str]:
        """(the layout, "") where it fits a host of `host_cards` cards, else (None, why not)."""
        if name not in self.entries:
            raise ConfigError(f"unknown layout {name!r}; {self.path.name} has: {', '.join(self.names)}")
        spec = self.entries[name]
        min_cards = spec.get("min_cards", 1)
        if host_cards < min_cards:
            return None, f"left out: needs {min_cards} cards, this host has {host_cards}"
        order = spec.get("order", "blocked")
        if "cards" in spec:
            cards = tuple(spec["cards"])
        elif "per_card" in spec:
            k = spec["per_card"]
            cards = (tuple(c for c in range(host_cards) for _ in range(k)) if order == "blocked"
                     else tuple(c for _ in range(k) for c in range(host_cards)))
        elif "on_card" in spec:
            cards = (spec["on_card"],) * spec["sessions"]
        else:
            n = spec["sessions"]
            cards = (tuple(i % host_cards for i in range(n)) if order == "interleaved"
                     else tuple(i * host_cards // n for i in range(n)))
        if max(cards) >= host_cards:
            return None, f"left out: needs {max(cards) + 1} cards, this host has {host_cards}"
        if len(cards) > MAX_SESSIONS:
            return None, (f"left out: {len(cards)} sessions > {MAX_SESSIONS} "
                          f"(the seed's pair handles collide beyond {MAX_SESSIONS})")
        return Layout(name, cards, spec.get("description", ""), spec.get("extent"), spec.get("quick_extent"),
                      spec.get("quick_from_cards")), ""

    def fitting(self, host_cards: int) -> list[Layout]:
        """Every layout that fits the host, duplicates (same cards) kept once."""
        return self.fitting_with_reasons(host_cards)[0]

    def fitting_with_reasons(self, host_cards: int) -> tuple[list[Layout], list[tuple[str, str]]]:
        """(the layouts that fit the host, [(name, why it was left out)] for the others), so
        that a layout is never dropped without a word."""
        first, out, left_out = {}, [], []
        for name in self.names:
            layout, reason = self.resolve_with_reason(name, host_cards)
            if layout is None:
                left_out.append((name, reason))
            elif layout.cards in first:
                left_out.append((name, f"left out: the same sessions as {first[layout.cards]}"))
            else:
                first[layout.cards] = name
                out.append(layout)
        return out, left_out


    def precheck(self, wanted, extent: int | None) -> None:
        """Layouts asked for by name or card list that no host could run, refused before
        looking for a device (exit 2 on any machine)."""
        for text in wanted:
            if text in self.entries:
                continue
            try:
                cards = parse_cards(text)
            except ConfigError:
                raise ConfigError(f"--layout {quoted(text)}: neither a layout name ({', '.join(self.names)}) "
                                  f"nor a list of cards such as 0,1,1,0") from None
            if len(cards) > MAX_SESSIONS:
                raise ConfigError(f"--layout {quoted(text)}: {len(cards)} sessions > {MAX_SESSIONS} "
                                  f"(the seed's pair handles collide beyond {MAX_SESSIONS})")
            self.plan(cards, extent or self.default_extent)

    def tier_extent(self, layout: Layout, tier: str, host_cards: int) -> int:
        """The buffer size a tier runs the layout at: its quick_extent in the quick tier on a
        host of quick_from_cards cards or more (docs/tiers.md: the prolog's budget on many
        cards), else its own extent, else the default."""
        if tier == "quick" and layout.quick_extent and host_cards >= (layout.quick_from_cards or 1):
            return layout.quick_extent
        return layout.extent or self.default_extent

    def covered_tier(self, asked: str, cases, host_cards: int) -> str:
        """The tier a run's cases (each a layout at an extent) stand for, never deeper than
        the one asked: full needs every layout that fits a host of `host_cards` cards,
        quick the quick layouts that fit, each at its extent for that tier or larger
        (tier_extent; a layout is its cards, whatever it is called). Layouts that cover neither are PARTIAL, which no
        --if-stale tier accepts: a certificate must not claim more than it checked."""
        if asked == "passive":
            return asked
        ran: dict = {}      # cards -> the largest extent they ran at
        for case in cases:
            ran[tuple(case.layout.cards)] = max(ran.get(tuple(case.layout.cards), 0), case.extent)
        fitting = self.fitting_with_reasons(host_cards)[0]
        needs = {"full": fitting, "quick": [l for l in fitting if l.name in QUICK_LAYOUTS]}
        for tier in ("full", "quick"):
            if TIERS.index(tier) <= TIERS.index(asked) and all(
                    ran.get(tuple(l.cards), -1) >= self.tier_extent(l, tier, host_cards) for l in needs[tier]):
                return tier
        return PARTIAL

    def plan(self, cards, extent: int, *, host_cards: int | None = None):
        """The seed's peer plan of these sessions with this matrix's address-space choices."""
        return plan_peers(cards, extent, self.va.window_fn(extent), page_size=self.va.page_size,
                          host_cards=host_cards, va_end=self.va.end)


def parse_cards(text: str, what: str = "layout") -> tuple[int, ...]:
    """'0,1,1,0' -> (0, 1, 1, 0): the card of each session; anything else is refused."""
    parts = [p.strip() for p in str(text).split(",")]
    if not str(text).strip():
        raise ConfigError(f"{what} {quoted(text)} is empty: give the card of each session, such as 0,1,1,0")
    for p in parts:
        if not re.fullmatch(r"\d{1,9}", p, re.ASCII):     # more digits: no host's card
            raise ConfigError(f"{what} {quoted(text)}: {quoted(p)} is not a card number (give the card of "
                              f"each session, such as 0,1,1,0)")
    return tuple(int(p) for p in parts)


def parse_layout_option(text: str, matrix: LayoutMatrix, host_cards: int) -> Layout:
    """--rm-layout: a name from the matrix, or an explicit card list such as 0,1,1,0."""
    if text in matrix.entries:
        layout, reason = matrix.resolve_with_reason(text, host_cards)
        if layout is None:
            raise ConfigError(f"layout {quoted(text)} does not fit a host of {host_cards} card(s): {reason}")
        return layout
    try:
        cards = parse_cards(text)
    except ConfigError:
        raise ConfigError(f"--rm-layout {quoted(text)}: neither a layout name ({', '.join(matrix.names)}) "
                          f"nor a list of cards such as 0,1,1,0") from None
    if max(cards) >= host_cards:
        raise ConfigError(f"layout {quoted(text)} needs card {max(cards)}, but this host has {host_cards} "
                          f"card(s) (0..{host_cards - 1})")
    if len(cards) > MAX_SESSIONS:
        raise ConfigError(f"layout {quoted(text)}: {len(cards)} sessions > {MAX_SESSIONS} "
                          f"(the seed's pair handles collide beyond {MAX_SESSIONS})")
    return Layout("cards-" + "-".join(map(str, cards)), cards, "given on the command line")


def size_text(n: int) -> str:
    """67108864 -> '64 MiB (0x4000000)': what a person reads, and the exact value."""
    for shift, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit} ({n:#x})"
    return f"{n} bytes ({n:#x})" if n >= 0 else str(n)


def parse_size(text: str) -> int:
    """'64MiB', '2M', '0x4000000' or '67108864' -> bytes."""
    # a number of more digits than 64 bits hold is no size (and past 4300 digits Python
    # refuses to convert it): refused as text
    m = re.fullmatch(r"\s*(0x[0-9a-f]{1,16}|\d{1,20})\s*([KMGT]i?B?)?\s*", str(text), re.IGNORECASE | re.ASCII)
    if not m:
        raise ConfigError(f"{quoted(text)} is not a size such as 64MiB, 2M or 0x4000000")
    digits = m.group(1)
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)   # "064" is 64, not octal
    unit = (m.group(2) or "").upper()[:1]
    return value << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
