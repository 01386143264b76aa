# Part "observed" of tools/device-evidence.sh: what a live run observes outside RM (clocks,
# /proc's GPUs, the kernel log, the GPU processes, its pid) is of the kinds a replay now
# checks (rmpeer/shim/observed.py), on the lent host (about 60 s on 1 x H200):
# - a live full certify, recorded, and its recording replayed: the same verdict, tier, counts;
# - beside an idle CUDA context (another process holding every card), a quick and a passive
#   certify recorded, and each replayed: the same verdict, tier and counts, and the recording
#   lists that process;
# - `rmpeer show` of the full recording into /dev/full: exit 5 and one line, no traceback.
# Sourced with timed, $ev, $summary, $repo.

same_as_replay() {  # NAME LIVE_OUT RECORD_DIR: replay NAME's recording and compare both certificates
  local name=$1 live=$2 recdir=$3 rec
  rec=$(ls "$recdir"/*.jsonl.gz 2>/dev/null | head -1)
  cp "$rec" "$ev/$name.jsonl.gz" 2>/dev/null
  timed "$name-replayed" rmpeer certify --replay "$rec" --output "/tmp/ob-$name-replay"
  python3 - "$live"/certificate.json "/tmp/ob-$name-replay/replay-certificate.json" "$name" <<'PY' | tee -a "$summary"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
same = (a["verdict"], a["tier"], a.get("counts")) == (b["verdict"], b["tier"], b.get("counts"))
print(f"assert {sys.argv[3]}-live-vs-replay: {'ok' if same else 'FAIL'}: live {a['verdict']} {a['tier']} "
      f"{a.get('counts')}, replay {b['verdict']} {b['tier']} {b.get('counts')}")
PY
}

observed_labels() {  # RECORDING: each observed label and its value's top-level kind
  python3 - "$1" <<'PY' | tee -a "$summary"
import gzip, json, sys
seen = {}
for line in gzip.open(sys.argv[1], "rt"):
    d = json.loads(line)
    if d.get("op") == "observe":
        v = d["extra"].get("value")
        procs = len(v.get("processes", [])) if isinstance(v, dict) and "processes" in v else None
        seen[d["label"]] = type(v).__name__ + (f" ({procs} processes)" if procs is not None else "")
print("observed: " + "; ".join(f"{k}: {v}" for k, v in seen.items()))
PY
}

timed full-record rmpeer certify --record /tmp/ob-rec-full --output /tmp/ob-full
same_as_replay full /tmp/ob-full /tmp/ob-rec-full
observed_labels "$ev/full.jsonl.gz"

python3 -c "import torch,time; n=torch.cuda.device_count(); [torch.zeros(1, device=f'cuda:{i}') for i in range(n)]; print('holding', n, flush=True); time.sleep(120)" \
  >"$ev/holder.log" 2>&1 &
hp=$!; sleep 10
echo "idle CUDA context held by pid $hp" | tee -a "$summary"
timed quick-beside-record rmpeer certify --tier quick --record /tmp/ob-rec-quick --output /tmp/ob-quick
timed passive-beside-record rmpeer certify --tier passive --record /tmp/ob-rec-passive --output /tmp/ob-passive
kill "$hp"; wait "$hp" 2>/dev/null
same_as_replay quick-beside /tmp/ob-quick /tmp/ob-rec-quick
observed_labels "$ev/quick-beside.jsonl.gz"
same_as_replay passive-beside /tmp/ob-passive /tmp/ob-rec-passive
observed_labels "$ev/passive-beside.jsonl.gz"

rmpeer show "$ev/full.jsonl.gz" >/dev/full 2>"$ev/show-full.log"
rc=$?
echo "assert show-to-dev-full: $([ $rc -eq 5 ] && [ "$(wc -l <"$ev/show-full.log")" -eq 1 ] && ! grep -q Traceback "$ev/show-full.log" && echo ok || echo FAIL): exit $rc: $(cat "$ev/show-full.log")" | tee -a "$summary"
cp /tmp/ob-full/certificate.json "$ev/certificate-full.json" 2>/dev/null
cp /tmp/ob-quick/certificate.json "$ev/certificate-quick-beside.json" 2>/dev/null
