"""`rmpeer abi fitness-facts [SRC]`: the perf and NVLink facts of many tags, by compiling.

tests/run/test_fitness_offline.py checks drivers.yaml's perf and NVLink entries against
fixtures/abi/fitness-facts.json, an oracle read from NVIDIA's headers and not from
drivers.yaml. This command writes it. The names it measures are data
(fixtures/abi/fitness-facts.names.yaml); the values come from the C compiler, through the
same probe as `rmpeer abi from-headers` (probe.py). Whether NV20_SUBDEVICE_0 dispatches a
control at a tag is read from the tag's generated export table: a control it lacks answers
NV_ERR_NOT_SUPPORTED on a live host.

SRC (or RMPEER_DRIVER_SRC) is a clone of open-gpu-kernel-modules: each tag is read from its
history with `git archive`. The tags are every drivers.yaml entry plus the first and last
tag of each of its branches, or those named with --tags. The command line is rmpeer.cli.abi.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.paths import fitness_facts_file, fitness_names_file
from rmpeer.abi.drivers import DriverMatrix, parse_version, version_key
from rmpeer.tables.load import load_yaml
from rmpeer.abi.headers.parity import archive_into
from rmpeer.abi.headers.probe import ANY, INCLUDE_ROOTS, Wanted, probe
from rmpeer.abi.headers.sources import HOW_TO_GET, tags_of

NAMES = fitness_names_file()
OUTPUT = fitness_facts_file()
EXPORTS = "src/nvidia/generated/g_subdevice_nvoc.c"
ABOUT = ("Compiled by `rmpeer abi fitness-facts` (the C compiler, sizeof/offsetof) from open-gpu-kernel-modules "
         "tags; per tag: struct [size, {field: offset}], constants, controls {name: [cmd, exported by "
         "NV20_SUBDEVICE_0]}, names without their NV2080_CTRL_ prefix. Tags: every drivers.yaml entry plus the "
         "first and last tag of each branch.")
# One entry of the generated export table: the method id, then (further on) the handler's name.
_EXPORT = re.compile(r"/\*methodId=\*/\s*(0x[0-9a-fA-F]+)u?,.*?/\*func=\*/\s*\"(\w+)\"", re.S)


def load_names(path: Path = NAMES) -> dict:
    doc = load_yaml(path)
    names = {"strip": doc.get("strip", ""), "structs": doc.get("structs") or {},
             "constants": doc.get("constants") or [], "controls": doc.get("controls") or []}
    # its shape, checked once: a list where a mapping belongs was an AttributeError mid-run
    shapes = (isinstance(names["strip"], str) and isinstance(names["structs"], dict)
              and all(isinstance(v, list) and all(isinstance(f, str) for f in v) for v in names["structs"].values())
              and all(isinstance(names[k], list) and all(isinstance(n, str) for n in names[k])
                      for k in ("constants", "controls")))
    if not shapes:
        raise ConfigError(f"{path}: not a names file: strip is text, structs maps each struct to a list of its "
                          f"fields, constants and controls are lists of names")
    return names


def wanted(names: dict) -> Wanted:
    return Wanted(values=set(names["constants"]) | set(names["controls"]),
                  structs={s: {f: (ANY, False) for f in fields} for s, fields in names["structs"].items()})


def exported_methods(root: Path) -> set[int]:
    """The control commands NV20_SUBDEVICE_0 dispatches at this tree (none if it lacks the table)."""
    path = Path(root) / EXPORTS
    return {int(m.group(1), 16) for m in _EXPORT.finditer(path.read_text(errors="replace"))} if path.is_file() else set()


def tag_facts(root: Path, names: dict) -> dict:
    """One tag's facts in the fixture's form; a name the tag lacks is left out."""
    got, exported = probe(root, wanted(names)), exported_methods(root)
    short = lambda name: name.removeprefix(names["strip"])   # noqa: E731
    values = got["values"]
    return {
        "constants": {short(n): values[n] for n in names["constants"] if n in values},
        "controls": {short(n): [values[n], values[n] in exported] for n in names["controls"] if n in values},
        "structs": {short(s): [m["size"], {f: spec[0] for f, spec in m["fields"].items()}]
                    for s, m in got["structs"].items()},
    }


def default_tags(available: set[str], matrix: DriverMatrix) -> list[str]:
    """Every drivers.yaml entry, and the first and last tag of each of its branches."""
    chosen = set(matrix.releases)
    for branch in matrix.branches():
        in_branch = sorted((t for t in available if _branch(t) == branch), key=version_key)
        chosen |= {in_branch[0], in_branch[-1]} if in_branch else set()
    return sorted(chosen, key=version_key)


def _branch(tag: str) -> int | None:
    try:
        return parse_version(tag)[0]
    except Exception:   # a tag that is not a release number
        return None


def collect(src: Path, tags: list[str], names: dict) -> dict[str, dict]:
    available = tags_of(src)
    if not available:
        raise ConfigError(f"{src}: not a clone of open-gpu-kernel-modules (no tags); get one with: {HOW_TO_GET}")
    absent = [t for t in tags if t not in available]
    if absent:
        raise ConfigError(f"{src} has no tag {', '.join(absent)} (git -C {src} fetch --tags)")
    if len(set(tags)) != len(tags):
        raise ConfigError(f"--tags: a tag is given twice ({', '.join(sorted({t for t in tags if tags.count(t) > 1}))})")
    out = {}
    with tempfile.TemporaryDirectory(prefix="rmpeer-facts-") as tmp:
        for tag in tags:
            dest = Path(tmp) / str(len(out))      # a tag's name may hold '/': never a path here
            dest.mkdir()
            out[tag] = tag_facts(archive_into(src, tag, dest, ("version.mk", *INCLUDE_ROOTS, EXPORTS)), names)
    return out


def render(per_tag: dict[str, dict]) -> bytes:
    """The fixture's bytes: compact, keys sorted, no trailing newline (same facts, same bytes)."""
    return json.dumps({"about": ABOUT, "tags": per_tag}, separators=(",", ":"), sort_keys=True).encode()
