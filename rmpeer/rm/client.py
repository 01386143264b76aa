"""One RM client over /dev/nvidiactl: alloc, free, control, map, each a checked ioctl.

Every request is built from the ABI (matrices/drivers.yaml); every failure
raises RmError naming the step, the handles, the status and the bytes.
"""

from __future__ import annotations

import dataclasses

import errno
import os

from rmpeer.errors import AccessError, NoDeviceError
from rmpeer.rm.errors import RmError
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "alloc:client", "free:client", "open:nvidiactl", "close:nvidiactl")

CTL_PATH = "/dev/nvidiactl"
# Preset into NVOS46.status before each map: a status RM never wrote stays this value.
STATUS_SENTINEL = 0x5E17E1A1


def open_device_node(shim, path: str, *, label: str) -> int:
    """open() with the errors a user can act on: no device (3), no permission (3)."""
    if shim.mode == "live" and not os.path.exists(path):
        raise NoDeviceError(f"{path} does not exist: no NVIDIA GPU or driver on this machine "
                            f"(is the nvidia kernel module loaded?)")
    try:
        return shim.open(path, label=label)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise AccessError(f"{path}: permission denied; run as a user in the video group "
                              f"or as root") from None
        if exc.errno in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
            raise NoDeviceError(f"{path}: {exc.strerror}: no usable NVIDIA device") from None
        raise


