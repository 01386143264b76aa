"""No import circle inside rmpeer (issue 26): every `import` and `from ... import`, those inside
functions included, is an edge from its module to the rmpeer module it names; the graph has
no strongly connected component of two or more modules. A circle is named with its members."""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
PACKAGE = Path(__file__).resolve().parents[2] / "rmpeer"


def modules() -> dict:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports_of(name: str, path: Path, known: dict) -> set:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for target in names:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
    return edges


def circles(graph: dict) -> list:
    """Tarjan's strongly connected components of two or more members."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_rmpeer_has_no_import_circle():
    known = modules()
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    assert circles(graph) == []


def test_a_circle_is_found_and_named():
    """The finder itself, on a hand-made graph: a -> b -> c -> a and d -> a."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_a_function_level_import_counts(tmp_path):
    """`from ..cli import main` inside a function of rmpeer/fleet/node.py is an edge."""
    known = {"rmpeer": None, "rmpeer.cli": None, "rmpeer.fleet": None, "rmpeer.fleet.node": None}
    path = tmp_path / "node.py"
    path.write_text("def f():\n    from ..cli import main\n")
    assert imports_of("rmpeer.fleet.node", path, known) == {"rmpeer.cli"}
