"""The RM ABI per driver release (matrices/drivers.yaml), resolved and chosen.

Each release entry states only what changed from the entry before it; the
ABI of a release is the chain of entries up to it, merged key by key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import MatrixError, UnknownDriverError
from .bitfields import BitField, BitFieldGroup
from .matrix import MATRICES, load_yaml, parse_bits, require
from .structs import _WIDTH, Field, Struct

SECTIONS = ("escapes", "classes", "controls", "constants", "bitfields", "structs")
# Flag words shown by name wherever a struct is rendered: (struct, field) -> bit-field group.
FLAG_FIELDS = {("NVOS46_PARAMETERS", "flags"): "NVOS46_FLAGS", ("NVOS46_PARAMETERS", "flags2"): "NVOS46_FLAGS2",
               ("NVOS33_PARAMETERS", "flags"): "NVOS33_FLAGS",
               ("nv_ioctl_nvos33_parameters_with_fd", "params.flags"): "NVOS33_FLAGS",
               ("NV_MEMORY_ALLOCATION_PARAMS", "attr"): "NVOS32_ATTR",
               ("NV_MEMORY_ALLOCATION_PARAMS", "attr2"): "NVOS32_ATTR2"}


def parse_version(text: str) -> tuple[int, ...]:
    try:
        parts = tuple(int(p) for p in str(text).strip().split("."))
    except ValueError:
        raise ValueError(f"{text!r} is not a driver version such as 580.65.06") from None
    if not parts or len(parts) > 3:
        raise ValueError(f"{text!r} is not a driver version such as 580.65.06")
    return parts


@dataclass
class Abi:
    """Everything the suite sends to or reads from RM for one driver release."""

    release: str                 # the matrix entry in force
    driver: str                  # the driver it serves (the running one, or the release)
    forced: bool = False         # chosen with --rm-abi rather than detected
    escapes: dict = field(default_factory=dict)
    classes: dict = field(default_factory=dict)
    controls: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)
    bitfields: dict = field(default_factory=dict)
    structs: dict = field(default_factory=dict)
    encoding: dict = field(default_factory=dict)

    def struct(self, name: str) -> Struct:
        try:
            return self.structs[name]
        except KeyError:
            raise KeyError(f"ABI {self.release} has no struct {name!r} (matrices/drivers.yaml)") from None

    def escape(self, name: str) -> int:
        return self._lookup(self.escapes, "escape", name)

    def cls(self, name: str) -> int:
        return self._lookup(self.classes, "class", name)

    def const(self, name: str):
        return self._lookup(self.constants, "constant", name)

    def bits(self, group: str) -> BitFieldGroup:
        return self._lookup(self.bitfields, "bit-field group", group)

    def control(self, name: str) -> tuple[int, Struct]:
        entry = self._lookup(self.controls, "control", name)
        return entry["cmd"], self.struct(entry["params"])

    def ioctl_request(self, escape: int, size: int) -> int:
        """_IOWR(magic, escape, size) as the Linux encoding in the matrix spells it."""
        e = self.encoding
        direction = e["dir_read"] | e["dir_write"]
        return (direction << e["dir_shift"] | size << e["size_shift"]
                | e["magic"] << e["type_shift"] | escape << e["nr_shift"])

    def _lookup(self, table, kind, name):
        try:
            return table[name]
        except KeyError:
            raise KeyError(f"ABI {self.release} has no {kind} {name!r} (matrices/drivers.yaml)") from None


class DriverMatrix:
    """The release entries of drivers.yaml, schema-checked at load."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path or MATRICES / "drivers.yaml")
        data = load_yaml(self.path)
        self.encoding = self._check_encoding(require(self.path, "file", data, "ioctl_encoding", dict))
        entries = require(self.path, "file", data, "releases", list)
        self.entries = [self._check_entry(i, e) for i, e in enumerate(entries)]
        versions = [parse_version(e["version"]) for e in self.entries]
        if versions != sorted(versions) or len(set(versions)) != len(versions):
            raise MatrixError(self.path, "releases", "must be in strictly ascending version order")

    @property
    def releases(self) -> list[str]:
        return [e["version"] for e in self.entries]

    def branches(self) -> list[int]:
        return sorted({parse_version(v)[0] for v in self.releases})

    def select(self, driver: str) -> str:
        """The newest release at or below `driver` in its own branch."""
        want = parse_version(driver)
        same_branch = [v for v in self.releases if parse_version(v)[0] == want[0]]
        candidates = [v for v in same_branch if parse_version(v) <= want]
        if not candidates:
            nearest = ", ".join(self._nearest(want)) or "none"
            raise UnknownDriverError(
                f"driver {driver}: no ABI for branch {want[0]} in {self.path} "
                f"(known releases nearest to it: {nearest}). To add one, read the structs "
                f"at that tag of NVIDIA's open-gpu-kernel-modules and append an entry to "
                f"{self.path.name} stating what changed (matrices/README.md); or force an "
                f"ABI with --rm-abi RELEASE.")
        return candidates[-1]

    def abi(self, release: str, *, driver: str | None = None, forced: bool = False) -> Abi:
        if release not in self.releases:
            raise UnknownDriverError(
                f"no release {release!r} in {self.path}; known: {', '.join(self.releases)}")
        return _resolve(self, release, driver or release, forced)

    def abi_for_driver(self, driver: str, *, forced_release: str | None = None) -> Abi:
        if forced_release:
            return self.abi(forced_release, driver=driver, forced=True)
        return self.abi(self.select(driver), driver=driver)

    def _nearest(self, want, n=3) -> list[str]:
        def distance(v):
            p = parse_version(v)
            return abs(p[0] - want[0]) * 10**9 + abs((p + (0,) * 3)[1] - (want + (0,) * 3)[1])
        return sorted(self.releases, key=distance)[:n]

    def _check_encoding(self, enc):
        for key in ("magic", "nr_shift", "type_shift", "size_shift", "dir_shift", "dir_read", "dir_write"):
            require(self.path, "ioctl_encoding", enc, key, int)
        return enc

    def _check_entry(self, i, entry):
        where = f"releases[{i}]"
        version = require(self.path, where, entry, "version", str)
        where = f"release {version}"
        try:
            parse_version(version)
        except ValueError as exc:
            raise MatrixError(self.path, where, str(exc)) from None
        unknown = set(entry) - set(SECTIONS) - {"version", "source", "notes"}
        if unknown:
            raise MatrixError(self.path, where, f"unknown keys {sorted(unknown)}")
        for section in SECTIONS:
            require(self.path, where, entry, section, dict, optional=True)
        for name, spec in (entry.get("structs") or {}).items():
            _check_struct(self.path, f"{where}: struct {name}", spec)
        for name, spec in (entry.get("controls") or {}).items():
            require(self.path, f"{where}: control {name}", spec, "cmd", int)
            require(self.path, f"{where}: control {name}", spec, "params", str)
        for group in entry.get("bitfields") or {}:
            fields = require(self.path, f"{where}: bitfields", entry["bitfields"], group, dict)
            for fname, spec in fields.items():
                at = f"{where}: bitfield {group}.{fname}"
                parse_bits(self.path, at, require(self.path, at, spec, "bits", (str, int)))
                require(self.path, at, spec, "values", dict, optional=True)
        return entry


