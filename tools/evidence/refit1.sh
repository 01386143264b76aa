# Part "refit1" of tools/device-evidence.sh (issue 46, item 3): the cost model's per-check,
# per-byte and per-layout costs re-fitted on ONE card with this tree, where no 2 x H200 is lent.
# At one extent, every layout of a 1-card host grows its checks with its bytes and a fit cannot
# tell the two costs apart (refit.sh says so); the full tier at two extents (64 MiB and 16 MiB)
# can. Then one quick run recorded (its bandwidth rig's stretch prices the rig and its figures)
# and `rmpeer bench` (this card's setup table and copy rate). tools/project_costs.py then takes
# the cross-card parts (NV50_P2P setup, cross-card GB/s), which one card cannot measure, from a
# 2 x H200 bench.json (--cross-from). Uses the rmpeer of .whl/ + the checkout, as refit.sh.
# Sourced with timed, $ev, $summary, $repo.

for i in 1 2 3; do
  timed "full-$i" rmpeer certify --tier full --output "/tmp/refit1-full-$i"
  timed "certify-16mib-$i" rmpeer certify --tier full --extent 16MiB --output "/tmp/refit1-16mib-$i"
done
medians ""
mkdir -p "$ev/recordings"
timed quick-record rmpeer certify --tier quick --record "$ev/recordings" --output /tmp/refit1-record
timed bench rmpeer bench --sizes 256MiB,1GiB --output "$ev"
grep -E "^projected|^cost model" "$ev/bench.log" | sed "s/^/refit1: 1 card alone: /" | tee -a "$summary"
