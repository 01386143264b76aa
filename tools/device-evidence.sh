#!/usr/bin/env bash
# Runs on a lent GPU machine (no network): installs the carried wheels (.whl/), then produces
# the evidence of one part below against this host's GPUs. Every log, certificate and
# recording goes into one archive in $OUT (the device tool brings back a few files only).
#   usage: bash tools/device-evidence.sh PART
#   PART   together  two certifies at once, and a quick certify beside a matmul job
#          hooks     the Slurm hooks and the NPD plugin alone, as slurmd and NPD run them
#          tiers     passive, quick and full x5 each, timed (wall, process start included)
#          records   two full certify runs back to back, recorded, and rmpeer diff of both
#                    (certificates and recordings); a --no-boost quick recording; --if-stale
#                    fresh x5, deeper tier, expired, forged; rmpeer bench
#          profile   where a quick certify's time goes on a clean host: nvidia-smi and NVML
#                    timed alone, quick x2, quick recorded (segment times), quick under cProfile
#          stale     --if-stale on a quick certificate: fresh x5 (timed), a deeper tier, after
#                    valid_until (--valid-for 1m), and with a forged fingerprint
#          b2b       two full certify runs back to back, recorded, and rmpeer diff of both
#                    (certificates and recordings)
#          job       a bf16 matmul job on every card alone, then with 5 passive certifies beside
#                    it: its throughput both times, and the passive verdicts
#          shared    beside an idle CUDA context: certify (full), --require-idle, passive;
#                    beside a matmul job: the job's throughput alone and with passive runs,
#                    and a quick certify; two certifies at once; SIGINT mid-run (and the
#                    cards' memory after); the Slurm hooks as slurmd runs them
#          NAME      any tools/evidence/NAME.sh: sourced here, with timed, $ev, $summary, $repo
# Each command's output is piped to a file (no terminal); its exit code and wall time follow.
set -u
part=${1:-}
case $part in
  together|hooks|tiers|records|shared|profile|stale|job|b2b) ;;
  *) [ -n "$part" ] && [ -f "tools/evidence/$part.sh" ] && [ "${part//[^a-z0-9-]/}" = "$part" ] ||
     { echo "usage: bash tools/device-evidence.sh PART (together, hooks, tiers, records, shared, profile, stale, job, b2b or any tools/evidence/NAME.sh), on a GPU host" >&2; exit 2; } ;;
esac
out=${OUT:-/tmp/rmpeer-out}
ev=/tmp/ev/$part
rm -rf "$ev" && mkdir -p "$ev" "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
repo=$PWD
# bytecode compiled once, as pip does when it installs the wheel: otherwise every run here
# compiles rmpeer's sources again (about 0.5 s of a quick run)
python3 -m compileall -q -j 0 "$repo/rmpeer" /tmp/site >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$repo
mkdir -p /tmp/bin
# the hooks run with a bare environment (env -i): the wrapper names its Python and path itself
printf '#!/bin/sh\nPYTHONPATH=/tmp/site:%s exec %s -m rmpeer "$@"\n' "$repo" "$(command -v python3)" >/tmp/bin/rmpeer
chmod +x /tmp/bin/rmpeer
export PATH=/tmp/bin:$PATH
export RMPEER_STATE=/tmp/rmpeer-state.json
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=index,persistence_mode --format=csv;
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}"; cat /proc/driver/nvidia/version; uname -r;
  # which sources ran: the copy's git HEAD can lag the working tree it was made from, so the
  # content hash of the tracked sources is what to compare (tools/sources-hash.sh here)
  echo "sources $(bash "$repo/tools/sources-hash.sh")"; } \
  >"$ev/host.txt" 2>&1
cd /tmp || exit 1
summary="$out/summary-$part.txt"    # written as the run goes: it comes back even if the run is cut
: >"$summary"

