# Part "drift" of tools/device-evidence.sh (issue 45): on the lent host, with a state folder of
# its own, five full runs (clocks boosted) build this host's history; a quick --no-boost run then
# gets the drift warning naming the drop; a boosted quick run after it gets none; `rmpeer
# history` prints the trend. Then a new full and a new quick recording, each diffed against
# every committed 1 x H200 recording (exit 0 where only an older rmpeer's steps are missing).
# `assert NAME: ok|FAIL` lines say what was checked. Sourced with timed, $ev, $summary, $repo.

export RMPEER_STATE=/tmp/drift-state/state.json
rm -rf /tmp/drift-state
for i in 1 2 3 4 5; do timed "history-full-$i" rmpeer certify --output "/tmp/dh-$i"; done
timed drift-noboost rmpeer certify --tier quick --no-boost --output /tmp/dh-noboost
timed drift-boosted rmpeer certify --tier quick --output /tmp/dh-boosted
timed history rmpeer history
cp /tmp/drift-state/history.json "$ev/history.json"
cp /tmp/dh-noboost/certificate.json "$ev/certificate-noboost.json"
python3 - "$ev" <<'PY' | tee -a "$summary"
import json, sys
ev = sys.argv[1]
warned = [l.strip() for l in open(f"{ev}/drift-noboost.log") if l.strip().startswith("! drift")]
print(f"assert noboost-warned: {'ok' if warned else 'FAIL'}: {warned[:1]}")
calm = [l for l in open(f"{ev}/drift-boosted.log") if l.strip().startswith("! drift")]
print(f"assert boosted-not-warned: {'ok' if not calm else 'FAIL'}: {calm[:1]}")
h = json.load(open(f"{ev}/history.json"))
runs = h["targets"]["live"]
print(f"assert history-kept-boosted-runs-only: {'ok' if len(runs) == 6 else 'FAIL'}: {len(runs)} runs "
      f"(5 full + 1 boosted quick; the --no-boost run is compared, never kept)")
PY
cat "$ev/history.log" | head -8 | tee -a "$summary"
timed record-full rmpeer certify --record /tmp/drec-full --output /tmp/drec-full-out
timed record-quick rmpeer certify --tier quick --record /tmp/drec-quick --output /tmp/drec-quick-out
mkdir -p "$ev/recordings"
cp /tmp/drec-full/*.jsonl.gz "$ev/recordings/full.jsonl.gz"
cp /tmp/drec-quick/*.jsonl.gz "$ev/recordings/quick.jsonl.gz"
# every committed 1 x H200 recording (of any tier, with or without the boost; derived ones
# left out), eight diffs at a time: one line each, "NAME exit N: last line"
find "$repo/docs/evidence" "$repo/fixtures/transcripts" -name '*.jsonl.gz' -path '*h200x1*' ! -path '*/derived/*' \
  | sort >"$ev/committed.txt"
for new in full quick; do
  xargs -P 8 -I{} sh -c 'rmpeer diff "$1" "$2" >"$3/diff-$4-vs-$(echo "$1" | md5sum | cut -c1-8).log" 2>&1;
    echo "$4 vs ${1#$5/} exit $?: $(tail -1 "$3/diff-$4-vs-$(echo "$1" | md5sum | cut -c1-8).log")"' \
    _ {} "$ev/recordings/$new.jsonl.gz" "$ev" "$new" "$repo" <"$ev/committed.txt" | sort >"$ev/diffs-$new.txt"
  echo "diff $new recording against $(wc -l <"$ev/committed.txt") committed 1 x H200 recordings: exit codes $(
    sed -E 's/.* exit ([0-9]+):.*/\1/' "$ev/diffs-$new.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')" | tee -a "$summary"
  grep -v " exit 0:" "$ev/diffs-$new.txt" | head -5 | tee -a "$summary"
done
