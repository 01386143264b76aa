"""The layers, enforced: `lint-imports` (import-linter) checks the contracts of pyproject.toml's
[tool.importlinter] against the rmpeer these tests import, and every contract is KEPT. Each
kind of contract is then broken once on purpose, in a copy of the package with one planted
import, and lint-imports must name the contract broken (a check that cannot fail checks
nothing).

Outside CI a missing import-linter skips, saying so; under CI (CI set) it fails: .ci/run
installs it from the `test` extra."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from lacking import lacking

import rmpeer

pytestmark = pytest.mark.offline
PACKAGE = Path(rmpeer.__file__).parent
CONFIG = Path(__file__).resolve().parents[2] / "pyproject.toml"     # the checkout's, beside tests/
# import-linter has no `python -m` entry: its console script's function, in this interpreter.
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def need_import_linter():
    try:
        import importlinter  # noqa: F401
    except ImportError:
        lacking("import-linter is not installed (pip install 'import-linter>=2.17', or the `test` extra)",
                "import-linter is not installed under CI (.ci/run installs the `test` extra)")


def contract_names() -> list:
    """The contracts pyproject.toml declares, read from the file itself."""
    return [c["name"] for c in tomllib.loads(CONFIG.read_text())["tool"]["importlinter"]["contracts"]]


def lint(root: Path) -> tuple[int, str]:
    """lint-imports over the rmpeer package inside `root` (it puts its working directory
    first on sys.path, so the package it analyses is root's); no cache written anywhere."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo", str(CONFIG)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def status_of(out: str) -> dict:
    """{contract name: 'KEPT' or 'BROKEN'} from lint-imports' summary ('NAME KEPT', maybe
    followed by '(1 ignored import)')."""
    return dict(re.findall(r"^(.+?) (KEPT|BROKEN)(?: \(.*\))?\s*$", out, re.M))


def test_every_contract_is_kept():
    need_import_linter()
    names = contract_names()
    assert {"layers", "no cycles", "the judge is pure"} <= set(names)
    code, out = lint(PACKAGE.parent)
    assert status_of(out) == {name: "KEPT" for name in names}, out
    assert f"Contracts: {len(names)} kept, 0 broken." in out and code == 0, out


@pytest.mark.parametrize("module, planted, broken", [
    ("model/result.py", "import rmpeer.cli", {"layers", "no cycles", "model imports only errors"}),
    ("judge/verdict.py", "import rmpeer.rm.host", {"the judge is pure"}),
    # below the judge, and still forbidden: it weighs what the machine's readers hand it
    ("judge/scope.py", "import rmpeer.machine.xids", {"the judge is pure"}),
    ("render/table.py", "import rmpeer.shim.live", {"layers", "render draws the RunResult alone"}),
    ("diff/render.py", "import rmpeer.shim.live", {"renderers read results, never the machine",
                                                   "diff's words read and write nothing"}),
    # below every layer it may not import, and still forbidden: the renderers write no file
    ("render/junit.py", "import rmpeer.safewrite", {"render draws the RunResult alone"}),
    ("render/verdict.py", "import rmpeer.judge.cards", {"layers", "render draws the RunResult alone"}),
    ("diff/render.py", "import rmpeer.safewrite", {"diff's words read and write nothing"}),
    # the loader's imports (the shim's file format, the signature check) come with it
    ("diff/compare.py", "import rmpeer.diff.load", {"diff's words read and write nothing"}),
    ("report/page.py", "import rmpeer.safewrite", {"the report's page reads and writes nothing"}),
    ("report/page.py", "import rmpeer.report.hosts", {"the report's page reads and writes nothing", "no cycles"}),
    ("tables/plan.py", "import rmpeer.judge.verdict", {"layers", "no cycles"}),
    # a circle inside one package, which no layer can see: tables.layouts imports tables.plan
    ("tables/plan.py", "import rmpeer.tables.layouts", {"no cycles"}),
    ("traffic/patterns.py", "import rmpeer.shim.live", {"the patterns are pure"}),
    ("run/fitness.py", "import rmpeer.run.hostrun", {"fitness never sees the host run"}),
], ids=["model-imports-cli", "judge-imports-rm", "judge-imports-the-machine", "render-imports-the-shim", "diff-imports-the-shim",
        "render-writes-a-file", "render-asks-the-judge", "diff-words-write-a-file", "diff-words-read-a-file",
        "report-page-writes-a-file", "report-page-reads-folders",
        "tables-import-the-judge",
        "a-circle-inside-tables", "patterns-import-the-shim", "fitness-imports-the-host-run"])
def test_a_planted_import_breaks_its_contract(tmp_path, module, planted, broken):
    """One import planted in a copy of the package: lint-imports exits non-zero, names the
    planted import, and breaks the contracts that forbid it."""
    need_import_linter()
    shutil.copytree(PACKAGE, tmp_path / "rmpeer", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "rmpeer" / module
    target.write_text(target.read_text() + f"\n{planted}  # planted by tests/system/test_layers.py\n")
    code, out = lint(tmp_path)
    importer = "rmpeer." + module.removesuffix(".py").replace("/", ".")
    assert code != 0, out
    # at least these: an import reaches on through what it names (model -> cli -> everything)
    assert broken <= {name for name, state in status_of(out).items() if state == "BROKEN"}, out
    if broken - {"no cycles"}:
        assert f"{importer} -> {planted.split()[-1]}" in out, out
