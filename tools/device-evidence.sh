#!/usr/bin/env bash
# Runs on a lent GPU machine (no network): installs the carried wheels (.whl/), then, against
# this host's GPUs: rmpeer certify recording every RM call, certify timed (default and
# --quick), a --no-boost recording, and rmpeer bench. Every file lands in $OUT.
#   usage: bash tools/device-evidence.sh [all|certify|bench]
set -u
what=${1:-all}
out=${OUT:-/tmp/rmpeer-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed" >"$out/error.txt"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
rmpeer() { python3 -m rmpeer "$@"; }
{ nvidia-smi -L; nvidia-smi topo -m; cat /proc/driver/nvidia/version; uname -r; } >"$out/host.txt" 2>&1
cd /tmp || exit 1
rm -rf /tmp/reports /tmp/transcripts /tmp/noboost
timed() {  # name, then the command: its output piped to a file (no terminal), its wall time
  local name=$1; shift
  local start=$(date +%s%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "exit $rc, wall $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$out/$name.log"
  tail -1 "$out/$name.log"
}
if [ "$what" = all ] || [ "$what" = certify ]; then
  timed certify-record rmpeer certify --record /tmp/transcripts --output /tmp/reports
  timed certify rmpeer certify --output /tmp/reports-timed
  timed certify-quick rmpeer certify --quick --output /tmp/reports-quick
  timed certify-noboost rmpeer certify --quick --no-boost --record /tmp/noboost --output /tmp/reports-noboost
  cp /tmp/transcripts/*.jsonl.gz "$out/" 2>/dev/null
  for f in /tmp/noboost/*.jsonl.gz; do cp "$f" "$out/$(basename "$f" .jsonl.gz)-noboost.jsonl.gz"; done 2>/dev/null
  cp /tmp/reports/certificate.json "$out/certificate.json" 2>/dev/null
  cp /tmp/reports-noboost/certificate.json "$out/certificate-noboost.json" 2>/dev/null
  tar -czf "$out/allure-results.tgz" -C /tmp/reports allure-results 2>/dev/null
  printf 'ANSI escapes in the piped logs: %s\n' "$(cat "$out"/certify*.log | grep -c $'\e')" >>"$out/checks.txt"
  printf 'pytest-benchmark lines in the piped logs: %s\n' "$(cat "$out"/certify*.log | grep -ci benchmark)" >>"$out/checks.txt"
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  timed bench rmpeer bench --output /tmp/bench
  cp /tmp/bench/bench.json /tmp/bench/bench.svg "$out/" 2>/dev/null
fi
dmesg 2>/dev/null | grep -i -E "NVRM|Xid" | tail -50 >"$out/dmesg.txt"
# the device tool brings back only a few files: everything travels as one archive
tar -czf /tmp/evidence.tgz -C "$out" . && rm -rf "${out:?}"/* && mv /tmp/evidence.tgz "$out/"
exit 0
