"""One run path (issue 26): three rules of rmpeer's source, read with `ast`, each with a
planted violation that the rule must catch, and the judge counted in real replays.

1. No function outside rmpeer/cli/ takes an argparse Namespace. A function takes one when a
   parameter (positional, keyword-only or positional-only; not *args or **kwargs) is named
   `args` or `namespace` and is not annotated as another type (`args: list` is an argv), or
   is annotated `Namespace` / `argparse.Namespace` whatever its name. Lambdas are
   functions too. The command-line modules in rmpeer/cli/ unpack the Namespace and call
   the layers below with plain values.
2. The judge is called once per certify: in rmpeer/run/, rmpeer/cli/ and rmpeer/pytest_plugin/
   (the run path) there is exactly one call of `judge(...)` (the name imported from
   rmpeer.judge.verdict, or `<module>.judge(...)`), in rmpeer/run/assemble.py, and it is
   inside no loop and no comprehension. At run time, a replay of a committed recording in
   each tier calls rmpeer.judge.verdict.judge once.
3. Only the assembler (rmpeer/run/assemble.py) writes a RunResult. Outside it and outside
   rmpeer/model/ no code calls `RunResult(...)` (RunResult.load and RunResult.from_dict read
   a certificate back: allowed), and no code writes a RunResult field (a name of
   dataclasses.fields(RunResult)) on a receiver that names a result: a Name or an attribute
   whose last identifier is `result` or `r` or ends in `_result` (`result`, `self.result`,
   `host.run_result`). Writing is: an assignment, augmented or annotated assignment to
   `<receiver>.<field>` or to `<receiver>.<field>[...]`, a `setattr(<receiver>, ...)`, or a
   call of append, extend, insert, update, pop, remove, clear or setdefault on
   `<receiver>.<field>`.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rmpeer"
TRANSCRIPTS = ROOT / "fixtures" / "transcripts"
RUN_PATH = ("rmpeer/run/", "rmpeer/cli/", "rmpeer/pytest_plugin/")
ASSEMBLER = "rmpeer/run/assemble.py"


def sources() -> list:
    """(path relative to the checkout, source) of every module of rmpeer."""
    return [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))]


# -- rule 1: no argparse Namespace below the command line -------------------------------------

def _is_namespace(annotation) -> bool:
    if annotation is None:
        return False
    text = ast.unparse(annotation).strip("'\"")
    return text in ("Namespace", "argparse.Namespace")


def namespace_takers(mods) -> set:
    out = set()
    for path, text in mods:
        if path.startswith("rmpeer/cli/"):
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            a = node.args
            for param in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                named = param.arg in ("args", "namespace") and param.annotation is None
                if named or _is_namespace(param.annotation):
                    out.add((path, getattr(node, "name", "<lambda>")))
    return out


def test_no_function_outside_cli_takes_an_argparse_namespace():
    assert namespace_takers(sources()) == set(), "below rmpeer/cli/, these take the command's arguments"


@pytest.mark.parametrize("planted", [
    "def certify(args):\n    return args.output\n",
    "def certify(spec, *, namespace=None):\n    pass\n",
    "import argparse\ndef certify(given: argparse.Namespace):\n    pass\n",
    "handler = lambda args: args.json\n",
])
def test_mutant_a_namespace_below_cli_is_caught(planted):
    mods = sources() + [("rmpeer/run/planted.py", planted)]
    assert {p for p, _ in namespace_takers(mods)} == {"rmpeer/run/planted.py"}
    assert not namespace_takers([("rmpeer/cli/planted.py", planted)])      # the command line may


# -- rule 2: the judge once --------------------------------------------------------------------

LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def judge_calls(mods) -> list:
    """[(path, line, inside a loop)] of every judge(...) call in the run path."""
    out = []
    for path, text in mods:
        if not path.startswith(RUN_PATH):
            continue
        tree = ast.parse(text)
        by_name = any(isinstance(n, ast.ImportFrom) and n.module == "rmpeer.judge.verdict"
                      and any(a.name == "judge" and a.asname in (None, "judge") for a in n.names)
                      for n in ast.walk(tree))

        def visit(node, in_loop):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Call):
                    f = child.func
                    if (isinstance(f, ast.Name) and f.id == "judge" and by_name) or (
                            isinstance(f, ast.Attribute) and f.attr == "judge"):
                        out.append((path, child.lineno, in_loop))
                visit(child, in_loop or isinstance(child, LOOPS))
        visit(tree, False)
    return out


def test_the_run_path_calls_the_judge_at_one_place_outside_any_loop():
    calls = judge_calls(sources())
    assert len(calls) == 1, calls
    assert calls[0][0] == ASSEMBLER and calls[0][2] is False


@pytest.mark.parametrize("planted", [
    "from rmpeer.judge.verdict import judge\ndef again(result):\n    return judge(result)\n",
    "from rmpeer.judge import verdict\ndef again(results):\n    for r in results:\n        verdict.judge(r)\n",
])
def test_mutant_a_second_judge_call_is_caught(planted):
    calls = judge_calls(sources() + [("rmpeer/cli/planted.py", planted)])
    assert len(calls) == 2 and any(p == "rmpeer/cli/planted.py" for p, _, _ in calls)


def test_mutant_a_judge_call_in_a_loop_is_caught():
    planted = "from rmpeer.judge.verdict import judge\ndef j(rs):\n    return [judge(r) for r in rs]\n"
    assert judge_calls([(ASSEMBLER, planted)]) == [(ASSEMBLER, 3, True)]


def _recording(name_part: str) -> Path:
    return next(p for p in sorted(TRANSCRIPTS.glob("*.jsonl.gz")) if name_part in p.name)


# certify in its own process, as a user runs it (in this process, the suites this test run
# collected would clash with the ones certify's pytest loads), with judge counted in every
# rmpeer module that holds it
COUNTING = """
import sys
import rmpeer.cli.certify
import rmpeer.judge.verdict as verdict
from rmpeer.cli.certify_options import run_argv
real, calls = verdict.judge, []
def counted(*a, **k):
    calls.append(1)
    return real(*a, **k)
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("rmpeer") and getattr(module, "judge", None) is real:
        module.judge = counted
