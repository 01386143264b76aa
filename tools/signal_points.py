"""Signals at chosen points of a live `rmpeer certify` (tools/evidence/failclosed.sh, issue 23):
one run per point, the signal sent after the run's k-th output line (or its verdict line),
then what a scheduler would see: the exit code, the certificate's verdict, any file that
says CERTIFIED, and the GPUs' memory used afterwards against the baseline taken first.

  python3 tools/signal_points.py OUT_DIR --tier quick --signals INT,TERM,HUP

One summary line per point on stdout ("ok" when exit 5, no CERTIFIED file and the memory
back to its baseline; "FAIL ..." otherwise), and a last line with the counts."""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

PROGRESS = re.compile(r"^  +\d+\.\ds  ")
VERDICT = re.compile(r"^(CERTIFIED|DEGRADED|NOT CERTIFIED|INCOMPLETE) \(")
CERTIFIED_MARK = re.compile(r'"verdict":\s*"CERTIFIED"|name="verdict" value="CERTIFIED"|verdict="CERTIFIED"')


def memory_used() -> list:
    import shutil

    if not shutil.which("nvidia-smi"):     # a dry run with --replay, anywhere
        return []
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=30).stdout
    return [int(x) for x in out.split()]


REPLAY: list = []     # --replay FILE: a dry run of this tool without a GPU


def certify(out: Path, tier: str) -> list:
    where = ["--replay", *REPLAY] if REPLAY else ["--tier", tier]
    return [sys.executable, "-m", "rmpeer", "certify", *where, "--output", str(out), "--junit", str(out / "rmpeer.xml"),
            "--prometheus", str(out)]


def run_point(out: Path, tier: str, sig, after_line, delay_s: float, twice: bool):
    """sig None: no signal (the baseline run)."""
    proc = subprocess.Popen(certify(out, tier), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if len(seen) == after_line or (after_line is None and VERDICT.match(line)):
            break
    time.sleep(delay_s)
    sent = 0
    for _ in range((2 if twice else 1) if sig is not None else 0):
        if proc.poll() is None:
            proc.send_signal(sig)
            sent += 1
        time.sleep(0.2)
    rest, _ = proc.communicate(timeout=600)
    text = "".join(seen) + rest
    (out.parent / f"{out.name}.log").write_text(text)
    cert = out / ("replay-certificate.json" if REPLAY else "certificate.json")
    verdict = json.loads(cert.read_text())["verdict"] if cert.is_file() else "none"
    certified = [str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()
                 and CERTIFIED_MARK.search(p.read_text(errors="replace"))]
    return proc.returncode, sent, verdict, certified, "Traceback" in text


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("--tier", default="quick")
    p.add_argument("--signals", default="INT,TERM,HUP")
    p.add_argument("--replay", help="a recording instead of the GPUs (a dry run of this tool)")
    args = p.parse_args()
    if args.replay:
        REPLAY.append(args.replay)
    root = Path(args.folder)
    root.mkdir(parents=True, exist_ok=True)
    baseline = memory_used()
    code, _, verdict, _, _ = run_point(root / "unsignalled", args.tier, None, -1, 0.0, False)
    lines = (root / "unsignalled.log").read_text().splitlines()
    last = 1 + max(i for i, line in enumerate(lines) if PROGRESS.match(line))
    print(f"baseline memory used {baseline} MiB; unsignalled {args.tier} run: exit {code}, {verdict}, "
          f"last progress line {last}")
    points = [("after line 2", 2, 0.0, False), (f"after line {last // 2}", last // 2, 0.0, False),
              (f"after line {last // 2}, twice", last // 2, 0.0, True),
              ("30 ms after the last progress line", last, 0.03, False),
              ("right after the verdict line", None, 0.0, False)]
    ok = bad = 0
    for name in args.signals.split(","):
        sig = getattr(signal, f"SIG{name}")
        for i, (where, line, delay, twice) in enumerate(points):
            out = root / f"{name.lower()}-{i}"
            rc, sent, verdict, certified, traceback = run_point(out, args.tier, sig, line, delay, twice)
            time.sleep(0.5)
            memory = memory_used()
            problems = []
            if rc == 0 and line is None and certified and "SIG" not in (root / f"{out.name}.log").read_text():
                sent = 0    # it came after the process's last check: blocked, it died with the process
            if not sent and line is not None:
                problems.append("the run ended before the signal")
            elif sent and rc != 5:
                problems.append(f"exit {rc}, not 5")
            if sent and certified:
                problems.append(f"CERTIFIED on disk: {certified}")
            if traceback:
                problems.append("a traceback")
            if memory != baseline:
                problems.append(f"memory used {memory} MiB, baseline {baseline}")
            ok, bad = ok + (not problems), bad + bool(problems)
            late = " (after the last check: not taken)" if not sent else ""
            print(f"SIG{name:<4} {where:<38} exit {rc}  certificate {verdict:<10} memory after {memory} MiB  "
                  + ("ok" + late if not problems else "FAIL " + "; ".join(problems)), flush=True)
    print(f"{ok} points ok, {bad} failed")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
