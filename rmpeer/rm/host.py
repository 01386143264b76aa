"""Host discovery through RM: the driver, the cards, and the P2P capabilities between them."""

from __future__ import annotations

import glob
import os
import re

from rmpeer.errors import ConfigError
from rmpeer.machine.selection import host_cards
from rmpeer.model.host import Card, HostFacts
from rmpeer.rm.client import open_device_node
from rmpeer.rm.health import read_host as read_health
from rmpeer.shim.records import PROC_VERSION, read_proc_version_text
from rmpeer.tables.handles import PROBE_DEVICE_BASE, PROBE_SUBDEVICE_BASE
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "driver:version", "host:card-info", "host:device", "host:subdevice", "host:id-info",
                "host:name", "host:uuid", "host:classes", "host:fb-size", "host:heap-free", "host:vbios",
                "host:ce-caps", "host:ce-pces", "host:p2p-caps", "open", "register-fd", "close")

PROC_GPUS = "/proc/driver/nvidia/gpus"


def read_proc_version(path: str = PROC_VERSION, text: str | None = None) -> tuple[str | None, str]:
    """(version, flavour) from the kernel module's own line, when it is there."""
    if text is None:
        text = read_proc_version_text(path)
        if not text:
            return None, "unknown"
    m = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
    flavour = "open" if "Open Kernel Module" in text else "proprietary" if "Kernel Module" in text else "unknown"
    return (m.group(1) if m else None), flavour


def read_proc_gpus(root: str = PROC_GPUS) -> list[dict]:
    """What the kernel module itself says of each GPU (model, UUID, bus): a second account
    of the cards, independent of RM's controls."""
    out = []
    for info in sorted(glob.glob(os.path.join(root, "*", "information"))):
        try:
            text = open(info).read()
        except OSError:
            continue
        fields = dict(re.findall(r"^([^:\n]+):\s*(.*?)\s*$", text, re.M))
        out.append({"model": fields.get("Model", ""), "uuid": fields.get("GPU UUID", ""),
                    "bus": fields.get("Bus Location", os.path.basename(os.path.dirname(info))),
                    "vbios": fields.get("Video BIOS", "")})
    return out


def query_driver_version(shim, bootstrap_abi, ctl_fd) -> str | None:
    """The RM API version query escape (NV_ESC_CHECK_VERSION_STR, cmd QUERY)."""
    st = bootstrap_abi.struct("nv_ioctl_rm_api_version_t")
    top = shim.buffer(st.pack(cmd=bootstrap_abi.const("NV_RM_API_VERSION_CMD_QUERY")))
    nr = bootstrap_abi.escape("NV_ESC_CHECK_VERSION_STR")
    rec = shim.ioctl(ctl_fd, bootstrap_abi.ioctl_request(nr, st.size), top, label="driver:version",
                     escape=nr, struct=st, status_field=None)
    if rec.errno:
        return None
    # bytes RM returned, not necessarily text: undecodable ones stay visible in the message
    text = st.get(bytes.fromhex(rec.reply), "versionString").split(b"\0", 1)[0].decode("ascii", "replace")
    return text or None


RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")


def checked_version(version: str, source: str) -> str:
    """The driver's version, refused (exit 2) unless it reads like a release (580.159.04):
    the ABI is chosen by it, and a guess would send wrong bytes to RM."""
    if not RELEASE.fullmatch(version.strip()):
        raise ConfigError(f"the NVIDIA driver reported version {version[:80]!r} ({source}), which is not a "
                          "release number such as 580.159.04, so its ABI cannot be chosen; force one with "
                          "--rm-abi RELEASE (a release of matrices/drivers.yaml)")
    return version.strip()


def card_infos(rm) -> list[dict]:
    slots = rm.abi.const("NV_MAX_DEVICES")
    one = rm.abi.struct("nv_ioctl_card_info_t")
    arr = one.repeated(slots)
    top = rm.shim.buffer(arr.size)
    nr = rm.abi.escape("NV_ESC_CARD_INFO")
    rec = rm.shim.ioctl(rm.ctl_fd, rm.abi.ioctl_request(nr, arr.size), top, label="host:card-info",
                        escape=nr, struct=arr, status_field=None)
    if rec.errno:
        raise OSError(rec.errno, os.strerror(rec.errno), "NV_ESC_CARD_INFO")
    raw = bytes.fromhex(rec.reply)
    cards = [one.decode(raw[i * one.size:(i + 1) * one.size]) for i in range(slots)]
    return [c for c in cards if c["valid"]]


