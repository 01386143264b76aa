"""The live shim's parsing, run in CI on real RM replies (issue 47, item 6): a stand-in for
libc's ioctl answers rmpeer.shim.live.LiveShim.ioctl with each committed recording's reply
bytes, written into the very buffers the live shim handed it, so that the code that reads RM's
status, the reply and the params block back runs on every real reply a recording holds. The
expected values are the recordings' own (what the live shim recorded on the real host).

CI never opens /dev/nvidiactl: without this, a live shim reading the status 4 bytes before its
field passed the whole suite (issue 47's list of survivors)."""

from __future__ import annotations

import json

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.paths import transcripts_dir
from rmpeer.shim import live
from rmpeer.shim.records import read_transcript

pytestmark = pytest.mark.offline
RECORDINGS = sorted(p for p in transcripts_dir().rglob("*.jsonl.gz") if "derived" not in p.parts)


class NoStruct:
    """An nv_ioctl_* escape's struct the ABI names more than once (nv_ioctl_card_info_t[32]):
    it has no status field, and the live shim reads none."""

    def __init__(self, name):
        self.name = name

    def has(self, field):
        return False


class StandIn:
    """libc as the live shim calls it, answering each ioctl with the recorded reply: the top
    struct's bytes written at the address the shim passed, the params block's into the payload
    buffer, errno and the return value as recorded."""

    def __init__(self):
        self.rec = self.payload = None

    def ioctl(self, fd, request, pointer):
        assert int(live.ffi.cast("unsigned long", request)) == self.rec.request_code
        reply = bytes.fromhex(self.rec.reply)
        live.ffi.memmove(live.ffi.cast("unsigned char *", pointer), reply, len(reply))
        if self.rec.payload is not None:
            self.payload.write(bytes.fromhex(self.rec.payload.reply))
        live.ffi.errno = self.rec.errno
        return -1 if self.rec.errno else self.rec.result


def status_field(struct) -> str | None:
    """The field the RM client reads the status from (rmpeer.rm.client: NVOS*'s status, or
    the params' status of an escape that carries it there)."""
    return next((name for name in ("status", "params.status") if struct.has(name)), None)


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_the_live_shim_reads_every_recorded_reply_as_rm_gave_it(path, monkeypatch):
    header, lines = read_transcript(path)
    driver = next(x for x in lines if isinstance(x, dict) and x.get("note") == "driver")
    abi = DriverMatrix().abi(driver["abi"])
    stand_in = StandIn()
    monkeypatch.setattr(live, "libc", lambda: stand_in)
    checked = with_status = 0
    for rec in (x for x in lines if not isinstance(x, dict) and x.op == "ioctl"):
        try:
            struct = abi.struct(rec.struct)
        except Exception:     # noqa: BLE001 - a name the ABI holds more than once: no status there
            struct = NoStruct(rec.struct)
        payload_struct = abi.struct(rec.payload.struct) if rec.payload is not None else None
        shim = live.LiveShim()
        top = shim.buffer(bytes.fromhex(rec.request))
        payload = shim.buffer(bytes.fromhex(rec.payload.request)) if rec.payload is not None else None
        stand_in.rec, stand_in.payload = rec, payload
        made = shim.ioctl(rec.fd, rec.request_code, top, label=rec.label, escape=rec.escape, struct=struct,
                          payload=payload, payload_struct=payload_struct, status_field=status_field(struct))
        got = (made.reply, made.errno, made.status, made.status_name, made.status_text)
        assert got == (rec.reply, rec.errno, rec.status, rec.status_name, rec.status_text), (rec.seq, rec.label)
        if rec.payload is not None:
            assert made.payload.reply == rec.payload.reply and made.payload.request == rec.payload.request
        checked += 1
        with_status += rec.status is not None
    assert checked and with_status, (checked, with_status)