def _check_struct(path, where, spec):
    size = require(path, where, spec, "size", int)
    fields = require(path, where, spec, "fields", dict)
    for fname, f in fields.items():
        at = f"{where}.{fname}"
        if not isinstance(f, list) or len(f) not in (2, 3):
            raise MatrixError(path, at, f"must be [offset, type] or [offset, type, count], found {f!r}")
        offset, kind, count = (f + [1])[:3]
        if kind not in _WIDTH:
            raise MatrixError(path, at, f"unknown type {kind!r} (known: {', '.join(_WIDTH)})")
        if not isinstance(offset, int) or not isinstance(count, int) or offset < 0 or count < 1:
            raise MatrixError(path, at, f"offset and count must be whole numbers, found {f!r}")
        if offset + _WIDTH[kind] * count > size:
            raise MatrixError(path, at, f"ends at {offset + _WIDTH[kind] * count}, past the struct's size {size}")


def _resolve(matrix: DriverMatrix, release: str, driver: str, forced: bool) -> Abi:
    merged = {s: {} for s in SECTIONS}
    for entry in matrix.entries:
        for section in SECTIONS:
            merged[section].update(entry.get(section) or {})
        if entry["version"] == release:
            break
    groups = {}
    for gname, fields in merged["bitfields"].items():
        bits = {}
        for fname, spec in fields.items():
            hi, lo = parse_bits(matrix.path, f"{gname}.{fname}", spec["bits"])
            bits[fname] = BitField(fname, hi, lo, dict(spec.get("values") or {}))
        groups[gname] = BitFieldGroup(gname, bits)
    structs = {name: Struct(name, spec["size"], {fname: Field(fname, *f) for fname, f in spec["fields"].items()},
                            {field: groups[g] for (st, field), g in FLAG_FIELDS.items() if st == name and g in groups})
               for name, spec in merged["structs"].items()}
    for name, spec in merged["controls"].items():
        if spec["params"] not in structs:
            raise MatrixError(matrix.path, f"release {release}: control {name}",
                              f"params struct {spec['params']!r} is not defined")
    return Abi(release=release, driver=driver, forced=forced,
               escapes=merged["escapes"], classes=merged["classes"], controls=merged["controls"],
               constants=merged["constants"], bitfields=groups, structs=structs,
               encoding=matrix.encoding)
