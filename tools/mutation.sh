#!/usr/bin/env bash
# tools/mutation.sh SCOPE [--again]: the mutation score of one module (or package) of rmpeer,
# measured with mutmut 3 (`pip install mutmut`, 3.8 or later) and printed per module as
# "killed K, survived S, total T, score K/(K+S)" (a timeout or a crash of the tests' process
# counts as killed, "no tests" as survived). docs/mutation.md has the scores and the mutants
# argued equivalent.
#
# Not part of CI: a maintainer's measure of how much of a module the tests pin down.
#
#   SCOPE   a module or package of [tool.mutmut] only_mutate in pyproject.toml, as a dotted
#           name or a path: machine.slices, traffic (patterns and bytecheck), traffic.patterns,
#           traffic.bytecheck, fleet.outcome, rmpeer/fleet/outcome.py
#   --again also re-runs the scope's survivors and "no tests" (after adding tests); without it,
#           only the mutants with no result yet run (all of them the first time, and all of the
#           scope again when its source or pyproject.toml is newer than its results)
#
# mutmut copies the checkout into ./mutants/ (git-ignored) and keeps the mutants, the map of
# which tests reach which function, and every result there between runs; delete mutants/ to
# start over. One pytest worker (--max-children 1). Each scope from nothing, on a 2-core
# machine shared with other work: machine.slices about 4-5 minutes, traffic about 3,
# fleet.outcome about 3-4; a scope with every result cached, under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

scope=${1:?usage: tools/mutation.sh SCOPE [--again]   (SCOPE: machine.slices, traffic, fleet.outcome, ...)}
again=${2:-}
scope=${scope#rmpeer/}; scope=${scope#rmpeer.}; scope=${scope%.py}; scope=${scope%/}; scope=${scope//\//.}
"$PYTHON" -c "import mutmut" 2>/dev/null || { echo "mutation.sh: no mutmut for $PYTHON (pip install mutmut)"; exit 2; }

# The scope's mutants to run, from mutmut's own results (mutants/**/*.py.meta): a glob for the
# first run or after the source changed, else the names of those with no result (--again: and
# the survivors).
todo=$("$PYTHON" - "$scope" "$again" <<'EOF'
import json, pathlib, sys, tomllib
scope, again = sys.argv[1], sys.argv[2] == "--again"
prefix = "rmpeer/" + scope.replace(".", "/")
configured = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
sources = [pathlib.Path(p) for p in configured if p == prefix + ".py" or p.startswith(prefix + "/")]
if not sources:
    sys.exit(f"mutation.sh: rmpeer.{scope} is not in [tool.mutmut] only_mutate of pyproject.toml")
metas = {s: pathlib.Path("mutants", str(s) + ".meta") for s in sources}
config = pathlib.Path("pyproject.toml").stat().st_mtime
if any(not m.is_file() or m.stat().st_mtime < max(s.stat().st_mtime, config) for s, m in metas.items()):
    print(f"rmpeer.{scope}.*")          # the first run, or the source or the config changed since: all of it
    sys.exit()
rerun = {None, 0, 5, 33} if again else {None}      # not run; survived, no tests (mutmut.stats)
print(" ".join(k for m in metas.values() for k, v in json.loads(m.read_text())["exit_code_by_key"].items()
               if v in rerun))
EOF
)
if [ -n "$todo" ]; then
    mkdir -p mutants
    log=mutants/mutation-sh.log
    # shellcheck disable=SC2086  # one argument per mutant name
    if ! "$PYTHON" -m mutmut run --max-children 1 $todo > "$log" 2>&1; then
        tr '\r' '\n' < "$log" | grep -v -e ' Running stats$' -e ' Generating mutants$' -e ' Listing all tests$' | tail -n 30
        echo "mutation.sh: mutmut failed (its whole output: $log); a test that fails in its copy shows with"
        echo "  cd mutants && MUTANT_UNDER_TEST=stats $PYTHON -m pytest -x TESTS (pytest_add_cli_args_test_selection)"
        exit 1
    fi
else
    echo "mutation.sh: every mutant of $scope has a result (cached in mutants/; --again re-runs its survivors)"
fi

"$PYTHON" - "$scope" <<'EOF'
import json, pathlib, sys, tomllib
from collections import Counter
from mutmut.stats import status_by_exit_code
scope = sys.argv[1]
prefix = "rmpeer/" + scope.replace(".", "/")
configured = tomllib.loads(pathlib.Path("pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
for source in (p for p in configured if p == prefix + ".py" or p.startswith(prefix + "/")):
    meta = pathlib.Path("mutants", source + ".meta")
    n = Counter(status_by_exit_code[v] for v in json.loads(meta.read_text())["exit_code_by_key"].values())
    killed, survived = n["killed"] + n["timeout"] + n["segfault"], n["survived"] + n["no tests"]
    other = sum(n.values()) - killed - survived
    print(f"{source}: killed {killed} (timeouts {n['timeout']}, crashes {n['segfault']}), survived {survived} (no tests {n['no tests']}), "
          f"total {killed + survived}, score {killed / max(1, killed + survived):.1%}"
          + (f"; not counted: {other} {dict(n)}" if other else ""))
EOF
