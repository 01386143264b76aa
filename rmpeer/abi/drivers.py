"""The RM ABI per driver release (matrices/drivers.yaml), resolved and chosen.

Each release entry names its parent (the release it derives from) and states only what
changed from it; the ABI of a release is its parent chain, merged key by key from the
first entry down. Only the chain counts: a change made in a later release of an older
branch does not reach a newer branch unless that branch's entries derive from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.errors import BadVersionError, MatrixError, UnknownDriverError, quoted
from rmpeer.abi.bitfields import BitField, BitFieldGroup
from rmpeer.tables.load import MATRICES, bit_values, load_yaml, parse_bits, require, require_below
from rmpeer.abi.structs import TYPE_BYTES, Field, Struct
from rmpeer.abi.used import check_counts, check_sent_sizes

SECTIONS = ("escapes", "classes", "controls", "constants", "bitfields", "structs")
# The escapes rmpeer sends (rmpeer.rm.client, rmpeer.rm.host): each release must number every
# one, or a run would stop at its first call of it (tests/abi/test_drivers.py keeps this list
# in step with rmpeer/rm).
ESCAPES_USED = ("NV_ESC_CARD_INFO", "NV_ESC_REGISTER_FD", "NV_ESC_CHECK_VERSION_STR", "NV_ESC_RM_ALLOC",
                "NV_ESC_RM_FREE", "NV_ESC_RM_CONTROL", "NV_ESC_RM_MAP_MEMORY", "NV_ESC_RM_MAP_MEMORY_DMA")
# The slots of a Linux ioctl request (_IOC(dir, type, nr, size)), each placed by its
# `<slot>_shift` in ioctl_encoding; a request number is 32 bits.
IOCTL_SLOTS = ("nr", "type", "size", "dir")
IOCTL_BITS = 32
# Class numbers (NVOS64 hClass) and control commands (NVOS54 cmd) are NvU32 fields.
U32 = 1 << 32
# Flag words shown by name wherever a struct is rendered: (struct, field) -> bit-field group.
FLAG_FIELDS = {("NVOS46_PARAMETERS", "flags"): "NVOS46_FLAGS", ("NVOS46_PARAMETERS", "flags2"): "NVOS46_FLAGS2",
               ("NVOS33_PARAMETERS", "flags"): "NVOS33_FLAGS",
               ("nv_ioctl_nvos33_parameters_with_fd", "params.flags"): "NVOS33_FLAGS",
               ("NV_MEMORY_ALLOCATION_PARAMS", "attr"): "NVOS32_ATTR",
               ("NV_MEMORY_ALLOCATION_PARAMS", "attr2"): "NVOS32_ATTR2",
               ("NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO_PARAMS", "fabricHealthMask"): "NV2080_CTRL_GPU_FABRIC_HEALTH_MASK",
               ("NV2080_CTRL_FB_GET_REMAPPED_ROWS_PARAMS", "flags"): "NV2080_CTRL_FB_GET_REMAPPED_ROWS_FLAGS"}


GENERATE = ("rmpeer abi from-headers SRC (SRC: NVIDIA's open-gpu-kernel-modules at tag {version}, e.g. "
            "`git -C open-gpu-kernel-modules archive {version} | tar -x -C SRC`), then add the entry it prints "
            "to {path}")


def parse_version(text: str) -> tuple[int, ...]:
    """'580.65.06' -> (580, 65, 6); anything but two or three dotted numbers is refused."""
    parts = str(text).strip().split(".")
    # a part of more than 9 digits is no release's (past 4300 Python refuses to convert it)
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() and p.isascii() and len(p) <= 9 for p in parts):
        raise BadVersionError(f"{quoted(text)} is not a driver version such as 580.65.06")
    return tuple(int(p) for p in parts)


def version_key(text: str) -> tuple[int, int, int]:
    """A version padded to three numbers, so that 575.64 and 575.64.0 compare equal."""
    parts = parse_version(text)
    return parts + (0,) * (3 - len(parts))


@dataclass(frozen=True)
class Choice:
    """The entry chosen for a driver, and a sentence when it is not that driver's own entry."""

    release: str
    note: str = ""


