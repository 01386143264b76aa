"""DRF-style bit fields (`21:20` with named values) as data, composed and decoded."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BitField:
    name: str
    hi: int
    lo: int
    values: dict[str, int]

    @property
    def holds_below(self) -> int:
        """The bound every value of the field stays below (1 << its width)."""
        return 1 << (self.hi - self.lo + 1)

    @property
    def mask(self) -> int:
        return (self.holds_below - 1) << self.lo

    def encode(self, value) -> int:
        raw = self.values[value] if isinstance(value, str) else int(value)
        if raw << self.lo & ~self.mask:
            raise ValueError(f"{self.name}: {value!r} does not fit bits {self.hi}:{self.lo}")
        return raw << self.lo

    def decode(self, word: int) -> str | int:
        raw = (word & self.mask) >> self.lo
        names = [n for n, v in self.values.items() if v == raw]
        return names[0] if names else raw


# words composed and kept per group: a copy engine's every copy composes the same dozen
# method headers and launch words again (25 000 composes in a 1-card full run)
COMPOSED_KEPT = 512


class BitFieldGroup:
    """The fields of one flags word (NVOS46_FLAGS, LAUNCH_DMA, ...)."""

    def __init__(self, name: str, fields: dict[str, BitField]):
        self.name, self.fields = name, fields
        self._composed: dict = {}

    def compose(self, **fields) -> int:
        key = tuple(fields.items())
        word = self._composed.get(key)
        if word is None:
            word = self._compose(fields)
            if len(self._composed) < COMPOSED_KEPT:
                self._composed[key] = word
        return word

    def _compose(self, fields: dict) -> int:
        word = 0
        for key, value in fields.items():
            if key not in self.fields:
                raise KeyError(f"{self.name} has no field {key!r}")
            word |= self.fields[key].encode(value)
        return word

    def value_of(self, word: int, key: str):
        return self.fields[key].decode(word)

    def describe(self, word: int) -> str:
        """Non-zero fields by name, e.g. 'DMA_OFFSET_FIXED=TRUE | P2P_ENABLE=NOSLI'."""
        parts, known = [], 0
        for f in sorted(self.fields.values(), key=lambda f: -f.hi):
            known |= f.mask
            if word & f.mask:
                parts.append(f"{f.name}={f.decode(word)}")
        if word & ~known:
            parts.append(f"unknown bits {word & ~known:#x}")
        return " | ".join(parts) or "0"
