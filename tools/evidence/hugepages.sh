# Part "hugepages" of tools/device-evidence.sh (issue 46): numpy's transparent huge pages for
# rmpeer's large arrays (the patterns, the read-back blocks), on and off, on this host. On
# the 2-core CI VM a huge-page fault cost about 7x its bytes (a full replay 11.6-16.0 s with
# them, 8.4-8.7 s without: .ci/run turns them off for the tests); here it decides whether a
# live run should ask for them. Full and quick x5 each way, alternating run by run, from
# rmpeer's own wheel (.rmw/, as part "machinery"), and each way's medians.
# Sourced with timed, $ev, $summary, $repo.

wheel=$(ls "$repo"/.rmw/rmpeer-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "hugepages: no rmpeer wheel in $repo/.rmw" | tee -a "$summary"; return 1; }
python3 -m pip install -q --no-index --no-deps --no-cache-dir --target /tmp/rmw "$wheel" >/dev/null 2>&1 \
  || { echo "hugepages: the wheel did not install" | tee -a "$summary"; return 1; }
printf '#!/bin/sh\nPYTHONPATH=/tmp/rmw:/tmp/site exec %s -m rmpeer "$@"\n' "$(command -v python3)" >/tmp/bin/rmpeer-wheel
chmod +x /tmp/bin/rmpeer-wheel
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" | tee -a "$summary"
for tier in quick full; do
  for i in 1 2 3 4 5; do
    NUMPY_MADVISE_HUGEPAGE=1 timed "huge-$tier-$i" rmpeer-wheel certify --tier "$tier" --output "/tmp/huge-$tier-$i"
    NUMPY_MADVISE_HUGEPAGE=0 timed "small-$tier-$i" rmpeer-wheel certify --tier "$tier" --output "/tmp/small-$tier-$i"
  done
done
medians huge-
medians small-
