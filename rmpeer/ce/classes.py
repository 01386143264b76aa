"""matrices/engines.yaml: the engine classes (GPFIFO channel, copy engine, usermode doorbell)
of each GPU generation, and picking them from a device's class list."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from rmpeer.abi.bitfields import BitField, BitFieldGroup
from rmpeer.tables.channel import LAUNCHES, channel_path
from rmpeer.tables.load import MATRICES, bit_values, load_yaml, parse_bits, require, require_below
from rmpeer.errors import ConfigError, MatrixError, quoted


@dataclass
class EngineClass:
    name: str
    methods: dict
    registers: dict
    userd: dict
    constants: dict
    bitfields: dict
    number: int | None = None   # from the driver ABI (drivers.yaml), bound by pick_generation

    def bits(self, group: str) -> BitFieldGroup:
        try:
            return self.bitfields[group]
        except KeyError:
            raise KeyError(f"{self.name} has no bit-field group {group!r} (matrices/engines.yaml)") from None


@dataclass
class Generation:
    name: str
    gpfifo: EngineClass
    copy: EngineClass
    usermode: EngineClass
    usermode_params: str | None = None   # the usermode class's alloc params struct (drivers.yaml)


# Generations whose copy engine has been driven through RM on real hardware.
MEASURED = ("hopper",)
# The methods rmpeer.ce.engine pushes, by the role of the class that names them: each measured
# generation's classes must number every one (tests/ce/test_classes.py keeps this in step).
METHODS_USED = {"gpfifo": ("SET_OBJECT", "SEM_ADDR_LO"),
                "copy": ("SET_SEMAPHORE_A", "LAUNCH_DMA", "OFFSET_IN_UPPER", "LINE_LENGTH_IN")}
# What else it reads of them by name: USERD members, registers and constants, and the bit-field
# groups it composes with the fields it sets and the value names it gives them (LAUNCH_DMA's
# come from channel.yaml: check_channel). A missing one was a KeyError at the first copy.
NAMES_USED = {"gpfifo": {"userd": ("GPPut",), "constants": ("GP_ENTRY__SIZE",)},
              "usermode": {"registers": ("NOTIFY_CHANNEL_PENDING",)}}
FIELDS_USED = {"gpfifo": {
    "DMA": {"SEC_OP": ("INC_METHOD",), "METHOD_COUNT": (), "METHOD_SUBCHANNEL": (), "METHOD_ADDRESS": ()},
    "GP_ENTRY0": {"GET": ()}, "GP_ENTRY1": {"GET_HI": (), "LENGTH": ()},
    "SEM_EXECUTE": {"OPERATION": ("ACQ_CIRC_GEQ",), "ACQUIRE_SWITCH_TSG": ("EN",), "PAYLOAD_SIZE": ("32BIT",)},
    "SEM_ADDR_LO": {"OFFSET": ()}, "SEM_ADDR_HI": {"OFFSET": ()}},
    "copy": {"LAUNCH_DMA": {}}}
ROLES = ("gpfifo", "copy", "usermode")
NUMBERS = ("methods", "registers", "userd", "constants")
WORDS = 1 << 32     # methods, registers, USERD members and constants are 32-bit values


def _groups(path, where, spec) -> dict:
    out = {}
    groups = require(path, where, spec, "bitfields", dict, optional=True) or {}
    for gname in groups:
        bits = {}
        for fname, f in (require(path, f"{where}.bitfields", groups, gname, dict)).items():
            at = f"{where}.bitfields.{gname}.{fname}"
            hi, lo = parse_bits(path, at, require(path, at, f, "bits", (str, int)) if isinstance(f, dict) else f)
            values = require(path, at, f, "values", dict, optional=True) if isinstance(f, dict) else None
            bits[fname] = BitField(fname, hi, lo, bit_values(path, at, values, hi, lo))
        out[gname] = BitFieldGroup(gname, bits)
    return out


def _numbers(path, where, spec, table) -> dict:
    """One of a class's tables of numbers, each a whole number of 32 bits."""
    out = dict(require(path, where, spec, table, dict, optional=True) or {})
    for name, value in out.items():
        require_below(path, f"{where}.{table}.{name}", value, WORDS)
    return out


def _class(path, name, spec) -> EngineClass:
    where = f"class {name}"
    if not isinstance(spec, dict):
        raise MatrixError(path, where, f"must be a mapping, found {type(spec).__name__}")
    numbers = {table: _numbers(path, where, spec, table) for table in NUMBERS}
    return EngineClass(name, **numbers, bitfields=_groups(path, where, spec))


