"""Issue 23's "Why", part A, row by row: a tool error never reads as NOT CERTIFIED. Each row is
an input the issue measured, run as a user would (`python -m rmpeer ...` in a process of its
own), asserting the exit code (rmpeer/errors.py's table), the one line that says why, that
no traceback is printed, and what is on disk afterwards. The hook rows run the shipped
scripts against a stand-in RMPEER and assert that only exit 1 (or 4) with a status.json of
the same run drains. The signal sweep is tests/system/test_signal_sweep.py."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_CONFIG, EXIT_DEGRADED, EXIT_INCOMPLETE, EXIT_NO_ACCESS, EXIT_OK
from rmpeer.fleet.files import copy_out
from rmpeer.model.result import RunOutcome, RunResult
from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ROOT = Path(__file__).resolve().parents[2]
QUICK = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
NOBOOST = transcripts_dir() / "degraded" / "h200x2-20261130T003733Z-noboost.jsonl.gz"
HAS_GPU = os.path.exists("/dev/nvidiactl")


def _env(extra=None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RMPEER_", "SLURM")) and k != "NODE_NAME"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


def rmpeer(*argv, env=None, stdout=subprocess.PIPE, prelude: str = "", timeout=300):
    """`python -m rmpeer ARGV` (or, with a prelude, a script that first changes rmpeer the way
    the row needs and then runs the same entry point)."""
    if prelude:
        cmd = [sys.executable, "-c", prelude + "\nfrom rmpeer.cli import entry\nsys.argv[1:] = "
               + repr([str(a) for a in argv]) + "\nentry()\n"]
    else:
        cmd = [sys.executable, "-m", "rmpeer", *map(str, argv)]
    return subprocess.run(cmd, env=env if env is not None else _env(), stdout=stdout, stderr=subprocess.PIPE,
                          timeout=timeout)


def last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# -- what is on disk afterwards -------------------------------------------------------------

def nothing_at(rel):
    return lambda tmp: f"{rel} exists" if (tmp / rel).exists() else None


def certificate_says(rel, verdict):
    def check(tmp):
        path = tmp / rel
        if not path.is_file():
            return f"no certificate at {rel}"
        found = json.loads(path.read_text())["verdict"]
        return None if found == verdict else f"{rel} says {found}, not {verdict}"
    return check


def unchanged_file(rel, text):
    return lambda tmp: None if (tmp / rel).read_text() == text else f"{rel} was changed"


def still_char_device(path):
    return lambda tmp: None if stat.S_ISCHR(os.stat(path).st_mode) else f"{path} is no longer a device node"


def traceback_file_in(rel, exc_text):
    def check(tmp):
        found = sorted((tmp / rel).glob("rmpeer-traceback-*.txt"))
        if len(found) != 1:
            return f"{len(found)} traceback files in {rel}"
        st = os.lstat(found[0])
        if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o600:
            return f"{found[0]} is not a 0600 regular file"
        return None if exc_text in found[0].read_text() else f"{found[0]} does not hold {exc_text!r}"
    return check


def all_of(*checks):
    def check(tmp):
        return next((p for p in (c(tmp) for c in checks) if p), None)
    return check


# -- the rows -------------------------------------------------------------------------------

def _view_runs(runs):
    """Issue 47, row 10: the quick recording with its first read-back's runs replaced."""
    def made(tmp: Path) -> Path:
        lines = gzip.open(QUICK, "rt").read().splitlines()
        at = next(i for i, line in enumerate(lines) if '"mem.view"' in line)
        rec = json.loads(lines[at])
        rec["extra"]["runs"] = runs
        lines[at] = json.dumps(rec)
        path = tmp / "runs.jsonl.gz"
        path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
        return path
    return made


def _newlines(tmp: Path) -> Path:
    """Issue 47, row 9: 50 MiB of newlines in 51 KB (it took 37 s of CPU to refuse)."""
    path = tmp / "newlines.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" * (50 << 20), compresslevel=9))
    return path


def _bomb(tmp: Path) -> Path:
    """A recording that unpacks past the 1 GiB bound: its header, then 1100 gzip members of a
    1 MiB line of blanks each (1 MiB on disk, 1.1 GiB unpacked)."""
    header = gzip.open(QUICK, "rb").readline()
    member = gzip.compress(b" " * ((1 << 20) - 1) + b"\n", compresslevel=9)
    path = tmp / "bomb.jsonl.gz"
    with path.open("wb") as f:
        f.write(gzip.compress(header))
        for _ in range(1100):
            f.write(member)
    return path


def _long_line(tmp: Path) -> Path:
    path = tmp / "long-line.jsonl.gz"
    path.write_bytes(gzip.compress(b"{" + b" " * (17 << 20) + b"}\n", compresslevel=1))
    return path


def _plain_file(tmp: Path) -> Path:
    (tmp / "state").write_text("a plain file\n")
    return tmp / "state"


INJECTED = textwrap.dedent("""
    import sys
    import rmpeer.run.assemble as c
    def broken(*a, **k):
        raise RuntimeError("injected fault")
    c.host_result = broken
""")
IN_THE_PLUGIN = textwrap.dedent("""
    import sys
    import rmpeer.pytest_plugin.plugin as p
    def broken(config, items):
        raise RuntimeError("injected in the plugin")
    p.pytest_collection_modifyitems = broken
""")
NOT_A_CONTROL_DEVICE = textwrap.dedent("""
    import sys
    import rmpeer.rm.client as c, rmpeer.rm.open as r, rmpeer.run.targets as t
    for m in (c, r, t):
        m.CTL_PATH = "/dev/null"          # a node that answers ioctls with ENOTTY
    r.read_proc_version = lambda text=None: ("580.159.04", "open")
""")


