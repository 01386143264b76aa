"""matrices/layouts.yaml: virtual-rank layouts resolved against a host's card count."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .abi.matrix import MATRICES, load_yaml, require
from .errors import ConfigError, MatrixError
from .plan import MAX_SESSIONS, linear_windows, plan_peers

FORMS = ("per_card", "sessions", "cards")
KEYS = set(FORMS) | {"order", "on_card", "min_cards", "description", "extent"}


@dataclass(frozen=True)
class Layout:
    name: str
    cards: tuple          # card of each session
    description: str = ""
    extent: int | None = None   # the layout's own buffer size (layouts.yaml), if it has one

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
        ext = require(self.path, "file", data, "extent", dict)
        self.default_extent = require(self.path, "extent", ext, "default", int)
        self.minimum_extent = require(self.path, "extent", ext, "minimum", int)
        self.entries = require(self.path, "file", data, "layouts", dict)
        for name, spec in self.entries.items():
            self._check(name, spec)

    def _check(self, name, spec):
        where = f"layout {name}"
        if not isinstance(spec, dict):
            raise MatrixError(self.path, where, "must be a mapping")
        unknown = set(spec) - KEYS
        if unknown:
            raise MatrixError(self.path, where, f"unknown keys {sorted(unknown)} (known: {sorted(KEYS)})")
        forms = [f for f in FORMS if f in spec]
        if len(forms) != 1:
            raise MatrixError(self.path, where, f"needs exactly one of {FORMS}, found {forms or 'none'}")
        if "cards" in spec:
            cards = require(self.path, where, spec, "cards", list)
            if not cards or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in cards):
                raise MatrixError(self.path, f"{where}.cards", f"must be a non-empty list of card numbers, found {cards!r}")
        else:
            count = require(self.path, where, spec, forms[0], int)
            if count < 1:
                raise MatrixError(self.path, f"{where}.{forms[0]}", f"must be at least 1, found {count}")
        order = spec.get("order", "blocked")
        if order not in ("blocked", "interleaved"):
            raise MatrixError(self.path, f"{where}.order", f"must be blocked or interleaved, found {order!r}")
        for key in ("on_card", "min_cards", "extent"):
            if key in spec:
                require(self.path, where, spec, key, int)
        if "extent" in spec:
            try:
                self.check_extent(spec["extent"])
            except ConfigError as exc:
                raise MatrixError(self.path, f"{where}.extent", str(exc)) from None

    def check_extent(self, extent: int) -> int:
        """A buffer size the matrix allows: a page multiple, at least extent.minimum."""
        page = self.va.page_size
        if extent < self.minimum_extent or extent % page:
            raise ConfigError(f"extent {extent:#x}: must be a multiple of {page >> 20} MiB pages and at least "
                              f"{self.minimum_extent:#x} ({self.path.name} extent.minimum)")
        return extent

    @property
    def names(self) -> list[str]:
        return list(self.entries)

    def resolve(self, name: str, host_cards: int) -> Layout | None:
        """The layout on a host of `host_cards` cards, or None where it does not fit."""
        if name not in self.entries:
            raise ConfigError(f"unknown layout {name!r}; {self.path.name} has: {', '.join(self.names)}")
        spec = self.entries[name]
        if host_cards < spec.get("min_cards", 1):
            return None
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
        if max(cards) >= host_cards or len(cards) > MAX_SESSIONS:
            return None
        return Layout(name, cards, spec.get("description", ""), spec.get("extent"))

    def fitting(self, host_cards: int) -> list[Layout]:
        """Every layout that fits the host, duplicates (same cards) kept once."""
        return self.fitting_with_reasons(host_cards)[0]

    def fitting_with_reasons(self, host_cards: int) -> tuple[list[Layout], list[str]]:
        """(layouts that fit, 'name: left out: why' for the others)."""
        seen, out, left_out = {}, [], []
        for name in self.names:
            layout = self.resolve(name, host_cards)
            if layout is None:
                left_out.append(f"{name}: left out: {self._why_not(name, host_cards)}")
            elif layout.cards in seen:
                left_out.append(f"{name}: left out: the same sessions as {seen[layout.cards]}")
            else:
                seen[layout.cards] = name
                out.append(layout)
        return out, left_out

    def _why_not(self, name: str, host_cards: int) -> str:
        spec = self.entries[name]
        if host_cards < spec.get("min_cards", 1):
            return f"needs {spec['min_cards']} cards, this host has {host_cards}"
        return f"needs more cards than {host_cards} or more than {MAX_SESSIONS} sessions"

    def plan(self, cards, extent: int, *, host_cards: int | None = None):
        """The seed's peer plan of these sessions with this matrix's address-space choices."""
        return plan_peers(cards, extent, self.va.window_fn(extent), page_size=self.va.page_size,
                          host_cards=host_cards)


def parse_layout_option(text: str, matrix: LayoutMatrix, host_cards: int) -> Layout:
    """--rm-layout: a name from the matrix, or an explicit card list such as 0,1,1,0."""
    if text in matrix.entries:
        layout = matrix.resolve(text, host_cards)
        if layout is None:
            raise ConfigError(f"layout {text!r} does not fit a host of {host_cards} card(s)")
        return layout
    try:
        cards = tuple(int(c) for c in text.split(","))
    except ValueError:
        raise ConfigError(f"--rm-layout {text!r}: neither a layout name ({', '.join(matrix.names)}) "
                          f"nor a list of cards such as 0,1,1,0") from None
    return Layout("cards-" + "-".join(map(str, cards)), cards, "given on the command line")


def parse_size(text: str) -> int:
    """'64MiB', '2M', '0x4000000' or '67108864' -> bytes."""
    m = re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*([KMG]i?B?)?\s*", str(text))
    if not m:
        raise ConfigError(f"{text!r} is not a size such as 64MiB, 2M or 0x4000000")
    value = int(m.group(1), 0)
    unit = (m.group(2) or "").upper()[:1]
    return value << {"": 0, "K": 10, "M": 20, "G": 30}[unit]
