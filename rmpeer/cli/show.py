"""Reading transcripts as a person: `rmpeer show TRANSCRIPT`."""

from __future__ import annotations

from collections import Counter

from rmpeer.errors import EXIT_OK, ConfigError, TranscriptError, UnknownDriverError


def add_parser(sub):
    s = sub.add_parser("show", help="print a recording readably, field by field; --list: the bundled recordings")
    s.add_argument("transcript", metavar="RECORDING", nargs="?")
    s.add_argument("--calls", action="store_true", help="every call, not only the summary")
    s.add_argument("--list", action="store_true",
                   help="the recordings shipped with rmpeer, to replay with certify --replay NAME")
    return s


def run(args) -> int:
    if args.list:
        print(bundled_list())
        return EXIT_OK
    if not args.transcript:
        raise ConfigError("rmpeer show needs a RECORDING, or --list for the bundled ones")
    show_transcript(args.transcript, calls=args.calls)
    return EXIT_OK


def bundled_list() -> str:
    """The bundled recordings, a line each: what to pass to certify --replay, the host, when,
    and what it shows."""
    from rmpeer.paths import transcripts_dir
    from rmpeer.run.targets import BUNDLED_KINDS, bundled_recordings
    from rmpeer.shim.records import read_transcript

    root = transcripts_dir()
    lines = [f"recordings of real hosts shipped with rmpeer ({root}); replay one with "
             "rmpeer certify --replay NAME:"]
    for path in bundled_recordings():
        header, _ = read_transcript(str(path))
        name = path.relative_to(root).as_posix().removesuffix(".jsonl.gz")
        kind = BUNDLED_KINDS.get(path.parent.name if path.parent != root else "", "")
        derived = header.get("derived")
        if isinstance(derived, dict) and derived.get("from"):
            kind = f"derived from {derived['from']}, one thing changed: {derived.get('verdict', '?')}"
        lines.append(f"  {name:<52} {header.get('label', '?')}, {header.get('cards', '?')} card(s), "
                     f"recorded {header.get('created', '?')}: {kind}")
    return "\n".join(lines)


def _abi_for(lines):
    """The ABI the recording was made with, or (None, why) when this checkout lacks it:
    the calls are then listed without their fields rather than refused."""
    from rmpeer.abi import DriverMatrix

    for line in lines:
        if isinstance(line, dict) and line.get("note") == "driver":
            matrix = DriverMatrix()
            try:
                return matrix.abi(str(line.get("abi")), driver=str(line.get("version"))), ""
            except UnknownDriverError:
                return None, (f"recorded with ABI {line.get('abi')}, which {matrix.path.name} lacks: "
                              "fields are not decoded")
    return None, "the recording names no driver ABI: fields are not decoded"


def _words(detail: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in detail.items())


def describe_call(rec, abi) -> str:
    """The call in lines of rmpeer's own; what the recording names in them (the label, the
    struct, RM's status name, an observed value) is escaped into its line, a line break too
    (the struct's own fields show text by repr)."""
    from rmpeer.render.health_calls import describe_lists
    from rmpeer.render.text import escaped

    head = f"#{rec.seq:<6} {rec.op:<11} {rec.label}"
    if rec.op == "ioctl":
        status = f" -> {rec.status_name}" if rec.status_name else (f" -> errno {rec.errno}" if rec.errno else "")
        escape = f", escape {rec.escape:#x}" if isinstance(rec.escape, int) else ""
        out = [escaped(f"{head}  [{rec.struct}{escape}]{status}  {(rec.duration_ns or 0) / 1e3:.1f} us")]
        if abi is not None and rec.struct in abi.structs:
            out.append(abi.struct(rec.struct).render(bytes.fromhex(rec.reply), indent="      "))
        if abi is not None and rec.payload and rec.payload.struct in abi.structs:
            out.append(f"    params {rec.payload.struct}:")
            st = abi.struct(rec.payload.struct)
            out.append(st.render(bytes.fromhex(rec.payload.reply), indent="      "))

            out += describe_lists(abi, st.name, bytes.fromhex(rec.payload.reply))
        return "\n".join(out)
    detail = {k: v for k, v in (rec.extra or {}).items() if k != "digest"}
    if rec.path:
        detail = {"path": rec.path, **detail}
    if rec.request:
        detail["wrote"] = rec.request[:64] + ("..." if len(rec.request) > 64 else "")
    if rec.reply:
        detail["read"] = rec.reply[:64] + ("..." if len(rec.reply) > 64 else "")
    return escaped(f"{head}  {_words(detail)}".rstrip())


