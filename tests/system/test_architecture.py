"""The rules of docs/architecture.md that grep can see, checked over the package's source:
no module parses assertion text, nothing looks a test up by its function name, nothing reaches
the pytest plugin by name. The layers are import-linter's contracts (pyproject.toml,
tests/system/test_layers.py)."""

import re
from pathlib import Path

import pytest

import rmpeer

pytestmark = pytest.mark.offline
PACKAGE = Path(rmpeer.__file__).parent


def sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path.read_text()


def offending(pattern: str) -> list:
    rx = re.compile(pattern)
    return [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
            for rel, text in sources() for m in rx.finditer(text)]


def test_no_module_parses_assertion_text():
    assert offending(r"['\"]AssertionError:?\s*['\"]|removeprefix\(\s*['\"]AssertionError|_first_line") == []


def test_no_test_is_looked_up_by_its_function_name():
    assert offending(r"['\"]test_[a-z_]+['\"]\s*:|def test_name\(|test_name\(") == []


def test_nothing_reaches_the_plugin_by_name():
    assert offending(r"get_plugin\(|RUN_OPTIONS_PLUGIN|_GivenOptions") == []


def test_only_the_command_line_builds_parsers():
    """argparse, its parsers and their options live in cli/ alone: every layer below takes
    plain values (the card options are rmpeer/cli/cards.py's)."""
    hits = offending(r"(?m)^\s*(?:import argparse|from argparse import)|\.add_subparsers\(|\.add_parser\(|\.add_argument\(")
    assert [hit for hit in hits if not hit.startswith("cli/")] == []


def test_the_copy_engine_leaves_the_clients_object_list_to_rm():
    """The RM client alone keeps its list of objects (rm/client.py); the engine never assigns it."""
    assert [hit for hit in offending(r"\.objects\s*=") if hit.startswith("ce/")] == []


def test_the_rules_can_fail(tmp_path, monkeypatch):
    """The greps find what they look for (a check that cannot fail checks nothing)."""
    planted = tmp_path / "planted.py"
    planted.write_text('x = msg.removeprefix("AssertionError: ")\nkinds = {"test_map": 1}\n'
                       'p = config.pluginmanager.get_plugin("rmpeer")\n')
    monkeypatch.setattr(__import__(__name__), "sources", lambda: [("planted.py", planted.read_text())])
    assert offending(r"removeprefix\(\s*['\"]AssertionError") and offending(r"['\"]test_[a-z_]+['\"]\s*:")
    assert offending(r"get_plugin\(")
    planted.write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('--x')\n")
    assert len(offending(r"(?m)^\s*(?:import argparse|from argparse import)|\.add_argument\(")) == 2


def test_the_architecture_page_names_the_spine():
    doc = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"    # the checkout's, beside tests/
    text = doc.read_text()
    for word in ("RunSpec", "HostRun", "RunResult", "rmpeer.judge.verdict", "```mermaid", "## Glossary"):
        assert word in text
    for module in ("run/spec.py", "run/hostrun.py", "judge/verdict.py", "render/"):
        assert (PACKAGE / module).exists(), module


def test_every_check_in_the_suites_says_why_it_failed():
    """certify runs the suites without pytest's assertion plugin (no rewriting at every start): a check's
    reason is its assert's own message, so a bare assert would fail saying only that its
    condition was false."""
    import ast

    from rmpeer.paths import suites_dir

    bare = [f"{path.name}:{node.lineno}: {ast.unparse(node)[:100]}" for path in sorted(suites_dir().glob("*.py"))
            for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Assert) and node.msg is None]
    assert bare == []
