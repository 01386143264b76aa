"""The Xid reader keeps working when the kernel's ring buffer has rotated while the suite ran:
the lines logged since start are still found, never an empty "no Xid".

Inputs are hand-made in the forms rmpeer.machine.xids reads: `dmesg` text lines (the fallback
reader compares the log before and after), and /dev/kmsg records ('prio,seq,usec,flags;text'
plus ' KEY=value' continuation lines), whose reader gets EPIPE once when records it had not
read yet were overwritten (Documentation/ABI/testing/dev-kmsg). The oracle is the set of
lines the test logged after start."""

import errno
import os
import types

import pytest

from rmpeer.machine import xids

pytestmark = pytest.mark.offline
XID_31 = "NVRM: Xid (PCI:0000:18:00): 31, pid=4321, name=python3, Ch 00000008, intr 00000000. MMU Fault"
XID_79 = "NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus."
XID_94 = "NVRM: Xid (PCI:0000:2a:00 GPU-I:05): 94, pid=7194, Contained: CE User Channel (0x9)."
XID_48 = "NVRM: Xid (PCI:0000:18:00): 48, pid=1, DBE (0x1,0x2)"


def dmesg_reader(module, before, after):
    """An XidWatcher of `module` on a dmesg that shows `before` at start and `after` at stop."""
    logs = [before, after]
    return module.XidWatcher(kmsg="/nonexistent/kmsg", dmesg=lambda: logs.pop(0))


def finds_xids_after_a_dmesg_rotation(module):
    before = [f"[{i}.0] boot line {i}" for i in range(5)] + [f"[5.0] {XID_79}"]
    # the buffer wrapped: every line of `before` is gone, the oldest kept line is new
    after = [f"[6.0] {XID_31}", "[7.0] something else", f"[8.0] {XID_94}"]
    got = dmesg_reader(module, before, after).start().stop()
    assert got["readable"] and got["source"] == "dmesg"
    assert [x["xid"] for x in got["xids"]] == [31, 94], "the Xids logged since start, after a rotation"


def test_a_rotated_dmesg_buffer_still_yields_the_new_xids():
    finds_xids_after_a_dmesg_rotation(xids)


def test_without_rotation_only_the_lines_after_the_last_seen_one_count():
    before = ["[1.0] boot", f"[2.0] {XID_79}"]
    after = before + [f"[3.0] {XID_48}", f"[4.0] {XID_79}"]   # the same text again, later: new
    got = dmesg_reader(xids, before, after).start().stop()
    assert [x["xid"] for x in got["xids"]] == [48, 79]


def kmsg_os(real_os, fail_once_with=errno.EPIPE):
    """os for rmpeer.machine.xids, whose first read after start fails as /dev/kmsg does when the
    records the reader stood at were overwritten; later reads go on from the oldest kept."""
    state = {"failed": False}

    def read(fd, n):
        if not state["failed"]:
            state["failed"] = True
            raise OSError(fail_once_with, os.strerror(fail_once_with))
        return real_os.read(fd, n)
    return types.SimpleNamespace(**{**vars(real_os), "read": read})


def finds_xids_after_a_kmsg_overrun(module, tmp_path, monkeypatch):
    log = tmp_path / "kmsg"
    log.write_text(f"3,1,1,-;{XID_79}\n")
    watcher = module.XidWatcher(kmsg=str(log)).start()
    with log.open("a") as fh:
        fh.write(f"3,2,2,-;{XID_31}\n SUBSYSTEM=pci\n DEVICE=+pci:0000:18:00.0\n6,3,3,-;unrelated\n"
                 f"3,4,4,-;{XID_94}\n")
    monkeypatch.setattr(module, "os", kmsg_os(os))
    got = watcher.stop()
    assert got["readable"] and got["source"] == "kmsg", got
    assert [(x["pci"], x["xid"]) for x in got["xids"]] == [("0000:18:00", 31), ("0000:2a:00", 94)]


def test_a_kmsg_reader_overrun_by_the_ring_buffer_goes_on_reading(tmp_path, monkeypatch):
    finds_xids_after_a_kmsg_overrun(xids, tmp_path, monkeypatch)


def test_a_kmsg_read_error_other_than_an_overrun_says_the_log_was_not_read(tmp_path, monkeypatch):
    log = tmp_path / "kmsg"
    log.write_text("")
    watcher = xids.XidWatcher(kmsg=str(log)).start()
    monkeypatch.setattr(xids, "os", kmsg_os(os, errno.EIO))
    got = watcher.stop()
    assert got["readable"] is False and got["xids"] == [] and str(log) in got["reason"]


@pytest.mark.parametrize("mutant,old,new,check", [
    ("dmesg-rotation-returns-nothing", "    seen = set(before)\n    return [line for line in after if line not in seen]",
     "    return []", "dmesg"),
    ("kmsg-overrun-stops", "records overwritten before we read them: go on\n                    continue",
     "records overwritten before we read them: go on\n                    break", "kmsg"),
])
def test_the_rotation_tests_fail_when_the_rotation_branch_is_broken(tmp_path, monkeypatch, mutant, old, new, check):
    """Mutation: the reader rebuilt with its rotation branch returning nothing (or stopping at
    the overrun) fails the tests above."""
    from source_mutation import mutated

    broken = mutated("rmpeer.machine.xids", old, new)
    with pytest.raises(AssertionError):
        if check == "dmesg":
            finds_xids_after_a_dmesg_rotation(broken)
        else:
            finds_xids_after_a_kmsg_overrun(broken, tmp_path, monkeypatch)
