"""A release's drivers.yaml entry from its headers: `rmpeer abi from-headers SRC [--check]`.

The names come from drivers.yaml itself (every name any entry uses); the values come from
the C compiler reading the tree (probe.py). The entry printed holds only what differs from
the entry the release derives from (its parent), in drivers.yaml's own form: a changed
struct or bit-field group is restated whole. `--check` compares the ABI drivers.yaml
resolves for the release with the tree's, key by key. The command line is rmpeer.cli.abi.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from rmpeer.abi.drivers import SECTIONS, DriverMatrix
from rmpeer.tables.load import parse_bits
from rmpeer.abi.headers.probe import Wanted, field_spec, probe


def wanted_names(matrix: DriverMatrix) -> tuple[Wanted, dict]:
    """Every name drivers.yaml uses, and how it stores each (the last entry naming it wins)."""
    wanted, shape = Wanted(), {s: {} for s in SECTIONS}
    for entry in matrix.entries:
        for section in ("escapes", "classes"):
            for name, value in (entry.get(section) or {}).items():
                wanted.values.add(name)
                shape[section][name] = value
        for name, spec in (entry.get("controls") or {}).items():
            wanted.values.add(name)
            shape["controls"][name] = spec["params"]
        for name, value in (entry.get("constants") or {}).items():
            (wanted.ranges if isinstance(value, dict) else wanted.values).add(name)
            shape["constants"][name] = "byte:mask" if isinstance(value, dict) else "value"
        for group, fields in (entry.get("bitfields") or {}).items():
            known = shape["bitfields"].setdefault(group, {})
            for fname, spec in fields.items():
                wanted.ranges.add(f"{group}_{fname}")
                values = known.setdefault(fname, [])
                for v in spec.get("values") or {}:
                    wanted.values.add(f"{group}_{fname}_{v}")
                    values.append(v) if v not in values else None
        for name, spec in (entry.get("structs") or {}).items():
            fields = shape["structs"].setdefault(name, {})
            for fname, f in spec["fields"].items():
                fields[fname] = (f[1], len(f) == 3)
                wanted.structs.setdefault(name, {})[fname] = fields[fname]
    return wanted, shape


def tree_abi(src: Path, matrix: DriverMatrix) -> dict[str, dict]:
    """The tree's ABI in drivers.yaml's sections, for every name drivers.yaml uses."""
    wanted, shape = wanted_names(matrix)
    got = probe(src, wanted)
    values, ranges = got["values"], got["ranges"]
    out = {s: {} for s in SECTIONS}
    for section in ("escapes", "classes"):
        out[section] = {n: values[n] for n in shape[section] if n in values}
    out["controls"] = {n: {"cmd": values[n], "params": p} for n, p in shape["controls"].items() if n in values}
    for name, how in shape["constants"].items():
        if how == "byte:mask" and name in ranges:
            out["constants"][name] = {"byte": ranges[name][0], "mask": ranges[name][1]}
        elif how == "value" and name in values:
            out["constants"][name] = values[name]
        elif how == "value" and name in ranges:   # a DRF bit stored as its mask
            hi, lo = ranges[name]
            out["constants"][name] = ((1 << (hi - lo + 1)) - 1) << lo
    for group, fields in shape["bitfields"].items():
        found = {}
        for fname, names in fields.items():
            if f"{group}_{fname}" not in ranges:
                continue
            hi, lo = ranges[f"{group}_{fname}"]
            spec = {"bits": f"{hi}:{lo}"}
            vals = {v: values[f"{group}_{fname}_{v}"] for v in names if f"{group}_{fname}_{v}" in values}
            if vals:
                spec["values"] = vals
            found[fname] = spec
        if found:
            by_bits = sorted(found.items(), key=lambda kv: parse_bits("", "", kv[1]["bits"])[::-1])
            out["bitfields"][group] = dict(by_bits)   # low bits first, as the headers list them
    for name, measured in got["structs"].items():
        fields = {f: field_spec(*shape["structs"][name][f], *m) for f, m in measured["fields"].items()}
        out["structs"][name] = {"size": measured["size"],
                                "fields": dict(sorted(fields.items(), key=lambda kv: (kv[1][0], kv[0])))}
    return out


def normalise(section: str, value):
    """A value in one comparable form (bits as numbers, fields as (offset, type, count))."""
    if section == "structs":
        return value["size"], {f: tuple((list(s) + [1])[:3]) for f, s in value["fields"].items()}
    if section == "bitfields":
        return {f: (parse_bits("", f, s["bits"]), dict(s.get("values") or {})) for f, s in value.items()}
    return value


def differences(old: dict, new: dict) -> dict[str, dict]:
    """Per section: keys whose value differs or that only `new` has ({key: new value}),
    and keys only `old` has (under 'gone')."""
    changed = {s: {} for s in SECTIONS}
    gone = []
    for s in SECTIONS:
        for key, value in new[s].items():
            if key not in old[s] or normalise(s, old[s][key]) != normalise(s, value):
                changed[s][key] = value
        gone += [f"{s}.{key}" for key in old[s] if key not in new[s]]
    changed["gone"] = gone
    return changed


def entry_for(matrix: DriverMatrix, release: str, tree: dict) -> tuple[dict, list[str]]:
    """The drivers.yaml entry of `release` (what differs from its parent) and the keys that
    stopped existing, which drivers.yaml has no way to state."""
    parent = matrix.parent_for(release)
    base = matrix.merged(parent) if parent else {s: {} for s in SECTIONS}
    diff = differences(base, tree)
    entry = {"version": release}
    if parent:
        entry["parent"] = parent
    entry["source"] = f"open-gpu-kernel-modules tag {release}"
    entry.update({s: diff[s] for s in SECTIONS if diff[s]})
    return entry, diff["gone"]


def check(matrix: DriverMatrix, release: str, tree: dict) -> list[str]:
    """Where the ABI drivers.yaml resolves for `release` differs from the tree's."""
    chosen = matrix.select(release)
    have = matrix.merged(chosen)
    diff = differences(have, tree)
    out = [f"{s}.{k}: drivers.yaml ({chosen}) {_show(s, have[s].get(k))}, headers {_show(s, v)}"
           for s in SECTIONS for k, v in diff[s].items()]
    return out + [f"{key}: in drivers.yaml ({chosen}), not in the headers" for key in diff["gone"]]


