"""Byte layouts of RM structs, built from matrices/drivers.yaml.

A Struct packs and unpacks one C struct by the offsets the matrix gives; it
also renders a buffer field by field, which is how every RM failure and every
replay mismatch is shown to a person.
"""

from __future__ import annotations

from dataclasses import dataclass

# Widths of the scalar kinds the matrix may name: language facts, not RM ABI.
TYPE_BYTES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i32": 4, "ptr": 8, "char": 1}
_SIGNED = {"i32"}


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    type: str
    count: int = 1

    def __post_init__(self):
        # kept: a full run reads and writes fields some 40 000 times (every RM call's
        # request and reply, every copy's methods)
        width = TYPE_BYTES[self.type]
        object.__setattr__(self, "_width", width)
        object.__setattr__(self, "_end", self.offset + width * self.count)
        object.__setattr__(self, "_signed", self.type in _SIGNED)
        object.__setattr__(self, "_scalar", self.count == 1 and self.type != "char")

    @property
    def width(self) -> int:
        return self._width

    @property
    def size(self) -> int:
        return self._width * self.count

    @property
    def end(self) -> int:
        return self._end

    @property
    def is_pointer(self) -> bool:
        return self.type == "ptr"

    def read(self, buf) -> int | list[int] | bytes:
        if self._scalar:
            return int.from_bytes(buf[self.offset:self._end], "little", signed=self._signed)
        raw = bytes(buf[self.offset:self._end])
        if self.type == "char":
            return raw
        w = self._width
        return [int.from_bytes(raw[i:i + w], "little", signed=self._signed) for i in range(0, len(raw), w)]

    def write(self, buf, value) -> None:
        if self._scalar and not isinstance(value, (list, tuple)):
            buf[self.offset:self._end] = int(value).to_bytes(self._width, "little", signed=self._signed)
            return
        if self.type == "char":
            data = bytes(value)[: self.count]
            buf[self.offset:self._end] = data.ljust(self.count, b"\0")
            return
        values = value if isinstance(value, (list, tuple)) else [value]
        if len(values) > self.count:
            raise ValueError(f"{self.name}: {len(values)} values for {self.count} slots")
        for i, v in enumerate(values):
            at = self.offset + i * self._width
            buf[at:at + self._width] = int(v).to_bytes(self._width, "little", signed=self._signed)

    def render(self, buf) -> str:
        value = self.read(buf)
        if isinstance(value, bytes):
            text = value.split(b"\0", 1)[0]
            return repr(text.decode("latin-1")) if text.isascii() else value.hex()
        if isinstance(value, list):
            shown = ", ".join(hex(v) for v in value[:8])
            more = f", ... ({self.count} in all)" if self.count > 8 else ""
            return f"[{shown}{more}]"
        return hex(value)


class Struct:
    """One C struct of one driver release."""

    def __init__(self, name: str, size: int, fields: dict[str, Field], flag_groups: dict | None = None):
        self.name, self.size = name, size
        self.fields = dict(sorted(fields.items(), key=lambda kv: kv[1].offset))
        self.flag_groups = flag_groups or {}   # field -> BitFieldGroup, to show flags by name

    def field(self, name: str) -> Field:
        try:
            return self.fields[name]
        except KeyError:
            raise KeyError(f"{self.name} has no field {name!r}") from None

    def has(self, name: str) -> bool:
        return name in self.fields

    def pack(self, **values) -> bytearray:
        """A zeroed buffer of this struct's size with the named fields set."""
        buf = bytearray(self.size)
        for name, value in values.items():
            self.field(name).write(buf, value)
        return buf

    def get(self, buf, name: str):
        return self.field(name).read(buf)

    def set(self, buf, name: str, value) -> None:
        self.field(name).write(buf, value)

    def decode(self, buf) -> dict:
        return {name: f.read(buf) for name, f in self.fields.items()}

    def render(self, buf, *, indent: str = "  ", compare=None) -> str:
        """Field by field, offset order; with `compare`, marks fields that differ."""
        lines = []
        for name, f in self.fields.items():
            mark = ""
            if (compare is not None and not f.is_pointer   # pointers differ run to run by nature
                    and bytes(compare[f.offset:f.end]) != bytes(buf[f.offset:f.end])):
                mark = f"   <-- recorded {f.render(compare)}"
            named = f" ({self.flag_groups[name].describe(f.read(buf))})" if name in self.flag_groups else ""
            lines.append(f"{indent}+{f.offset:<4} {name:<28} {f.type}{'' if f.count == 1 else f'[{f.count}]':<6} "
                         f"= {f.render(buf)}{named}{mark}")
        return "\n".join(lines)

    def differing_fields(self, buf, other, *, skip_pointers: bool = True) -> list[Field]:
        """Fields whose bytes differ; bytes no field covers count as field '<padding>'."""
        out = [f for f in self.fields.values()
               if not (skip_pointers and f.is_pointer)
               and bytes(buf[f.offset:f.end]) != bytes(other[f.offset:f.end])]
        covered = bytearray(self.size)
        for f in self.fields.values():
            covered[f.offset:f.end] = b"\1" * f.size
        for i in range(min(len(buf), len(other), self.size)):
            if not covered[i] and buf[i] != other[i]:
                out.append(Field("<padding>", i, "u8"))
                break
        return out

    def repeated(self, n: int) -> "Struct":
        """An array of n of these (e.g. NV_ESC_CARD_INFO's card slots), fields 'i.name'."""
        fields = {f"{i}.{f.name}": Field(f"{i}.{f.name}", i * self.size + f.offset, f.type, f.count)
                  for i in range(n) for f in self.fields.values()}
        return Struct(f"{self.name}[{n}]", self.size * n, fields)

    def __repr__(self) -> str:
        return f"Struct({self.name}, {self.size} bytes)"