def _generation(path, gname, spec, classes) -> Generation:
    where = f"generation {gname}"
    parts = {}
    for role in ROLES:
        cname = require(path, where, spec, role, str)
        if cname not in classes:
            raise MatrixError(path, f"{where}.{role}", f"class {cname!r} is not described under classes")
        parts[role] = classes[cname]
    params = require(path, where, spec, "usermode_params", str, optional=True)
    gen = Generation(gname, **parts, usermode_params=params)
    _check_methods(path, gen)
    if gname in MEASURED:
        _check_names(path, gen)
    return gen


def _check_names(path, gen) -> None:
    """A measured generation's classes hold every name rmpeer.ce.engine reads of them."""
    for role, tables in NAMES_USED.items():
        cls = getattr(gen, role)
        for table, names in tables.items():
            missing = [n for n in names if n not in getattr(cls, table)]
            if missing:
                raise MatrixError(path, f"class {cls.name}.{table}",
                                  f"missing {', '.join(missing)}, which rmpeer reads ({gen.name}'s {role} class)")
    for role, groups in FIELDS_USED.items():
        cls = getattr(gen, role)
        for gname, fields in groups.items():
            where = f"class {cls.name}.bitfields"
            group = cls.bitfields.get(gname)
            if group is None:
                raise MatrixError(path, where, f"missing {gname}, which rmpeer composes ({gen.name}'s {role} class)")
            for fname, values in fields.items():
                if fname not in group.fields:
                    raise MatrixError(path, f"{where}.{gname}", f"missing {fname}, which rmpeer sets")
                missing = [v for v in values if v not in group.fields[fname].values]
                if missing:
                    raise MatrixError(path, f"{where}.{gname}.{fname}.values",
                                      f"missing {', '.join(missing)}, which rmpeer sets")


def _check_methods(path, gen) -> None:
    """A measured generation names every method rmpeer pushes, and each method of a channel or
    copy class fits the method header as _method packs it (DMA.METHOD_ADDRESS holds the byte
    offset in 32-bit words): a bad one would stop a run midway, or push another method."""
    for role, names in METHODS_USED.items() if gen.name in MEASURED else ():
        cls = getattr(gen, role)
        missing = [m for m in names if m not in cls.methods]
        if missing:
            raise MatrixError(path, f"class {cls.name}.methods",
                              f"missing {', '.join(missing)}, which rmpeer pushes ({gen.name}'s {role} class)")
    header = gen.gpfifo.bitfields.get("DMA")
    field = header.fields.get("METHOD_ADDRESS") if header else None
    if field is None:
        return
    limit = 4 << (field.hi - field.lo + 1)
    for cls in (gen.gpfifo, gen.copy):
        for name, address in cls.methods.items():
            if address % 4 or address >= limit:
                raise MatrixError(path, f"class {cls.name}.methods.{name}",
                                  f"{address:#x} is not a method offset a channel can push (a multiple of 4 "
                                  f"below {limit:#x}: {gen.gpfifo.name}'s DMA.METHOD_ADDRESS holds it in words)")


@lru_cache(maxsize=2)
def load_engines(path: str | None = None) -> dict:
    path = Path(path or MATRICES / "engines.yaml")
    data = load_yaml(path)
    classes = {name: _class(path, name, spec) for name, spec in require(path, "file", data, "classes", dict).items()}
    gens = {gname: _generation(path, gname, spec, classes)
            for gname, spec in require(path, "file", data, "generations", dict).items()}
    missing = [name for name in MEASURED if name not in gens]
    if missing:     # the generations rmpeer drives: without one, every run of its GPUs would be refused
        raise MatrixError(path, "generations", f"missing {', '.join(missing)}, which rmpeer drives")
    return gens


