#!/bin/sh
# node-problem-detector custom plugin: rmpeer's passive tier (RM facts only; no video memory,
# no copies; under NPD's 5 s timeout). NPD reads the exit code and stdout:
#   exit 0 OK; exit 1 a problem (NOT CERTIFIED, DEGRADED); anything else Unknown (rmpeer
#   could not give a verdict: exit 2, 3, 5, 6, 7, rmpeer missing, or an exit 1 or 4 without a
#   status.json of this run (its --run-id) that says NOT CERTIFIED or DEGRADED with a reason).
#   stdout is the message.
# NPD's container needs rmpeer and the host's /dev/nvidia* (privileged, or the device nodes).
# A plugin may start with no PATH: give it the usual one.
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}; export PATH
state=${RMPEER_STATE_DIR:-/var/lib/rmpeer}/npd
# Drain only on this run's own verdict: status.json (written by `rmpeer fleet node`) must name
# this run's id and the verdict; a status left by an earlier run, a cut one or none drains nothing.
run_id=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || echo "$$-$(date +%s)")
this_runs_verdict() {
    [ -f "$1" ] && [ ! -L "$1" ] || return 0
    grep -q "\"run_id\": \"$run_id\"" "$1" 2>/dev/null || return 0
    sed -n 's/.*"verdict": "\([A-Z ]*\)".*/\1/p' "$1" | head -n 1
}
# Cards: those NVIDIA_VISIBLE_DEVICES names (the container toolkit's indices or UUIDs; all, or
# unset: every card; none or void: no verdict, Unknown).
line=$("${RMPEER:-rmpeer}" fleet node --tier passive --cards-env NVIDIA_VISIBLE_DEVICES --output "$state" --run-id "$run_id" 2>/dev/null)
rc=$?
verdict=
case $rc in 1|4) verdict=$(this_runs_verdict "$state/status.json") ;; esac
case $rc:$verdict in
    1:"NOT CERTIFIED"|4:DEGRADED) [ -n "$line" ] && { echo "$line"; exit 1; } ;;
esac
case $rc in
    0) echo "rmpeer: passive checks pass"; exit 0 ;;
    1|4) echo "rmpeer: tool: exit $rc without a matching status.json of this run: no verdict"; exit 2 ;;
    127) echo "rmpeer: tool: rmpeer is not installed in this container"; exit 2 ;;
    *) echo "rmpeer: tool: no verdict (exit $rc)${line:+: $line}"; exit 2 ;;
esac
