"""matrices/engines.yaml: the engine classes (GPFIFO channel, copy engine, usermode doorbell)
of each GPU generation, and picking them from a device's class list."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from rmpeer.abi.bitfields import BitField, BitFieldGroup
from rmpeer.tables.load import MATRICES, load_yaml, parse_bits, require
from rmpeer.errors import ConfigError


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


def _groups(path, where, spec) -> dict:
    out = {}
    for gname, fields in (spec or {}).items():
        bits = {}
        for fname, f in (fields or {}).items():
            hi, lo = parse_bits(path, f"{where}.{gname}.{fname}", f["bits"] if isinstance(f, dict) else f)
            values = dict(f.get("values") or {}) if isinstance(f, dict) else {}
            bits[fname] = BitField(fname, hi, lo, values)
        out[gname] = BitFieldGroup(gname, bits)
    return out


@lru_cache(maxsize=2)
def load_engines(path: str | None = None) -> dict:
    path = Path(path or MATRICES / "engines.yaml")
    data = load_yaml(path)
    classes = {}
    for name, spec in require(path, "file", data, "classes", dict).items():
        where = f"class {name}"
        classes[name] = EngineClass(
            name,
            dict(spec.get("methods") or {}), dict(spec.get("registers") or {}),
            dict(spec.get("userd") or {}), dict(spec.get("constants") or {}),
            _groups(path, where, spec.get("bitfields")))
    gens = {}
    for gname, spec in require(path, "file", data, "generations", dict).items():
        parts = {}
        for role in ("gpfifo", "copy", "usermode"):
            cname = require(path, f"generation {gname}", spec, role, str)
            if cname not in classes:
                raise ConfigError(f"{path}: generation {gname}: {role} class {cname} is not described")
            parts[role] = classes[cname]
        gens[gname] = Generation(gname, **parts, usermode_params=spec.get("usermode_params"))
    return gens


# Generations whose copy engine has been driven through RM on real hardware.
MEASURED = ("hopper",)


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
