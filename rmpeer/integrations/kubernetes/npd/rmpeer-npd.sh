#!/bin/sh
# node-problem-detector custom plugin: rmpeer's passive tier (RM facts only; no video memory,
# no copies; under NPD's 5 s timeout). NPD reads the exit code and stdout:
#   exit 0 OK; exit 1 a problem (NOT CERTIFIED, DEGRADED); anything else Unknown (rmpeer
#   could not give a verdict: exit 2, 3, 5, 6, 7, or rmpeer missing). stdout is the message.
# NPD's container needs rmpeer and the host's /dev/nvidia* (privileged, or the device nodes).
# A plugin may start with no PATH: give it the usual one.
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}; export PATH
# Cards: those NVIDIA_VISIBLE_DEVICES names (the container toolkit's indices or UUIDs; all, or
# unset: every card; none or void: no verdict, Unknown).
line=$("${RMPEER:-rmpeer}" fleet node --tier passive --cards-env NVIDIA_VISIBLE_DEVICES --output "${RMPEER_STATE_DIR:-/var/lib/rmpeer}/npd" 2>/dev/null)
rc=$?
case $rc in
    0) echo "rmpeer: passive checks pass"; exit 0 ;;
    1|4) echo "${line:-rmpeer: passive: exit $rc}"; exit 1 ;;
    127) echo "rmpeer: tool: rmpeer is not installed in this container"; exit 2 ;;
    *) echo "rmpeer: tool: no verdict (exit $rc)${line:+: $line}"; exit 2 ;;
esac
