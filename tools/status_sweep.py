#!/usr/bin/env python3
"""Every RM call can fail: for each RM call a passive replay of a real recording serves, a
recording derived with that one call's reply an RM error, replayed as a user would
(`rmpeer certify --replay FILE --output DIR --json`, and again with --require-complete),
and the invariants of a certificate checked on what it gives:

  1. no internal error: no traceback file, no "internal error" line, no Python traceback;
  2. a documented exit code (rmpeer/errors.py), and never CERTIFIED (exit 0) while the check
     the failed call feeds is absent from the certificate's not_checked list;
  3. with --require-complete, a run whose check could not run is refused (exit 8);
  4. where the run stops on the failure, its RM failure line names the step, the handles and
     the NV_ERR_* name;
  5. a refusal of rmpeer's own (a free, an alloc rmpeer needs, the client) is never exit 1.

  python tools/status_sweep.py [--status NAME ...] [--only LABEL ...] [-v]

The recordings are derived into a temporary folder and never kept. Why this works on a
diverged run: a passive replay (rmpeer.shim.passive_replay) passes over the calls the run
does not make, so a run that skips the rest of a step after a refusal still replays; a call
the recording does not have there is a ReplayMismatch, itself an invariant's business (exit
5, never 1). The calls swept are those a baseline replay serves (a deeper tier's recording
holds more: the staging buffers, the layouts; a passive replay never reaches them).

An RM call whose escape has no NV_STATUS (the driver's version, the card list, an fd's
registration: nv_ioctl_* structs) fails with an errno in the kernel module; there the
derived record gets errno EINVAL instead (the ioctl's return), by Python's errno name.

Expected outcomes are the documents', not the code's: the check a call feeds is CHECK_OF
below (docs/health.md's controls, docs/architecture.md's passive readings), and which calls
are rmpeer's own (OWN) is the brief's rule 5.
"""

from __future__ import annotations

import argparse
import copy
import errno as errnos
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rmpeer.abi import DriverMatrix, load_yaml, status as status_of  # noqa: E402
from rmpeer import errors  # noqa: E402
from rmpeer.errors import EXIT_INCOMPLETE, EXIT_NOT_CERTIFIED, EXIT_OK, EXIT_UNCHECKED  # noqa: E402
from rmpeer.paths import transcripts_dir  # noqa: E402
from rmpeer.tables.load import MATRICES  # noqa: E402

PASSIVE = next(iter(sorted((transcripts_dir() / "passive").glob("h200x1-passive-*.jsonl.gz"))), None)
HEALTH = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
# (recording, the options that replay its passive tier)
SOURCES = [(PASSIVE, []), (HEALTH, ["--tier", "passive"])]
STATUSES = ("NV_ERR_NOT_SUPPORTED", "NV_ERR_INSUFFICIENT_PERMISSIONS", "NV_ERR_INVALID_ARGUMENT")
DOCUMENTED = {getattr(errors, n) for n in dir(errors) if n.startswith("EXIT_")}    # rmpeer/errors.py's table
CERTIFIED = "CERTIFIED"

# The check (a not_checked entry's "check") each passive RM reading feeds, by its label's
# pattern; None: the call is one the run cannot go on without (it then stops: INCOMPLETE).
# docs/health.md's controls -> the health check's names (rmpeer.judge.health).
CHECK_OF = [
    (r"health:fabric-status$", "fabric"),
    (r"health:fabric-probe:card\d+$", "fabric-probe"),
    (r"health:ecc:card\d+$", "ecc"),
    (r"health:remapped-rows:card\d+$", "row-remap"),
    (r"health:reset:card\d+$", "reset"),
    (r"health:drain:card\d+$", "drain"),
    (r"health:recovery:card\d+$", "recovery-action"),
    (r"health:pcie:card\d+$", "pcie-link"),
    (r"health:mig:card\d+$", "mig"),
    (r"health:cc-(object|caps)$", "confidential-compute"),
    (r"gpu-processes:.*", "gpu-processes"),
]
# rmpeer's own calls: their refusal says nothing of the host's health (rule 5: never exit 1)
OWN = re.compile(r"^(alloc:client|free:client|health:cc-object:free|host:(device|subdevice):card\d+)$")
# Refusals after which CERTIFIED without a not_checked entry is what the documents say:
# docs/health.md "What matters means": the drain status matters only on a MIG card, the fabric
# facts only where the host needs the fabric (these recordings: MIG DISABLED, fabric SKIP,
# probe UNSUPPORTED, one card on PCIe); readings no passive check reads (docs/architecture.md's
# passive checks: cards, p2p-caps, nvlink, clocks, xids, gpu-processes, health): the driver's
# version (/proc/driver/nvidia/version stands in, rmpeer.rm.open), the FB size, the VBIOS and
# the PCE masks (host facts the deeper tiers use), RM's clock levels (the MHz are NVML's), and
# rmpeer's own frees at the end (closing nvidiactl frees the client and all under it).
DOCUMENTED_PASS = {"drain": "drain matters on a MIG card only", "fabric": "this host needs no fabric",
                   "fabric-probe": "this host needs no fabric"}