def _show(section, value) -> str:
    if value is None:
        return "absent"
    if section == "structs":
        return f"{value['size']} bytes {{f: list(s) for f, s in value['fields'].items()}}"
    return str(value)


# ---- drivers.yaml's own text form -------------------------------------------------------

def _scalar(value) -> str:
    if isinstance(value, str):
        plain = yaml.safe_load(value) == value and value.strip() == value and ":" not in value
        return value if plain else f'"{value}"'
    return str(value)


def _hex(value: int) -> str:
    return hex(value) if value >= 0 else str(value)


def _flow(mapping: dict, render=_scalar) -> str:
    return "{" + ", ".join(f"{_scalar(k)}: {render(v)}" for k, v in mapping.items()) + "}"


def why(section: str, old, new) -> str:
    """What changed in a struct or a bit-field group, for the comment beside it."""
    if old is None:
        return "new"
    if section == "structs":
        (size0, f0), (size1, f1) = normalise(section, old), normalise(section, new)
        parts = [f"+{f}@{s[0]}" for f, s in f1.items() if f not in f0]
        parts += [f"-{f}" for f in f0 if f not in f1]
        parts += [f"{f} {list(f0[f])}->{list(s)}" for f, s in f1.items() if f in f0 and f0[f] != s]
        return ", ".join(parts + ([f"sizeof {size0}->{size1}"] if size0 != size1 else []))
    if section == "bitfields":
        g0, g1 = normalise(section, old), normalise(section, new)
        parts = [f"+{f}" for f in g1 if f not in g0] + [f"-{f}" for f in g0 if f not in g1]
        for f in (f for f in g1 if f in g0 and g0[f] != g1[f]):
            (b0, v0), (b1, v1) = g0[f], g1[f]
            parts.append(f"{f} bits {b0[0]}:{b0[1]}->{b1[0]}:{b1[1]}" if b0 != b1 else
                         f"{f} " + " ".join([f"+{v}" for v in v1 if v not in v0] + [f"-{v}" for v in v0 if v not in v1]
                                            + [f"{v}={v1[v]}" for v in v1 if v in v0 and v0[v] != v1[v]]))
        return ", ".join(parts)
    return ""


def render_entry(entry: dict, *, gone=(), notes=(), base=None) -> str:
    """The entry as drivers.yaml writes one (two-space list item under `releases:`); with
    `base` (the parent's merged sections), each restated struct or group says what changed."""
    def said(section, name):
        return f"   # {why(section, base[section].get(name), entry[section][name])}" if base is not None else ""

    out = [f"  # {n}" for n in notes]
    if gone:
        out.append(f"  # gone in this release, which drivers.yaml cannot state: {', '.join(gone)}")
    out.append(f'  - version: "{entry["version"]}"')
    if entry.get("parent"):
        out.append(f'    parent: "{entry["parent"]}"')
    out.append(f'    source: "{entry["source"]}"')
    for section in ("escapes", "classes"):
        if entry.get(section):
            out.append(f"    {section}:")
            out += [f"      {k}: {_hex(v)}" for k, v in entry[section].items()]
    if entry.get("controls"):
        out.append("    controls:")
        out += [f"      {k}: {{cmd: {_hex(v['cmd'])}, params: {v['params']}}}" for k, v in entry["controls"].items()]
    if entry.get("constants"):
        out.append("    constants:")
        for k, v in entry["constants"].items():
            out.append(f"      {k}: {{byte: {v['byte']}, mask: {v['mask']:#04x}}}" if isinstance(v, dict)
                       else f"      {k}: {v if 0 <= v < 4096 else _hex(v)}")
    if entry.get("bitfields"):
        out.append("    bitfields:")
        for group, fields in entry["bitfields"].items():
            out.append(f"      {group}:{said('bitfields', group)}")
            for fname, spec in fields.items():
                values = f", values: {_flow(spec['values'])}" if spec.get("values") else ""
                out.append(f'        {_scalar(fname)}: {{bits: "{spec["bits"]}"{values}}}')
    if entry.get("structs"):
        out.append("    structs:")
        for name, spec in entry["structs"].items():
            out += [f"      {name}:{said('structs', name)}", f"        size: {spec['size']}", "        fields:"]
            out += [f"          {f}: [{', '.join(str(x) for x in s)}]" for f, s in spec["fields"].items()]
    return "\n".join(out) + "\n"
