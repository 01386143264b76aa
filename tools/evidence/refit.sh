# Part "refit" of tools/device-evidence.sh (issue 46, item 3): the cost model re-fitted on this
# host with this tree. Quick and full x5 each (their progress logs fit the per-check, per-byte
# and per-layout costs), one quick run recorded (its bandwidth rig's stretch prices the rig and
# its figures), then `rmpeer bench`, which fits the model to those logs and that recording
# beside its bench.json and prints the projection for 4 and 8 cards. Meant for 2 x H200 (the
# 2-card fit is what the projection extrapolates); on 1 card the per-check and per-byte costs
# cannot be told apart (every layout's checks grow with its bytes) and the fit says so by its
# numbers. Sourced with timed, $ev, $summary, $repo.

for tier in quick full; do
  for i in 1 2 3 4 5; do timed "$tier-$i" rmpeer certify --tier "$tier" --output "/tmp/refit-$tier-$i"; done
done
medians ""
mkdir -p "$ev/recordings"
timed quick-record rmpeer certify --tier quick --record "$ev/recordings" --output /tmp/refit-record
timed bench rmpeer bench --sizes 256MiB,1GiB --output "$ev"
grep -E "^projected|^cost model" "$ev/bench.log" | tee -a "$summary"
python3 - "$ev/bench.json" <<'PY' | tee -a "$summary"
import json, sys
model = json.load(open(sys.argv[1])).get("cost_model") or {}
for tier, r in (model.get("reproduces") or {}).items():
    print(f"reproduces {tier}: predicted {r['predicted_s']} s, measured median {r['measured_median_s']} s over {r['runs']} runs")
print("coefficients: " + ", ".join(f"{k} {v:.4g}" for k, v in (model.get("coefficients") or {}).items() if v is not None))
PY