class RmClient:
    """The process's one RM client (NV01_ROOT_CLIENT) and the calls made through it."""

    def __init__(self, shim, abi):
        self.shim, self.abi = shim, abi
        self.ctl_fd = open_device_node(shim, CTL_PATH, label="open:nvidiactl")
        self.handle = 0
        self.objects: list[tuple[int, int, str]] = []   # (parent, handle, label), in alloc order
        self.frees_accepted = 0      # every free RM accepted: what a teardown check counts
        self.calls_sent = 0          # every ioctl this client sent, in order
        try:
            self.handle = self.alloc(0, 0, "NV01_ROOT_CLIENT", label="alloc:client")
        except RmError as exc:
            if exc.record.errno in (errno.ENOTTY, errno.EINVAL, errno.ENODEV) and not exc.record.status:
                # the node answers ioctls as something else would: it is no NVIDIA control device
                self.shim.close(self.ctl_fd, label="close:nvidiactl")
                raise NoDeviceError(f"{CTL_PATH}: not an NVIDIA control device: its first ioctl "
                                    f"(alloc:client) failed with {exc.status_name}") from None
            raise
        self.objects.clear()  # the client itself is freed last, by close()

    # -- raw escapes ------------------------------------------------------------
    def escape(self, fd: int, escape: str, struct_name: str, *, label: str, **fields):
        """An ioctl with one struct in and out: (record, reply buffer)."""
        st = self.abi.struct(struct_name)
        top = self.shim.buffer(st.pack(**fields))
        nr = self.abi.escape(escape)
        rec = self.shim.ioctl(fd, self.abi.ioctl_request(nr, st.size), top, label=label,
                              escape=nr, struct=st, status_field=None)
        return rec, bytes.fromhex(rec.reply)

    def _call(self, escape: str, struct_name: str, fields: dict, *, label: str, handles: dict,
              payload: bytes | None = None, payload_struct=None, payload_field: str | None = None,
              size_field: str | None = None, status_field: str = "status", check: bool = True):
        st = self.abi.struct(struct_name)
        pbuf = self.shim.buffer(payload) if payload is not None else None
        if pbuf is not None:
            fields = {**fields, payload_field: pbuf.address}
            if size_field:
                fields[size_field] = len(payload)
        sent = st.pack(**fields)
        top = self.shim.buffer(sent)
        nr = self.abi.escape(escape)
        rec = self.shim.ioctl(self.ctl_fd, self.abi.ioctl_request(nr, st.size), top, label=label,
                              escape=nr, struct=st, payload=pbuf, payload_struct=payload_struct,
                              status_field=status_field)
        # the record says what THIS run sent (a replay hands back the recorded call; a check of
        # the request must read the run's bytes, not the recording's)
        rec.request = sent.hex()
        self.calls_sent += 1
        rec.sent_seq = self.calls_sent     # the run's own order (a replay's seq is the recording's)
        if payload is not None and rec.payload is not None:
            rec.payload = dataclasses.replace(rec.payload, request=bytes(payload).hex())
        if check and (rec.errno or rec.status):
            raise RmError(label, handles, rec, struct=st, payload_struct=payload_struct)
        return rec

    # -- objects --------------------------------------------------------------
    def alloc(self, parent: int, handle: int, class_name: str, params_struct: str | None = None,
              *, label: str, **params) -> int:
        """Allocate `handle` of `class_name` under `parent` (NVOS64); returns the handle."""
        rec = self.try_alloc(parent, handle, class_name, params_struct, label=label, check=True, **params)
        return self.abi.struct("NVOS64_PARAMETERS").get(bytes.fromhex(rec.reply), "hObjectNew")

    def try_alloc(self, parent: int, handle: int, class_name: str, params_struct: str | None = None,
                  *, label: str, check: bool = False, **params):
        """The alloc's CallRecord, failed or not, for steps whose refusal a test asserts."""
        pst = self.abi.struct(params_struct) if params_struct else None
        payload = pst.pack(**params) if pst else None
        handles = {"hClient": self.handle, "hParent": parent, "hObject": handle,
                   "class": f"{class_name} ({self.abi.cls(class_name):#x})"}
        rec = self._call("NV_ESC_RM_ALLOC", "NVOS64_PARAMETERS",
                         {"hRoot": self.handle, "hObjectParent": parent, "hObjectNew": handle,
                          "hClass": self.abi.cls(class_name)},
                         label=label, handles=handles, payload=payload, payload_struct=pst,
                         payload_field="pAllocParms", size_field="paramsSize", check=check)
        if not (rec.errno or rec.status):
            new = self.abi.struct("NVOS64_PARAMETERS").get(bytes.fromhex(rec.reply), "hObjectNew")
            self.objects.append((parent, new, label))
        return rec

    def free(self, parent: int, handle: int, *, label: str = "free", check: bool = True):
        for i in range(len(self.objects) - 1, -1, -1):   # the newest entry of that handle
            if self.objects[i][1] == handle:
                del self.objects[i]
                break
        rec = self._call("NV_ESC_RM_FREE", "NVOS00_PARAMETERS",
                         {"hRoot": self.handle, "hObjectParent": parent, "hObjectOld": handle},
                         label=label, handles={"hClient": self.handle, "hParent": parent,
                                               "hObject": handle}, check=check)
        if not (rec.errno or rec.status):
            self.frees_accepted += 1
        return rec

    def forget(self, handles) -> None:
        """Drop objects RM freed along with a parent freed before them (e.g. a faulted
        channel's group frees its channel): the table stays what RM holds."""
        gone = set(handles)
        self.objects = [o for o in self.objects if o[1] not in gone]

    def adopt(self, entries) -> None:
        """Objects RM holds that this client did not allocate in this process (a replay that
        jumps to a recorded moment): (parent, handle, label), newest last."""
        self.objects.extend(entries)

    def control(self, obj: int, name: str, *, label: str | None = None, check: bool = True,
                payload: bytes | None = None, **fields) -> dict:
        """An RM control on `obj`; returns the reply params decoded (with the record as '_record').

        `payload` gives the params bytes whole, for lists the fields cannot name."""
        cmd, pst = self.abi.control(name)
        label = label or f"control:{name}"
        rec = self._call("NV_ESC_RM_CONTROL", "NVOS54_PARAMETERS",
                         {"hClient": self.handle, "hObject": obj, "cmd": cmd},
                         label=label, handles={"hClient": self.handle, "hObject": obj,
                                               "cmd": f"{name} ({cmd:#x})"},
                         payload=payload if payload is not None else pst.pack(**fields),
                         payload_struct=pst, payload_field="params",
                         size_field="paramsSize", check=check)
        reply = bytes.fromhex(rec.payload.reply)
        out = pst.decode(reply)
        out["_record"], out["_raw"] = rec, reply
        return out

    def map_dma(self, device: int, dma: int, memory: int, *, length: int, flags: int,
                dma_offset: int, label: str, offset: int = 0, check: bool = True):
        """NV_ESC_RM_MAP_MEMORY_DMA (NVOS46) with the status preset to a sentinel.

        Returns (record, reply fields). RM must overwrite the sentinel: a status it
        never wrote is caught by the caller, not mistaken for success."""
        st = self.abi.struct("NVOS46_PARAMETERS")
        fields = {"hClient": self.handle, "hDevice": device, "hDma": dma, "hMemory": memory,
                  "offset": offset, "length": length, "flags": flags, "dmaOffset": dma_offset,
                  "status": STATUS_SENTINEL}
        handles = {"hClient": self.handle, "hDevice": device, "hDma": dma, "hMemory": memory}
        rec = self._call("NV_ESC_RM_MAP_MEMORY_DMA", "NVOS46_PARAMETERS", fields, label=label,
                         handles=handles, check=False)
        reply = st.decode(bytes.fromhex(rec.reply))
        failed = rec.errno or reply["status"] != 0
        if check and failed:
            raise RmError(label, handles, rec, struct=st)
        return rec, reply

    def map_to_cpu(self, device: int, memory: int, length: int, map_fd: int, *, label: str,
                   flags: int = 0):
        """NV_ESC_RM_MAP_MEMORY with the fd to map through, then mmap that fd."""
        st = self.abi.struct("nv_ioctl_nvos33_parameters_with_fd")
        fields = {"params.hClient": self.handle, "params.hDevice": device,
                  "params.hMemory": memory, "params.length": length, "params.flags": flags,
                  "fd": map_fd}
        self._call("NV_ESC_RM_MAP_MEMORY", st.name, fields, label=label,
                   handles={"hDevice": device, "hMemory": memory, "fd": map_fd},
                   status_field="params.status")
        return self.shim.mmap(map_fd, length, label=label)

    def free_since(self, mark: int) -> list:
        """Free, newest first, every object allocated after `mark` (= len(objects) then).

        Returns the records of frees RM refused, so teardown can be asserted."""
        refused = []
        while len(self.objects) > mark:
            parent, handle, label = self.objects[-1]
            rec = self.free(parent, handle, label=f"free:{label}", check=False)
            if rec.errno or rec.status:
                refused.append(rec)
        return refused

    def close(self) -> None:
        """Free the client (RM frees everything under it), then close nvidiactl."""
        if self.handle:
            self.free(0, self.handle, label="free:client", check=False)
            self.handle = 0
        if self.ctl_fd is not None:
            self.shim.close(self.ctl_fd, label="close:nvidiactl")
            self.ctl_fd = None