@dataclass(frozen=True)
class Row:
    id: str
    argv: tuple                      # {tmp} and {quick} are filled in
    code: int
    line: str                        # a regex the last line of stderr (or stdout) must match
    on_disk: object = None           # (tmp) -> problem or None
    env: dict = field(default_factory=dict)
    setup: object = None             # (tmp) -> a path the argv names as {made}
    stdout: str | None = None        # a file to send stdout to (/dev/full)
    prelude: str = ""
    skip: str = ""


ROWS = [
    Row("state-dir-is-a-plain-file", ("fleet", "node", "--tier", "passive", "--output", "{made}/health"), EXIT_CONFIG,
        r"^rmpeer: fleet node: the folder .*/state/health cannot take this node's results \(Not a directory\)",
        unchanged_file("state", "a plain file\n"), env={"RMPEER_STATE_DIR": "{made}"}, setup=_plain_file),
    Row("output-is-dev-null", ("fleet", "node", "--tier", "passive", "--output", "/dev/null"), EXIT_CONFIG,
        r"^rmpeer: fleet node: the folder /dev/null cannot take this node's results", still_char_device("/dev/null")),
    Row("output-folder-unwritable", ("fleet", "node", "--tier", "passive", "--output", "/proc/self/rmpeer"),
        EXIT_CONFIG, r"^rmpeer: fleet node: the folder /proc/self/rmpeer cannot take this node's results"),
    Row("valid-for-9999999d", ("certify", "--replay", "{quick}", "--valid-for", "9999999d", "--output", "{tmp}/out"),
        EXIT_CONFIG, r"^rmpeer: --valid-for '9999999d': at most 366 days", nothing_at("out")),
    Row("valid-for-overflows", ("certify", "--replay", "{quick}", "--valid-for", "99999999999999999999d",
                                "--output", "{tmp}/out"),
        EXIT_CONFIG, r"^rmpeer: --valid-for '99999999999999999999d': at most 366 days", nothing_at("out")),
    Row("replay-gzip-bomb", ("certify", "--replay", "{made}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: recording .*bomb.jsonl.gz cannot be replayed: unpacks to more than 1 GiB by line \d+",
        nothing_at("out"), setup=_bomb),
    Row("replay-view-runs-garbage", ("certify", "--replay", "{made}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: recording .*runs.jsonl.gz cannot be replayed: line \d+: not a call record \(its extra runs are "
        r"'garbage'", nothing_at("out"), setup=_view_runs("garbage")),
    Row("replay-view-runs-past-the-block", ("certify", "--replay", "{made}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: recording .*runs.jsonl.gz cannot be replayed: line \d+: .*runs past the block",
        nothing_at("out"), setup=_view_runs([[0, 10 ** 12, 5]])),
    Row("replay-flood-of-newlines", ("certify", "--replay", "{made}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: recording .*newlines.jsonl.gz cannot be replayed: more than 64 blank lines by line 65",
        nothing_at("out"), setup=_newlines),
    Row("replay-one-huge-line", ("certify", "--replay", "{made}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: recording .*long-line.jsonl.gz cannot be replayed: line 1 is longer than 16 MiB",
        nothing_at("out"), setup=_long_line),
    Row("if-stale-dev-zero", ("certify", "--tier", "passive", "--if-stale", "/dev/zero", "--output", "{tmp}/out"),
        EXIT_NO_ACCESS, r"^rmpeer: no NVIDIA device", nothing_at("out"),
        skip="the live passive tier would run on this GPU" if HAS_GPU else ""),
    Row("json-to-dev-full", ("certify", "--replay", str(NOBOOST), "--json", "--output", "{tmp}/out"), EXIT_DEGRADED,
        r"^rmpeer: --json: the JSON line could not be written to stdout \(No space left on device\); the verdict "
        r"stands: DEGRADED \(exit 4\), certificate .*replay-certificate.json$",
        certificate_says("out/replay-certificate.json", "DEGRADED"), stdout="/dev/full",
        skip="" if os.path.exists("/dev/full") else "no /dev/full"),
    Row("node-name-not-utf8", ("certify", "--replay", "{quick}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: RMPEER_NODE_NAME is not UTF-8 text \(b'gpu\\xff\\xfe'\): set it to the node's name$",
        nothing_at("out"), env={"RMPEER_NODE_NAME": b"gpu\xff\xfe"}),
    # an 8-bit CSI and a right-to-left override reached JUnit's hostname and Allure's environment raw
    Row("node-name-c1-control", ("certify", "--replay", "{quick}", "--output", "{tmp}/out"), EXIT_CONFIG,
        r"^rmpeer: RMPEER_NODE_NAME holds control characters \('n\\x9b2J\\u202eevil'\): set it to the node's name$",
        nothing_at("out"), env={"RMPEER_NODE_NAME": "n\u009b2J\u202eevil"}),
    Row("nvidiactl-answers-enotty", ("host",), EXIT_NO_ACCESS,
        r"^rmpeer: /dev/null: not an NVIDIA control device: its first ioctl \(alloc:client\) failed with errno ENOTTY$",
        prelude=NOT_A_CONTROL_DEVICE),
    Row("unexpected-exception-in-certify", ("certify", "--replay", "{quick}", "--layout", "one-per-card",
                                            "--output", "{tmp}/out"), EXIT_INCOMPLETE,
        r"^rmpeer: certify: judging: internal error \(RuntimeError: injected fault\); INCOMPLETE \(exit 5\); "
        r"traceback in .*/out/rmpeer-traceback-\d{8}T\d{6}Z-[0-9a-f]{8}\.txt$",
        all_of(traceback_file_in("out", "RuntimeError: injected fault"), nothing_at("out/replay-certificate.json")),
        prelude=INJECTED),
    Row("unexpected-exception-in-the-pytest-plugin", ("certify", "--replay", "{quick}", "--layout", "one-per-card",
                                                      "--output", "{tmp}/out"), EXIT_INCOMPLETE,
        r"^rmpeer: pytest session: internal error \(RuntimeError: injected in the plugin\); INCOMPLETE; traceback in "
        r".*/out/rmpeer-traceback-\d{8}T\d{6}Z-[0-9a-f]{8}\.txt$",
        all_of(traceback_file_in("out", "RuntimeError: injected in the plugin"),
               certificate_says("out/replay-certificate.json", "INCOMPLETE")), prelude=IN_THE_PLUGIN),
]


def _fill(value, tmp, made):
    if isinstance(value, bytes):
        return value
    return value.format(tmp=tmp, quick=QUICK, made=made)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_tool_error_is_its_documented_code_in_one_line(tmp_path, row):
    if row.skip:
        pytest.skip(row.skip)
    made = row.setup(tmp_path) if row.setup else None
    argv = [_fill(a, tmp_path, made) for a in row.argv]
    env = _env()
    if any(isinstance(v, bytes) for v in row.env.values()):
        env = {k.encode(): v.encode() for k, v in env.items()}
        env.update({k.encode(): _fill(v, tmp_path, made) if isinstance(v, bytes) else _fill(v, tmp_path, made).encode()
                    for k, v in row.env.items()})
    else:
        env.update({k: _fill(v, tmp_path, made) for k, v in row.env.items()})
    if row.stdout:
        with open(row.stdout, "w") as out:
            done = rmpeer(*argv, env=env, stdout=out, prelude=row.prelude)
        said = ""
    else:
        done = rmpeer(*argv, env=env, prelude=row.prelude)
        said = done.stdout.decode(errors="replace")
    err = done.stderr.decode(errors="replace")
    assert "Traceback" not in err + said, (err + said)[-3000:]
    assert done.returncode == row.code, (err + said)[-3000:]
    assert re.search(row.line, last_line(err) or last_line(said)), (err + said)[-3000:]
    if row.on_disk:
        assert row.on_disk(tmp_path) is None, row.on_disk(tmp_path)


def test_if_stale_names_a_device_node_as_no_certificate():
    """The bounded read behind --if-stale: /dev/zero, a FIFO, or a file past 64 MiB is never read."""
    from rmpeer.run.freshness import check_fresh

    holds, why = check_fresh("/dev/zero", "passive", node="n1")
    assert not holds and why == ["the certificate cannot be read: /dev/zero: not a regular file"]


def test_no_error_class_exits_1():
    """Exit 1 is the judge's alone: no exception rmpeer raises carries it."""
    import importlib
    import pkgutil

    import rmpeer
    from rmpeer.errors import EXIT_NOT_CERTIFIED, RmpeerError

    for mod in pkgutil.walk_packages(rmpeer.__path__, "rmpeer."):
        if mod.name != "rmpeer.__main__" and not mod.name.startswith(("rmpeer.report", "rmpeer.suites")):
            importlib.import_module(mod.name)

    def every(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from every(sub)
    carrying = [c.__qualname__ for c in every(RmpeerError) if c.exit_code == EXIT_NOT_CERTIFIED]
    assert carrying == [], carrying


# -- the hooks: drain only on this run's own NOT CERTIFIED (or DEGRADED) status ---------------

FAKE_RMPEER = """#!/bin/sh
# A stand-in for rmpeer: exits $FAKE_RC, prints $FAKE_LINE, and writes the status.json that
# $FAKE_STATUS asks for into --output: this run's (its --run-id), another run's, or none.
out= run=
while [ $# -gt 0 ]; do
    case $1 in --output) out=$2; shift ;; --run-id) run=$2; shift ;; esac
    shift
done
mkdir -p "$out"
case $FAKE_STATUS in
    this) id=$run ;; other) id=another-run ;; *) id= ;;
esac
if [ -n "$FAKE_STATUS" ] && [ "$FAKE_STATUS" != none ]; then
    printf '{"node": "n1", "exit": %s, "line": "%s", "verdict": "%s", "run_id": "%s"}\\n' \\
        "$FAKE_RC" "$FAKE_LINE" "$FAKE_VERDICT" "$id" >"$out/status.json"
fi
[ -n "$FAKE_TRACEBACK" ] && echo "Traceback (most recent call last):" >&2
[ -n "$FAKE_LINE" ] && echo "$FAKE_LINE"
exit $FAKE_RC
"""
REASON = "rmpeer: read: s0->t1: expected the pattern, found another"


@dataclass(frozen=True)
class HookRow:
    id: str
    rc: int
    status: str          # this | other | none
    verdict: str
    line: str = REASON
    traceback: bool = False
    drains: tuple = ()   # the hooks that drain on it (with their defaults)


HOOKS = ("rmpeer-prolog", "rmpeer-healthcheck", "check_rmpeer.nhc", "rmpeer-npd.sh")
HOOK_ROWS = [
    HookRow("not-certified-of-this-run", 1, "this", "NOT CERTIFIED", drains=HOOKS),
    HookRow("degraded-of-this-run", 4, "this", "DEGRADED", drains=("rmpeer-healthcheck", "check_rmpeer.nhc",
                                                                    "rmpeer-npd.sh")),
    HookRow("exit-1-python-traceback-no-status", 1, "none", "", line="", traceback=True),
    HookRow("exit-1-no-status", 1, "none", ""),
    HookRow("exit-1-status-of-another-run", 1, "other", "NOT CERTIFIED"),
    HookRow("exit-1-status-of-this-run-without-verdict", 1, "this", ""),
    HookRow("exit-1-status-says-certified", 1, "this", "CERTIFIED"),
    HookRow("exit-1-without-a-reason-line", 1, "this", "NOT CERTIFIED", line=""),
    HookRow("exit-4-status-says-not-certified", 4, "this", "NOT CERTIFIED"),
    HookRow("exit-4-status-of-another-run", 4, "other", "DEGRADED"),
    *[HookRow(f"exit-{rc}-with-a-not-certified-status", rc, "this", "NOT CERTIFIED") for rc in (2, 3, 5, 6, 7)],
    HookRow("certified", 0, "this", "CERTIFIED", line=""),
]


def run_hook(tmp: Path, hook: str, row: HookRow, files: Path | None = None) -> bool:
    """Runs one shipped hook against the stand-in; whether it drained the node."""
    files = files or tmp / "files"
    if not files.exists():
        copy_out("slurm", files)
        copy_out("kubernetes", files / "k8s")
    fake = tmp / "fake-rmpeer"
    fake.write_text(FAKE_RMPEER)
    fake.chmod(0o755)
    bin_ = tmp / "bin"
    bin_.mkdir(exist_ok=True)
    (bin_ / "scontrol").write_text(f'#!/bin/sh\necho "$@" >>{tmp}/scontrol.calls\n')
    (bin_ / "scontrol").chmod(0o755)
    (bin_ / "logger").write_text("#!/bin/sh\n:\n")
    (bin_ / "logger").chmod(0o755)
    env = {"PATH": f"{bin_}:{os.environ['PATH']}", "RMPEER": str(fake), "RMPEER_STATE_DIR": str(tmp / "state"),
           "RMPEER_DEFAULTS": "/nonexistent", "SLURMD_NODENAME": "n1", "SLURM_JOB_GPUS": "0",  # a job with a GPU
           "FAKE_RC": str(row.rc),
           "FAKE_STATUS": row.status, "FAKE_VERDICT": row.verdict, "FAKE_LINE": row.line,
           "FAKE_TRACEBACK": "1" if row.traceback else ""}
    (tmp / "scontrol.calls").unlink(missing_ok=True)
    if hook == "check_rmpeer.nhc":
        script = f'die() {{ echo "DIE $1 $2"; return 1; }}; log() {{ :; }}; . {files}/check_rmpeer.nhc; check_rmpeer'
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
        return "DIE 1" in done.stdout
    path = files / "k8s" / "npd" / hook if hook == "rmpeer-npd.sh" else files / hook
    done = subprocess.run(["sh", str(path)], env=env, capture_output=True, text=True, timeout=60)
    if hook == "rmpeer-healthcheck":
        return (tmp / "scontrol.calls").exists() and "State=DRAIN" in (tmp / "scontrol.calls").read_text()
    return done.returncode == 1      # the prolog's exit 1 drains; NPD's exit 1 is a problem


@pytest.mark.parametrize("hook", HOOKS)
@pytest.mark.parametrize("row", HOOK_ROWS, ids=[r.id for r in HOOK_ROWS])
def test_a_hook_drains_only_on_its_own_runs_verdict(tmp_path, hook, row):
    drained = run_hook(tmp_path, hook, row)
    assert drained == (hook in row.drains), f"{hook} {'drained' if drained else 'did not drain'} on {row}"


@pytest.mark.parametrize("hook", HOOKS)
def test_mutant_a_hook_that_trusts_the_exit_code_alone_is_caught(tmp_path, hook):
    """The check above, broken on purpose: the status check replaced by the exit code's word
    for it. The rows with no status of this run must then drain, and the test sees it."""
    files = tmp_path / "files"
    copy_out("slurm", files)
    copy_out("kubernetes", files / "k8s")
    path = files / "k8s" / "npd" / hook if hook == "rmpeer-npd.sh" else files / hook
    text = path.read_text()
    if hook == "check_rmpeer.nhc":
        mutated = text.replace('grep -q "\\"run_id\\": \\"$run_id\\"" "$state/status.json" 2>/dev/null', "true")
        mutated = mutated.replace("[ ! -L \"$state/status.json\" ] && \\", "true || \\")
    else:
        mutated = text.replace('verdict=$(this_runs_verdict "$state/status.json")',
                               'verdict=$([ $rc = 1 ] && echo "NOT CERTIFIED" || echo DEGRADED)')
    assert mutated != text
    path.write_text(mutated)
    row = next(r for r in HOOK_ROWS if r.id == "exit-1-status-of-another-run")
    assert run_hook(tmp_path, hook, row, files), f"the mutant {hook} did not drain: the row would not catch it"


def test_fleet_node_exit_1_without_its_certificate_is_no_verdict(tmp_path, monkeypatch):
    """fleet node in-process with certify answering 1 and writing nothing: exit 5, and a
    status.json a hook never drains on (no verdict, no certificate id)."""
    from rmpeer.fleet import node

    monkeypatch.setenv("RMPEER_NODE_NAME", "n1")
    code, line = node.run_node("passive", tmp_path / "n1", run_id="r-1", certify=lambda argv: RunOutcome(1))
    status = json.loads((tmp_path / "n1" / "status.json").read_text())
    assert code == EXIT_INCOMPLETE and line == f"rmpeer: tool: exit 1 but no certificate of this run in {tmp_path / 'n1'}"
    assert status["exit"] == 5 and status["verdict"] == "" and status["run_id"] == "r-1"


def test_fleet_node_takes_no_earlier_runs_certificate(tmp_path, monkeypatch):
    """A NOT CERTIFIED certificate an earlier run left in the folder, and certify exiting 1
    now without writing one: no verdict."""
    from rmpeer.fleet import node

    folder = tmp_path / "n1"
    folder.mkdir()
    (folder / "certificate.json").write_text(json.dumps({"verdict": "NOT CERTIFIED", "started": "2026-01-01T00:00:00Z",
                                                         "certificate_id": "old"}))
    code, _ = node.run_node("passive", folder, run_id="r-2", certify=lambda argv: RunOutcome(1))
    assert code == EXIT_INCOMPLETE
    assert json.loads((folder / "status.json").read_text())["certificate_id"] == ""


# -- signals right at the verdict, made deterministic ----------------------------------------

AT_THE_VERDICT = textwrap.dedent("""
    import os, signal, sys
    import rmpeer.cli.certify as c
    real = c.{where}
    def then_signal(*a, **k):
        out = real(*a, **k)
        os.kill(os.getpid(), signal.{sig})      # the signal lands just after {where}
        return out
    c.{where} = then_signal
""")


@pytest.mark.parametrize("where", ["write_files", "_say_verdict"],
                         ids=["while-the-outputs-are-written", "after-the-verdict-line"])
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_at_the_verdict_rewrites_every_output_incomplete(tmp_path, where, sig):
    out = tmp_path / "out"
    done = rmpeer("certify", "--replay", QUICK, "--layout", "one-per-card", "--output", out,
                  "--junit", out / "rmpeer.xml", "--prometheus", out, prelude=AT_THE_VERDICT.format(where=where, sig=sig))
    err = done.stderr.decode()
    assert done.returncode == EXIT_INCOMPLETE, err[-2000:]
    assert "Traceback" not in err
    assert json.loads((out / "replay-certificate.json").read_text())["verdict"] == "INCOMPLETE"
    assert 'name="verdict" value="INCOMPLETE"' in (out / "rmpeer.xml").read_text()
    assert 'verdict="INCOMPLETE"' in (out / "rmpeer.prom").read_text()


def test_mutant_a_finish_that_ignores_late_signals_is_caught(tmp_path):
    """interrupts.finish with its check removed: the signal after the verdict line is lost
    and the run ends CERTIFIED, exit 0, which the test above refuses."""
    out = tmp_path / "out"
    mutate = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        from source_mutation import mutated
        sys.modules["rmpeer.machine.interrupts"] = m = mutated("rmpeer.machine.interrupts", "late = seen() or _pending()", "late = None")
        import rmpeer
        rmpeer.machine.interrupts = m
    """ % str(ROOT / "tests"))
    done = rmpeer("certify", "--replay", QUICK, "--layout", "one-per-card", "--output", out,
                  prelude=mutate + AT_THE_VERDICT.format(where="_say_verdict", sig="SIGTERM"))
    assert done.returncode == EXIT_OK
    assert json.loads((out / "replay-certificate.json").read_text())["verdict"] == "CERTIFIED"


# -- the bounds, broken on purpose ----------------------------------------------------------

def test_mutant_an_unbounded_recording_reader_is_caught(tmp_path):
    from source_mutation import mutated

    from rmpeer.errors import TranscriptError

    bomb = _bomb(tmp_path)
    real = __import__("rmpeer.shim.records", fromlist=["read_transcript"])
    with pytest.raises(TranscriptError, match="unpacks to more than 1 GiB"):
        real.read_transcript(bomb)
    broken = mutated("rmpeer.shim.records", "if total > MAX_UNPACKED:", "if False:")
    header, lines = broken.read_transcript(bomb)      # reads all 1.1 GiB: the row would catch it
    assert header and lines == []


def test_mutant_an_unbounded_valid_for_is_caught():
    from source_mutation import mutated

    from rmpeer.errors import ConfigError
    from rmpeer.judge.freshness import parse_valid_for

    with pytest.raises(ConfigError, match="at most 366 days"):
        parse_valid_for("99999999999999999999d")
    broken = mutated("rmpeer.judge.freshness", "if seconds > MAX_VALID_FOR_S:", "if False:")
    with pytest.raises(OverflowError):
        broken.parse_valid_for("99999999999999999999d")


def test_mutant_an_if_stale_that_reads_any_file_is_caught(tmp_path):
    from source_mutation import mutated

    big = tmp_path / "huge.json"
    with big.open("wb") as f:
        f.truncate((64 << 20) + 1)      # sparse: nothing to write, 64 MiB + 1 to read
    from rmpeer.run.freshness import check_fresh

    assert check_fresh(big, "passive", node="n1")[1] == [
        f"the certificate cannot be read: {big}: {(64 << 20) + 1} bytes, more than a certificate's 64 MiB"]
    broken = mutated("rmpeer.machine.signing", "if st.st_size > CERT_LIMIT:", "if False:")
    with pytest.raises(ValueError) as caught:
        broken.read_certificate(big)
    assert "bytes, more than" not in str(caught.value)     # only the bounded read stopped it


def test_mutant_a_node_name_check_that_lets_bytes_through_is_caught(monkeypatch):
    from source_mutation import mutated

    from rmpeer.cli import certify_options as certify_command
    from rmpeer.errors import ConfigError

    monkeypatch.setenv("RMPEER_NODE_NAME", b"gpu\xff".decode("utf-8", "surrogateescape"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        certify_command.check_environment()
    broken = mutated("rmpeer.cli.certify_options", 'value.encode("utf-8")\n', 'value.encode("utf-8", "surrogateescape")\n')
    # the printable check behind it still refuses the bytes, but no longer says what they are:
    # the row (node-name-not-utf8) would see another line
    with pytest.raises(ConfigError) as said:
        broken.check_environment()
    assert "not UTF-8 text" not in str(said.value) and "control characters" in str(said.value)


# -- nothing unchecked passes in silence ---------------------------------------------------

KMSG_NEEDS_ROOT = "/dev/kmsg: Operation not permitted (the kernel log needs root)"


# the 1 x H200 quick recording with RM's health calls: every fact but the kernel log is read
WITH_HEALTH = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"


def kernel_log_unreadable(dest: Path) -> Path:
    """Derived from the 1 x H200 quick recording (fixtures/transcripts/README.md, "Derived at
    test time"): its one `host:xids` observation replaced by what a non-root run reads."""
    out = []
    for line in gzip.open(WITH_HEALTH, "rt").read().splitlines():
        if '"label":"host:xids"' in line:
            rec = json.loads(line)
            rec["extra"]["value"] = {"readable": False, "source": None, "reason": KMSG_NEEDS_ROOT, "xids": []}
            line = json.dumps(rec, separators=(",", ":"))
        out.append(line)
    assert sum('"label":"host:xids"' in line for line in out) == 1
    with gzip.open(dest, "wt") as f:
        f.write("\n".join(out) + "\n")
    return dest


@pytest.mark.parametrize("require", [False, True], ids=["named", "require-complete-refuses"])
def test_a_check_that_could_not_run_is_named(tmp_path, require):
    recording = kernel_log_unreadable(tmp_path / "no-kmsg.jsonl.gz")
    out = tmp_path / "out"
    done = rmpeer("certify", "--replay", recording, "--layout", "one-per-card", "--json", "--output", out,
                  *(["--require-complete"] if require else []))
    err = done.stderr.decode()
    line = next(ln for ln in err.splitlines() if ln.startswith("REPLAY of "))
    summary = json.loads(done.stdout)
    cert = json.loads((out / "replay-certificate.json").read_text())
    named = {"check": "xid", "subject": "host", "reason": KMSG_NEEDS_ROOT}
    assert cert["not_checked"] == [named] and summary["not_checked"] == [named]
    assert f"  not checked: xid ({KMSG_NEEDS_ROOT})" in err.splitlines(), err
    if not require:
        assert done.returncode == EXIT_OK and line.split(": ")[1].startswith("CERTIFIED (")
        assert cert["verdict"] == "CERTIFIED"
    else:
        from rmpeer.errors import EXIT_UNCHECKED

        assert done.returncode == EXIT_UNCHECKED == summary["exit_code"] == 8, err[-2000:]
        assert cert["verdict"] == "INCOMPLETE" and summary["exit"] == "UNCHECKED"
        assert cert["reasons"] == [f"require-complete: xid: expected it to be checked (--require-complete), found "
                                   f"not checked: {KMSG_NEEDS_ROOT}"], cert["reasons"]


def test_mutant_a_not_checked_that_forgets_info_findings_is_caught():
    from source_mutation import mutated

    from rmpeer.model.result import INFO, Finding, RunResult

    result = RunResult(findings=[Finding("xid", "host", "a readable kernel log", KMSG_NEEDS_ROOT, INFO)])
    from rmpeer.judge.unchecked import not_checked

    assert not_checked(result) == [{"check": "xid", "subject": "host", "reason": KMSG_NEEDS_ROOT}]
    broken = mutated("rmpeer.judge.unchecked", "if f.severity == INFO and", "if False and")
    assert broken.not_checked(result) == []


def test_require_complete_never_hides_a_worse_verdict():
    from rmpeer.model.result import DEGRADE, DEGRADED, INFO, Finding, RunResult
    from rmpeer.judge.unchecked import not_checked, refusals

    result = RunResult(verdict=DEGRADED, findings=[Finding("xid", "host", "x", KMSG_NEEDS_ROOT, INFO),
                                                   Finding("bandwidth-floor", "read 0->1", "x", "y", DEGRADE)])
    assert not_checked(result) and refusals(DEGRADED, not_checked(result)) == []


# -- a deadline on every tier --------------------------------------------------------------

STALL = "bw:s0:scratch:map"      # an ioctl of the bandwidth rig, after every layout's checks


# long enough for the checks before the stall to end on a loaded CI machine: a test cut between
# its set-up and its call is no check (rmpeer.pytest_plugin.results), so a deadline that came
# before any call would leave none to keep
DEADLINE = "10"


def _stalled_run(tmp_path, deadline=DEADLINE, prelude=""):
    out = tmp_path / "out"
    done = rmpeer("certify", "--replay", QUICK, "--deadline", deadline, "--output", out, "--junit", out / "rmpeer.xml",
                  "--prometheus", out, env=_env({"RMPEER_REPLAY_STALL_AT": STALL}), prelude=prelude, timeout=60)
    return done, out


def test_a_hung_call_ends_incomplete_at_the_deadline(tmp_path):
    """The replay stalls at one ioctl for ever (RMPEER_REPLAY_STALL_AT, read by the replay
    backend alone), as a hung ioctl would: the run ends at its deadline, INCOMPLETE, exit 5,
    every output saying so."""
    done, out = _stalled_run(tmp_path)
    text = done.stdout.decode()
    assert done.returncode == EXIT_INCOMPLETE, (text + done.stderr.decode())[-2000:]
    assert re.search(rf"^REPLAY of .*: INCOMPLETE \(the deadline of {DEADLINE} s passed\) in \d+\.\d s; written to "
                     r".*replay-certificate.json$", text, re.M), text[-2000:]
    cert = json.loads((out / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE" and cert["reasons"][0] == (
        f"deadline: host: expected the run to end within {DEADLINE} s (--deadline), found it was still running at its "
        "deadline: ended there, the RM client freed by the process's exit")
    assert any(c["outcome"] == "passed" for c in cert["checks"])      # what ended before it is kept
    assert 'name="verdict" value="INCOMPLETE"' in (out / "rmpeer.xml").read_text()
    assert 'verdict="INCOMPLETE"' in (out / "rmpeer.prom").read_text()


def test_mutant_a_watchdog_that_never_ends_the_process_is_caught(tmp_path):
    mutate = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        from source_mutation import mutated
        sys.modules["rmpeer.machine.deadline"] = mutated("rmpeer.machine.deadline", "os._exit(EXIT_INCOMPLETE)", "return")
    """ % str(ROOT / "tests"))
    with pytest.raises(subprocess.TimeoutExpired):
        rmpeer("certify", "--replay", QUICK, "--deadline", "2", "--output", tmp_path / "out",
               env=_env({"RMPEER_REPLAY_STALL_AT": STALL}), prelude=mutate, timeout=15)


@pytest.mark.parametrize("given", ["soon", "0", "-5", "99999999"])
def test_a_deadline_that_is_no_duration_is_refused_at_once(tmp_path, given):
    done = rmpeer("certify", "--replay", QUICK, "--deadline", given, "--output", tmp_path / "out")
    assert done.returncode == EXIT_CONFIG
    assert last_line(done.stderr.decode()).startswith(f"rmpeer: --deadline {given!r}: ")
    assert not (tmp_path / "out").exists()


def test_a_traceback_is_never_written_through_a_link(tmp_path, monkeypatch):
    """The output folder a symlink (to a folder another user chose): the traceback goes to the
    next folder (here the temp folder), never through the link."""
    import tempfile

    from rmpeer.machine.crash import write_traceback

    target, link, spare = tmp_path / "target", tmp_path / "link", tmp_path / "spare"
    target.mkdir()
    spare.mkdir()
    link.symlink_to(target)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(spare))
    path = write_traceback(RuntimeError("x"), [link])
    assert path is not None and path.parent == spare and list(target.iterdir()) == []
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600


def test_fleet_node_exit_1_beside_a_certificate_that_says_otherwise_is_no_verdict(tmp_path, monkeypatch):
    """certify answering 1 while the certificate this run wrote says CERTIFIED: the two
    disagree, so no verdict (exit 5), and status.json carries none; broken on purpose (the
    verdict check removed), the node would exit 1."""
    import time as clock

    from source_mutation import mutated

    from rmpeer.fleet import node

    folder = tmp_path / "n1"

    def certify_says_certified(argv):
        folder.mkdir(exist_ok=True)
        (folder / "certificate.json").write_text(json.dumps({
            "verdict": "CERTIFIED", "certificate_id": "c-1",
            "started": clock.strftime("%Y-%m-%dT%H:%M:%SZ", clock.gmtime())}))
        return RunOutcome(1, RunResult(verdict="CERTIFIED", certificate_id="c-1"), str(folder / "certificate.json"))
    for module, expected in ((node, EXIT_INCOMPLETE),
                             (mutated("rmpeer.fleet.node", "and mine and verdict == VERDICT_OF_EXIT[code]:",
                                      "and mine:"), 1)):
        monkeypatch.setattr(module, "from_result", lambda n, r, p: type("O", (), {"line": "rmpeer: x: y"})())
        code, _ = module.run_node("passive", folder, run_id="r-3", certify=certify_says_certified)
        assert code == expected
    status = json.loads((folder / "status.json").read_text())
    assert status["exit"] == 1      # the mutant's status: what the check above refuses


@pytest.mark.parametrize("stopped, code, failed, severity", [
    ("SIGTERM", None, False, "incomplete"), (None, 3, False, "incomplete"),
    (None, 1, True, "info"), (None, 0, False, "fail")],
    ids=["after-a-signal", "after-an-internal-error", "after-a-failed-check", "nothing-before"])
def test_a_failed_close_is_judged_by_what_came_before_it(stopped, code, failed, severity):
    from rmpeer.run.assemble import close_findings
    from rmpeer.model.result import CheckResult

    checks = [CheckResult("read/x", "read", "read/write", "s0->t1", "failed" if failed else "passed")]
    found = close_findings(["replay:h200x2: replay of x: the recording has calls the run never made"], stopped,
                           code, False, checks)
    assert [f.severity for f in found] == [severity]


def test_mutant_a_failed_close_that_is_always_a_failure_is_caught():
    """The severity rule broken to FAIL: a replay cut by a signal would read NOT CERTIFIED
    (the issue's exit 1), which the row above refuses."""
    from source_mutation import mutated

    broken = mutated("rmpeer.run.assemble", "severity = UNFINISHED if unfinished else INFO if failed else FAIL",
                     "severity = FAIL")
    found = broken.close_findings(["x"], "SIGTERM", None, False, [])
    assert [f.severity for f in found] == ["fail"]


# -- a signal inside a check: the replay diverges where it was cut ----------------------------

INSIDE_A_CHECK = textwrap.dedent("""
    import os, signal, sys
    import rmpeer.run.hostrun as h
    real, calls = h.LayoutRun.transfer, []
    def then_signal(self, *a, **k):
        calls.append(1)
        if len(calls) == {n}:
            os.kill(os.getpid(), signal.{sig})     # lands inside a test, between its RM calls
        return real(self, *a, **k)
    h.LayoutRun.transfer = then_signal
""")


# the stretch's end of the pair the signal cut fails too: the stop still ends the run there
STRETCH_END_FAILS = textwrap.dedent("""
    import rmpeer.shim.replay as r
    real_end = r.ReplayShim.end_segment
    def end(self, *, abandoned=False):
        if abandoned:
            raise OSError("the stretch's end failed")
        return real_end(self, abandoned=abandoned)
    r.ReplayShim.end_segment = end
""")


def test_a_signal_inside_a_pair_ends_the_run_whatever_its_stretchs_end_raises(tmp_path):
    """A pair cut by a stop signal (certify runs a layout's pairs as one item): the run ends
    there, INCOMPLETE, with no check failed, even where abandoning its stretch raises."""
    out = tmp_path / "out"
    done = rmpeer("certify", "--replay", QUICK, "--output", out,
                  prelude=INSIDE_A_CHECK.format(n=3, sig="SIGINT") + STRETCH_END_FAILS)
    assert done.returncode == EXIT_INCOMPLETE, done.stderr.decode()[-2000:]
    cert = json.loads((out / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE"
    assert not cert["counts"].get("failed") and not cert["counts"].get("error"), cert["counts"]


# a check of its own item, not one of a layout's pairs (certify runs those as one item,
# rmpeer/pytest_plugin/pairs.py): the fault check's channel replacement, between its RM calls
INSIDE_AN_ITEMS_CHECK = textwrap.dedent("""
    import os, signal, sys
    import rmpeer.ce.engine as e
    real = e.CopyEngine.replace_channel
    def then_signal(self, *a, **k):
        os.kill(os.getpid(), signal.{sig})
        return real(self, *a, **k)
    e.CopyEngine.replace_channel = then_signal
""")


def _stopped_inside_a_check(tmp_path, sig: str, prelude: str) -> dict:
    """A quick replay that `prelude` stops with `sig` inside a check: exit 5, an INCOMPLETE
    certificate that says it was stopped, and nothing blaming the recording. Its certificate."""
    out = tmp_path / "out"
    done = rmpeer("certify", "--replay", QUICK, "--output", out, prelude=prelude)
    err = done.stderr.decode()
    assert done.returncode == EXIT_INCOMPLETE, err[-2000:]
    assert "the recording has calls the run never made" not in err, err[-2000:]
    cert = json.loads((out / "replay-certificate.json").read_text())
    assert cert["verdict"] == "INCOMPLETE"
    assert any(f"stopped by {sig}" in r for r in cert["reasons"]), cert["reasons"]
    return cert


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_inside_a_check_of_its_own_item_is_an_incomplete_certificate(tmp_path, sig):
    """As below, where the check cut is an item of its own (the fault check), whose stretch
    its fixture's teardown abandons at the session's end."""
    cert = _stopped_inside_a_check(tmp_path, sig, INSIDE_AN_ITEMS_CHECK.format(sig=sig))
    assert not any(c["check"] == "fault-detected" and c["outcome"] == "passed" for c in cert["checks"])


@pytest.mark.parametrize("n", [1, 3, 6])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_inside_a_check_is_an_incomplete_certificate(tmp_path, sig, n):
    """The interrupted test never made the rest of its recorded calls: its stretch is
    abandoned, not a divergence of rmpeer's requests. The run ends INCOMPLETE, exit 5, with the
    certificate that says it was stopped (not a one-line error blaming the recording and no
    certificate at all)."""
    _stopped_inside_a_check(tmp_path, sig, INSIDE_A_CHECK.format(n=n, sig=sig))