@dataclass
class Abi:
    """Everything the suite sends to or reads from RM for one driver release."""

    release: str                 # the matrix entry in force
    driver: str                  # the driver it serves (the running one, or the release)
    forced: bool = False         # chosen with --rm-abi rather than detected
    note: str = ""               # how the entry was chosen, when it is not the driver's own
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
        # RM copies no parameter block larger (RMAPI_PARAM_COPY_MAX_PARAMS_SIZE): every struct
        # is at most this, so that a wrong size is refused here, not allocated mid-run
        self.max_params_size = require_below(self.path, "max_params_size",
                                             require(self.path, "file", data, "max_params_size", int), U32)
        entries = require(self.path, "file", data, "releases", list)
        self.entries = [self._check_entry(i, e) for i, e in enumerate(entries)]
        versions = [version_key(e["version"]) for e in self.entries]
        if versions != sorted(versions) or len(set(versions)) != len(versions):
            raise MatrixError(self.path, "releases", "must be in strictly ascending version order")
        self.by_version = {e["version"]: e for e in self.entries}
        self._check_parents()

    @property
    def releases(self) -> list[str]:
        return [e["version"] for e in self.entries]

    def branches(self) -> list[int]:
        return sorted({parse_version(v)[0] for v in self.releases})

    def chain(self, release: str) -> list[dict]:
        """The entries `release` derives from, the first entry first and `release` last."""
        out = []
        while release is not None:
            entry = self.by_version[release]
            out.append(entry)
            release = entry.get("parent")
        return out[::-1]

    def merged(self, release: str) -> dict[str, dict]:
        """The raw sections of a release's ABI: its parent chain merged key by key."""
        if release not in self.by_version:
            raise UnknownDriverError(f"no release {release!r} in {self.path}; known: {', '.join(self.releases)}")
        merged = {s: {} for s in SECTIONS}
        for entry in self.chain(release):
            for section in SECTIONS:
                merged[section].update(entry.get(section) or {})
        return merged

    def select(self, driver: str) -> str:
        """The newest release at or below `driver` in its own branch."""
        return self.choose(driver).release

    def choose(self, driver: str) -> Choice:
        """`select`, saying so when the entry is not the driver's own release."""
        want = version_key(driver)
        branch = want[0]
        same_branch = [v for v in self.releases if version_key(v)[0] == branch]
        if not same_branch:
            nearest = ", ".join(self._nearest(want)) or "none"
            raise UnknownDriverError(
                f"driver {driver}: branch {branch} is unknown to {self.path} (known releases nearest to it: "
                f"{nearest}). Generate its entry with: {GENERATE.format(version=driver, path=self.path.name)}; "
                f"or force an ABI with --rm-abi RELEASE.")
        candidates = [v for v in same_branch if version_key(v) <= want]
        if not candidates:
            raise UnknownDriverError(
                f"driver {driver} is older than the first known {branch} entry ({same_branch[0]}) in {self.path}. "
                f"Generate its entry with: {GENERATE.format(version=driver, path=self.path.name)}; "
                f"or force an ABI with --rm-abi RELEASE.")
        release = candidates[-1]
        if version_key(release) == want:
            return Choice(release)
        if release == same_branch[-1]:
            return Choice(release, f"{driver} is newer than the newest known {branch} entry, using {release}'s ABI")
        return Choice(release, f"{driver}: using {release}'s ABI, the newest {branch} entry at or below it")

    def parent_for(self, version: str) -> str | None:
        """The entry a release derives from: its own parent when it is an entry, else the newest
        entry at or below it in its branch, else (a new branch, or older than its branch's
        first entry) the newest entry before it."""
        if version in self.by_version:
            return self.by_version[version].get("parent")
        want = version_key(version)
        earlier = [v for v in self.releases if version_key(v) <= want]
        same_branch = [v for v in earlier if version_key(v)[0] == want[0]]
        return (same_branch or earlier or [None])[-1]

    def abi(self, release: str, *, driver: str | None = None, forced: bool = False, note: str = "") -> Abi:
        if release not in self.releases:
            raise UnknownDriverError(
                f"no release {release!r} in {self.path}; known: {', '.join(self.releases)}")
        return _resolve(self, release, driver or release, forced, note)

    def abi_for_driver(self, driver: str, *, forced_release: str | None = None) -> Abi:
        """The running driver's ABI; `forced_release` (--rm-abi) is chosen the same way as a
        detected version, and the ABI says which entry it took."""
        if forced_release:
            choice = self.choose(forced_release)
            used = choice.note or f"using {choice.release}'s ABI"
            return self.abi(choice.release, driver=driver, forced=True, note=f"forced with --rm-abi {used}")
        choice = self.choose(driver)
        return self.abi(choice.release, driver=driver, note=choice.note)

    def _nearest(self, want, n=3) -> list[str]:
        def distance(v):
            p = version_key(v)
            return abs(p[0] - want[0]) * 10**9 + abs(p[1] - want[1])
        return sorted(self.releases, key=distance)[:n]

    def _check_encoding(self, enc):
        """The ioctl_encoding fields, each inside its slot of the 32-bit request: a shift or a
        value outside it would build a request no driver answers (or a negative shift)."""
        for key in ("magic", "nr_shift", "type_shift", "size_shift", "dir_shift", "dir_read", "dir_write"):
            require(self.path, "ioctl_encoding", enc, key, int)
        shifts = [enc[f"{slot}_shift"] for slot in IOCTL_SLOTS]
        for slot, shift in zip(IOCTL_SLOTS, shifts):
            require_below(self.path, f"ioctl_encoding.{slot}_shift", shift, IOCTL_BITS)
            if shifts.count(shift) > 1:
                raise MatrixError(self.path, f"ioctl_encoding.{slot}_shift",
                                  f"{shift} is the shift of another slot too (each of {', '.join(IOCTL_SLOTS)} has its own)")
        ends = sorted(shifts) + [IOCTL_BITS]
        # a slot reaches up to the next one (the last, to the request's top bit)
        self.slot_bits = {slot: ends[ends.index(s) + 1] - s for slot, s in zip(IOCTL_SLOTS, shifts)}
        for key, slot in (("magic", "type"), ("dir_read", "dir"), ("dir_write", "dir")):
            require_below(self.path, f"ioctl_encoding.{key}", enc[key], 1 << self.slot_bits[slot])
        return enc

    def _check_entry(self, i, entry):
        where = f"releases[{i}]"
        version = require(self.path, where, entry, "version", str)
        where = f"release {version}"
        try:
            parse_version(version)
        except BadVersionError as exc:
            raise MatrixError(self.path, where, str(exc)) from None
        require(self.path, where, entry, "parent", str, optional=True)
        unknown = set(entry) - set(SECTIONS) - {"version", "parent", "source", "notes"}
        if unknown:
            raise MatrixError(self.path, where, f"unknown keys {sorted(unknown)}")
        for section in SECTIONS:
            require(self.path, where, entry, section, dict, optional=True)
        for name, spec in (entry.get("structs") or {}).items():
            _check_struct(self.path, f"{where}: struct {name}", spec, self.max_params_size)
        for name, number in (entry.get("escapes") or {}).items():
            require_below(self.path, f"{where}: escape {name}", number, 1 << self.slot_bits["nr"])
        for name, number in (entry.get("classes") or {}).items():
            require_below(self.path, f"{where}: class {name}", number, U32)
        for name, spec in (entry.get("controls") or {}).items():
            cmd = require(self.path, f"{where}: control {name}", spec, "cmd", int)
            require_below(self.path, f"{where}: control {name}.cmd", cmd, U32)
            require(self.path, f"{where}: control {name}", spec, "params", str)
        for group in entry.get("bitfields") or {}:
            fields = require(self.path, f"{where}: bitfields", entry["bitfields"], group, dict)
            for fname, spec in fields.items():
                at = f"{where}: bitfield {group}.{fname}"
                hi, lo = parse_bits(self.path, at, require(self.path, at, spec, "bits", (str, int)))
                bit_values(self.path, at, require(self.path, at, spec, "values", dict, optional=True), hi, lo)
        for name, value in (entry.get("constants") or {}).items():
            _check_constant(self.path, f"{where}: constant {name}", value)
        return entry

    def _check_parents(self):
        for i, entry in enumerate(self.entries):
            where, parent = f"release {entry['version']}", entry.get("parent")
            if i == 0:
                if parent is not None:
                    raise MatrixError(self.path, where, "the first entry has no parent")
                continue
            if parent is None:
                raise MatrixError(self.path, where, "missing key 'parent' (the release it derives from)")
            if parent not in self.by_version:
                raise MatrixError(self.path, f"{where}.parent", f"{parent!r} is not an entry of this file")
            if version_key(parent) >= version_key(entry["version"]):
                raise MatrixError(self.path, f"{where}.parent", f"{parent} is not older than {entry['version']}")

    def check_sends(self) -> "DriverMatrix":
        """Every release numbers each escape rmpeer sends, each struct it sends fits the request
        and each count it reads fits its array (rmpeer.abi.used; checked before a run and when
        RM is opened, not at load: `rmpeer abi` also reads matrices of a few invented releases)."""
        for release in self.releases:
            merged = self.merged(release)
            missing = [name for name in ESCAPES_USED if name not in merged["escapes"]]
            if missing:     # a run would stop at its first call of it
                raise MatrixError(self.path, f"release {release}: escapes",
                                  f"missing {', '.join(missing)}, which rmpeer sends")
            check_sent_sizes(self.path, release, merged, self.slot_bits["size"])
            check_counts(self.path, release, merged)
        return self


