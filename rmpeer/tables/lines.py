"""Where in a matrix file an entry is written, so a schema error names its line.

The schema checks run on the parsed data (plain dicts, which keep no line numbers); when one
fails, the file is composed again (yaml nodes keep their marks) and the key path of the
faulty entry is looked up there. That costs a parse only on the way to an error."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from rmpeer.errors import MatrixError


@lru_cache(maxsize=8)
def _root(path: str, mtime_ns: int):
    import yaml     # only on the way to an error (rmpeer.tables.load: a wheel's runs never load it)

    try:
        return yaml.compose(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return None      # the loader has refused such a file already, with its own line


def key_line(path, keys) -> int | None:
    """The 1-based line of the deepest key of `keys` (a path of mapping keys, e.g.
    ["topologies", "h200x1", "floors", "size"]) found in the file; None if not even the first."""
    path = Path(path)
    try:
        node = _root(str(path), path.stat().st_mtime_ns)
    except OSError:
        return None
    import yaml

    line = None
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        found = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(key)), None)
        if found is None:
            break
        line, node = found[0].start_mark.line + 1, found[1]
    return line


def with_line(exc: MatrixError, keys) -> MatrixError:
    """`exc` again, its entry prefixed with the line where `keys` is written ("line 12: ...")."""
    if exc.entry.startswith("line "):
        return exc
    line = key_line(exc.path, keys)
    return exc if line is None else MatrixError(exc.path, f"line {line}: {exc.entry}", exc.problem)


def entry_keys(entry: str, kind: str, name: str, section: str) -> list[str]:
    """The key path of an entry as the loaders name it: "topology h200x1.floors.size" ->
    [section, "h200x1", "floors", "size"]."""
    rest = entry.removeprefix(f"{kind} {name}").lstrip(".")
    return [section, name, *(rest.split(".") if rest else [])]
