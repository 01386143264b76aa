# Part "ab" of tools/device-evidence.sh: this tree's tiers against an earlier tree's, run by
# run on the same host (old then new, then new then old, ...): the same GPU, clocks and load for both, so a
# difference of the medians is the code's, not the machine's. The earlier tree is a copy of
# the sources at $AB_REV (git archive REV rmpeer matrices suites fixtures conftest.py
# pyproject.toml), carried as $repo/.ab/old beside .whl/. Sourced with timed, $ev, $summary, $repo.

old=$repo/.ab/old
[ -d "$old/rmpeer" ] || { echo "ab: no earlier tree at $old" | tee -a "$summary"; return 1; }
python3 -m compileall -q -j 0 "$old/rmpeer" >/dev/null 2>&1
printf '#!/bin/sh\nPYTHONPATH=/tmp/site:%s exec %s -m rmpeer "$@"\n' "$old" "$(command -v python3)" >/tmp/bin/rmpeer-old
chmod +x /tmp/bin/rmpeer-old
echo "earlier tree: ${AB_REV:-unnamed}, sources $(cd "$old" && find rmpeer matrices suites -type f -name '*.py' -o -name '*.yaml' | sort | xargs cat | sha256sum | cut -c1-16)" | tee -a "$summary"
for tier in passive quick full; do
  for i in 1 2 3 4 5 6; do    # odd rounds the earlier tree first, even rounds this one: no side always goes first
    first=old; [ $((i % 2)) -eq 0 ] && first=new
    for side in $first $([ $first = old ] && echo new || echo old); do
      timed "$tier-$side-$i" "$([ $side = old ] && echo rmpeer-old || echo rmpeer)" certify --tier "$tier" \
        --output "/tmp/ab-$tier-$side-$i"
    done
  done
done
python3 - "$ev" <<'PY' | tee -a "$summary"
import glob, re, statistics, sys
for tier in ("passive", "quick", "full"):
    row = []
    for side in ("old", "new"):
        s = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
             for p in sorted(glob.glob(f"{sys.argv[1]}/{tier}-{side}-*.log"))]
        row.append(f"{side} median {statistics.median(s):.2f} s (min {min(s):.2f}, max {max(s):.2f})")
    print(f"{tier}: " + "; ".join(row) + f" over {len(s)} runs each, alternating")
PY
