#!/usr/bin/env bash
# Runs on a lent GPU machine (no network): installs the carried wheels, then the whole
# suite live against this host's GPUs, recording a transcript of every RM call. Every file
# it writes lands in $OUT (at most 8 files come back: keep it so).
#   usage: bash tools/device-evidence.sh [extra pytest args...]
set -u
out=${OUT:-/tmp/rmpeer-out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed" >"$out/error.txt"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi -L; nvidia-smi topo -m; cat /proc/driver/nvidia/version; } >"$out/host.txt" 2>&1
rm -rf /tmp/allure /tmp/transcripts
python3 -m pytest suites -p no:cacheprovider -o addopts="" -ra --rm-record /tmp/transcripts \
  --rm-results "$out/results.json" --alluredir /tmp/allure --junitxml "$out/junit.xml" "$@" 2>&1 | tee "$out/pytest.log"
rc=${PIPESTATUS[0]}
cp /tmp/transcripts/*.jsonl.gz "$out/" 2>/dev/null
tar -czf "$out/allure-results.tgz" -C /tmp allure 2>/dev/null
dmesg 2>/dev/null | grep -i -E "NVRM|Xid" | tail -50 >"$out/dmesg.txt"
echo "pytest exit $rc" >>"$out/pytest.log"
exit 0
