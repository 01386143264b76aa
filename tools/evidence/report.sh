# Part "report" of tools/device-evidence.sh (issue 44: what people read tells the verdict), on
# the lent host: a full certify (clocks boosted) and a quick --no-boost one, each with --json,
# --junit and --prometheus. Their certificates, JSON lines, JUnit, .prom files and Allure results
# come back in the archive; the HTML reports and their screenshots are made from them off the
# machine (rmpeer report, Chromium). `assert NAME: ok|FAIL` lines say what was checked here:
# each output's verdict, counts and expiry are the certificate's, the verdict text is at most
# 400 characters, and the report's verdict result has the status of docs/report.md's table.
# Sourced with timed, $ev, $summary, $repo.

for run in full:full quick-noboost:quick; do
  name=${run%%:*} tier=${run##*:}
  extra=(); [ "$name" = quick-noboost ] && extra=(--no-boost)
  timed "report-$name" rmpeer certify --tier "$tier" "${extra[@]}" --output "/tmp/rp-$name" --json \
    --junit "/tmp/rp-$name-junit.xml" --prometheus "/tmp/rp-$name-prom"
  mkdir -p "$ev/$name"
  cp -r "/tmp/rp-$name/." "$ev/$name/"
  cp "/tmp/rp-$name-junit.xml" "$ev/$name/junit.xml"; cp "/tmp/rp-$name-prom/rmpeer.prom" "$ev/$name/rmpeer.prom"
  grep '^{' "$ev/report-$name.log" | tail -1 >"$ev/$name/line.json"
  python3 - "$ev/$name" "$ev/report-$name.log" "$name" <<'PY' | tee -a "$summary"
import glob, json, sys, xml.etree.ElementTree as ET
from datetime import datetime
folder, log, name = sys.argv[1:]
cert = json.load(open(f"{folder}/certificate.json"))
line = json.load(open(f"{folder}/line.json"))
prom = {l.split(" ")[0].split("{")[0]: l.rsplit(" ", 1)[1] for l in open(f"{folder}/rmpeer.prom") if l[0] != "#"}
until = datetime.fromisoformat(cert["valid_until"].replace("Z", "+00:00")).timestamp()
suite = ET.parse(f"{folder}/junit.xml").getroot().find("testsuite")
checks = [c for c in suite.findall("testcase") if c.get("classname") not in ("rmpeer", "rmpeer.finding")]
failed = sum(c.find("failure") is not None for c in checks)
allure = [json.load(open(p)) for p in glob.glob(f"{folder}/allure-results/*-result.json")]
verdict = [r for r in allure if r["name"].startswith("verdict: ")]
status = {"CERTIFIED": "passed", "NOT CERTIFIED": "failed", "DEGRADED": "broken", "INCOMPLETE": "unknown"}
text = [l for l in open(log) if f": {cert['verdict']}" in l or l.startswith(cert["verdict"])]
checks_ok = (line["verdict"], line["counts"], line["valid_until"]) == (cert["verdict"], cert["counts"], cert["valid_until"])
print(f"assert {name}-json-line: {'ok' if checks_ok else 'FAIL'}: {line['verdict']} {line['counts']}")
print(f"assert {name}-prometheus-expiry: {'ok' if float(prom['rmpeer_certificate_valid_until_timestamp_seconds']) == until else 'FAIL'}")
print(f"assert {name}-junit-failed: {'ok' if failed == cert['counts'].get('failed', 0) else 'FAIL'}: {failed}")
print(f"assert {name}-allure-verdict: {'ok' if len(verdict) == 1 and verdict[0]['status'] == status[cert['verdict']] else 'FAIL'}: "
      f"{[(r['name'], r['status']) for r in verdict]}")
print(f"{name}: {cert['verdict']} {cert['counts']}; {len(cert['reasons'])} reason(s): {cert['reasons'][:1]}; "
      f"clocks after traffic {[(c, r.get('graphics_mhz')) for c, r in cert['clocks'].get('after-traffic', {}).items()]}, "
      f"boost {cert['boost']}")
PY
done
