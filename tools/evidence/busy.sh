# Part "busy" of tools/device-evidence.sh (issue 47, item 8): a full certify beside a bf16
# matmul job on the same cards, five times. NVML's own view (nvidia-smi every 500 ms: SM clock
# and its maximum, clock-event reasons, power draw and limit, temperature) is logged alone,
# under the job alone, and through the five runs, as the independent account of what the
# card could reach. The first run beside the job is recorded (a replay fixture of a busy
# card). Sourced with timed, $ev, $summary, $repo.

q=timestamp,index,clocks.sm,clocks.max.sm,clocks.gr,clocks_event_reasons.active,power.draw,power.limit,enforced.power.limit,temperature.gpu,pstate
nvidia-smi --help-query-gpu >"$ev/smi-help-query.txt" 2>&1
sample() {  # NAME: nvidia-smi every 500 ms into NAME.csv until killed
  nvidia-smi --query-gpu="$q" --format=csv -lms 500 >"$ev/$1.csv" 2>&1 &
  echo $!
}
sp=$(sample smi-idle); sleep 3; kill "$sp"
sp=$(sample smi-job-alone)
python3 "$repo/tools/matmul_load.py" --seconds 15 >"$ev/matmul-alone.json" 2>"$ev/matmul-alone.err"
kill "$sp"
sp=$(sample smi-job-with-full)
python3 "$repo/tools/matmul_load.py" --seconds 75 >"$ev/matmul-with-full.json" 2>"$ev/matmul-with-full.err" &
mp=$!; sleep 5
timed busy-full-1 rmpeer certify --record /tmp/busy-rec --output /tmp/busy-1
for i in 2 3 4 5; do timed "busy-full-$i" rmpeer certify --output "/tmp/busy-$i"; done
wait "$mp"; kill "$sp"
mkdir -p "$ev/recordings"
cp /tmp/busy-rec/*.jsonl.gz "$ev/recordings/busy-full.jsonl.gz" 2>/dev/null
for i in 1 2 3 4 5; do cp "/tmp/busy-$i/certificate.json" "$ev/certificate-busy-$i.json" 2>/dev/null; done
python3 - "$ev" <<'PY' | tee -a "$summary"
import csv, json, statistics, sys
ev = sys.argv[1]
for name in ("matmul-alone", "matmul-with-full"):
    try:
        d = json.load(open(f"{ev}/{name}.json"))
        print(name, "median TFLOP/s per card (1 s windows):",
              ", ".join(f"card {g}: {v['median_tflops']} (min {v['min_tflops']})" for g, v in d["per_gpu"].items()))
    except Exception as exc:
        print(name, "unreadable:", exc)
for name in ("smi-idle", "smi-job-alone", "smi-job-with-full"):
    try:
        rows = list(csv.reader(open(f"{ev}/{name}.csv")))[1:]
        sm = [int(r[2].split()[0]) for r in rows if len(r) > 6 and r[2].split()[0].isdigit()]
        reasons = sorted({r[5].strip() for r in rows if len(r) > 6})
        power = [float(r[6].split()[0]) for r in rows if len(r) > 6 and r[6].split()[0].replace(".", "").isdigit()]
        print(f"{name}: {len(rows)} samples, SM MHz median {statistics.median(sm) if sm else '?'} "
              f"(min {min(sm) if sm else '?'}, max {max(sm) if sm else '?'}), max SM {rows[0][3].strip() if rows else '?'}, "
              f"event reasons {reasons}, power median {statistics.median(power) if power else '?'} W "
              f"of limit {rows[0][7].strip() if rows else '?'}")
    except Exception as exc:
        print(name, "unreadable:", exc)
for i in range(1, 6):
    try:
        c = json.load(open(f"{ev}/certificate-busy-{i}.json"))
        print(f"busy-full-{i}: {c.get('verdict')}; reasons: {[r if isinstance(r, str) else r.get('text', r) for r in (c.get('reasons') or [])][:3]}")
    except Exception as exc:
        print(f"busy-full-{i}: certificate unreadable: {exc}")
PY
