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
alternating rmpeer-old rmpeer 6 /tmp/ab
