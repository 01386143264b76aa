"""Every RM call can fail, and the certificate says so: a real recording with ONE call's reply
an RM error (tools/status_sweep.py derives it, into a temporary folder), replayed as a user
runs it (`rmpeer certify --replay FILE --output DIR --json`, and with --require-complete), in
process. One call of each kind the passive recording makes (each escape, an alloc, a free,
a discovery control, a health control, a perf and an NVLink control), each with the verdict
the documents give: docs/health.md for the health controls ("NV_ERR_NOT_SUPPORTED, another
error ...: not read: never a pass"; the drain matters on a MIG card only), docs/architecture.md
and rmpeer/errors.py for the rest (exit 5 where the run cannot tell; 1 is the judge's alone;
8 with --require-complete where a check could not run). The whole sweep (every served call,
three statuses, two recordings) is `python tools/status_sweep.py`.

Before: a run that stopped on a refusal said the step and the NV_ERR_* name but not the
object RM refused (the handles)."""

import importlib.util
import json
import tempfile
from pathlib import Path

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.cli import main

pytestmark = pytest.mark.offline
REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("status_sweep", REPO / "tools" / "status_sweep.py")
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)
PASSIVE, HEALTH = sweep.PASSIVE, sweep.HEALTH
NS, PERM, INVAL = sweep.STATUSES
STOPPED = "RM refused {label}: {status}"     # the passive run's reason when it stops on a call

# (recording, call label, status, exit, exit with --require-complete, not_checked entry the
# call's check gives, a fragment the reasons say)
ROWS = [
    # the escapes without an NV_STATUS fail with an errno (EINVAL here)
    (PASSIVE, "driver:version", None, 0, 0, None, None),    # /proc/driver/nvidia/version stands in
    (PASSIVE, "host:card-info", None, 5, 5, None, "Invalid argument (NV_ESC_CARD_INFO)"),
    (PASSIVE, "register-fd:card0", None, 5, 5, None, "Invalid argument"),
    # the client and the probe objects rmpeer allocates: the run cannot go on, never exit 1
    (PASSIVE, "alloc:client", PERM, 5, 5, None, STOPPED),
    (PASSIVE, "host:subdevice:card0", INVAL, 5, 5, None, STOPPED),
    (PASSIVE, "host:classes", PERM, 5, 5, None, STOPPED),
    # a reading the run goes on without: its check cannot tell (INCOMPLETE), it says which
    (PASSIVE, "host:p2p-caps:0->0", NS, 5, 5, None, "RM refused: {status}"),
    (PASSIVE, "perf:pstate", INVAL, 5, 5, None, "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE: {status}"),
    (PASSIVE, "nvlink:caps", NS, 5, 5, None, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS: {status}"),
    # health controls (docs/health.md): not read, never a pass: a not_checked entry
    (PASSIVE, "health:ecc:card0", PERM, 0, 8, "ecc", None),
    (PASSIVE, "health:cc-object", NS, 0, 8, "confidential-compute", None),
    (PASSIVE, "health:drain:card0", NS, 0, 0, None, None),      # matters on a MIG card only
    (HEALTH, "health:recovery:card0", INVAL, 0, 8, "recovery-action", None),
    # rmpeer's own free at the end: closing nvidiactl frees the client; never exit 1
    (PASSIVE, "free:client", INVAL, 0, 0, None, None),
]
OPTIONS = {PASSIVE: [], HEALTH: ["--tier", "passive"]}


def _lines(path):
    lines = sweep._lines(path)
    return lines, DriverMatrix().abi(next(x for x in lines if x.get("note") == "driver")["abi"])


def certify(monkeypatch, capsys, folder: Path, recording: Path, *extra) -> dict:
    folder.mkdir(parents=True)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("RMPEER_KEY", str(folder / "host.key"))
    monkeypatch.setenv("RMPEER_STATE_DIR", str(folder / "s"))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))    # where an internal error's traceback lands last
    capsys.readouterr()
    rc = main(["certify", "--replay", str(recording), *extra, "--output", str(folder / "out"), "--json"])
    said = capsys.readouterr()
    return {"rc": rc, "json": json.loads(said.out.strip().splitlines()[-1]), "stderr": said.err,
            "tracebacks": [str(p) for p in folder.rglob("rmpeer-traceback-*")]}


@pytest.mark.parametrize("source, label, status, rc, complete_rc, entry, said", ROWS,
                         ids=[f"{r[1]}-{r[2] or 'EINVAL'}" for r in ROWS])
def test_a_refused_call_gives_the_documented_verdict(monkeypatch, capsys, tmp_path, source, label, status, rc,
                                                     complete_rc, entry, said):
    if source is None or not source.is_file():
        pytest.skip(f"no recording {source}")
    lines, abi = _lines(source)
    (seq,) = [x["seq"] for x in lines if x.get("op") == "ioctl" and x.get("label") == label][:1]
    changed, change = sweep.derive(lines, abi, seq, status or NS)
    assert change["value"] == (status or "EINVAL")
    path = sweep.write(changed, tmp_path / f"{label.replace(':', '-')}.jsonl.gz")
    plain = certify(monkeypatch, capsys, tmp_path / "plain", path, *OPTIONS[source])
    complete = certify(monkeypatch, capsys, tmp_path / "complete", path, *OPTIONS[source], "--require-complete")
    for run in (plain, complete):
        assert not run["tracebacks"] and "internal error" not in run["stderr"], run["stderr"]
    assert (plain["rc"], complete["rc"]) == (rc, complete_rc), (plain["json"]["reasons"], complete["json"]["reasons"])
    names = [i["check"] for i in plain["json"]["not_checked"]]
    if entry is not None:
        assert entry in names and plain["json"]["verdict"] == "CERTIFIED"
        assert complete["json"]["verdict"] == "INCOMPLETE"      # refused, so no --if-stale takes it
    if said is not None:
        fragment = said.format(label=label, status=status)
        hits = [r for r in plain["json"]["reasons"] if fragment in r]
        assert hits, plain["json"]["reasons"]
        reason = hits[0]
        if said is STOPPED:     # the step, the NV_ERR_* name and the object RM refused
            assert "; handles: hClient=" in reason, reason
    # and every invariant of the sweep on the two runs
    assert sweep.violations(change, plain, complete) == []


def test_the_rows_hold_a_call_of_every_escape_the_passive_recording_makes():
    """One call per kind: every ioctl escape of the passive recording (the version, the card
    list, an fd's registration, alloc, control, free) has a row."""
    lines, _ = _lines(PASSIVE)
    escapes = {x["escape"] for x in lines if x.get("op") == "ioctl"}
    covered = {next(x["escape"] for x in _lines(r[0])[0] if x.get("label") == r[1]) for r in ROWS}
    assert escapes <= covered, sorted(escapes - covered)
