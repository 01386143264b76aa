"""Health probe: every health control through rmpeer's own Runtime (live), decoded, timed."""
import json, sys, time, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "repo"))
from rmpeer.runtime import Runtime
from rmpeer.shim.live import LiveShim
t0 = time.perf_counter()
shim = LiveShim()
seen = []
_add = shim.rec.add
shim.rec.add = lambda r: (seen.append(r), _add(r))[1]
rt = Runtime(shim)
rt.open()
t1 = time.perf_counter()
out = {"uid": os.getuid(), "driver": rt.facts.driver_version, "abi": rt.facts.abi_release,
       "open_s": t1 - t0, "system": rt.facts.health,
       "cards": [{"index": c.index, "name": c.name, "pci": c.pci, "health": c.health} for c in rt.host.cards]}
calls = []
for rec in seen:
    if str(getattr(rec, "label", "")).startswith("health:"):
        calls.append({"label": rec.label, "status": rec.status_name or rec.status, "errno": rec.errno,
                      "duration_ns": getattr(rec, "duration_ns", None),
                      "reply": rec.payload.reply if rec.payload else rec.reply})
out["calls"] = calls
rt.close()
json.dump(out, sys.stdout, indent=1, default=str)
