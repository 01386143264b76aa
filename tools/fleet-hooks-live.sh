#!/usr/bin/env bash
# Live evidence for fleet mode (issue 19): the shipped Slurm hooks and the NPD plugin run on a
# GPU host as their callers run them: root, no terminal (setsid, stdin from /dev/null), and
# the environment the caller gives (slurmd: the prolog gets SLURM_JOB_ID, SLURMD_NODENAME,
# SLURM_JOB_USER...; the HealthCheckProgram only SLURMD_NODENAME; no PATH). Each run is timed;
# exit codes, timings and the hooks' logs go to the evidence folder.
#   tools/fleet-hooks-live.sh [EVIDENCE_DIR]     (default docs/evidence/fleet-<UTC time>)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/evidence/fleet-$(date -u +%Y%m%dT%H%M%SZ)}
rmpeer=$(command -v rmpeer) || { echo "rmpeer is not on PATH" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "run as root, as slurmd runs its hooks" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd)
files=$(mktemp -d) state=$(mktemp -d)
"$rmpeer" fleet files slurm "$files" >/dev/null
"$rmpeer" fleet files kubernetes "$files/k8s" >/dev/null
defaults="$files/defaults"   # what /etc/default/rmpeer would say
printf 'RMPEER=%s\nRMPEER_STATE_DIR=%s\nRMPEER_LOG_FILE=%s\n' "$rmpeer" "$state" "$out/hooks.log" >"$defaults"
node=$(hostname -s)
table="$out/README.md"
{ echo "# Fleet hooks, live on $node ($(date -u +%FT%TZ))"; echo
  nvidia-smi -L 2>/dev/null | sed 's/^/    /'; echo
  echo "| run | exit | seconds |"; echo "| --- | --- | --- |"; } >"$table"

run() {   # NAME ENV... -- COMMAND...
  local name=$1; shift
  local envs=(); while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  local t0 t1 rc
  t0=$(date +%s.%N)
  setsid env -i RMPEER_DEFAULTS="$defaults" "${envs[@]}" "$@" </dev/null >"$out/$name.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  printf "| %s | %s | %.2f |\n" "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$table"
}

# the job holds every card of this host: 0..N-1 (a card the host lacks would be exit 2, no verdict)
gpus=$(nvidia-smi -L 2>/dev/null | awk '{printf "%s%d", (NR>1?",":""), NR-1}'); gpus=${gpus:-0}
job=(SLURM_JOB_ID=4242 SLURMD_NODENAME="$node" SLURM_JOB_USER=root SLURM_JOB_UID=0 SLURM_JOB_GPUS="$gpus")
run prolog-cold "${job[@]}" -- "$files/rmpeer-prolog"                 # no certificate yet: quick tier
run prolog-fresh "${job[@]}" -- "$files/rmpeer-prolog"                # --if-stale: the fast path
run prolog-opt-out "${job[@]}" SLURM_JOB_EXTRA=rmpeer=off -- "$files/rmpeer-prolog"
for i in 1 2 3; do
  run "healthcheck-$i" SLURMD_NODENAME="$node" -- "$files/rmpeer-healthcheck"   # passive tier
done
# NPD's plugin, from the same files (its state beside the hooks')
run npd-plugin RMPEER="$rmpeer" RMPEER_STATE_DIR="$state" -- "$files/k8s/npd/rmpeer-npd.sh"
cp -r "$state" "$out/state"
echo >>"$table"; echo "Logs: hooks.log; each run's output: <run>.out; certificates and status.json: state/." >>"$table"
rm -rf "$files"
echo "evidence in $out" >&2