def _card_line(card: dict) -> str:
    caps = card.get("ce_caps") or {}
    pces = card.get("ce_pces") or {}
    unread = card.get("unread") or {}     # what RM did not answer: said, never shown as 0
    lces = ", ".join(f"LCE {lce}: " + (f"PCEs not read ({unread[f'ce_pces[{lce}]']})" if f"ce_pces[{lce}]" in unread
                                       else f"{bin(pces.get(lce, 0)).count('1')} PCEs")
                     + (" NVLink P2P" if "CE_NVLINK_P2P" in lce_caps else "")
                     for lce, lce_caps in caps.items())
    memory = (f"memory not read ({unread['fb_bytes']})" if "fb_bytes" in unread
              else f"{int(card.get('fb_bytes') or 0) >> 30} GiB")
    return (f"  card {card.get('index')}: {card.get('name')} {card.get('pci')} {card.get('uuid')} {memory}"
            + (f"; {lces}" if lces else ""))


def _run_line(run: dict) -> str:
    extent = run.get("extent")
    layouts = "; ".join(f"{entry[0]} (cards {','.join(map(str, entry[1]))}"
                        + (f", {entry[2] >> 20} MiB" if len(entry) > 2 else "") + ")"
                        for entry in run.get("layouts") or [])
    boost = {True: ", clocks boosted", False: ", clocks as found (--no-boost)"}.get(run.get("boost"), "")
    return (f"  run: pattern seed {run.get('pattern_seed', run.get('seed'))}{boost}, staging extent "
            + (f"{extent:#x}" if isinstance(extent, int) else str(extent)) + f", layouts: {layouts or 'none'}")


def show_transcript(path, *, calls: bool = False, out=print) -> None:
    from rmpeer.render.text import escaped
    from rmpeer.shim.records import END_NOTE, read_transcript
    from rmpeer.shim.replay import is_truncated

    def say(text=""):     # every line, whatever the recording holds
        out(escaped(text, lines=True))

    header, lines = read_transcript(path)
    if is_truncated(lines):
        # shown anyway (what a cut recording holds is worth reading), but never as if whole
        say(f"WARNING: {path} is truncated: no {END_NOTE!r} line after line {len(lines) + 1}: the recording "
            f"was cut short, and certify --replay refuses it")
    abi, no_abi = _abi_for(lines)
    try:
        _show(path, header, lines, abi, calls, say)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # read_transcript checked the file's shape; a field of the wrong kind inside a record
        # is still the file's fault, not a reason for a traceback
        raise TranscriptError(f"{path}: a record of an unexpected shape ({type(exc).__name__}: "
                              f"{str(exc)[:200]})") from None
    if no_abi:
        say(f"  note: {no_abi}")


def _show(path, header, lines, abi, calls, say):
    from rmpeer.render.health_text import health_lines
    from rmpeer.render.text import escaped

    def out(text):      # one line: a line break a recording's field holds is shown, never sent
        say(escaped(text))

    out(f"transcript {path}")
    for key in ("label", "created", "hostname", "kernel", "version"):
        if header.get(key):
            out(f"  {key}: {header[key]}")
    driver_text = str(header.get("driver_text") or "").strip().splitlines()
    if driver_text:
        out(f"  driver: {driver_text[0].strip()}")
    run = header.get("run") or {}
    out(_run_line(run if isinstance(run, dict) else {}))
    records = [line for line in lines if not isinstance(line, dict)]
    ops = Counter(r.op for r in records)
    failed = [r for r in records if r.op == "ioctl" and (r.errno or r.status)]
    by_op = ", ".join(f"{n} {op}" for op, n in ops.most_common())
    out(f"  {len(records)} calls" + (f": {by_op}" if by_op else "") + f"; {len(failed)} answered with an error")
    for line in lines:
        if isinstance(line, dict):
            if line.get("note") == "host":
                for card in (line.get("facts") or {}).get("cards", []):
                    out(_card_line(card))
                for text in health_lines(line.get("facts") or {}):
                    out(text)
            elif line.get("note") == "segment" and calls:
                out(f"-- {line.get('key')}")
        elif calls or (line.op == "ioctl" and (line.errno or line.status)):
            say(describe_call(line, abi))    # lines of its own, each escaped