def engine_type(abi, lce: int) -> int:
    """NV2080_ENGINE_TYPE_COPY<lce>, by name: the numbers are not contiguous (COPY10 = 0x34)."""
    return abi.const(f"NV2080_ENGINE_TYPE_COPY{lce}")


def register_fd(rm, fd: int, *, label: str) -> None:
    """NV_ESC_REGISTER_FD: ties a /dev/nvidiaN fd to the client's nvidiactl fd.

    Must precede NV01_DEVICE_0 on that card (docs/copy-engine.md, Setting up, step 1)."""
    rec, _ = rm.escape(fd, "NV_ESC_REGISTER_FD", "nv_ioctl_register_fd_t", label=label, ctl_fd=rm.ctl_fd)
    if rec.errno:
        raise OSError(rec.errno, os.strerror(rec.errno), label)


def _cap_names(abi, prefix: str, caps_bytes: bytes) -> list[str]:
    """Names of the {byte, mask} capability constants set in a caps table row."""
    names = []
    for name, value in abi.constants.items():
        if name.startswith(prefix) and isinstance(value, dict) and "byte" in value:
            if value["byte"] < len(caps_bytes) and caps_bytes[value["byte"]] & value["mask"]:
                names.append(name[len(prefix):])
    return sorted(names)


def _p2p_cap_names(abi, word: int) -> list[str]:
    prefix = "NV0000_CTRL_SYSTEM_GET_P2P_CAPS_"
    return sorted(n[len(prefix):] for n, v in abi.constants.items()
                  if n.startswith(prefix) and isinstance(v, int) and v and (word & v) == v
                  and n.endswith("_SUPPORTED"))


def _text_field(params: dict, prefix: str) -> str:
    for key, value in params.items():
        if key.startswith(prefix) and isinstance(value, bytes):
            return value.split(b"\0", 1)[0].decode(errors="replace").strip()
    return ""


