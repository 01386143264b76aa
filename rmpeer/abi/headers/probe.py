"""Measuring ABI facts in NVIDIA's headers with the system C compiler.

`probe(src, wanted)` takes an open-gpu-kernel-modules source tree and the names to look
for (every name drivers.yaml uses: `wanted_names`), writes one small C file that includes
the headers declaring them, and lets the compiler answer: sizeof and offsetof of every
struct field, the value of every macro, the hi:lo bits of every DRF range. Nothing is
parsed out of C by hand; the headers are only searched to know which ones to include.
A name the tree lacks is left out of the answer (a struct field that no longer exists,
a constant removed), so comparing answers between releases shows additions and removals.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rmpeer.errors import ConfigError
from rmpeer.abi.structs import TYPE_BYTES

# Where NVIDIA keeps the headers user space compiles against (the SDK, the kernel
# interface, the Unix escapes); searched in this order when a name is in two of them.
INCLUDE_ROOTS = ("src/common/sdk/nvidia/inc", "kernel-open/common/inc", "src/nvidia/arch/nvalloc/unix/include")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
_TYPEDEF_END = re.compile(r"}\s*(\w+)\s*;")
_TYPEDEF_LINE = re.compile(r"^\s*typedef\s[^;{}]*?\b(\w+)\s*;", re.M)
# An enumerator (`NAME = 4,` inside a typedef enum): some RM values are enum constants,
# not macros (NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS_*, NV2080_CTRL_GPU_RECOVERY_ACTION_*).
_ENUMERATOR = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*[^=\s][^;{}]*?,?[ \t]*(?://.*)?$", re.M)
_ERROR_LINE = re.compile(r"^probe\.c:(\d+):\d+: (?:fatal )?error", re.M)
_BY_SIZE = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}


@dataclass
class Wanted:
    """The names to measure: macros by how drivers.yaml stores them, struct fields by kind."""

    values: set = field(default_factory=set)       # macros whose value is a number
    ranges: set = field(default_factory=set)       # DRF ranges 'hi:lo' (bit fields, byte:mask caps)
    structs: dict = field(default_factory=dict)    # struct -> {field: (kind, is_array)}


# A field kind for callers that want only where a member is and how big it is, whatever its
# type (a scalar, an array, a nested struct): no element size or signedness is asked of it.
ANY = "any"


def tree_release(src: Path) -> str | None:
    """The release a source tree is (NVIDIA_VERSION in its version.mk)."""
    mk = Path(src) / "version.mk"
    if mk.is_file():
        m = re.search(r"^NVIDIA_VERSION\s*=\s*(\S+)", _text(mk), re.M)
        if m:
            return m.group(1)
    return None


def check_tree(src: Path) -> None:
    roots = [Path(src) / r for r in INCLUDE_ROOTS]
    if not Path(src).is_dir() or not all(r.is_dir() for r in roots):
        raise ConfigError(f"{src}: not an open-gpu-kernel-modules source tree (no {INCLUDE_ROOTS[0]}); "
                          f"extract one with: git -C open-gpu-kernel-modules archive TAG | tar -x -C DIR")


def _declared(src: Path, names: set) -> tuple[list[str], frozenset]:
    """(the headers that declare any of `names`, the names among them that are enumerators)."""
    found, headers, enumerators = set(), [], set()
    for root in INCLUDE_ROOTS:
        base = Path(src) / root
        for path in sorted(base.rglob("*.h")):
            if not path.is_file():      # a folder, a broken link, a FIFO (its read never ends) is no header
                continue
            text = _text(path)
            enums = set(_ENUMERATOR.findall(text)) & names
            declared = (set(_DEFINE.findall(text)) | set(_TYPEDEF_END.findall(text))
                        | set(_TYPEDEF_LINE.findall(text)) | enums) & names
            enumerators |= enums
            if declared - found:
                found |= declared
                headers.append(str(path.relative_to(base)))
    return headers, frozenset(enumerators)


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _compiler() -> tuple:
    """The C compiler's command: CC as the shell splits it (CC="ccache gcc"), else cc, gcc or clang."""
    try:
        cc = tuple(shlex.split(os.environ.get("CC") or "")) or tuple(
            filter(None, [shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")]))
    except ValueError as exc:
        raise ConfigError(f"CC={os.environ.get('CC')!r}: not a command ({exc})") from None
    if not cc:
        raise ConfigError("no C compiler found (cc, gcc or clang): it measures the structs in the headers")
    return cc


def _prelude(headers) -> str:
    includes = "".join(f'#if __has_include("{h}")\n#include "{h}"\n#endif\n' for h in headers)
    return f'#include <stddef.h>\n#include <stdio.h>\n#include "nvtypes.h"\n{includes}'


def _run(cmd, cwd) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except OSError as exc:
        raise ConfigError(f"{cmd[0]}: cannot run it ({exc.strerror or exc}); set CC to a C compiler") from None


def _macro_bodies(cc, flags, prelude, work) -> dict[str, str]:
    (work / "macros.c").write_text(prelude)
    done = _run([*cc, *flags, "-E", "-dM", "macros.c"], work)
    if done.returncode:
        raise ConfigError(f"the headers do not preprocess: {done.stderr.strip().splitlines()[:3]}")
    bodies = {}
    for line in done.stdout.splitlines():
        m = re.match(r"#define (\w+)(\([^)]*\))? ?(.*)", line)
        if m and not m.group(2):
            bodies[m.group(1)] = m.group(3)
    return bodies


def _expand(body: str, bodies: dict, depth: int = 8) -> str:
    """An object-like macro's text with the macros in it replaced (to see if it is 'hi:lo')."""
    for _ in range(depth):
        new = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: f"({bodies[m.group(0)]})" if m.group(0) in bodies else m.group(0),
                     body)
        if new == body:
            break
        body = new
    return body


def _is_range(text: str) -> bool:
    return ":" in text and "?" not in text


def _probe_lines(wanted: Wanted, bodies: dict, enumerators: frozenset = frozenset()) -> list[str]:
    lines = []
    for name in sorted(wanted.values | wanted.ranges):
        if name not in bodies:
            if name in wanted.values and name in enumerators:   # the compiler evaluates it
                lines.append(f'printf("V %s %lld\\n", "{name}", (long long)({name}));')
            continue
        if _is_range(_expand(bodies[name], bodies)):
            lines.append(f'printf("R %s %lld %lld\\n", "{name}", (long long)(1 ? {name}), (long long)(0 ? {name}));')
        else:
            lines.append(f'printf("V %s %lld\\n", "{name}", (long long)({name}));')
    for st, fields in sorted(wanted.structs.items()):
        lines.append(f'printf("S %s %zu\\n", "{st}", sizeof({st}));')
        for fname, (kind, is_array) in sorted(fields.items()):
            member = f"(({st} *)0)->{fname}"
            elem = f"sizeof({member}[0])" if is_array else f"sizeof({member})"
            signed = "0" if is_array or kind in ("ptr", "char", ANY) else f"((__typeof__({member}))-1 < 0)"
            lines.append(f'printf("F %s %s %zu %zu %zu %d\\n", "{st}", "{fname}", '
                         f'(size_t)__builtin_offsetof({st}, {fname}), sizeof({member}), {elem}, (int)({signed}));')
    return lines


def _compile(cc, flags, prelude, lines, work) -> tuple[Path, set[int]]:
    """Builds the probe; a line the compiler rejects (a name this tree lacks) is dropped."""
    dropped: set[int] = set()
    head = prelude + "int main(void) {\n"
    first = head.count("\n") + 1
    for _ in range(6):
        body = "".join(("\n" if i in dropped else line + "\n") for i, line in enumerate(lines))
        (work / "probe.c").write_text(head + body + "return 0;\n}\n")
        done = _run([*cc, *flags, "-w", "-fmax-errors=0", "-o", "probe", "probe.c"], work)
        if done.returncode == 0:
            return work / "probe", dropped
        bad = {int(n) - first for n in _ERROR_LINE.findall(done.stderr)} & set(range(len(lines)))
        if not bad - dropped:
            raise ConfigError(f"the probe does not compile: {done.stderr.strip().splitlines()[:4]}")
        dropped |= bad
    raise ConfigError("the probe still does not compile after dropping the names the tree lacks")


def probe(src: Path, wanted: Wanted) -> dict:
    """Raw measurements: {'values': {name: int}, 'ranges': {name: (hi, lo)},
    'structs': {name: {'size': n, 'fields': {f: (offset, size, elem_size, signed)}}}}."""
    check_tree(src)
    cc = _compiler()
    flags = [f"-I{Path(src).resolve() / r}" for r in INCLUDE_ROOTS]
    names = wanted.values | wanted.ranges | set(wanted.structs)
    headers, enumerators = _declared(src, names)
    prelude = _prelude(headers)
    with tempfile.TemporaryDirectory(prefix="rmpeer-abi-") as tmp:
        work = Path(tmp)
        bodies = _macro_bodies(cc, flags, prelude, work)
        binary, _ = _compile(cc, flags, prelude, _probe_lines(wanted, bodies, enumerators), work)
        done = _run([str(binary)], work)
        if done.returncode:
            raise ConfigError(f"the probe failed to run: {done.stderr.strip()[:200]}")
    out = {"values": {}, "ranges": {}, "structs": {}}
    for line in done.stdout.splitlines():
        kind, name, *rest = line.split()
        if kind == "V":
            out["values"][name] = int(rest[0])
        elif kind == "R":
            out["ranges"][name] = (int(rest[0]), int(rest[1]))
        elif kind == "S":
            out["structs"].setdefault(name, {"size": int(rest[0]), "fields": {}})
        else:
            offset, size, elem, signed = (int(x) for x in rest[1:])
            out["structs"][name]["fields"][rest[0]] = (offset, size, elem, bool(signed))
    return out


def field_spec(kind: str, is_array: bool, offset: int, size: int, elem: int, signed: bool) -> list:
    """A drivers.yaml field [offset, type(, count)] from what the compiler measured; the
    kind drivers.yaml had is kept where it still fits (a u8 list may hold a struct array)."""
    if kind == "char" or (is_array and kind == "u8" and elem != 1):
        return [offset, kind, size]
    if kind == "ptr" and size == TYPE_BYTES["ptr"]:
        return [offset, "ptr"]
    fits = elem == TYPE_BYTES.get(kind) and (kind not in ("u32", "i32") or signed == (kind == "i32"))
    if not fits:
        kind = "i32" if elem == 4 and signed else _BY_SIZE.get(elem, "u8")
        if kind == "u8" and elem != 1:
            return [offset, "u8", size]
    return [offset, kind, size // elem] if is_array else [offset, kind]
