"""Reading transcripts as a person: `rmpeer show TRANSCRIPT`."""

from __future__ import annotations

from collections import Counter

from .abi import DriverMatrix
from .shim.records import read_transcript


def _abi_for(lines):
    for line in lines:
        if isinstance(line, dict) and line.get("note") == "driver":
            matrix = DriverMatrix()
            return matrix.abi(line["abi"], driver=line["version"])
    return None


def describe_call(rec, abi) -> str:
    head = f"#{rec.seq:<6} {rec.op:<11} {rec.label}"
    if rec.op == "ioctl":
        status = f" -> {rec.status_name}" if rec.status_name else (f" -> errno {rec.errno}" if rec.errno else "")
        out = [f"{head}  [{rec.struct}, escape {rec.escape:#x}]{status}  {rec.duration_ns / 1e3:.1f} us"]
        if abi is not None and rec.struct in abi.structs:
            out.append(abi.struct(rec.struct).render(bytes.fromhex(rec.reply), indent="      "))
        if abi is not None and rec.payload and rec.payload.struct in abi.structs:
            out.append(f"    params {rec.payload.struct}:")
            st = abi.struct(rec.payload.struct)
            out.append(st.render(bytes.fromhex(rec.payload.reply), indent="      "))
        return "\n".join(out)
    detail = {k: v for k, v in rec.extra.items() if k != "digest"}
    if rec.request:
        detail["wrote"] = rec.request[:64] + ("..." if len(rec.request) > 64 else "")
    if rec.reply:
        detail["read"] = rec.reply[:64]
    return f"{head}  {detail}"


def show_transcript(path, *, calls: bool = False, out=print) -> None:
    header, lines = read_transcript(path)
    abi = _abi_for(lines)
    out(f"transcript {path}")
    for key in ("label", "created", "hostname", "kernel", "version", "driver_text"):
        if header.get(key):
            out(f"  {key}: {header[key]}")
    run = header.get("run", {})
    out(f"  run: seed {run.get('seed')}, extent {run.get('extent', 0):#x}, layouts "
        + ", ".join(f"{n}{tuple(c)}" for n, c in run.get("layouts", [])))
    records = [line for line in lines if not isinstance(line, dict)]
    ops = Counter(r.op for r in records)
    failed = [r for r in records if r.op == "ioctl" and (r.errno or r.status)]
    out(f"  {len(records)} calls: " + ", ".join(f"{n} {op}" for op, n in ops.most_common())
        + f"; {len(failed)} answered with an error")
    for line in lines:
        if isinstance(line, dict):
            if line.get("note") == "host":
                for card in line["facts"]["cards"]:
                    lces = ", ".join(f"LCE {lce}: {bin(card['ce_pces'].get(lce, 0)).count('1')} PCEs"
                                     + (" NVLink P2P" if "CE_NVLINK_P2P" in caps else "")
                                     for lce, caps in card["ce_caps"].items())
                    out(f"  card {card['index']}: {card['name']} {card['pci']} {card['uuid']} "
                        f"{card['fb_bytes'] >> 30} GiB; {lces}")
            elif line.get("note") == "segment" and calls:
                out(f"-- {line['key']}")
        elif calls or (line.op == "ioctl" and (line.errno or line.status)):
            out(describe_call(line, abi))
