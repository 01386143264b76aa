# Part "failclosed" (issue 23, part A) of tools/device-evidence.sh, on the 1 x H200 machine:
# - SIGINT, SIGTERM and SIGHUP at 5 points of a live quick run each (line 2, half way, half way
#   twice, 30 ms after the last progress line, right after the verdict line): every line of
#   the summary says exit 5, no CERTIFIED file, the GPUs' memory back to its baseline ("ok"),
#   or exit 0 CERTIFIED where the verdict line was already written when the signal was sent
#   (it came after the last check, blocked: "ok (after the verdict line: not taken)");
# - the deadline ending a full run early (--deadline 3 of a ~9 s run): exit 5, INCOMPLETE,
#   the deadline named, memory back to its baseline;
# - a non-root run (a user made with useradd): its verdict line names what it could not
#   check (xid: the kernel log needs root), and --require-complete refuses it (exit 8).
# About 2 minutes.
baseline=$(gpu_memory)
echo "failclosed: baseline memory $baseline" | tee -a "$summary"
python3 "$repo/tools/signal_points.py" /tmp/fc-signals --tier quick --signals INT,TERM,HUP \
  >"$ev/signal-points.log" 2>&1
echo "signal points: exit $?" | tee -a "$summary"
cat "$ev/signal-points.log" >>"$summary"
mkdir -p "$ev/signals" && cp /tmp/fc-signals/*.log "$ev/signals/" 2>/dev/null

timed deadline-full-3s rmpeer certify --tier full --deadline 3 --output /tmp/fc-deadline
sleep 0.5
echo "deadline: certificate $(python3 -c 'import json; d=json.load(open("/tmp/fc-deadline/certificate.json")); print(d["verdict"], "|", d["reasons"][0][:120])' 2>&1); memory after $(gpu_memory) (baseline $baseline)" | tee -a "$summary"
cp /tmp/fc-deadline/certificate.json "$ev/certificate-deadline.json" 2>/dev/null

id rmpeer-nr >/dev/null 2>&1 || useradd -M -s /bin/sh rmpeer-nr
rm -rf /tmp/fc-nr /tmp/fc-nr-rc && mkdir -p /tmp/fc-nr && chown rmpeer-nr /tmp/fc-nr
ls -l /dev/nvidia* >"$ev/device-nodes.txt" 2>&1
chmod -R a+rX /tmp/site "$repo" 2>/dev/null   # the user runs the same code
nonroot() {  # NAME ARGS...: certify as rmpeer-nr, with this part's Python, wheels and sources
  timed "$1" su rmpeer-nr -s /bin/sh -c "cd /tmp && PYTHONPATH=/tmp/site:$repo $(command -v python3) -m rmpeer certify $2"
}
nonroot nonroot-quick "--tier quick --output /tmp/fc-nr/quick"
grep -E '^(CERTIFIED|DEGRADED|NOT CERTIFIED|INCOMPLETE) \(' "$ev/nonroot-quick.log" | tee -a "$summary"
nonroot nonroot-require-complete "--tier quick --require-complete --output /tmp/fc-nr/strict"
cp /tmp/fc-nr/quick/certificate.json "$ev/certificate-nonroot.json" 2>/dev/null
cp /tmp/fc-nr/strict/certificate.json "$ev/certificate-nonroot-require-complete.json" 2>/dev/null
echo "failclosed: memory at the end $(gpu_memory) (baseline $baseline)" | tee -a "$summary"
