"""Clocks through RM: PERF_BOOST raised and cleared, the P-state and clock levels read.

Without a CUDA context RM leaves an idle card at its lowest clocks, and every copy-engine
copy is capped by them (issue 9: 345 MHz, ~235 GB/s across cards). A boost is held per
RM client: RM ends it when the client is freed, but Boost clears it explicitly so that a
reading taken afterwards shows the host as it is again.
"""

from __future__ import annotations
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "perf:pstate", "perf:clock-levels", "perf:boost")

BOOST_CONTROL = "NV2080_CTRL_CMD_PERF_BOOST"
BOOST_FLAGS = "NV2080_CTRL_PERF_BOOST_FLAGS"
PSTATE_CONTROL = "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE"
LEVEL_CONTROL = "NV2080_CTRL_CMD_PERF_GET_LEVEL_INFO_V2"
PSTATE_PREFIX = "NV2080_CTRL_PERF_PSTATES_"
# The clock domains a reading names, by the ctrl2080clk.h constant that would number them.
# The open headers number only Tegra domains, so on a dGPU these stay unknown (None) until
# the matrix carries a number for them.
CLOCK_DOMAINS = {"graphics_mhz": "NV2080_CTRL_CLK_DOMAIN_GPCCLK", "memory_mhz": "NV2080_CTRL_CLK_DOMAIN_MCLK"}


def boost_flags(abi, command: str = "BOOST_TO_MAX") -> int:
    """The PERF_BOOST flags word: a CUDA-priority boost (what a CUDA context asks for),
    or CLEAR. Composed by field name from the matrix."""
    bits = abi.bits(BOOST_FLAGS)
    if command == "CLEAR":
        return bits.compose(CMD="CLEAR")
    return bits.compose(CMD=command, CUDA="YES", CUDA_PRIORITY="HIGH")


class Boost:
    """Raise the clocks of `subdevices` ({card: handle}) to their maximum; clear at the end.

        with Boost(rm, subdevices) as boost:
            ...copies...
        boost.results  # per card: {status, flags} of the raise and of the clear
    """

    def __init__(self, rm, subdevices: dict[int, int], *, command: str = "BOOST_TO_MAX"):
        self.rm, self.subdevices, self.command = rm, dict(subdevices), command
        self.raised: list[int] = []           # cards whose boost RM accepted
        self.results: dict[int, dict] = {}

    def _send(self, card: int, command: str) -> dict:
        abi = self.rm.abi
        flags = boost_flags(abi, command)
        duration = 0 if command == "CLEAR" else abi.const("NV2080_CTRL_PERF_BOOST_DURATION_INFINITE")
        reply = self.rm.control(self.subdevices[card], BOOST_CONTROL, check=False,
                                label=f"perf:boost:{command.lower()}:card{card}", flags=flags, duration=duration)
        refused = reply["_record"].refused
        return {"ok": not refused, "status": refused or "NV_OK",
                "flags": f"{flags:#x} ({abi.bits(BOOST_FLAGS).describe(flags)})"}

    def start(self) -> "Boost":
        for card in self.subdevices:
            result = self._send(card, self.command)
            self.results[card] = {"raise": result}
            if result["ok"]:
                self.raised.append(card)
        return self

    def clear(self) -> None:
        while self.raised:
            card = self.raised.pop()
            self.results.setdefault(card, {})["clear"] = self._send(card, "CLEAR")

    @property
    def failures(self) -> dict[int, str]:
        return {c: r["raise"]["status"] for c, r in self.results.items() if not r["raise"]["ok"]}

    def __enter__(self) -> "Boost":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.clear()


def pstate_name(abi, value: int) -> str | None:
    """'P0' for NV2080_CTRL_PERF_PSTATES_P0's value; None for UNDEFINED or an unknown value."""
    for name, v in abi.constants.items():
        if name.startswith(PSTATE_PREFIX + "P") and name[len(PSTATE_PREFIX) + 1:].isdigit() and v == value:
            return name[len(PSTATE_PREFIX):]
    return None


def clock_levels(rm, subdevice: int, level: int = 0) -> tuple[list[dict], str | None]:
    """The clock entries RM reports for a perf level: ([{domain, current, default, min, max}], why not)."""
    abi = rm.abi
    if LEVEL_CONTROL not in abi.controls:
        return [], f"{LEVEL_CONTROL} is not in the ABI of {abi.release} (it appears at 550.40.07)"
    _, params = abi.control(LEVEL_CONTROL)
    elem = abi.struct("NV2080_CTRL_PERF_GET_CLK_INFO")
    reply = rm.control(subdevice, LEVEL_CONTROL, check=False, label="perf:clock-levels", level=level)
    failed = reply["_record"].refused
    if failed:
        return [], f"{LEVEL_CONTROL}: {failed}"
    raw, base = reply["_raw"], params.field("perfGetClkInfoList").offset
    count = min(reply["perfGetClkInfoListSize"], abi.const("NV2080_CTRL_PERF_CLK_MAX_DOMAINS"))
    out = []
    for i in range(count):
        e = elem.decode(raw[base + i * elem.size:base + (i + 1) * elem.size])
        out.append({"domain": e["domain"], "current": e["currentFreq"], "default": e["defaultFreq"],
                    "min": e["minFreq"], "max": e["maxFreq"]})
    return out, None


def read_clocks(rm, subdevice: int) -> dict:
    """What RM says of a card's clocks now: graphics and memory MHz and the P-state.

    A value RM does not give is None, with the reason under 'reasons'."""
    abi = rm.abi
    out = {"graphics_mhz": None, "memory_mhz": None, "pstate": None, "reasons": {}}
    if PSTATE_CONTROL in abi.controls:
        reply = rm.control(subdevice, PSTATE_CONTROL, check=False, label="perf:pstate")
        failed = reply["_record"].refused
        if failed:
            out["reasons"]["pstate"] = f"{PSTATE_CONTROL}: {failed}"
        else:
            out["pstate"] = pstate_name(abi, reply["currPstate"])
            if out["pstate"] is None:
                out["reasons"]["pstate"] = f"RM reports P-state value {reply['currPstate']:#x} (undefined)"
    else:
        out["reasons"]["pstate"] = f"{PSTATE_CONTROL} is not in the ABI of {abi.release} (it appears at 550.40.07)"
    levels, why = clock_levels(rm, subdevice)
    out["levels"] = levels
    for key, constant in CLOCK_DOMAINS.items():
        domain = abi.constants.get(constant)
        if why:
            out["reasons"][key] = why
        elif domain is None:
            out["reasons"][key] = f"the open headers give no number for {constant}"
        else:
            hit = next((e for e in levels if e["domain"] == domain), None)
            if hit is None:
                out["reasons"][key] = f"RM reported no entry for {constant}"
            else:
                out[key] = hit["current"] // 1000   # kHz as RM's clock API reports; unverified until a probe shows it
    return out