timed() {  # NAME COMMAND...: output to NAME.log, then "exit N, wall N ms"
  local name=$1; shift
  local start rc
  start=$(date +%s%N)
  "$@" </dev/null >"$ev/$name.log" 2>&1
  rc=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "exit $rc, wall $ms ms" >>"$ev/$name.log"
  printf '%-28s exit %s  wall %6d ms  %s\n' "$name" "$rc" "$ms" \
    "$(grep -E '(CERTIFIED|DEGRADED|INCOMPLETE|BUSY|rmpeer: )' "$ev/$name.log" | grep -v '^ ' | tail -1 | cut -c1-150)" \
    | tee -a "$summary"
  return $rc
}
back_to_back() {  # two full certifies recorded, one after the other, and diff of both
  timed b2b-1 rmpeer certify --record /tmp/rec1 --output /tmp/b2b-1
  timed b2b-2 rmpeer certify --record /tmp/rec2 --output /tmp/b2b-2
  timed diff-certificates rmpeer diff /tmp/b2b-1/certificate.json /tmp/b2b-2/certificate.json
  timed diff-recordings rmpeer diff /tmp/rec1/*.jsonl.gz /tmp/rec2/*.jsonl.gz
}
if_stale_runs() {  # QUICK_CERT: --if-stale fresh x5, a deeper tier, expired, forged fingerprint
  local cert=$1 i
  for i in 1 2 3 4 5; do timed "if-stale-fresh-$i" rmpeer certify --tier quick --if-stale "$cert" --output /tmp/s; done
  timed if-stale-deeper rmpeer certify --tier full --if-stale "$cert" --output /tmp/s-deeper
  timed valid-1m rmpeer certify --tier passive --valid-for 1m --output /tmp/v5
  sleep 61
  timed if-stale-expired rmpeer certify --tier passive --if-stale /tmp/v5/certificate.json --output /tmp/s-expired
  python3 -c "import json,sys;d=json.load(open(sys.argv[1]));d['fingerprint']['driver']='580.160.01';d['fingerprint']['cards'][-1]['uuid']='GPU-00000000-0000-0000-0000-000000000000';json.dump(d,open('/tmp/forged.json','w'))" "$cert"
  timed if-stale-forged rmpeer certify --tier quick --if-stale /tmp/forged.json --output /tmp/s-forged
}
gpu_memory() { nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ';'; }
rmpeer_wheel() {  # PART: rmpeer's own wheel (carried in $repo/.rmw/) installed at /tmp/rmw, apart
  # from .whl/ (part "ab" runs an earlier tree beside it), as the command rmpeer-wheel
  local wheel
  wheel=$(ls "$repo"/.rmw/rmpeer-*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || { echo "$1: no rmpeer wheel in $repo/.rmw" | tee -a "$summary"; return 1; }
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --target /tmp/rmw "$wheel" >/dev/null 2>&1 \
    || { echo "$1: the wheel did not install" | tee -a "$summary"; return 1; }
  printf '#!/bin/sh\nPYTHONPATH=/tmp/rmw:/tmp/site exec %s -m rmpeer "$@"\n' "$(command -v python3)" >/tmp/bin/rmpeer-wheel
  chmod +x /tmp/bin/rmpeer-wheel
  echo "wheel: $(basename "$wheel"), installed at /tmp/rmw (bytecode compiled by pip)" | tee -a "$summary"
  # the wheel's libc declarations parsed at build (rmpeer/shim/libc.py): no C parser at each start
  PYTHONPATH=/tmp/rmw:/tmp/site python3 -c 'import sys, rmpeer.shim.libc as l
parser = "pycparser" in sys.modules
print("wheel: libc parsed at build:", l.PARSED_AT_BUILD, "- pycparser imported:", parser)' 2>&1 |
    tail -1 | tee -a "$summary"
}
side_wheel() {  # PART SIDE [PATH_FIRST]: the wheel carried in $repo/.rmw/SIDE/ installed apart at
  # /tmp/rmw-SIDE (pip compiles its bytecode), as the command rmpeer-SIDE; PATH_FIRST ("DIR:")
  # goes before it on the wrapper's PYTHONPATH. Parts abwheel and abquick.
  local wheel
  wheel=$(ls "$repo"/.rmw/$2/rmpeer-*.whl 2>/dev/null | head -1)
  [ -n "$wheel" ] || { echo "$1: no $2 wheel in $repo/.rmw/$2" | tee -a "$summary"; return 1; }
  rm -rf /tmp/rmw-$2      # a warm host keeps the last call's: pip would not replace it
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --target /tmp/rmw-$2 "$wheel" >/dev/null 2>&1 \
    || { echo "$1: the $2 wheel did not install" | tee -a "$summary"; return 1; }
  printf '#!/bin/sh\nPYTHONPATH=%s/tmp/rmw-%s:/tmp/site exec %s -m rmpeer "$@"\n' "${3:-}" "$2" "$(command -v python3)" \
    >/tmp/bin/rmpeer-$2
  chmod +x /tmp/bin/rmpeer-$2
}
medians() {  # PREFIX: per tier, the median, min and max wall time of the timed PREFIXTIER-N runs
  python3 - "$ev" "$1" <<'PY' | tee -a "$summary"
import re, statistics, sys, glob
for tier in ("passive", "quick", "full"):
    ms = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
          for p in sorted(glob.glob(f"{sys.argv[1]}/{sys.argv[2]}{tier}-[0-9]*.log"))]
    if ms:
        print(f"{sys.argv[2]}{tier}: median {statistics.median(ms):.2f} s, min {min(ms):.2f} s, max {max(ms):.2f} s over {len(ms)} runs")
PY
}
alternating() {  # OLD_CMD NEW_CMD ROUNDS OUT_PREFIX [TIERS]: certifies of two builds, each tier of
  # TIERS ("passive quick full") run by run (odd rounds the earlier one first, even rounds the
  # other: no side always goes first), NAME TIER-SIDE-ROUND.log, then each tier's median, min and
  # max per side
  local tier i first side tiers=${5:-passive quick full}
  for tier in $tiers; do
    for i in $(seq 1 "$3"); do
      first=old; [ $((i % 2)) -eq 0 ] && first=new
      for side in $first $([ $first = old ] && echo new || echo old); do
        timed "$tier-$side-$i" "$([ $side = old ] && echo "$1" || echo "$2")" certify --tier "$tier" \
          --output "$4-$tier-$side-$i"
      done
    done
  done
  python3 - "$ev" $tiers <<'PY' | tee -a "$summary"
import glob, re, statistics, sys
for tier in sys.argv[2:]:
    row = []
    for side in ("old", "new"):
        s = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
             for p in sorted(glob.glob(f"{sys.argv[1]}/{tier}-{side}-*.log"))]
        row.append(f"{side} median {statistics.median(s):.2f} s (min {min(s):.2f}, max {max(s):.2f})")
    print(f"{tier}: " + "; ".join(row) + f" over {len(s)} runs each, alternating")
PY
}
bidir() { grep -h -E '^  bidirectional' "$@" 2>/dev/null | awk '{print $3}' | tr '\n' ' '; }

case $part in
tiers)
  for tier in passive quick full; do
    for i in 1 2 3 4 5; do timed "$tier-$i" rmpeer certify --tier "$tier" --output "/tmp/$tier-$i"; done
  done
  echo "both directions at once (GB/s), quick runs: $(bidir "$ev"/quick-*.log)" | tee -a "$summary"
  echo "both directions at once (GB/s), full runs: $(bidir "$ev"/full-*.log)" | tee -a "$summary"
  medians ""
  timed diff-full-4-vs-5 rmpeer diff /tmp/full-4/certificate.json /tmp/full-5/certificate.json
  cp /tmp/full-5/certificate.json "$ev/certificate-full.json"
  cp /tmp/passive-5/certificate.json "$ev/certificate-passive.json"
  ;;
records)
  back_to_back
  timed quick-record rmpeer certify --tier quick --record /tmp/recq --output /tmp/q
  timed diff-full-vs-quick rmpeer diff /tmp/b2b-1/certificate.json /tmp/q/certificate.json
  timed noboost-record rmpeer certify --tier quick --no-boost --record /tmp/recnb --output /tmp/nb
  if_stale_runs /tmp/q/certificate.json
  timed bench rmpeer bench --sizes 256MiB,1GiB --output /tmp/bench
  mkdir -p "$ev/recordings"
  cp /tmp/rec1/*.jsonl.gz "$ev/recordings/"
  for f in /tmp/recnb/*.jsonl.gz; do cp "$f" "$ev/recordings/$(basename "$f" .jsonl.gz)-noboost.jsonl.gz"; done
  cp /tmp/b2b-1/certificate.json "$ev/certificate-b2b-1.json"; cp /tmp/b2b-2/certificate.json "$ev/certificate-b2b-2.json"
  cp /tmp/nb/certificate.json "$ev/certificate-noboost.json"
  cp /tmp/bench/bench.json /tmp/bench/bench.svg "$ev/" 2>/dev/null
  ;;
shared)
  # an idle CUDA context on every card, held until killed (its output to a file: a background
  # job must not hold this script's pipes open)
  python3 -c "import torch,time; n=torch.cuda.device_count(); [torch.zeros(1, device=f'cuda:{i}') for i in range(n)]; print('holding', n, flush=True); time.sleep(300)" \
    >"$ev/holder.log" 2>&1 &
  hp=$!; sleep 10
  echo "idle CUDA context held by pid $hp; memory: $(gpu_memory)" | tee -a "$summary"
  timed idle-ctx-full rmpeer certify --output /tmp/idle-full
  timed idle-ctx-require-idle rmpeer certify --tier quick --require-idle --output /tmp/idle-req
  timed idle-ctx-passive rmpeer certify --tier passive --output /tmp/idle-passive
  kill "$hp"; wait "$hp" 2>/dev/null
  timed matmul-alone python3 "$repo/tools/matmul_load.py" --seconds 12
  python3 "$repo/tools/matmul_load.py" --seconds 12 >"$ev/matmul-with-passive.json" 2>&1 &
  mp=$!; sleep 3
  for i in 1 2 3 4 5; do timed "passive-during-job-$i" rmpeer certify --tier passive --output "/tmp/pj$i"; sleep 1; done
  wait "$mp"
  python3 "$repo/tools/matmul_load.py" --seconds 12 >"$ev/matmul-with-quick.json" 2>&1 &
  mp=$!; sleep 3
  timed quick-during-job rmpeer certify --tier quick --output /tmp/qj
  wait "$mp"
  # two certifies started together: the second refuses at once (--wait 0), the third waits
  rmpeer certify --tier quick --output /tmp/a >"$ev/together-a.log" 2>&1 &
  ap=$!; sleep 0.5
  timed together-b-no-wait rmpeer certify --tier quick --output /tmp/b
  timed together-c-wait-60 rmpeer certify --tier quick --wait 60 --output /tmp/c
  wait "$ap"; echo "together-a exit $?: $(grep -E 'CERTIFIED|DEGRADED' "$ev/together-a.log" | tail -1 | cut -c1-120)" | tee -a "$summary"
  # SIGINT 6 s into a full run
  rmpeer certify --output /tmp/int >"$ev/sigint.log" 2>&1 &
  ip=$!; sleep 6; kill -INT "$ip"; wait "$ip"; rc=$?
  sleep 1
  echo "sigint: exit $rc; $(grep -E 'INCOMPLETE' "$ev/sigint.log" | tail -1 | cut -c1-160); memory after: $(gpu_memory)" | tee -a "$summary"
  cp /tmp/int/certificate.json "$ev/certificate-sigint.json" 2>/dev/null
  cp /tmp/idle-full/certificate.json "$ev/certificate-idle-ctx.json"
  cp /tmp/qj/certificate.json "$ev/certificate-quick-during-job.json"
  # the Slurm hooks and the NPD plugin as their callers run them
  timeout 120 bash "$repo/tools/fleet-hooks-live.sh" "$ev/fleet" >"$ev/fleet-hooks.log" 2>&1
  cat "$ev/fleet/README.md" >>"$summary" 2>/dev/null
  ;;
together)
  # after the per-card timing fix: two certifies at once, and a quick certify beside a matmul job
  rmpeer certify --tier quick --output /tmp/a >"$ev/together-a.log" 2>&1 &
  ap=$!; sleep 0.5
  timed together-b-no-wait rmpeer certify --tier quick --output /tmp/b
  timed together-c-wait-60 rmpeer certify --tier quick --wait 60 --output /tmp/c
  wait "$ap"; echo "together-a exit $?: $(grep -E '^(CERTIFIED|DEGRADED|NOT|INCOMPLETE)' "$ev/together-a.log" | tail -1 | cut -c1-120)" | tee -a "$summary"
  python3 "$repo/tools/matmul_load.py" --seconds 10 >"$ev/matmul-with-quick.json" 2>&1 &
  mp=$!; sleep 3
  timed quick-during-job rmpeer certify --tier quick --output /tmp/qj
  wait "$mp"
  ;;
profile)
  nvidia-smi --query-gpu=index,persistence_mode,pstate,clocks.gr --format=csv >>"$ev/host.txt" 2>&1
  for i in 1 2 3; do timed "smi-$i" nvidia-smi --query-gpu=pci.bus_id,clocks.gr,clocks.sm,clocks.mem,pstate --format=csv,noheader,nounits; done
  timed nvml-inprocess python3 - <<'PY'
import ctypes, time
t0 = time.perf_counter(); lib = ctypes.CDLL("libnvidia-ml.so.1"); t1 = time.perf_counter()
rc = lib.nvmlInit_v2(); t2 = time.perf_counter()
n = ctypes.c_uint(); lib.nvmlDeviceGetCount_v2(ctypes.byref(n))
h = ctypes.c_void_p(); mhz = ctypes.c_uint()
t3 = time.perf_counter()
for i in range(n.value):
    lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)); lib.nvmlDeviceGetClockInfo(h, 0, ctypes.byref(mhz))
t4 = time.perf_counter(); lib.nvmlShutdown(); t5 = time.perf_counter()
print(f"dlopen {1e3*(t1-t0):.1f} ms, init rc {rc} {1e3*(t2-t1):.1f} ms, {n.value} clocks {1e3*(t4-t3):.2f} ms, shutdown {1e3*(t5-t4):.1f} ms")
PY
  timed import-cost python3 -X importtime -c "import rmpeer.cli.certify, pytest, allure_pytest" 
  sort -t'|' -k2 -n "$ev/import-cost.log" | tail -12 >"$ev/import-top.txt"
  for i in 1 2; do timed "quick-$i" rmpeer certify --tier quick --output "/tmp/quick-$i"; done
  timed quick-record rmpeer certify --tier quick --record /tmp/recq --output /tmp/qr
  timed quick-cprofile python3 -m cProfile -o "$ev/quick.prof" -m rmpeer certify --tier quick --output /tmp/qp
  timed quick-3 rmpeer certify --tier quick --output /tmp/quick-3
  grep -h "detect:unmapped" /tmp/quick-*/allure-results/*.json 2>/dev/null | grep -o "did not finish ([^)]*)" | head -3 >>"$summary"
  mkdir -p "$ev/recordings"; cp /tmp/recq/*.jsonl.gz "$ev/recordings/"
  cp /tmp/quick-3/certificate.json "$ev/certificate-quick.json"
  ;;
b2b)
  back_to_back
  tail -n 3 "$ev/diff-certificates.log" "$ev/diff-recordings.log" >>"$summary"
  gzip -c /tmp/b2b-1/certificate.json >"$ev/certificate-b2b-1.json.gz"
  gzip -c /tmp/b2b-2/certificate.json >"$ev/certificate-b2b-2.json.gz"
  ;;
job)
  python3 "$repo/tools/matmul_load.py" --seconds 12 >"$ev/matmul-alone.json" 2>"$ev/matmul-alone.err"
  python3 "$repo/tools/matmul_load.py" --seconds 12 >"$ev/matmul-with-passive.json" 2>"$ev/matmul-with-passive.err" &
  mp=$!; sleep 3
  for i in 1 2 3 4 5; do timed "passive-during-job-$i" rmpeer certify --tier passive --output "/tmp/pj$i"; sleep 1; done
  wait "$mp"
  python3 - "$ev" <<'PY' | tee -a "$summary"
import json, sys
for name in ("matmul-alone", "matmul-with-passive"):
    d = json.load(open(f"{sys.argv[1]}/{name}.json"))
    print(name, "median TFLOP/s per card (1 s windows):",
          ", ".join(f"card {g}: {v['median_tflops']}" for g, v in d["per_gpu"].items()))
PY
  cp /tmp/pj5/certificate.json "$ev/certificate-passive-during-job.json"
  ;;
stale)
  timed stale-base rmpeer certify --tier quick --output /tmp/sq
  if_stale_runs /tmp/sq/certificate.json
  for f in if-stale-deeper if-stale-expired if-stale-forged; do
    echo "$f: $(grep -m1 -i -E 'stale|ran because|running' "$ev/$f.log" | cut -c1-200)" | tee -a "$summary"
  done
  cp /tmp/sq/certificate.json "$ev/certificate-base.json"; cp /tmp/forged.json "$ev/certificate-forged.json"
  ;;
hooks)
  timeout 120 bash "$repo/tools/fleet-hooks-live.sh" "$ev/fleet" >"$ev/fleet-hooks.log" 2>&1
  cat "$ev/fleet/README.md" >>"$summary" 2>/dev/null
  rm -rf "$ev"/fleet/state/*/allure-results
  ;;
*)
  # shellcheck source=/dev/null
  source "$repo/tools/evidence/$part.sh"
  ;;
esac
dmesg 2>/dev/null | grep -i -E "NVRM|Xid" | tail -30 >"$ev/dmesg.txt"
cp "$summary" "$ev/summary.txt"
tar -czf "$out/evidence-$part.tgz" -C /tmp/ev "$part"
cat "$summary"
exit 0
