# Part "onepath" of tools/device-evidence.sh (issue 26, and the fleet leftovers of issue 23/25):
# after the one-run-path move, on the lent host (about 40 s on 1 x H200):
# - a live quick certify, recorded, then its recording replayed: the replay's verdict, tier and
#   counts are the live run's (the run path is the same for both);
# - passive, quick and full with --json: each JSON line's verdict and exit code agree, and the
#   passive one ran no pytest (no allure-results folder);
# - fleet node --deadline 0.5 on the full tier: exit 5 and an INCOMPLETE status.json with the
#   deadline as its reason, and the cards' memory afterwards;
# - fleet node --require-complete on the passive tier as root: its exit code and what was not
#   checked;
# - certify --cards 0 --junit: the JUnit selection and per-card properties.
# Sourced with timed, $ev, $summary, $repo.

timed live-quick-record rmpeer certify --tier quick --record /tmp/op-rec --output /tmp/op-live --json
rec=$(ls /tmp/op-rec/*.jsonl.gz 2>/dev/null | head -1)
cp "$rec" "$ev/" 2>/dev/null
timed replay-of-it rmpeer certify --replay "$rec" --output /tmp/op-replay --json
python3 - /tmp/op-live/certificate.json /tmp/op-replay/replay-certificate.json <<'PY' | tee -a "$summary"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
same = (a["verdict"], a["tier"], a.get("counts")) == (b["verdict"], b["tier"], b.get("counts"))
print(f"assert live-vs-replay: {'ok' if same else 'FAIL'}: live {a['verdict']} {a['tier']} {a.get('counts')}, "
      f"replay {b['verdict']} {b['tier']} {b.get('counts')}")
PY
for tier in passive quick full; do
  timed "json-$tier" rmpeer certify --tier "$tier" --output "/tmp/op-$tier" --json
  python3 - "$ev/json-$tier.log" "$tier" /tmp/op-$tier <<'PY' | tee -a "$summary"
import json, os, sys
log, tier, out = sys.argv[1:]
text = open(log).read().splitlines()
line = json.loads(next(l for l in text if l.startswith("{")))
rc = int(text[-1].split(",")[0].split()[1])
pytest_ran = os.path.isdir(os.path.join(out, "allure-results"))
ok = line["exit_code"] == rc and line["tier"] == tier and (pytest_ran == (tier != "passive"))
print(f"assert json-{tier}: {'ok' if ok else 'FAIL'}: verdict {line['verdict']}, exit {rc} (line says "
      f"{line['exit_code']}), counts {line['counts']}, not_checked {[n['check'] for n in line['not_checked']]}, "
      f"pytest ran: {pytest_ran}")
PY
done
timed fleet-deadline env NODE_NAME=op rmpeer fleet node --tier full --deadline 0.5 --output /tmp/op-fd
echo "fleet-deadline status: $(cat /tmp/op-fd/status.json 2>/dev/null || echo none)" | tee -a "$summary"
echo "memory after: $(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tr '\n' ';')" | tee -a "$summary"
timed fleet-require-complete env NODE_NAME=op rmpeer fleet node --tier passive --require-complete --output /tmp/op-rc
echo "fleet-require-complete status: $(cat /tmp/op-rc/status.json 2>/dev/null || echo none)" | tee -a "$summary"
timed junit-cards rmpeer certify --tier passive --cards 0 --junit /tmp/op-j/junit.xml --output /tmp/op-j
grep -o '<property name="\(selection\|card\|pair\)"[^>]*>' /tmp/op-j/junit.xml | sed 's/^/junit: /' | tee -a "$summary"
cp /tmp/op-live/certificate.json "$ev/certificate-live-quick.json" 2>/dev/null
cp /tmp/op-fd/status.json "$ev/status-deadline.json" 2>/dev/null
cp /tmp/op-j/junit.xml "$ev/junit-cards.xml" 2>/dev/null
