#!/usr/bin/env bash
# Runs on a lent GPU machine (no network): installs the carried wheels, then `rmpeer certify`
# live against this host's GPUs, recording a transcript of every RM call, then the
# read/write suite alone, timed. Every file it writes lands in $OUT (8 files come back).
#   usage: bash tools/device-evidence.sh [extra certify args...]
set -u
out=${OUT:-/tmp/rmpeer-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed" >"$out/error.txt"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi -L; nvidia-smi topo -m; cat /proc/driver/nvidia/version; } >"$out/host.txt" 2>&1
rm -rf /tmp/reports /tmp/transcripts
python3 -m rmpeer certify --record /tmp/transcripts --output /tmp/reports "$@" 2>&1 | tee "$out/certify.log"
echo "certify exit ${PIPESTATUS[0]}" >>"$out/certify.log"
start=$(date +%s%N)
python3 -m pytest suites/test_cross_card_rw.py -q -p no:cacheprovider -o addopts="" --rm-live-only 2>&1 | tail -3 >"$out/rw-timing.txt"
echo "read/write suite wall time: $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$out/rw-timing.txt"
cp /tmp/transcripts/*.jsonl.gz /tmp/reports/certificate.json "$out/" 2>/dev/null
tar -czf "$out/reports.tgz" -C /tmp reports 2>/dev/null
dmesg 2>/dev/null | grep -i -E "NVRM|Xid" | tail -50 >"$out/dmesg.txt"
exit 0
