# Part "machinery" of tools/device-evidence.sh (issue 46): the tiers from a wheel (rmpeer's
# own, carried in $repo/.rmw/, installed apart from .whl/ so that part "ab" can run the
# earlier tree in the same command), five runs each, and tools/overhead.py live on this host:
# the machinery per check of a full run with this tree and with the earlier tree at
# $repo/.ab/old (tools/evidence/ab.sh), and a cProfile of one full run (top 20 by cumulative
# and own time); the quick tier's wall part by part. Sourced with timed, $ev, $summary, $repo.

rmpeer_wheel machinery || return 1
for tier in passive quick full; do
  for i in 1 2 3 4 5; do timed "wheel-$tier-$i" rmpeer-wheel certify --tier "$tier" --output "/tmp/w-$tier-$i"; done
done
medians wheel-
cp /tmp/w-full-5/certificate.json "$ev/certificate-wheel-full.json" 2>/dev/null
PYTHONPATH=/tmp/site:$repo python3 "$repo/tools/overhead.py" --live --runs 3 --json "$ev/live-after.json" \
  --profile "$ev/profile-live-full.txt" >"$ev/live-after.txt" 2>&1
# the quick tier's wall, part by part (tools/overhead.py PHASES): what a prolog pays
PYTHONPATH=/tmp/site:$repo python3 "$repo/tools/overhead.py" --live --tier quick --runs 5 --json "$ev/live-quick.json" \
  >"$ev/live-quick.txt" 2>&1
if [ -d "$repo/.ab/old/rmpeer" ]; then
  PYTHONPATH=/tmp/site:$repo/.ab/old python3 "$repo/tools/overhead.py" --live --runs 3 --json "$ev/live-before.json" \
    >"$ev/live-before.txt" 2>&1
  PYTHONPATH=/tmp/site:$repo python3 "$repo/tools/overhead.py" --live --runs 1 --json "$ev/live-after-2.json" \
    --baseline "$ev/live-before.json" >"$ev/live-after-vs-before.txt" 2>&1
fi
for f in live-before live-after live-after-vs-before live-quick; do
  [ -f "$ev/$f.txt" ] && sed "s/^/$f: /" "$ev/$f.txt" | grep -E "overhead:|session:|wall|saved" | tee -a "$summary"
done
for f in live-quick live-after; do   # the quick tier's parts, then the full tier's
  [ -f "$ev/$f.txt" ] && sed -n '/where the wall goes/,/checks per tier/p' "$ev/$f.txt" | grep -v "checks per tier" |
    sed "s/^/$f: /" | tee -a "$summary"
done
# the host side of a check on this machine: a 64 MiB compare and a pattern at several thread
# counts, and a report's 1132 small files written three ways (tools/host_rates.py)
PYTHONPATH=/tmp/site:$repo python3 "$repo/tools/host_rates.py" --where /tmp --where "$repo" >"$ev/host-rates.txt" 2>&1
sed "s/^/host-rates: /" "$ev/host-rates.txt" | tee -a "$summary"
