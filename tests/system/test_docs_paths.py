"""Every module the pages name exists: each `rmpeer/...` path, each `package/module.py` of
rmpeer or of the checkout, and each dotted `rmpeer.x.y` name in README.md and the other committed pages (docs/evidence/ is history: it keeps the
paths of its day). A module moved without its pages fails here, naming the page and line."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]          # the checkout's, beside tests/
HISTORY = ("docs/evidence/",)
OUTPUT = {"reports", "build", "dist", "node_modules"}      # what runs and builds leave: not pages

# A path inside the repository: not one under /run, /var/lib or ~/.local (the lock, the key).
PATH = re.compile(r"(?<![\w/.~-])rmpeer/[\w/.*-]*[\w/*]")
# A module named from inside the package, as the layer table does: `run/spec.py`, `tests/mutants.py`.
SHORT = re.compile(r"`([a-z_]+/[\w/]*\.py)`")
# rmpeer.package.module[.name...]; one segment alone (rmpeer.prom, rmpeer.lock) is a file name.
DOTTED = re.compile(r"(?<![\w/.-])rmpeer(?:\.[A-Za-z_]\w*){2,}")

# Named by the pages as the code's shape, and added by branches merged with this one
# (issue 26: onepath adds the assembler, layers splits cli/commands.py). Once they are
# merged, test_pending_paths_are_still_pending says to empty this.
PENDING = set()


def pages() -> list[Path]:
    found = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("*/README.md")),
             *sorted(ROOT.glob("*/*/README.md"))]
    return [p for p in found if p.is_file() and not p.relative_to(ROOT).as_posix().startswith(HISTORY)
            and p.relative_to(ROOT).parts[0] not in OUTPUT]


def wheel_folders() -> dict:
    """What a wheel puts under rmpeer/ from the checkout's top (rmpeer/matrices/ is matrices/)."""
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name.replace(".", "/"): folder for name, folder in setup.get("package-dir", {}).items()}


def path_exists(path: str) -> bool:
    path = path.rstrip(".")
    for installed, folder in wheel_folders().items():
        if path == installed or path.startswith(installed + "/"):
            path = folder + path[len(installed):]
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


def top_names(module: Path) -> set:
    """The names a module defines or imports at its top (its classes, functions, constants)."""
    names = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def dotted_problem(name: str) -> str | None:
    """None when `name` is a module (rmpeer.run.spec) or a module's top-level name
    (rmpeer.run.spec.from_certify_args, rmpeer.rm.host.Host.close); else what is missing.
    Read from the source, not imported: a page must not need the GPU's libraries."""
    parts = name.split(".")
    base = ROOT
    for i, part in enumerate(parts):
        if (base / part).is_dir():
            base = base / part
            continue
        module, rest = base / f"{part}.py", parts[i + 1:]
        if not module.is_file():     # a name of the package itself (rmpeer.cli.entry)
            module, rest = base / "__init__.py", parts[i:]
            if i < 2 or not module.is_file():
                return f"no module {'.'.join(parts[:i + 1])}"
        if rest and rest[0] not in top_names(module):
            return f"{'.'.join(parts[:len(parts) - len(rest)])} defines no {rest[0]}"
        return None
    return None if (base / "__init__.py").is_file() else f"no package {name}"


def stale(text: str, *, pending=frozenset()) -> list:
    """(line, name, why) for every path or dotted name in `text` that does not exist."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            if m.group(0).rstrip(".") not in pending and not path_exists(m.group(0)):
                out.append((number, m.group(0), "no such path"))
        for m in SHORT.finditer(line):
            short = m.group(1)
            if not short.startswith("rmpeer/") and f"rmpeer/{short}" not in pending \
                    and not (ROOT / short).exists() and not (ROOT / "rmpeer" / short).exists():
                out.append((number, short, "no such module, in the checkout or in rmpeer/"))
        for m in DOTTED.finditer(line):
            why = dotted_problem(m.group(0))
            if why:
                out.append((number, m.group(0), why))
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_a_page_names_exists(page):
    problems = [f"{page.relative_to(ROOT)}:{n}: {name}: {why}" for n, name, why in
                stale(page.read_text(), pending=PENDING)]
    assert problems == []


def test_the_pages_are_read():
    names = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"README.md", "docs/architecture.md", "matrices/README.md", "fixtures/transcripts/README.md"} <= names
    assert not any(n.startswith("docs/evidence/") for n in names)


def test_a_stale_path_is_caught():
    """Mutation check: the paths this restructuring moved, planted in a page, are found;
    the same text with today's paths, and paths outside the repository, are not."""
    planted = ("The judge (`rmpeer/judge.py`) reads `rmpeer/spec.py`; see rmpeer.hostrun.HostRun,\n"
               "rmpeer.run.spec.no_such_function, rmpeer.judge.nothing_here, rmpeer.cli.no_entry\n"
               "and rmpeer/matrices/no-such.yaml; `judge/spec.py` holds it.\n")
    assert [name for _, name, _ in stale(planted)] == [
        "rmpeer/judge.py", "rmpeer/spec.py", "rmpeer.hostrun.HostRun", "rmpeer.run.spec.no_such_function",
        "rmpeer.judge.nothing_here", "rmpeer.cli.no_entry", "rmpeer/matrices/no-such.yaml", "judge/spec.py"]
    today = ("The judge (`rmpeer/judge/verdict.py`) reads `rmpeer/run/spec.py`; see rmpeer.run.hostrun.HostRun,\n"
             "rmpeer.run.spec.from_request, rmpeer.judge.verdict, rmpeer.cli.entry and rmpeer/render/.\n"
             "A wheel reads rmpeer/matrices/drivers.yaml and rmpeer/fixtures/transcripts/.\n"
             "`run/spec.py` builds it; `tests/mutants.py` and `tools/verdict_table.py` help.\n"
             "The lock is /run/rmpeer/rmpeer.lock, the key ~/.local/state/rmpeer/host.key; rmpeer.prom.\n")
    assert stale(today) == []


def test_pending_paths_are_still_pending():
    """PENDING only covers for work not merged yet: once a pending path exists, empty PENDING
    of it, so that the page is held to it from then on."""
    assert sorted(p for p in PENDING if (ROOT / p).exists()) == []