NO_PASSIVE_CHECK = re.compile(r"^(driver:version|host:(fb-size|vbios|ce-pces)|perf:clock-levels|free:client|"
                              r"health:cc-object:free)$")
# A passive replay cannot show these refusals: the recording's gpu-processes:now observation
# holds the list as the live run merged it from RM's answer, and a replay serves the
# observation as recorded (changing it too would be a second change).
REPLAY_BLIND = re.compile(r"^gpu-processes:")


def check_of(label: str) -> str | None:
    return next((name for pattern, name in CHECK_OF if re.match(pattern, label)), None)


def status_named(name: str):
    """The NV_STATUS of matrices/nvstatus.yaml by its name."""
    code = load_yaml(MATRICES / "nvstatus.yaml")["statuses"][name]["code"]
    return status_of(code)


def _lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def served(path: Path, options) -> list[int]:
    """The seqs of the ioctl records a passive replay of `path` serves, in order."""
    from rmpeer.run.execute import run_passive
    from rmpeer.run.targets import replay_target
    from rmpeer.shim.passive_replay import PassiveReplay

    seqs, plain = [], PassiveReplay._next

    def spy(self, op, label):
        rec = plain(self, op, label)
        if op == "ioctl":
            seqs.append(rec.seq)
        return rec
    PassiveReplay._next = spy
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_passive(replay_target(str(path)), state_path=Path(tmp) / "state.json", save=False)
    finally:
        PassiveReplay._next = plain
    return seqs


def status_field(abi, struct_name: str) -> str | None:
    """The NV_STATUS field of an escape's struct (NVOS*: status; NVOS33 with its fd:
    params.status), or None for an nv_ioctl_* struct that has none."""
    try:
        st = abi.struct(struct_name)
    except Exception:       # noqa: BLE001 - e.g. a repeated struct name (nv_ioctl_card_info_t[32])
        return None
    return next((name for name in ("status", "params.status") if st.has(name)), None)


def derive(lines: list[dict], abi, seq: int, name: str) -> tuple[list[dict], dict]:
    """A copy of the recording with call `seq`'s reply the RM error `name` (its status, in the
    record and the struct's status field, as RM writes both), or, where the escape has no
    status, errno EINVAL. Every other line as recorded. (lines, the change)"""
    out = list(lines)
    i = next(k for k, line in enumerate(out) if line.get("seq") == seq and line.get("op") == "ioctl")
    rec = out[i] = copy.deepcopy(out[i])
    field = status_field(abi, rec["struct"])
    if field is None:
        rec["errno"] = errnos.EINVAL
        change = {"call": rec["label"], "seq": seq, "field": "errno", "value": "EINVAL"}
    else:
        st = status_named(name)
        rec.update(status=st.code, status_name=st.name, status_text=st.text)
        reply = bytearray(bytes.fromhex(rec["reply"]))
        abi.struct(rec["struct"]).set(reply, field, st.code)
        rec["reply"] = reply.hex()
        change = {"call": rec["label"], "seq": seq, "field": f"{rec['struct']}.{field}", "value": name}
    out[0] = {"header": {**out[0]["header"], "derived": {"branch": f"status-sweep:{seq}", **change,
                                                         "why": "every RM call can fail"}}}
    return out, change


def write(lines: list[dict], path: Path) -> Path:
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode())
    return path