code = run_argv(sys.argv[2:]).code
open(sys.argv[1], "w").write(str(len(calls)))
sys.exit(code)
"""


@pytest.mark.parametrize("tier", ["passive", "quick", "full"])
def test_a_replay_calls_the_judge_once_in_every_tier(tier, tmp_path):
    """certify --replay of a committed 1 x H200 recording, with rmpeer.judge.verdict.judge
    counted wherever a module holds it: one call in every tier."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, RMPEER_STATE_DIR=str(tmp_path / "state"), RMPEER_STATE=str(tmp_path / "state.json"))
    count = tmp_path / "judge-calls"
    done = subprocess.run([sys.executable, "-c", COUNTING, str(count), "certify", "--replay",
                           str(_recording("h200x1-20261201")), "--tier", tier, "--output", str(tmp_path / "out")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert count.read_text() == "1"


# -- rule 3: only the assembler writes a RunResult ------------------------------------------------

MUTATORS = {"append", "extend", "insert", "update", "pop", "remove", "clear", "setdefault"}


def _names_a_result(node) -> bool:
    last = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return last is not None and (last in ("result", "r") or last.endswith("_result"))


def result_writes(mods) -> list:
    from rmpeer.model.result import RunResult

    fields = {f.name for f in dataclasses.fields(RunResult)}

    def field_of_result(node) -> bool:
        while isinstance(node, ast.Subscript):
            node = node.value
        return isinstance(node, ast.Attribute) and node.attr in fields and _names_a_result(node.value)

    def targets(t):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                yield from targets(e)
        elif isinstance(t, ast.Starred):
            yield from targets(t.value)
        else:
            yield t

    out = []
    for path, text in mods:
        if path == ASSEMBLER or path.startswith("rmpeer/model/"):
            continue
        for node in ast.walk(ast.parse(text)):
            written = []
            if isinstance(node, ast.Assign):
                written = [t for target in node.targets for t in targets(target)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                written = [node.target]
            if any(field_of_result(t) for t in written):
                out.append((path, node.lineno, "assigns"))
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name) and f.id == "RunResult" or (
                        isinstance(f, ast.Attribute) and f.attr == "RunResult"):
                    out.append((path, node.lineno, "constructs"))
                elif isinstance(f, ast.Name) and f.id == "setattr" and node.args and _names_a_result(node.args[0]):
                    out.append((path, node.lineno, "setattr"))
                elif isinstance(f, ast.Attribute) and f.attr in MUTATORS and field_of_result(f.value):
                    out.append((path, node.lineno, f.attr))
    return out


def test_only_the_assembler_writes_a_run_result():
    assert result_writes(sources()) == []


@pytest.mark.parametrize("planted, how", [
    ("def f(result):\n    result.verdict = 'CERTIFIED'\n", "assigns"),
    ("def f(self):\n    self.result.findings += []\n", "assigns"),
    ("def f(r):\n    r.verdict, r.reasons = 'CERTIFIED', []\n", "assigns"),
    ("def f(result):\n    result.findings[:0] = []\n", "assigns"),
    ("def f(result):\n    setattr(result, 'verdict', 'CERTIFIED')\n", "setattr"),
    ("def f(host):\n    host.result.pairs.append(1)\n", "append"),
    ("from rmpeer.model.result import RunResult\ndef f():\n    return RunResult(tier='full')\n", "constructs"),
])
def test_mutant_a_run_result_written_outside_the_assembler_is_caught(planted, how):
    found = result_writes(sources() + [("rmpeer/run/hostrun_planted.py", planted)])
    assert [(p, w) for p, _, w in found] == [("rmpeer/run/hostrun_planted.py", how)]
    assert result_writes([(ASSEMBLER, planted)]) == []       # the assembler may


def test_reading_a_certificate_back_is_not_writing_one():
    read = "from rmpeer.model.result import RunResult\ndef f(p):\n    return RunResult.load(p).verdict\n"
    assert result_writes([("rmpeer/fleet/planted.py", read)]) == []


def test_require_complete_is_one_judgement(monkeypatch):
    """--require-complete refusing a run that would be CERTIFIED with a check it could not
    make (the kernel log unreadable): one call of the judge gives INCOMPLETE, exit 8, with
    the refusal as its reason (it was a second, recursive call)."""
    from rmpeer.model.result import INFO, CheckResult, Finding, RunResult
    from rmpeer.run import assemble

    real, calls = assemble.judge, []
    monkeypatch.setattr(assemble, "judge", lambda *a, **k: calls.append(1) or real(*a, **k))
    unread = Finding("xid", "host", "a readable kernel log", "/dev/kmsg: Permission denied", INFO)
    ran = RunResult(checks=[CheckResult("read/one-per-card/s0->t1", "read", "read/write", "s0->t1", "passed")],
                    findings=[unread])
    refused = assemble.judged(ran, require_complete=True)
    assert calls == [1]
    assert (refused.verdict, refused.exit_code) == ("INCOMPLETE", 8)
    assert refused.reasons == ["require-complete: xid: expected it to be checked (--require-complete), found not "
                               "checked: /dev/kmsg: Permission denied"]
    assert (assemble.judged(ran).verdict, calls) == ("CERTIFIED", [1, 1])


def test_a_late_signal_is_a_new_result_judged_once(monkeypatch):
    """A signal after the outputs were written: a new RunResult with the stop among its
    findings, judged once; the one written before is unchanged (frozen)."""
    from rmpeer.model.result import CheckResult, RunResult
    from rmpeer.run import assemble

    real, calls = assemble.judge, []
    monkeypatch.setattr(assemble, "judge", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = assemble.judged(RunResult(checks=[CheckResult("read/x", "read", "read/write", "s0->t1", "passed")]))
    late = assemble.stopped_after(first, "SIGTERM")
    assert calls == [1, 1] and first.verdict == "CERTIFIED" and late.verdict == "INCOMPLETE"
    assert late.reasons == ["run: host: expected the run to finish, found it was stopped by SIGTERM after its checks"]