def _check_struct(path, where, spec, limit):
    size = require(path, where, spec, "size", int)
    if not 0 <= size <= limit:
        raise MatrixError(path, f"{where}.size", f"must be a whole number of bytes from 0 to {limit} "
                          f"(max_params_size), found {quoted(size)}")
    fields = require(path, where, spec, "fields", dict)
    for fname, f in fields.items():
        at = f"{where}.{fname}"
        if not isinstance(f, list) or len(f) not in (2, 3):
            raise MatrixError(path, at, f"must be [offset, type] or [offset, type, count], found {f!r}")
        offset, kind, count = (f + [1])[:3]
        if kind not in TYPE_BYTES:
            raise MatrixError(path, at, f"unknown type {kind!r} (known: {', '.join(TYPE_BYTES)})")
        if not isinstance(offset, int) or not isinstance(count, int) or offset < 0 or count < 1:
            raise MatrixError(path, at, f"offset and count must be whole numbers, found {f!r}")
        if offset + TYPE_BYTES[kind] * count > size:
            raise MatrixError(path, at, f"ends at {offset + TYPE_BYTES[kind] * count}, past the struct's size {size}")
    # C pads a struct to a multiple of its alignment, its widest member's at least
    align = max((TYPE_BYTES[f[1]] for f in fields.values()), default=1)
    if size % align:
        raise MatrixError(path, f"{where}.size", f"{size} is not a multiple of {align}, the width of its widest "
                          f"member (C pads a struct to its alignment)")


def _check_constant(path, where, value):
    """A constant is an NvU32 (what the fields rmpeer packs them into hold), or the {byte, mask}
    of a bit in a caps table."""
    if not isinstance(value, dict):
        require_below(path, where, value, U32)
        return
    if set(value) != {"byte", "mask"}:
        raise MatrixError(path, where, f"must be a number or {{byte, mask}}, found keys {quoted(sorted(map(str, value)))}")
    require_below(path, f"{where}.byte", value["byte"], U32)
    require_below(path, f"{where}.mask", value["mask"], 1 << 8)    # a mask of one byte


def _resolve(matrix: DriverMatrix, release: str, driver: str, forced: bool, note: str) -> Abi:
    merged = matrix.merged(release)
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
    return Abi(release=release, driver=driver, forced=forced, note=note,
               escapes=merged["escapes"], classes=merged["classes"], controls=merged["controls"],
               constants=merged["constants"], bitfields=groups, structs=structs,
               encoding=matrix.encoding)