class Host:
    """The cards of this host, opened and registered, with their facts."""

    def __init__(self, rm, facts: HostFacts):
        self.rm, self.facts = rm, facts
        self.card_fds: dict[int, int] = {}

    @property
    def cards(self) -> list[Card]:
        return self.facts.cards

    def discover(self, select=None) -> "Host":
        """Opens and describes the cards. `select` (a selection.Chooser) picks some of the
        cards RM lists, from what nvidiactl says of them alone: the others are never opened,
        and the run numbers the chosen ones 0..k-1 in RM's order."""
        rm = self.rm
        infos = card_infos(rm)
        pcis = [f"{info['pci_info.domain']:04x}:{info['pci_info.bus']:02x}:"
                f"{info['pci_info.slot']:02x}.{info['pci_info.function']:x}" for info in infos]
        chosen = None
        if select is not None:
            chosen = self._select(select, infos, pcis)
            infos, pcis = [infos[i] for i in chosen.cards], [pcis[i] for i in chosen.cards]
        for index, (info, pci) in enumerate(zip(infos, pcis)):
            card = Card(index, info["minor_number"], info["gpu_id"], pci, info["pci_info.device_id"])
            # a container may be let open nvidiactl and not this card: exit 3 naming it, as for nvidiactl
            fd = open_device_node(rm.shim, f"/dev/nvidia{card.minor}", label=f"open:card{index}")
            self.card_fds[index] = fd
            register_fd(rm, fd, label=f"register-fd:card{index}")
            ids = rm.control(rm.handle, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", gpuId=card.gpu_id,
                             label=f"host:id-info:card{index}")
            card.device_instance = ids["deviceInstance"]
            self.facts.cards.append(card)
            self._describe(card)
        if chosen is not None:
            self._check_uuids(chosen)
        self._p2p()
        read_health(self)
        return self

    def _select(self, select, infos, pcis):
        listed = [{"minor": info["minor_number"], "pci": pci} for info, pci in zip(infos, pcis)]
        # the kernel module's UUID of each bus (a replay's recorded choice needs none)
        proc = [] if select.recorded is not None else (select.read_proc or read_proc_gpus)()
        chosen = select(host_cards(listed, proc))
        self.facts.selection = chosen.as_dict()
        return chosen

    def _check_uuids(self, chosen) -> None:
        """A card named by UUID is the card RM reports with that UUID, or the run stops; the
        selection then records RM's UUIDs of the opened cards."""
        import dataclasses

        of = list(chosen.of)
        for card, host_index in zip(self.facts.cards, chosen.cards):
            listed = of[host_index].uuid
            if listed and card.uuid and listed.lower() != card.uuid.lower():
                raise ConfigError(f"card {host_index} at {card.pci}: the kernel module's /proc says {listed}, RM "
                                  f"says {card.uuid}: the cards cannot be told apart safely")
            of[host_index] = dataclasses.replace(of[host_index], uuid=card.uuid or listed, model=card.name)
        self.facts.selection = dataclasses.replace(chosen, of=tuple(of)).as_dict()

    def _describe(self, card: Card) -> None:
        rm, abi = self.rm, self.rm.abi
        dev = PROBE_DEVICE_BASE + card.index
        sub = PROBE_SUBDEVICE_BASE + card.index
        rm.alloc(rm.handle, dev, "NV01_DEVICE_0", "NV0080_ALLOC_PARAMETERS",
                 label=f"host:device:card{card.index}", deviceId=card.device_instance,
                 hClientShare=rm.handle)
        rm.alloc(dev, sub, "NV20_SUBDEVICE_0", "NV2080_ALLOC_PARAMETERS",
                 label=f"host:subdevice:card{card.index}", subDeviceId=0)
        name = rm.control(sub, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING", label="host:name",
                          gpuNameStringFlags=abi.const("NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII"))
        card.name = _text_field(name, "gpuNameString")
        gid = rm.control(sub, "NV2080_CTRL_CMD_GPU_GET_GID_INFO", label="host:uuid",
                         flags=abi.const("NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY"))
        raw = gid["data"][: gid["length"]] if isinstance(gid["data"], bytes) else bytes(gid["data"][: gid["length"]])
        card.uuid = "GPU-" + "-".join([raw[0:4].hex(), raw[4:6].hex(), raw[6:8].hex(), raw[8:10].hex(), raw[10:16].hex()]) if len(raw) >= 16 else raw.hex()
        card.fb_bytes = self._fb_total(card, sub)
        card.vbios = self._vbios(card, sub)
        classes = rm.control(dev, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2", label="host:classes")
        card.classes = sorted(classes["classList"][: classes["numClasses"]])
        self._ce(card, sub)

    def _info_list(self, sub, control, list_field, size_field, elem_struct, indexes, label) -> tuple[dict, str | None]:
        """A {index, data} list control (FB_GET_INFO_V2, BIOS_GET_INFO_V2): ({index: data}, None),
        or ({}, why RM did not answer)."""
        abi = self.rm.abi
        elem = abi.struct(elem_struct)
        _, pst = abi.control(control)
        buf = pst.pack(**{size_field: len(indexes)})
        base = pst.field(list_field).offset
        for i, idx in enumerate(indexes):
            at = base + i * elem.size + elem.field("index").offset
            buf[at:at + 4] = idx.to_bytes(4, "little")
        reply = self.rm.control(sub, control, label=label, check=False, payload=bytes(buf))
        refused = reply["_record"].refused
        if refused:
            return {}, f"{control}: {refused}"
        raw = reply["_raw"]
        return {idx: elem.get(raw[base + i * elem.size:base + (i + 1) * elem.size], "data")
                for i, idx in enumerate(indexes)}, None

    def _fb_total(self, card: Card, sub) -> int:
        idx = self.rm.abi.const("NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE")
        got, why = self._info_list(sub, "NV2080_CTRL_CMD_FB_GET_INFO_V2", "fbInfoList", "fbInfoListSize",
                                   "NV2080_CTRL_FB_INFO", [idx], "host:fb-size")
        if why:
            card.unread["fb_bytes"] = why
        return got.get(idx, 0) * 1024  # RM reports KiB

    def heap_free(self, index: int) -> tuple[int | None, str | None]:
        """Free video memory of a card, in bytes (FB_GET_INFO_V2 HEAP_FREE): (bytes, None), or
        (None, why RM did not answer)."""
        idx = self.rm.abi.const("NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE")
        got, why = self._info_list(PROBE_SUBDEVICE_BASE + index, "NV2080_CTRL_CMD_FB_GET_INFO_V2", "fbInfoList",
                                   "fbInfoListSize", "NV2080_CTRL_FB_INFO", [idx], f"host:heap-free:card{index}")
        return (None, why) if why else (got.get(idx, 0) * 1024, None)

    def _vbios(self, card: Card, sub) -> str:
        idx = self.rm.abi.const("NV2080_CTRL_BIOS_INFO_INDEX_REVISION")
        oem = self.rm.abi.const("NV2080_CTRL_BIOS_INFO_INDEX_OEM_REVISION")
        got, why = self._info_list(sub, "NV2080_CTRL_CMD_BIOS_GET_INFO_V2", "biosInfoList", "biosInfoListSize",
                                   "NV2080_CTRL_BIOS_INFO", [idx, oem], "host:vbios")
        if why:
            card.unread["vbios"] = why
        if idx not in got:
            return ""
        r = got[idx]
        return f"{r >> 24 & 0xff:02x}.{r >> 16 & 0xff:02x}.{r >> 8 & 0xff:02x}.{r & 0xff:02x}.{got.get(oem, 0) & 0xff:02x}"

    def _ce(self, card: Card, sub: int) -> None:
        abi = self.rm.abi
        caps = self.rm.control(sub, "NV2080_CTRL_CMD_CE_GET_ALL_CAPS", label="host:ce-caps")
        width = abi.const("NV2080_CTRL_CE_CAPS_TBL_SIZE")
        table = bytes(caps["capsTbl"]) if not isinstance(caps["capsTbl"], bytes) else caps["capsTbl"]
        # one row per LCE: the table's own size says how many (NV2080_CTRL_MAX_CES rows from 545
        # on; 535's headers size it by NV2080_CTRL_MAX_PCES and have no MAX_CES)
        for lce in range(len(table) // width):
            if not caps["present"] >> lce & 1:
                continue
            card.ce_caps[lce] = _cap_names(abi, "NV2080_CTRL_CE_CAPS_", table[lce * width:(lce + 1) * width])
            pce = self.rm.control(sub, "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK", label="host:ce-pces",
                                  check=False, ceEngineType=engine_type(abi, lce))
            refused = pce["_record"].refused
            card.ce_pces[lce] = 0 if refused else pce["pceMask"]
            if refused:
                card.unread[f"ce_pces[{lce}]"] = f"NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: {refused}"

    def _p2p(self) -> None:
        abi = self.rm.abi
        n = len(self.cards)
        status_names = {v: k[len("NV0000_P2P_CAPS_STATUS_"):] for k, v in abi.constants.items()
                        if k.startswith("NV0000_P2P_CAPS_STATUS_") and isinstance(v, int)}
        index_names = {v: k[len("NV0000_CTRL_P2P_CAPS_INDEX_"):] for k, v in abi.constants.items()
                       if k.startswith("NV0000_CTRL_P2P_CAPS_INDEX_") and isinstance(v, int)
                       and not k.endswith("TABLE_SIZE")}
        for a in range(n):
            for b in range(n):
                ids = [self.cards[a].gpu_id] if a == b else [self.cards[a].gpu_id, self.cards[b].gpu_id]
                r = self.rm.control(self.rm.handle, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2", check=False,
                                    label=f"host:p2p-caps:{a}->{b}", gpuIds=ids, gpuCount=len(ids))
                if r["_record"].refused:
                    self.facts.p2p[(a, b)] = {"caps_word": 0, "caps": [], "error": r["_record"].refused}
                    continue
                statuses = r["p2pCapsStatus"] if isinstance(r["p2pCapsStatus"], list) else list(r["p2pCapsStatus"])
                self.facts.p2p[(a, b)] = {
                    "caps_word": r["p2pCaps"], "caps": _p2p_cap_names(abi, r["p2pCaps"]),
                    "status": {index_names.get(i, str(i)): status_names.get(s, s) for i, s in enumerate(statuses)
                               if i in index_names},
                    "read_ces": r["p2pOptimalReadCEs"], "write_ces": r["p2pOptimalWriteCEs"]}

    def probe_handles(self, index: int) -> tuple[int, int]:
        return PROBE_DEVICE_BASE + index, PROBE_SUBDEVICE_BASE + index

    def close(self) -> None:
        for index, fd in list(self.card_fds.items()):
            self.rm.shim.close(fd, label=f"close:card{index}")
        self.card_fds.clear()