def check_channel(channel: dict, engines: dict, path=None) -> None:
    """channel.yaml's values that rmpeer packs into a measured generation's bit fields fit them:
    each LAUNCH_DMA field of launch_copy and launch_release is one of the copy class's, with a
    value name it has or a number its bits hold, and copy_subchannel fits DMA.METHOD_SUBCHANNEL.
    (channel.yaml's loader sits below the engines' and cannot read them itself.) A mismatch
    was a KeyError or ValueError at the first copy, exit 5."""
    path = Path(path or channel_path())
    for gen in (engines[name] for name in MEASURED):
        launch = gen.copy.bitfields["LAUNCH_DMA"]
        for key in LAUNCHES:
            for fname, value in channel[key].items():
                at, field = f"channel.{key}.{fname}", launch.fields.get(fname)
                if field is None:
                    raise MatrixError(path, at, f"not a field of {gen.copy.name}'s LAUNCH_DMA in engines.yaml "
                                                f"(its fields: {', '.join(launch.fields)})")
                if isinstance(value, str) and value not in field.values:
                    raise MatrixError(path, at, f"{quoted(value)} is not a value of {gen.copy.name}'s LAUNCH_DMA."
                                                f"{fname} in engines.yaml (its values: {', '.join(field.values)})")
                if isinstance(value, int) and not 0 <= value < field.holds_below:
                    raise MatrixError(path, at, f"{quoted(value)} does not fit {gen.copy.name}'s LAUNCH_DMA.{fname} "
                                                f"(bits {field.hi}:{field.lo} in engines.yaml)")
        _check_regions(path, channel, gen.gpfifo)
        for register in NAMES_USED["usermode"]["registers"]:      # written through the doorbell mapping
            at = gen.usermode.registers[register]
            if at + 4 > channel["usermode_map_size"]:
                raise MatrixError(path, "channel.usermode_map_size", f"{channel['usermode_map_size']:#x} bytes do not "
                                  f"hold {gen.usermode.name}'s {register} at {at:#x} (engines.yaml)")
        sub = gen.gpfifo.bitfields["DMA"].fields["METHOD_SUBCHANNEL"]
        if channel["copy_subchannel"] >= sub.holds_below:
            raise MatrixError(path, "channel.copy_subchannel", f"{quoted(channel['copy_subchannel'])} does not fit "
                              f"{gen.gpfifo.name}'s DMA.METHOD_SUBCHANNEL (bits {sub.hi}:{sub.lo} in engines.yaml)")


def _check_regions(path, channel, gpfifo) -> None:
    """The ring, USERD and pushbuffer share the control block and must not overlap: the GPU would
    read pushbuffer words as GPPut, or ring entries over USERD, and fault on a healthy host (NOT
    CERTIFIED). USERD reaches at least past its last member's first word."""
    regions = sorted([
        (channel["ring_offset"], channel["ring_offset"] + channel["ring_entries"] * gpfifo.constants["GP_ENTRY__SIZE"],
         "ring_offset", "the ring (ring_entries x GP_ENTRY__SIZE)"),
        (channel["userd_offset"], channel["userd_offset"] + max(gpfifo.userd.values()) + 4, "userd_offset",
         f"USERD (to {gpfifo.name}'s last member)"),
        (channel["pushbuffer_offset"], channel["control_block_size"], "pushbuffer_offset", "the pushbuffer")])
    for (start, end, key, what), (later, _, later_key, later_what) in zip(regions, regions[1:]):
        if end > later:
            raise MatrixError(path, f"channel.{later_key}", f"{later_what} at {later:#x} overlaps {what}, "
                              f"{start:#x} to {end:#x} (channel.{key})")
    if regions[-1][1] > channel["control_block_size"]:
        start, end, key, what = regions[-1]
        raise MatrixError(path, f"channel.{key}", f"{what}, {start:#x} to {end:#x}, runs past the control block "
                          f"(control_block_size {channel['control_block_size']:#x})")


def pick_generation(class_list, abi, engines=None) -> Generation:
    """The measured generation whose three classes the device offers, with the class numbers
    of the driver's ABI (drivers.yaml is their one source); a clear refusal otherwise."""
    engines = engines or load_engines()
    offered = set(class_list)
    number = lambda c: abi.classes.get(c.name)
    for name in MEASURED:
        gen = engines.get(name)
        parts = (gen.gpfifo, gen.copy, gen.usermode) if gen else ()
        if gen and all(number(c) in offered for c in parts):
            return replace(gen, **{role: replace(getattr(gen, role), number=number(getattr(gen, role)))
                                   for role in ("gpfifo", "copy", "usermode")})
    wanted = "; ".join(
        f"{g}: " + ", ".join(_shown(c, number(c), offered) for c in (engines[g].gpfifo, engines[g].copy, engines[g].usermode))
        for g in MEASURED if g in engines)
    raise ConfigError(f"this GPU offers none of the copy-engine class sets rmpeer has driven on real "
                      f"hardware ({wanted}); other generations are refused rather than guessed")


def _shown(c, number, offered) -> str:
    if number is None:
        return f"{c.name} (not in this driver's ABI)"
    return f"{c.name} ({number:#x}){'' if number in offered else ' MISSING'}"
