"""Signals at chosen points of a live `rmpeer certify` (tools/evidence/failclosed.sh, issue 23):
one run per point, the signal sent after the run's k-th output line (or its verdict line),
then what a scheduler would see: the exit code, the certificate's verdict, any file that
says CERTIFIED, and the GPUs' memory used afterwards against the baseline taken first.

  python3 tools/signal_points.py OUT_DIR --tier quick --signals INT,TERM,HUP

One summary line per point on stdout ("ok" when exit 5, no CERTIFIED file and the memory
back to its baseline; "FAIL ..." otherwise), and a last line with the counts.

A signal may come after the process's last check: rmpeer blocks the stop signals in its
last step (rmpeer.machine.interrupts.finish) and one that arrives then dies with the
process, which exits with its verdict. Such an exit 0 is believed only when the verdict line
was already written when the signal was sent (`signalled` reads what the pipe holds just
before it sends); an exit 0 with the verdict line still unwritten is a signal lost.
`signalled` and `problems` serve tests/system/test_signal_sweep.py too."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

PROGRESS = re.compile(r"^  +\d+\.\ds  ")
# a live run's verdict line, or a replay's ("REPLAY of NAME: CERTIFIED (...")
VERDICT = re.compile(r"^(?:REPLAY of .*: )?(CERTIFIED|DEGRADED|NOT CERTIFIED|INCOMPLETE) \(", re.M)
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


def _drain(fd: int, into: bytearray) -> None:
    """What the pipe holds now, without waiting for more."""
    os.set_blocking(fd, False)
    try:
        while chunk := os.read(fd, 1 << 16):
            into += chunk
    except BlockingIOError:
        pass
    finally:
        os.set_blocking(fd, True)


def signalled(command: list, sigs, *, after_line, delay_s: float = 0.0, gap_s: float = 0.2, env=None,
              timeout: float = 600) -> dict:
    """Runs `command`; delay_s after its `after_line`-th output line (None: its verdict line)
    sends `sigs`, gap_s apart. Returns its exit code, the signals sent, its whole output, and
    whether its verdict line was written before the first signal was sent."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    fd, out = proc.stdout.fileno(), bytearray()
    while sigs and not (out.count(b"\n") >= after_line if after_line is not None
                        else VERDICT.search(out.decode(errors="replace"))):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        out += chunk
    time.sleep(delay_s if sigs else 0)
    sent, verdict_first = [], None
    for i, sig in enumerate(sigs):
        if i:
            time.sleep(gap_s)
        if proc.poll() is None:
            if not sent:
                _drain(fd, out)       # written before the signal: read before it is sent
                before = len(out)
            proc.send_signal(sig)
            sent.append(sig.name)
    if sent:
        verdict_first = bool(VERDICT.search(out[:before].decode(errors="replace")))
    while chunk := os.read(fd, 1 << 16):
        out += chunk
    proc.stdout.close()
    proc.wait(timeout=timeout)
    return {"rc": proc.returncode, "sent": sent, "text": out.decode(errors="replace"), "verdict_first": verdict_first}


def problems(done: dict, certified: list, *, may_end_first: bool) -> list:
    """What is wrong with one point's outcome (`certified`: its files that say CERTIFIED)."""
    if not done["sent"]:
        return [] if may_end_first else ["the run ended before the signal"]
    if done["rc"] == 0 and certified and "SIG" not in done["text"] and done["verdict_first"]:
        return []         # after the last check: it died blocked with the process
    found = []
    if done["rc"] != 5:
        found.append(f"exit {done['rc']}, not 5" + ("" if done["verdict_first"] else
                                                    " (the signal came before the verdict line)"))
    if certified:
        found.append(f"CERTIFIED on disk: {certified}")
    if "Traceback" in done["text"]:
        found.append("a traceback")
    return found


def certified_files(out: Path) -> list:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.is_symlink()
                  and CERTIFIED_MARK.search(p.read_text(errors="replace")))


def run_point(out: Path, tier: str, sig, after_line, delay_s: float, twice: bool):
    """sig None: no signal (the baseline run)."""
    sigs = [sig] * (2 if twice else 1) if sig is not None else []
    done = signalled(certify(out, tier), sigs, after_line=after_line, delay_s=delay_s)
    (out.parent / f"{out.name}.log").write_text(done["text"])
    cert = out / ("replay-certificate.json" if REPLAY else "certificate.json")
    verdict = json.loads(cert.read_text())["verdict"] if cert.is_file() else "none"
    return done, verdict, certified_files(out)


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
    done, verdict, _ = run_point(root / "unsignalled", args.tier, None, -1, 0.0, False)
    lines = done["text"].splitlines()
    last = 1 + max(i for i, line in enumerate(lines) if PROGRESS.match(line))
    print(f"baseline memory used {baseline} MiB; unsignalled {args.tier} run: exit {done['rc']}, {verdict}, "
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
            done, verdict, certified = run_point(out, args.tier, sig, line, delay, twice)
            time.sleep(0.5)
            memory = memory_used()
            found = problems(done, certified, may_end_first=line is None or line == last)
            if memory != baseline:
                found.append(f"memory used {memory} MiB, baseline {baseline}")
            ok, bad = ok + (not found), bad + bool(found)
            late = " (after the verdict line: not taken)" if done["sent"] and done["rc"] == 0 else ""
            first = "" if not done["sent"] else " verdict line before the signal" if done["verdict_first"] else ""
            print(f"SIG{name:<4} {where:<38} exit {done['rc']}  certificate {verdict:<10} memory after {memory} MiB "
                  f"{first} " + ("ok" + late if not found else "FAIL " + "; ".join(found)), flush=True)
    print(f"{ok} points ok, {bad} failed")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
