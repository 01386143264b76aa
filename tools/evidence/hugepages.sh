# Part "hugepages" of tools/device-evidence.sh (issue 46): numpy's transparent huge pages for
# rmpeer's large arrays (the patterns, the read-back blocks), on and off, on this host. On
# the 2-core CI VM a huge-page fault cost about 7x its bytes (a full replay 11.6-16.0 s with
# them, 8.4-8.7 s without: .ci/run turns them off for the tests); here it decides whether a
# live run should ask for them. Full and quick x5 each way, alternating run by run, from
# rmpeer's own wheel (.rmw/, as part "machinery"), and each way's medians.
# Sourced with timed, $ev, $summary, $repo.

rmpeer_wheel hugepages || return 1
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" | tee -a "$summary"
for tier in quick full; do
  for i in 1 2 3 4 5; do
    NUMPY_MADVISE_HUGEPAGE=1 timed "huge-$tier-$i" rmpeer-wheel certify --tier "$tier" --output "/tmp/huge-$tier-$i"
    NUMPY_MADVISE_HUGEPAGE=0 timed "small-$tier-$i" rmpeer-wheel certify --tier "$tier" --output "/tmp/small-$tier-$i"
  done
done
medians huge-
medians small-
