# Part "abwheel" of tools/device-evidence.sh (issue 46): two wheels of rmpeer, each installed
# apart as a user installs it (pip compiles its bytecode), timed run by run on the same host:
# passive, quick and full, ABW_ROUNDS rounds each (6), the earlier wheel first in odd rounds and this one
# first in even rounds, so that neither side always goes first. The wheels are carried as
# $repo/.rmw/old/*.whl and $repo/.rmw/new/*.whl (pip wheel --no-deps -w DIR, on each tree).
# Then the new wheel's quick tier under `python -X importtime` (what its start-up imports).
# Sourced with timed, $ev, $summary, $repo.

for side in old new; do
  side_wheel abwheel $side || return 1
  wheel=$(ls "$repo"/.rmw/$side/rmpeer-*.whl | head -1)
  # the wheel read by Python's zipfile: lent hosts have no unzip (the sha256 was of nothing)
  python3 - "$wheel" "$side" <<'PY' | tee -a "$summary"
import hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
built = [n.rsplit("/", 1)[-1] for n in z.namelist() if n.endswith(("_libc_ffi.py", "_matrices.marshal"))]
print(f"abwheel: {sys.argv[2]} wheel {hashlib.sha256(z.read(record)).hexdigest()[:16]} (sha256 of its RECORD), "
      f"built files: {' '.join(built)}")
PY
done
alternating rmpeer-old rmpeer-new "${ABW_ROUNDS:-6}" /tmp/abw
grep -h -E "^(CERTIFIED|NOT CERTIFIED|DEGRADED|INCOMPLETE)" "$ev"/*-new-"${ABW_ROUNDS:-6}".log "$ev"/*-old-"${ABW_ROUNDS:-6}".log | sed "s/^/abwheel: /" | tee -a "$summary"
PYTHONPATH=/tmp/rmw-new:/tmp/site python3 -X importtime -m rmpeer certify --tier quick --output /tmp/abw-importtime \
  >/dev/null 2>"$ev/importtime-quick.txt"
sort -t'|' -k2 -n "$ev/importtime-quick.txt" | tail -25 | sed "s/^/abwheel: importtime: /" | tee -a "$summary"
# the new tree's wall part by part, live (tools/overhead.py): the full tier with the bandwidth
# rig priced from this plain run and the 4- and 8-card projection with those prices (and the
# 2.3 ms of machinery a check saved since the 2 x H200 fit), then the quick tier
for tier in full quick; do
  PYTHONPATH=/tmp/rmw-new:/tmp/site python3 "$repo/tools/overhead.py" --live --runs 3 --tier "$tier" --saved-ms 2.3 \
    --json "$ev/live-$tier.json" >"$ev/live-$tier.txt" 2>&1
  sed -n '1,/checks per tier/p' "$ev/live-$tier.txt" | grep -v "checks per tier" | sed "s/^/abwheel: live-$tier: /" | tee -a "$summary"
  grep -E "rig as this plain run|with [0-9.]+ ms per check saved" "$ev/live-$tier.txt" | sed "s/^/abwheel: live-$tier: /" | tee -a "$summary"
done
# ABW_LIVE_OLD=1: the earlier wheel's machinery live as well, on the same host: the live saving
# per check between the two trees (tools/overhead.py --baseline takes it off the model's)
if [ -n "${ABW_LIVE_OLD:-}" ]; then
  PYTHONPATH=/tmp/rmw-old:/tmp/site python3 "$repo/tools/overhead.py" --live --runs 3 --tier full \
    --json "$ev/live-old-full.json" >"$ev/live-old-full.txt" 2>&1
  sed -n '1,3p' "$ev/live-old-full.txt" | sed "s/^/abwheel: live-old-full: /" | tee -a "$summary"
  PYTHONPATH=/tmp/rmw-new:/tmp/site python3 "$repo/tools/overhead.py" --live --runs 3 --tier full \
    --baseline "$ev/live-old-full.json" --profile "$ev/profile-live-full.txt" \
    --json "$ev/live-new-vs-old-full.json" >"$ev/live-new-vs-old-full.txt" 2>&1
  sed -n '1,3p' "$ev/live-new-vs-old-full.txt" | sed "s/^/abwheel: live-new-full: /" | tee -a "$summary"
  grep -E "per check saved" "$ev/live-new-vs-old-full.txt" | sed "s/^/abwheel: live-new-full: /" | tee -a "$summary"
fi