def certify(path: Path, options, folder: Path, *extra) -> dict:
    """`rmpeer certify --replay path --output folder/out --json` as a user runs it: its exit code,
    stdout's JSON line, stderr, and the traceback files any folder of its got."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(folder / "host.key"), RMPEER_STATE_DIR=str(folder / "s"),
               TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(path), *options,
                           "--output", str(folder / "out"), "--json", *extra],
                          capture_output=True, text=True, timeout=120, env=env, cwd=folder)
    try:
        line = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    except ValueError:
        line = None
    tracebacks = [str(p) for p in folder.rglob("rmpeer-traceback-*")]
    return {"rc": done.returncode, "json": line, "stderr": done.stderr, "tracebacks": tracebacks}


def violations(change: dict, plain: dict, complete: dict) -> list[str]:
    """What the two runs of one derived recording break of the five invariants."""
    label, value = change["call"], change["value"]
    check = check_of(label)
    allowed = (DOCUMENTED_PASS.get(check) or (NO_PASSIVE_CHECK.match(label) and "no passive check reads it")
               or (REPLAY_BLIND.match(label) and "a replay cannot show it"))
    bad = []
    for what, run in (("plain", plain), ("--require-complete", complete)):
        if run["tracebacks"] or "internal error" in run["stderr"] or "Traceback (most recent call last)" in run["stderr"]:
            bad.append(f"{what}: an internal error (1): {_first(run['stderr'], 'internal error', 'Traceback')}")
        if run["rc"] not in DOCUMENTED:
            bad.append(f"{what}: exit {run['rc']}, not a documented exit code (2)")
        if run["rc"] == EXIT_NOT_CERTIFIED:
            bad.append(f"{what}: exit 1 (NOT CERTIFIED) for a refused {label}: "
                       + ("rmpeer's own call (5)" if OWN.match(label) else "a refusal shows no host bad (5)"))
        verdict = (run["json"] or {}).get("verdict")
        names = [i.get("check") for i in (run["json"] or {}).get("not_checked") or []]
        if run["rc"] == EXIT_OK and verdict == CERTIFIED and not allowed and (check is None or check not in names):
            bad.append(f"{what}: CERTIFIED with {check or 'no check'} (fed by {label}) absent from not_checked "
                       f"{names} (2)")
        reasons = " ".join((run["json"] or {}).get("reasons") or [])
        stopped = f"RM refused {label}:" in reasons
        if run["rc"] == EXIT_INCOMPLETE and change["field"] != "errno" and value not in reasons:
            bad.append(f"{what}: INCOMPLETE without a reason naming {value} (4)")
        if stopped and "hClient=" not in reasons:
            bad.append(f"{what}: the run stopped on {label} and its line names no handles (4): "
                       f"{_first(reasons, label)}")
    if complete["rc"] == EXIT_OK and not allowed:
        bad.append(f"--require-complete: exit 0 though {label} was refused (3)")
    if plain["rc"] == EXIT_OK and (plain["json"] or {}).get("not_checked") and complete["rc"] != EXIT_UNCHECKED:
        bad.append(f"--require-complete: exit {complete['rc']} for a CERTIFIED run with checks not made (3)")
    return bad


def _first(text: str, *words) -> str:
    return next((line for line in text.splitlines() if any(w in line for w in words)), text[-200:]).strip()[:200]


def sweep(statuses=STATUSES, only=(), verbose=False, out=sys.stdout) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="status-sweep-") as tmp:
        tmp = Path(tmp)
        for source, options in SOURCES:
            if source is None or not source.is_file():
                continue
            lines = _lines(source)
            abi = DriverMatrix().abi(next(x for x in lines if x.get("note") == "driver")["abi"])
            for seq in served(source, options):
                for name in statuses:
                    changed, change = derive(lines, abi, seq, name)
                    if only and change["call"] not in only:
                        continue
                    stem = f"{source.name.split('.jsonl')[0]}-{seq}-{name}"
                    path = write(changed, tmp / f"{stem}.jsonl.gz")
                    plain = certify(path, options, tmp / stem / "plain")
                    complete = certify(path, options, tmp / stem / "complete", "--require-complete")
                    row = {"source": source.name, **change, "plain": plain["rc"], "complete": complete["rc"],
                           "reasons": (plain["json"] or {}).get("reasons"),
                           "verdict": (plain["json"] or {}).get("verdict"),
                           "not_checked": [i.get("check") for i in (plain["json"] or {}).get("not_checked") or []],
                           "violations": violations(change, plain, complete)}
                    rows.append(row)
                    if verbose or row["violations"]:
                        print(f"{source.name} {seq} {change['call']} {change['value']}: exit {plain['rc']}/"
                              f"{complete['rc']} {row['verdict']} not_checked={row['not_checked']}", file=out)
                        for v in row["violations"]:
                            print(f"    {v}", file=out)
                    if change["field"] == "errno":
                        break      # an errno call: one derivation, whatever the statuses
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--status", action="append", help=f"an NV_ERR_* name (default: {', '.join(STATUSES)})")
    p.add_argument("--only", action="append", default=[], help="only the calls of this label")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per derived recording")
    args = p.parse_args()
    rows = sweep(tuple(args.status or STATUSES), tuple(args.only), args.verbose)
    bad = [r for r in rows if r["violations"]]
    calls = {(r["source"], r["seq"]) for r in rows}
    print(f"status sweep: {len(rows)} derived recordings ({len(calls)} RM calls of {len(SOURCES)} recordings, "
          f"each replayed plain and --require-complete): {len(bad)} violating")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
