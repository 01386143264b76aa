"""Replay every committed recording and print what rmpeer made of it, as one table.

The table pins behaviour across a restructuring: it was made with the code before the
one-run-path move (tests/data/verdicts-before-move.json), and the tests replay with today's
code and compare. A change that means to reword a verdict (issue 44: one reason per root
cause) makes it anew with this command, and its diff is the change a reviewer reads. Each recording is replayed twice, in the passive tier and in the
tier its own layouts cover (certify's default), each in its own process, as a
user runs it.

    python tools/verdict_table.py > tests/data/verdicts-before-move.json

tests/system/test_same_verdicts.py checks the passive rows, tests/cli/test_certify.py the
own-tier ones (it replays every committed recording in its own tier anyway).
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / "fixtures" / "transcripts"
# What a replay's JSON line says that depends on when and where it ran, not
# on what rmpeer judged.
VOLATILE = ("duration_s", "started", "valid_until", "certificate", "certificate_id", "node")


def recordings() -> list:
    return sorted(p.relative_to(RECORDINGS).as_posix() for p in RECORDINGS.rglob("*.jsonl.gz"))


def replay(name: str, tier, env=None) -> dict:
    """One replay, as a user runs it: its exit code and JSON line. env: the environment of the
    rmpeer it runs (by default this checkout's rmpeer)."""
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-m", "rmpeer", "certify", "--replay", str(RECORDINGS / name),
                "--json", "--output", out]
        if tier:
            argv += ["--tier", tier]
        env = env or dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=out)
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    line = json.loads(lines[-1]) if lines else {}
    kept = {k: v for k, v in line.items() if k not in VOLATILE}
    return {"exit": done.returncode, "line": kept}


def table(names=None) -> dict:
    rows = {}
    for name in names or recordings():
        rows[name] = {"passive": replay(name, "passive"), "own": replay(name, None)}
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="replay every committed recording (or the NAMES given, "
                                     "relative to fixtures/transcripts/) and print the verdict table as JSON")
    parser.add_argument("names", nargs="*", metavar="NAME")
    json.dump(table(parser.parse_args().names or None), sys.stdout, indent=1, sort_keys=True)
    print()
