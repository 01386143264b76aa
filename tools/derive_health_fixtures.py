#!/usr/bin/env python3
"""Derives one recording per health branch from a real one, each the real
recording with ONE reply field of one health call changed (docs/health.md's table), and
the folder's README.md table that says what was changed and why.

  python tools/derive_health_fixtures.py [SOURCE] [--out DIR]   # the recordings
  python tools/derive_health_fixtures.py --table                  # the table of what changed

The recordings are not committed: tests/run/test_health_replay.py derives them into a temporary
folder from the committed real recording at every run. The table (what each one changes and
why) is in fixtures/transcripts/README.md, written by --table.

SOURCE is a real recording that holds rmpeer's health calls (`rmpeer certify --tier passive
--record`, tools/evidence/health.sh); by default the newest such recording of
fixtures/transcripts/. The field is changed through the recording's own ABI (its driver
note), by name, so the bytes around it stay exactly as RM wrote them; the header gains a
`derived` key naming the source, the call, the field and the value. The host note (the
facts as the recording run decoded them) is left as recorded: a replay decodes the changed
reply itself.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rmpeer.abi import DriverMatrix  # noqa: E402
from rmpeer.abi import status as status_of  # noqa: E402
from rmpeer.errors import EXIT_CONFIG  # noqa: E402
from rmpeer.paths import transcripts_dir  # noqa: E402

# name -> (call label, field, new value, why, verdict docs/health.md gives).
# A field "list[i].name" is element i of an {index, data} list; a value "BITS:FIELD=VALUE" is
# that bit field of the word composed by name; "status" is RM's answer to the call itself.
BRANCHES = {
    "remap-failure": ("health:remapped-rows:card0", "flags", "NV2080_CTRL_FB_GET_REMAPPED_ROWS_FLAGS:FAILURE=TRUE",
                      "a row remapping failed: the card has no spare row left", "NOT CERTIFIED"),
    "remap-pending": ("health:remapped-rows:card0", "flags", "NV2080_CTRL_FB_GET_REMAPPED_ROWS_FLAGS:PENDING=TRUE",
                      "a row remap waits for a reset", "DEGRADED"),
    "reset-required": ("health:reset:card0", "bResetRequired", 1, "RM asks for a GPU reset", "DEGRADED"),
    "drain-recommended": ("health:drain:card0", "bDrainRecommended", 1, "RM recommends a drain and reset",
                          "DEGRADED"),
    "recovery-drain-p2p": ("health:recovery:card0", "action", "NV2080_CTRL_GPU_RECOVERY_ACTION_DRAIN_P2P",
                           "RM asks to drain peer-to-peer traffic", "NOT CERTIFIED"),
    "recovery-node-reboot": ("health:recovery:card0", "action", "NV2080_CTRL_GPU_RECOVERY_ACTION_NODE_REBOOT",
                             "RM asks for a node reboot", "NOT CERTIFIED"),
    "recovery-gpu-reset": ("health:recovery:card0", "action", "NV2080_CTRL_GPU_RECOVERY_ACTION_GPU_RESET",
                           "RM asks for a GPU reset", "DEGRADED"),
    "ecc-uncorrectable": ("health:ecc:card0", "uncorrectableError", "NV2080_CTRL_GPU_QUERY_ECC_STATUS_UNC_ERR_TRUE",
                          "RM flags uncorrectable ECC errors", "DEGRADED"),
    "ecc-fatal-poison": ("health:ecc:card0", "bFatalPoisonError", 1, "RM reports a fatal poison error", "DEGRADED"),
    "pcie-x8": ("health:pcie:card0", "busInfoList[0].data", "NV2080_CTRL_BUS_INFO_PCIE_LINK_CTRL_STATUS:LINK_WIDTH=X8",
                "the link trained at x8 of x16 (element 0 is LINK_CTRL_STATUS)", "DEGRADED"),
    "mig-enabled": ("health:mig:card0", "gpuInfoList[0].data", "NV2080_CTRL_GPU_INFO_GPU_SMC_MODE_ENABLED",
                    "MIG is on: no peer access", "NOT CERTIFIED"),
    "fabric-uninitialized": ("health:fabric-status", "fabricStatus", "NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS_UNINITIALIZED",
                             "Fabric Manager has not initialised the fabric", "NOT CERTIFIED"),
    "fabric-probe-not-started": ("health:fabric-probe:card0", "state", "NV2080_CTRL_GPU_FABRIC_PROBE_STATE_NOT_STARTED",
                                 "the card waits for Fabric Manager's probe answer", "NOT CERTIFIED"),
    "cc-on": ("health:cc-caps", "ccFeature", "NV_CONF_COMPUTE_SYSTEM_FEATURE_HCC_ENABLED",
              "Confidential Computing is on (1 card: DEGRADED)", "DEGRADED"),
    "remap-not-supported": ("health:remapped-rows:card0", "status", "NV_ERR_NOT_SUPPORTED",
                            "RM does not answer the control: not checked, never a pass", "CERTIFIED"),
}
ELEMENTS = {"busInfoList": "NV2080_CTRL_BUS_INFO", "gpuInfoList": "NV2080_CTRL_GPU_INFO"}


def _lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def has_health(path: Path) -> bool:
    with gzip.open(path, "rt") as f:
        return any('"label": "health:' in line or '"label":"health:' in line for line in f)


def source_recording() -> Path | None:
    found = [p for p in sorted(transcripts_dir().glob("*.jsonl.gz")) if has_health(p)]
    return found[-1] if found else None


def _value(abi, spec, word: int = 0) -> int:
    if isinstance(spec, int):
        return spec
    if ":" in spec:
        group, _, assign = spec.partition(":")
        name, _, value = assign.partition("=")
        field = abi.bits(group).fields[name]
        return (word & ~field.mask) | field.encode(value)
    return abi.const(spec)


def derive(lines: list[dict], abi, name: str) -> list[dict]:
    """A copy of the recording's lines with branch `name`'s one change made."""
    label, field, spec, why, _ = BRANCHES[name]
    out = [dict(line) for line in lines]
    hits = [i for i, line in enumerate(out) if line.get("label") == label and line.get("op") == "ioctl"]
    if len(hits) != 1:
        raise SystemExit(f"derive {name}: the recording has {len(hits)} calls labelled {label}, not one")
    rec = out[hits[0]] = json.loads(json.dumps(out[hits[0]]))
    if field == "status":
        st = next(s for s in (status_of(c) for c in range(0x10000)) if s.name == spec)
        rec.update(status=st.code, status_name=st.name, status_text=st.text)
        # RM writes its status into NVOS54_PARAMETERS.status: the reply struct says so too
        top = abi.struct(rec["struct"])
        reply = bytearray(bytes.fromhex(rec["reply"]))
        top.set(reply, "status", st.code)
        rec["reply"] = reply.hex()
        change = {"call": label, "field": f"{rec['struct']}.status", "value": spec}
    else:
        params = abi.struct(rec["payload"]["struct"])
        reply = bytearray(bytes.fromhex(rec["payload"]["reply"]))
        if "[" in field:
            list_field, rest = field.split("[", 1)
            index, elem_field = int(rest.split("]")[0]), rest.split("].", 1)[1]
            elem = abi.struct(ELEMENTS[list_field])
            at = params.field(list_field).offset + index * elem.size
            view = memoryview(reply)[at:at + elem.size]
            elem.set(view, elem_field, _value(abi, spec, elem.get(view, elem_field)))
        else:
            params.set(reply, field, _value(abi, spec, params.get(reply, field)))
        rec["payload"] = {**rec["payload"], "reply": reply.hex()}
        change = {"call": label, "field": f"{params.name}.{field}", "value": spec}
    out[0] = {"header": {**out[0]["header"], "derived": {"branch": name, **change, "why": why}}}
    return out


def readme(source: Path, names) -> str:
    rows = "\n".join(f"| `{n}` | `{BRANCHES[n][0]}` | `{BRANCHES[n][1]}` set to `{BRANCHES[n][2]}` | {BRANCHES[n][3]} "
                     f"| {BRANCHES[n][4]} |" for n in names)
    return (f"## Derived recordings: one reply field changed\n\n"
            f"`tests/run/test_health_replay.py` derives, at every run and into a temporary folder, one recording per\n"
            f"row below from the real recording `{source.name}` (`tools/derive_health_fixtures.py`): ONE reply\n"
            f"field of one health call changed, by name through the recording's own ABI. Nothing else differs:\n"
            f"not the other calls, not their bytes, not the host note (a replay decodes the changed reply\n"
            f"itself). The header's `derived` key names the change. Each is replayed (passive) and must give\n"
            f"the verdict docs/health.md gives. None is committed: they are made from the real one.\n\n"
            f"| branch | call | field changed | why | verdict |\n| --- | --- | --- | --- | --- |\n{rows}\n")


def write_derived(source: Path, out: Path) -> Path:
    """Every branch's recording of `source` into the folder `out` (the tests' temporary one)."""
    lines = _lines(source)
    driver = next(line for line in lines if line.get("note") == "driver")
    abi = DriverMatrix().abi(driver["abi"])
    out.mkdir(parents=True, exist_ok=True)
    stem = source.name.split(".jsonl")[0]
    with gzip.open(source, "rt") as f:
        raw = [line for line in f if line.strip()]
    for name in BRANCHES:
        changed = derive(lines, abi, name)
        # unchanged lines byte for byte as recorded; the changed record as the recorder writes one
        text = [r if new == old else (json.dumps(new) if i == 0 else json.dumps(new, separators=(",", ":"))) + "\n"
                for i, (r, old, new) in enumerate(zip(raw, lines, changed))]
        with gzip.GzipFile(out / f"{stem}-{name}.jsonl.gz", "wb", mtime=0) as f:
            f.write("".join(text).encode())
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", nargs="?", help="a real recording holding the health calls")
    p.add_argument("--out", default="derived", help="the folder to write them into (default: ./derived)")
    p.add_argument("--table", action="store_true", help="print the table of fixtures/transcripts/README.md")
    args = p.parse_args()
    source = Path(args.source) if args.source else source_recording()
    if args.table and source is not None:
        print(readme(source, BRANCHES), end="")
        return 0
    if source is None or not source.is_file() or not has_health(source):
        print("derive_health_fixtures: no real recording with rmpeer's health calls "
              f"({source or 'none in ' + str(transcripts_dir())}); make one with tools/evidence/health.sh",
              file=sys.stderr)
        return EXIT_CONFIG
    out = write_derived(source, Path(args.out))
    print(f"{len(BRANCHES)} derived recordings of {source.name} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
