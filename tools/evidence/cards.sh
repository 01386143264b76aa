# Part "cards" of tools/device-evidence.sh (issue 25): card selection on the lent host.
# On 1 x H200 (about 30 s): --cards 0, --cards GPU-<prefix> and CUDA_VISIBLE_DEVICES=<uuid>
# give the same CERTIFIED verdict (quick tier) with the selection recorded in the certificate;
# --cards 1 is refused in one line (exit 2); the shipped prolog with SLURM_JOB_GPUS=0, run as
# slurmd runs it (root, setsid, env -i, stdin from /dev/null), certifies card 0; the recording
# of the --cards 0 run is walked call by call (rmpeer.shim.touched): it touches card 0 only.
# On 2 or more cards, also: --cards 1 alone, recorded and walked (card 0 never touched), with
# card 0's processes and clocks (nvidia-smi) read before and after.
# Sourced with timed, $ev, $summary, $repo.

uuid0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
ncards=$(nvidia-smi -L | grep -c '^GPU ')
prefix=${uuid0:0:12}
echo "host: $ncards card(s); card 0 is $uuid0 (prefix used: $prefix)" | tee -a "$summary"

check_cert() {  # NAME CERT SOURCE HOST_CARDS...: the certificate's verdict and selection, asserted
  python3 - "$@" <<'EOF' | tee -a "$summary"
import json, sys
name, path, source, *cards = sys.argv[1:]
try:
    c = json.load(open(path))
except OSError as exc:
    print(f"assert {name}: FAIL no certificate ({exc})"); sys.exit()
sel = c["host"].get("selection") or {}
per = [(x["card"], x["verdict"]) for x in c.get("by_card", {}).get("cards", [])]
ok = (c["verdict"] == "CERTIFIED" and sel.get("cards") == [int(x) for x in cards] and sel.get("source") == source
      and all(v == "CERTIFIED" for _, v in per))
print(f"assert {name}: {'ok' if ok else 'FAIL'}: verdict {c['verdict']}, tier {c['tier']}, selection "
      f"{sel.get('cards')} {sel.get('uuids')} from {sel.get('source')} ({sel.get('how')}), per card {per}")
EOF
}

walk() {  # NAME RECORDING HOST_CARD: every RM call of the recording traced to the cards it touches
  python3 - "$@" <<'EOF' | tee -a "$summary"
import sys
from rmpeer.shim.touched import walk_transcript
name, path, host_card = sys.argv[1], sys.argv[2], int(sys.argv[3])
t, facts = walk_transcript(path)
cards = facts["cards"]
assert facts["selection"]["cards"] == [host_card], facts["selection"]
foreign = t.foreign([c["minor"] for c in cards], [c["device_instance"] for c in cards], [c["gpu_id"] for c in cards])
print(f"assert {name}: {'ok' if not foreign else 'FAIL'}: opened minors {sorted(t.minors)}, device instances "
      f"{sorted(t.devices)}, gpuIds {sorted(hex(g) for g in t.gpu_ids)}; calls per device instance "
      f"{ {d: len(v) for d, v in t.uses.items()} }; outside the selection: {foreign or 'nothing'}")
EOF
}

timed cards-index rmpeer certify --tier quick --cards 0 --record /tmp/cards-rec --output /tmp/cards-0 --json
grep -m1 '^cards:' "$ev/cards-index.log" | tee -a "$summary"
check_cert cards-index /tmp/cards-0/certificate.json --cards 0
timed cards-uuid rmpeer certify --tier quick --cards "$prefix" --output /tmp/cards-u
check_cert cards-uuid /tmp/cards-u/certificate.json --cards 0
timed cards-cuda env CUDA_VISIBLE_DEVICES="$uuid0" rmpeer certify --tier quick --output /tmp/cards-c
grep -m1 '^cards:' "$ev/cards-cuda.log" | tee -a "$summary"
check_cert cards-cuda /tmp/cards-c/certificate.json CUDA_VISIBLE_DEVICES 0
if [ "$ncards" -eq 1 ]; then
  timed cards-refused rmpeer certify --tier quick --cards 1 --output /tmp/cards-1
  lines=$(grep -c . "$ev/cards-refused.log")   # the refusal, and timed's own exit line
  echo "assert cards-refused: $([ "$(grep -c '^exit 2,' "$ev/cards-refused.log")" = 1 ] && [ "$lines" = 2 ] \
    && echo ok || echo FAIL): $(head -1 "$ev/cards-refused.log" | cut -c1-200)" | tee -a "$summary"
fi
walk cards-walk "$(ls /tmp/cards-rec/*.jsonl.gz | head -1)" 0

# the prolog as slurmd runs it: root, no terminal, the job's environment only
files=$(mktemp -d) state=$(mktemp -d)
rmpeer fleet files slurm "$files" >/dev/null
printf 'RMPEER=%s\nRMPEER_STATE_DIR=%s\nRMPEER_LOG_FILE=%s\n' "$(command -v rmpeer)" "$state" "$ev/prolog-hooks.log" \
  >"$files/defaults"
timed cards-prolog setsid env -i RMPEER_DEFAULTS="$files/defaults" SLURM_JOB_ID=4242 SLURMD_NODENAME="$(hostname -s)" \
  SLURM_JOB_USER=root SLURM_JOB_UID=0 SLURM_JOB_GPUS=0 "$files/rmpeer-prolog"
check_cert cards-prolog "$state/prolog/certificate.json" SLURM_JOB_GPUS 0
cp "$state/prolog/certificate.json" "$ev/prolog-certificate.json" 2>/dev/null
cp /tmp/cards-0/certificate.json "$ev/certificate-cards-0.json"
cp "$(ls /tmp/cards-rec/*.jsonl.gz | head -1)" "$ev/"

if [ "$ncards" -ge 2 ]; then   # a subset that leaves a card out: card 0 must not notice
  nvidia-smi -i 0 --query-gpu=clocks.sm,clocks.mem,pstate --format=csv,noheader >"$ev/card0-before.txt" 2>&1
  nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader >>"$ev/card0-before.txt" 2>&1
  timed cards-one rmpeer certify --tier quick --cards 1 --record /tmp/cards-rec1 --output /tmp/cards-one
  nvidia-smi -i 0 --query-gpu=clocks.sm,clocks.mem,pstate --format=csv,noheader >"$ev/card0-after.txt" 2>&1
  check_cert cards-one /tmp/cards-one/certificate.json --cards 1
  walk cards-one-walk "$(ls /tmp/cards-rec1/*.jsonl.gz | head -1)" 1
  echo "card 0 before: $(tr '\n' ' ' <"$ev/card0-before.txt"); after: $(tr '\n' ' ' <"$ev/card0-after.txt")" \
    | tee -a "$summary"
  cp "$(ls /tmp/cards-rec1/*.jsonl.gz | head -1)" "$ev/"
fi
rm -rf "$files" "$state"/prolog/allure-results
