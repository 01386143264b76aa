# health (issue 24, parts 3-4): RM's health facts live, in every tier, and a recording with
# every health control. Sourced by tools/device-evidence.sh (timed, $ev, $summary, $repo).
# About 40 s on 1 x H200. What comes back, under evidence-health.tgz:
#   host.log, host-nobody.log      rmpeer host as root and as uid 65534: the facts as JSON
#   recordings/*.jsonl.gz          certify --tier quick --record: every health call (commit it
#                                  to fixtures/transcripts/, then run the derivation below again
#                                  there: python tools/derive_health_fixtures.py)
#   derived/                       tools/derive_health_fixtures.py on that recording, and each
#                                  derived recording replayed (passive) with its verdict
#   passive-N.log, full.log        the verdict line and the health lines of each tier
# Summary lines: each control's status per card, passive median of 5 (asserted < 0.5 s),
# the verdict lines, the derived replays' verdicts against the ones expected.
chmod -R a+rX /tmp/site "$repo" /tmp/bin 2>/dev/null   # uid 65534 runs the same code
timed host rmpeer host
timed host-nobody setpriv --reuid 65534 --regid 65534 --clear-groups rmpeer host
python3 - "$ev" <<'PY' | tee -a "$summary"
import json, sys
for who in ("host", "host-nobody"):
    text = open(f"{sys.argv[1]}/{who}.log").read()
    try:
        facts = json.loads(text[:text.rindex("}") + 1])
    except ValueError:
        print(f"{who}: NO JSON: {text[:200]!r}")
        continue
    system = facts.get("health") or {}
    print(f"{who}: host " + ", ".join(f"{k} {v.get('status')} {v.get('state', v.get('feature', ''))}"
                                      for k, v in system.items()))
    for c in facts.get("cards", []):
        h = c.get("health") or {}
        print(f"{who}: card {c['index']} " + ", ".join(f"{k} {v.get('status')}" for k, v in h.items())
              + (" MISSING FACTS" if len(h) != 8 else ""))
        p = h.get("pcie") or {}
        print(f"{who}: card {c['index']} pcie gen {p.get('gen')} x{p.get('width')} of gen {p.get('max_gen')} "
              f"x{p.get('max_width')}, upstream gen {p.get('root_max_gen')}")
PY
timed quick-record rmpeer certify --tier quick --record "$ev/recordings" --output /tmp/hq
for i in 1 2 3 4 5; do timed "passive-$i" rmpeer certify --tier passive --output "/tmp/hp$i"; done
python3 - "$ev" <<'PY' | tee -a "$summary"
import glob, re, statistics, sys
ms = [int(re.search(r"wall (\d+) ms", open(p).read().splitlines()[-1]).group(1)) / 1000
      for p in sorted(glob.glob(f"{sys.argv[1]}/passive-*.log"))]
m = statistics.median(ms)
print(f"passive: median {m:.3f} s over {len(ms)} runs ({', '.join(f'{x:.3f}' for x in ms)}): "
      + ("UNDER 0.5 s" if m < 0.5 else "OVER 0.5 s: FAILS the budget"))
PY
grep -A3 '^health (RM):' "$ev/passive-5.log" | tee -a "$summary"
timed full rmpeer certify --output /tmp/hf
grep -A3 '^health (RM):' "$ev/full.log" | tee -a "$summary"
cp /tmp/hp5/certificate.json "$ev/certificate-passive.json"
cp /tmp/hf/certificate.json "$ev/certificate-full.json"
python3 - "$ev" <<'PY' | tee -a "$summary"
import json, sys
for name in ("certificate-passive", "certificate-full"):
    d = json.load(open(f"{sys.argv[1]}/{name}.json"))
    host = d.get("host") or {}
    print(f"{name}: verdict {d.get('verdict')}, not_checked {d.get('not_checked')}, "
          f"health facts: host {sorted((host.get('health') or {}))}, "
          f"card 0 {sorted(((host.get('cards') or [{}])[0].get('health') or {}))}")
PY
rec=$(ls "$ev"/recordings/*.jsonl.gz 2>/dev/null | head -1)
if [ -n "$rec" ]; then
  echo "recording: $(basename "$rec"), health calls: $(zcat "$rec" | grep -c '"label":"health:')" | tee -a "$summary"
  timed show-calls rmpeer show "$rec" --calls
  grep -A12 'health:pcie:card0' "$ev/show-calls.log" | head -14 >"$ev/show-pcie.txt"
  timed derive python3 "$repo/tools/derive_health_fixtures.py" "$rec" --out "$ev/derived"
  python3 - "$repo" "$ev" <<'PY' | tee -a "$summary"
import glob, importlib.util, sys
sys.path.insert(0, sys.argv[1])
from rmpeer.run.execute import run_passive
from rmpeer.run.targets import replay_target
spec = importlib.util.spec_from_file_location("d", f"{sys.argv[1]}/tools/derive_health_fixtures.py")
d = importlib.util.module_from_spec(spec); spec.loader.exec_module(d)
bad = 0
for name, row in d.BRANCHES.items():
    path = glob.glob(f"{sys.argv[2]}/derived/*-{name}.jsonl.gz")[0]
    r = run_passive(replay_target(path), state_path="/tmp/derived-state.json", save=False)
    ok = r.verdict == row[4]
    bad += not ok
    print(f"derived {name}: {r.verdict} (expected {row[4]}) {'ok' if ok else 'WRONG'}; "
          f"{(r.reasons or [''])[0][:110]}{'; not checked ' + str(r.not_checked) if r.not_checked else ''}")
print(f"derived replays: {len(d.BRANCHES) - bad} of {len(d.BRANCHES)} gave their verdict")
PY
else
  echo "recording: NONE written (quick-record failed)" | tee -a "$summary"
fi
