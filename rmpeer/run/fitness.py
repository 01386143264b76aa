"""Whether a correct host is also fit: clocks raised and recorded, NVLink health before and
after the traffic, Xids logged during the run, and bandwidth against the topology's floors.

One Fitness per HostRun. Everything it reads from RM goes through the shim, and what it
reads outside RM (the kernel log, NVML's clock readings) through shim.observe, so that a
recording judges in CI exactly as the host did live.
"""

from __future__ import annotations

import shutil
import subprocess

from rmpeer.judge.scope import other_cards_xids_dropped
from rmpeer.judge.verdict import boost_findings, bandwidth_findings, link_findings, xid_findings
from rmpeer.machine.nvml import SOURCE, Nvml
from rmpeer.machine.xids import XidWatcher
from rmpeer.rm.nvlink import link_health
from rmpeer.rm.perf import Boost, read_clocks
from rmpeer.tables.nvml import clock_events, load_nvml
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "host:clocks", "host:xids")

BANDWIDTH_SIZE = 256 << 20    # where the fixed cost of a copy is under 2% (docs/copy-engine.md)
SMI_TIMEOUT_S = 20


class SmiQuery:
    """One nvidia-smi query of `fields`, started when made and read by rows(): a process of
    its own, in which NVML starts up (about 43 ms a call on 2 x H200,
    docs/evidence/h200x2-20261130T1629Z-profile). Asked only where NVML will not start in this
    process (start_clocks)."""

    def __init__(self, smi: str, fields: list):
        self.smi, self.fields, self.proc, self.why, self.output = smi, list(fields), None, "", None
        try:
            self.proc = subprocess.Popen([smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
        except OSError as exc:
            self.why = f"nvidia-smi: {exc}"

    def finish(self) -> None:
        """Wait for the process to end (its output kept for rows())."""
        if self.proc is None or self.output is not None:
            return
        try:
            self.output = self.proc.communicate(timeout=SMI_TIMEOUT_S)
        except subprocess.SubprocessError as exc:
            self.cancel()
            self.why = f"nvidia-smi: {exc}"

    def rows(self) -> tuple[list | None, str]:
        """nvidia-smi's rows (each a list of texts), or None and why not."""
        self.finish()
        if self.output is None:
            return None, self.why
        out, err = self.output
        if self.proc.returncode:
            return None, f"nvidia-smi exit {self.proc.returncode}: {(err or out).strip()[:200]}"
        rows = [[p.strip() for p in line.split(",")] for line in out.strip().splitlines()]
        return [r for r in rows if len(r) == len(self.fields)], ""

    def cancel(self) -> None:
        """A query never read (the run stopped first): its process ended, never left behind.
        Waited for as a process, not for its pipes' end: a child it started may hold them open
        (a stand-in script's sleep held them 60 s), and a signal's clean-up never waits on that."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr) if self.proc is not None else ():
            if pipe is not None:
                pipe.close()


def start_clocks() -> Nvml:
    """The clocks' reader, started now: NVML in this process, its start on a thread of its own
    (rmpeer.machine.nvml), read by clocks_now; closed by its owner whatever happens."""
    return Nvml(load_nvml()["library"])


def clocks_now(source: Nvml | None, pcis) -> dict:
    """The cards at `pcis` as NVML reports them now: through `source` (NVML in this process),
    else through an nvidia-smi process (nvml_clocks) with why NVML was not read here
    ("library_reason"): where NVML did not start here, no source was started, or NVML here
    did not know one of the cards (nvidia-smi lists every card it sees)."""
    reading = source.read(pcis) if source is not None else None
    if reading is not None and "reason" not in reading:
        return reading
    why = reading["reason"] if reading is not None else (source.why if source is not None else "")
    reading = nvml_clocks()
    if why:
        reading["library_reason"] = why
    return reading


def start_smi() -> SmiQuery | str:
    """An nvidia-smi query of the fields nvml_clocks reads, started now (read by
    nvml_clocks(started)); a reason where there is no nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "nvidia-smi not found"
    query = load_nvml()["query"]
    return SmiQuery(smi, list({**query["base"], **query["limits"]}.values()))


def nvml_clocks(started: SmiQuery | str | None = None) -> dict:
    """Each GPU's clocks as NVML reports them (nvidia-smi), by PCI address: RM's open
    headers number no clock domain of a discrete GPU, so MHz come from NVML. With them, in
    the same call, what the card may reach now and why it does not (its maximum graphics
    clock, the clock-event reasons' mask, power draw and limit: matrices/nvml.yaml); an
    nvidia-smi that refuses those fields is asked the clocks alone, and says so. `started`:
    start_smi()'s reading, taken when it was started (else one is taken now)."""
    started = start_smi() if started is None else started
    if isinstance(started, str):
        return {"reason": started}
    query = load_nvml()["query"]
    reads = {**query["base"], **query["limits"]}
    rows, why = started.rows()
    out: dict = {}
    if rows is None:
        reads = query["base"]
        rows, why_base = SmiQuery(started.smi, list(reads.values())).rows()
        if rows is None:
            return {"reason": why_base}
        out["limits_reason"] = why
    gpus = {}
    for row in rows:
        text = dict(zip(reads, row))
        reading = {"graphics_mhz": _int(text["graphics_mhz"]), "sm_mhz": _int(text["sm_mhz"]),
                   "memory_mhz": _int(text["memory_mhz"]), "pstate": text["pstate"]}
        if "event_mask" in text:
            mask = _int(text["event_mask"], 16)
            reading.update(max_graphics_mhz=_int(text["max_graphics_mhz"]),
                           event_mask=mask if mask is not None and 0 <= mask < 1 << 64 else None,   # NVML's 64 bits
                           power_mw=_milli(text["power_mw"]), power_limit_mw=_milli(text["power_limit_mw"]))
        gpus[text["pci"][-12:].lower()] = reading
    out["gpus"] = gpus
    return out


def _milli(text):
    try:
        value = round(float(text) * 1000)
    except (ValueError, OverflowError):     # "[N/A]", "nan", "inf"
        return None
    return value if 0 <= value < 1 << 40 else None


def _int(text, base: int = 10):
    try:
        return int(text, base)
    except ValueError:
        return None


class Fitness:
    """Measures a host's fitness through the run's RM client (no HostRun: it gets the runtime,
    whether to boost, and a layout factory for the bandwidth rig), and judges what it
    measured into Findings (`findings`), in rmpeer and not in a test."""

    def __init__(self, runtime, *, boost: bool, layout, tier: str = "full", clocks_source: Nvml | None = None):
        self.runtime, self.shim, self.boost_asked, self.layout = runtime, runtime.shim, boost, layout
        # the clocks' reader (start_clocks), started by the HostRun before RM's open so that
        # NVML's start runs beside it; None: a replay's, which serves the recorded readings
        self.clocks_source = clocks_source
        self.tier = tier              # which card pairs the bandwidth figures cover (tier_pairs)
        self.boost: Boost | None = None
        self.clocks: dict = {}        # phase -> card -> reading
        self.links_before: dict = {}  # card -> link_health
        self.links_after: dict = {}   # card -> the latest link_health read after traffic
        self.watcher = None
        self.expected_xids: list = []   # (card, xid) provoked on purpose by a detection test that ran
        self.recorded_provokers: set = set()   # a replay: Xids the recorded run's detection tests provoked
        self._bandwidth = None
        self._xids = None
        self._subdevices = None
        self._cards: list = []

    @property
    def rm(self):
        return self.runtime.rm

    @property
    def cards(self) -> list:
        """The host's cards (kept: the judge runs after the client is closed)."""
        if self.runtime.host is not None:
            self._cards = list(self.runtime.host.cards)
        return self._cards

    def subdevices(self) -> dict:
        if self._subdevices is None:
            host = self.runtime.host
            self._subdevices = {c.index: host.probe_handles(c.index)[1] for c in host.cards}
        return self._subdevices

    def start(self) -> "Fitness":
        """At the run's start: the Xid watch, the idle clocks, the boost, the links."""
        self._cards = list(self.runtime.host.cards)
        if self.shim.mode == "live":
            self.watcher = XidWatcher().start()
            if self.clocks_source is None:
                self.clocks_source = start_clocks()
        self.read_clocks("idle")
        if self.boost_asked:
            self.boost = Boost(self.rm, self.subdevices()).start()
            self.read_clocks("boosted")
        self.links_before = self.read_links()
        return self

    def read_clocks(self, phase: str) -> dict:
        """P-state through RM and MHz through NVML, per card, at a named moment (a replay
        serves the recorded reading instead)."""
        pcis = [card.pci for card in self.cards]
        nvml = self.shim.observe(f"host:clocks:{phase}", lambda: clocks_now(self.clocks_source, pcis)) or {}
        reading = {}
        for card in self.cards:
            rm_view = read_clocks(self.rm, self.subdevices()[card.index])
            smi = (nvml.get("gpus") or {}).get(card.pci[-12:].lower(), {})
            reading[card.index] = {"pstate": rm_view["pstate"], "graphics_mhz": smi.get("graphics_mhz"),
                                   "memory_mhz": smi.get("memory_mhz"),
                                   "mhz_source": "NVML" if nvml.get("source") == SOURCE else "NVML (nvidia-smi)",
                                   "rm_reasons": rm_view["reasons"], "nvml_reason": nvml.get("reason")}
            if nvml.get("library_reason"):       # read through nvidia-smi: why not in this process
                reading[card.index]["library_reason"] = nvml["library_reason"]
            if smi.get("event_mask") is not None:     # read (absent: an nvidia-smi without the fields, an older recording)
                reading[card.index].update(
                    max_graphics_mhz=smi.get("max_graphics_mhz"), power_mw=smi.get("power_mw"),
                    power_limit_mw=smi.get("power_limit_mw"), clock_events=clock_events(smi["event_mask"], load_nvml()))
        self.clocks[phase] = reading
        return reading

    def read_links(self) -> dict:
        return {card: link_health(self.rm, sub, card=card) for card, sub in self.subdevices().items()}

    def links_now(self) -> dict:
        """Every card's links read again (after the traffic), kept for the judge."""
        self.links_after = self.read_links()
        return self.links_after

    def bandwidth(self, size: int = BANDWIDTH_SIZE) -> list:
        """Every figure at `size`, measured once per run on a layout of its own."""
        if self._bandwidth is None:
            from rmpeer.traffic.bandwidth import Rig, measure, tier_pairs   # the bandwidth rig's layouts: never a passive run's

            rig = Rig(self.layout, self.shim, len(self.cards), size)
            try:
                pairs = tier_pairs(len(self.cards), self.tier)
                self._bandwidth = [f.as_dict() for f in measure(rig, size, pairs=pairs)]
                self.shim.note("bandwidth", figures=self._bandwidth)   # for rmpeer diff
                self.read_clocks("after-traffic")
            finally:
                rig.close()
        return self._bandwidth

    def xids(self) -> dict:
        """The Xid lines the kernel logged since the run began (read once)."""
        if self._xids is None:
            stop = self.watcher.stop if self.watcher is not None else (lambda: None)
            self._xids = self.shim.observe("host:xids", stop) or {"readable": False, "reason": "not recorded"}
        return self._xids

    def close_watch(self) -> None:
        if self.watcher is not None and self._xids is None:
            self.watcher.close()
        self.close_clocks()

    def close_clocks(self) -> None:
        """NVML ended in this process (after the last reading, or a run stopped before it)."""
        source, self.clocks_source = self.clocks_source, None
        if source is not None:
            source.close()

    def close(self) -> None:
        if self.boost is not None:
            self.boost.clear()
            self.read_clocks("released")
        self.close_watch()

    @property
    def boost_released(self) -> bool | None:
        """Whether RM accepted the end of the boost (None: no boost was asked)."""
        if self.boost is None:
            return None
        clears = [r.get("clear") for r in self.boost.results.values() if r["raise"]["ok"]]
        return all(c is not None and c["ok"] for c in clears)

    def summary(self) -> dict:
        """What the certificate and bench.json carry."""
        return {"boost": {"asked": self.boost_asked, "released": self.boost_released,
                          "results": self.boost.results if self.boost else {}},
                "clocks": self.clocks, "bandwidth": self._bandwidth or [],
                "links": {c: {"supported": h.get("supported"), "active": h.get("active"),
                              "reason": h.get("reason")} for c, h in self.links_before.items()},
                "xids": self._xids}

    def findings(self, topology, floors=None) -> list:
        """What was measured, judged (rmpeer.judge.verdict turns these into the verdict); `floors`:
        the host's floors.HostFloors (else the topology's own floors)."""
        out = boost_findings(self)
        out += bandwidth_findings(floors if floors is not None else topology, self._bandwidth or [], self.clocks,
                                  boost_asked=self.boost_asked)
        for card, before in self.links_before.items():
            out += link_findings(card, before, self.links_after.get(card), topology)
        if self._xids is not None:
            xids = other_cards_xids_dropped(self._xids, getattr(self.runtime, "facts", None))
            out += xid_findings(xids, self.cards, self.expected_xids, self.recorded_provokers)
        return out
