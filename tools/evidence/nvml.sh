# Part "nvml" of tools/device-evidence.sh (issue 46, branch nvml-in-process): what joining main
# needs of a lent GPU, in one command. The clocks read through NVML in rmpeer's own process
# (rmpeer/machine/nvml.py) against nvidia-smi's reading (.rmw/old: a wheel of main; .rmw/new:
# of this branch; .rmw/deps: their dependencies), then:
# - every tier from both wheels, each in a fresh venv (part pipwheel, PW_VENV=1, NV_ROUNDS
#   rounds, 5): the same verdicts and counts, and the times;
# - a quick run of the new wheel recorded, and the recording replayed by it (a reading of
#   NVML in this process replays);
# - a passive run of the new wheel;
# - the clocks of those certificates (mhz_source NVML) beside nvidia-smi's own reading.
# Sourced with timed, $ev, $summary, $repo.

PW_VENV=1 PW_ROUNDS=${NV_ROUNDS:-5} source "$repo/tools/evidence/pipwheel.sh" || return 1
timed nvml-quick-recorded rmpeer-new certify --tier quick --record /tmp/nv-rec --output /tmp/nv-quick
timed nvml-quick-replayed rmpeer-new certify --replay "$(ls /tmp/nv-rec/*.jsonl.gz | head -1)" --output /tmp/nv-replay
timed nvml-passive rmpeer-new certify --tier passive --output /tmp/nv-passive
cp /tmp/nv-rec/*.jsonl.gz "$ev/" 2>/dev/null
/tmp/pwv-new/bin/python - /tmp/nv-quick/certificate.json /tmp/nv-passive/certificate.json <<'PY' | tee -a "$summary"
import json, sys
for path in sys.argv[1:]:
    clocks = json.load(open(path)).get("clocks", {})
    for phase, cards in clocks.items():
        for card, r in (cards or {}).items():
            if isinstance(r, dict):
                print(f"nvml: {path.split('/')[2]} {phase} card {card}: {r.get('graphics_mhz')}/{r.get('memory_mhz')} MHz "
                      f"{r.get('pstate')} source {r.get('mhz_source')!r} nvml_reason {r.get('nvml_reason')!r} library_reason {r.get('library_reason')!r}")
PY
echo "nvml: nvidia-smi now: $(nvidia-smi --query-gpu=pci.bus_id,clocks.gr,clocks.mem,pstate,clocks_event_reasons.active,power.draw \
  --format=csv,noheader,nounits 2>&1 | tr '\n' ';')" | tee -a "$summary"
