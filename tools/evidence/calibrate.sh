# calibrate: `rmpeer calibrate` with 5 full runs of this host (about 45-55 s on 1 x H200), the
# entry it prints, then a full certify under the matrices --write made (RMPEER_MATRICES): it
# must be CERTIFIED against the calibrated entry. Summary lines: each command's exit code and
# verdict line, the five runs' lines, the entry's floors, and the certificate's topology.
timed calibrate rmpeer calibrate --runs 5 --output /tmp/cal-runs --write /tmp/cal-matrices
grep -E "^rmpeer calibrate: run " "$ev/calibrate.log" | cut -c1-160 >>"$summary"
grep -E "^  (#|[A-Za-z0-9_.-]+:)|^    " "$ev/calibrate.log" >"$ev/entry.yaml"
{ echo "entry printed (floors line and the figures it used):"; grep -E "floors:|_gbps: 0.9 x" "$ev/entry.yaml" | sed 's/^/  /'; } >>"$summary"
cp /tmp/cal-matrices/topologies.yaml "$ev/topologies-calibrated.yaml" 2>/dev/null
for i in 1 2 3 4 5; do gzip -c "/tmp/cal-runs/run-$i/certificate.json" >"$ev/certificate-run-$i.json.gz" 2>/dev/null; done
timed certify-calibrated env RMPEER_MATRICES=/tmp/cal-matrices rmpeer certify --output /tmp/cal-certify
python3 - /tmp/cal-certify/certificate.json <<'PY' | tee -a "$summary"
import json, sys
try:
    c = json.load(open(sys.argv[1]))
except OSError as exc:
    print("certify under the calibrated matrices: no certificate:", exc); sys.exit(0)
t = c.get("topology") or {}
f = t.get("floors") or {}
print(f"certify under the calibrated matrices: verdict {c['verdict']}, topology {t.get('name')} "
      f"(matched_by {t.get('matched_by')}), floors basis {f.get('basis')}: "
      + ", ".join(f"{x['kind']} {x['where']} {x['gbps']:g}" for x in f.get("floors", [])))
PY
cp /tmp/cal-certify/certificate.json "$ev/certificate-calibrated.json" 2>/dev/null
