"""The platform a certificate was checked against, as a dict two runs can compare.

Everything here is read from /proc and /sys (and the kernel module's file), never through
RM: `rmpeer certify --if-stale` computes it on its fresh path in well under half a second,
without opening a GPU. The one part only RM can tell, the active NVLinks per card, is added
by the caller that has a link reading (certify, the passive tier) and is compared only when
both sides have it.

Each reader takes `root` (the file system's root, "/" on a host) so that the tests build a
fake /proc and /sys under tmp_path. What cannot be read says "unreadable: <why>" instead of
being left out: a fingerprint that silently lacks a part would match a changed platform.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from rmpeer import __version__
from rmpeer.errors import ConfigError
from rmpeer.paths import matrices_dir
from rmpeer.rm.health import identity
from rmpeer.rm.host import read_proc_version, read_proc_gpus
from rmpeer.safewrite import read_own, make_folder, write_file
from rmpeer.tables.load import matrices_digest
from rmpeer.tables.pcie import load_pcie

FORMAT = "rmpeer-fingerprint/1"
MODULE_NAME = "nvidia"
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
IOMMU_ARGS = ("iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict")
HASH_CHUNK = 1 << 20


def _at(root: str, path: str) -> Path:
    return Path(root) / path.lstrip("/")


def _read(root: str, path: str) -> str:
    return _at(root, path).read_text(errors="replace").strip()


def _unreadable(exc: OSError) -> str:
    return f"unreadable: {exc.strerror or exc}" + (f" ({exc.filename})" if getattr(exc, "filename", None) else "")


def read_driver(root: str = "/") -> dict:
    """The driver version and flavour the kernel module states in /proc."""
    try:
        text = _read(root, "/proc/driver/nvidia/version")
    except OSError as exc:
        return {"version": _unreadable(exc), "flavour": "unknown"}
    version, flavour = read_proc_version(text=text)
    return {"version": version or "unreadable: no version in /proc/driver/nvidia/version", "flavour": flavour}


def read_cards(root: str = "/") -> list[dict]:
    """Each GPU's PCI address, UUID, VBIOS and model, as /proc/driver/nvidia/gpus lists them,
    in PCI order (the suite's card numbering)."""
    gpus = read_proc_gpus(str(_at(root, "/proc/driver/nvidia/gpus")))
    cards = [{"pci": g["bus"].lower(), "uuid": g["uuid"], "vbios": g.get("vbios", ""), "model": g["model"]}
             for g in gpus]
    return sorted(cards, key=lambda c: c["pci"])


def module_file(root: str = "/", release: str | None = None) -> str | None:
    """The nvidia.ko* file of the running kernel: modules.dep names it; on the host itself
    `modinfo -n` is asked when modules.dep is not there (NixOS keeps modules elsewhere)."""
    release = release or _read(root, "/proc/sys/kernel/osrelease")
    base = _at(root, f"/lib/modules/{release}")
    try:
        for line in (base / "modules.dep").read_text().splitlines():
            path = line.split(":", 1)[0]
            if re.fullmatch(rf"{MODULE_NAME}\.ko(\.(xz|zst|gz))?", os.path.basename(path)):
                return str(base / path) if not path.startswith("/") else str(_at(root, path))
    except FileNotFoundError:
        pass          # no modules.dep: ask modinfo (any other error is an unread value: raised)
    modinfo = shutil.which("modinfo") if root == "/" else None
    if modinfo:
        try:
            done = subprocess.run([modinfo, "-n", MODULE_NAME], capture_output=True, text=True, timeout=5)
            if done.returncode == 0 and done.stdout.strip().startswith("/"):
                return done.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return None


def _sha256(path: str, cache: Path | None) -> str:
    """The file's sha256, remembered in `cache` under its inode, size and change times: the
    module is tens of MB, and a replaced file gets a new ctime (which no user can set)."""
    st = os.stat(path)
    key = f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    known = {}
    if cache is not None:
        try:     # a cache another user could write would let them name the module's hash
            known = json.loads(read_own(cache))
        except (OSError, ValueError, ConfigError):    # absent, garbage or untrusted: hashed again
            known = {}
        if isinstance(known, dict) and isinstance(known.get(key), str):
            return known[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(HASH_CHUNK), b""):
            h.update(chunk)
    digest = "sha256:" + h.hexdigest()
    if cache is not None:
        try:
            make_folder(cache.parent, mode=0o700)
            write_file(cache, json.dumps({key: digest}), mode=0o600)
        except (OSError, ConfigError):
            pass      # a cache that cannot be written costs time, never correctness
    return digest


def read_kernel_module(root: str = "/", release: str | None = None, cache: Path | None = None) -> dict:
    """{file, sha256, srcversion}: the module's build (srcversion, from /sys/module) and the
    file that is loaded at the next boot (its hash)."""
    out = {}
    try:
        out["srcversion"] = _read(root, f"/sys/module/{MODULE_NAME}/srcversion")
    except OSError as exc:
        out["srcversion"] = _unreadable(exc)
    try:
        path = module_file(root, release)
    except OSError as exc:
        path, out["sha256"] = None, _unreadable(exc)
    if path is None:     # a fact, not a failed read: there is no file to hash (the boot id and the
        # module's load still tell a changed module: it can change only by a reload or a reboot)
        out.setdefault("sha256", f"none: no {MODULE_NAME}.ko in modules.dep and modinfo -n found none")
        return out
    out["file"] = path
    try:
        out["sha256"] = _sha256(path, cache)
    except OSError as exc:
        out["sha256"] = _unreadable(exc)
    return out


def read_iommu(root: str = "/", cards: list[dict] = ()) -> dict:
    """The IOMMU the kernel was asked for and has: command-line switches, the units in
    /sys/class/iommu, and the domain type of each card's IOMMU group."""
    out: dict = {}
    try:
        words = _read(root, "/proc/cmdline").split()
        out["cmdline"] = {k: v for k, _, v in (w.partition("=") for w in words) if k in IOMMU_ARGS}
    except OSError as exc:
        out["cmdline"] = _unreadable(exc)
    try:
        out["units"] = sorted(os.listdir(_at(root, "/sys/class/iommu")))
    except FileNotFoundError:
        out["units"] = []
    except OSError as exc:
        out["units"] = _unreadable(exc)
    groups = {}
    for card in cards:
        dev = _at(root, f"/sys/bus/pci/devices/{card['pci']}")
        try:
            groups[card["pci"]] = _read(root, f"/sys/bus/pci/devices/{card['pci']}/iommu_group/type")
        except FileNotFoundError:
            groups[card["pci"]] = "no IOMMU group" if dev.exists() else "unreadable: not in /sys/bus/pci/devices"
        except OSError as exc:
            groups[card["pci"]] = _unreadable(exc)
    out["groups"] = groups
    return out


def _pcie_facts() -> dict:
    return load_pcie(matrices_dir() / "pcie.yaml")


def acs_control(config: bytes, facts: dict) -> str:
    """The ACS Control bits set, by name, from a device's config space; or why there are none."""
    ext, acs = facts["extended_capabilities"], facts["acs"]
    if len(config) < ext["start"] + ext["header_bytes"]:
        return (f"unreadable: config space is {len(config)} bytes here (the extended capabilities need "
                "root to read)")
    at, hops = ext["start"], 0
    while at and hops < ext["max_hops"]:
        header = int.from_bytes(config[at:at + ext["header_bytes"]], "little")
        if header in (0, (1 << 8 * ext["header_bytes"]) - 1):     # none, or no device answering
            break
        if header & ((1 << ext["id_bits"]) - 1) == acs["capability_id"]:
            off = at + acs["control_offset"]
            ctrl = int.from_bytes(config[off:off + acs["control_bytes"]], "little")
            on = [name for name, bit in acs["control_bits"].items() if ctrl & bit]
            return " ".join(on) if on else "ACS present, every control off"
        at, hops = header >> ext["next_shift"] & ext["next_mask"], hops + 1
    return "no ACS capability"


def upstream_bridges(root: str, pci: str) -> list[str]:
    """The PCI addresses above a device, nearest first, from its sysfs path."""
    try:
        real = os.path.realpath(_at(root, f"/sys/bus/pci/devices/{pci}"))
    except OSError:
        return []
    parts = [p for p in Path(real).parts if _BDF.match(p)]
    return list(reversed(parts[:-1])) if parts and parts[-1] == pci else []


def read_acs(root: str = "/", cards: list[dict] = ()) -> dict:
    """{card pci: {bridge pci: ACS control bits | "no ACS capability" | "unreadable: ..."}}."""
    facts = _pcie_facts()
    out = {}
    for card in cards:
        if not _at(root, f"/sys/bus/pci/devices/{card['pci']}").exists():
            out[card["pci"]] = "unreadable: not in /sys/bus/pci/devices"
            continue
        path = {}
        for bridge in upstream_bridges(root, card["pci"]):
            try:
                path[bridge] = acs_control(_at(root, f"/sys/bus/pci/devices/{bridge}/config").read_bytes(), facts)
            except OSError as exc:
                path[bridge] = _unreadable(exc)
        out[card["pci"]] = path or "no bridge above the card (on a root bus)"
    return out


def nvlinks_by_uuid(uuids: dict, links: dict) -> dict:
    """{uuid: active links} from a link reading ({card index: link_health or {supported, active}})
    and the UUID of each card index (RM's numbering: HostFacts.cards)."""
    out = {}
    for index, health in (links or {}).items():
        uuid = uuids.get(int(index))
        if uuid and isinstance(health, dict):
            out[uuid] = health.get("active") if health.get("supported", True) else "no NVLink"
    return out


def read_boot(root: str = "/") -> str:
    """This boot's id (/proc/sys/kernel/random/boot_id: a random UUID the kernel draws at
    every boot): a certificate of an earlier boot does not hold."""
    try:
        return _read(root, "/proc/sys/kernel/random/boot_id")
    except OSError as exc:
        return _unreadable(exc)


def read_driver_load(root: str = "/") -> str:
    """Which load of the nvidia module this is: the inode number of /sys/module/nvidia.
    sysfs (kernfs) numbers every node it creates from a cyclic allocator (__kernfs_new_node in
    fs/kernfs/dir.c: idr_alloc_cyclic, xa_alloc_cyclic in newer kernels), so the folder a module
    load creates gets a number no earlier load of this boot had (/proc's numbers are reused,
    /proc/modules' load address may be too, and is hidden from other users); an unload and reload (the driver replaced or reset without a reboot) gives
    a new one. srcversion and the module file's hash say which build; this says which load.
    Compared together with the boot id (numbers start again at every boot)."""
    try:
        st = os.stat(_at(root, f"/sys/module/{MODULE_NAME}"))
    except OSError as exc:
        return _unreadable(exc)
    try:
        state = _read(root, f"/sys/module/{MODULE_NAME}/initstate")
    except OSError as exc:
        return _unreadable(exc)
    if state != "live":
        return f"unreadable: the {MODULE_NAME} module is {state}, not live"
    return f"/sys/module/{MODULE_NAME} inode {st.st_ino}"


def platform_fingerprint(facts=None, *, links: dict | None = None, root: str = "/", cache: Path | None = None,
                         matrices: str | None = None) -> dict:
    """This host's fingerprint. `links` (a link reading through RM, {card index: health}) with
    `facts` (HostFacts: which UUID each index is) adds the active NVLinks per card; without
    them the key is absent and staleness does not compare it."""
    if matrices is None:
        matrices = matrices_digest()
    try:
        kernel = _read(root, "/proc/sys/kernel/osrelease")
    except OSError as exc:
        kernel = _unreadable(exc)
    cards = read_cards(root)
    driver = read_driver(root)
    fp = {"format": FORMAT, "driver": driver["version"], "driver_flavour": driver["flavour"],
          "kernel_module": read_kernel_module(root, None if kernel.startswith("unreadable") else kernel, cache),
          "kernel": kernel, "cards": cards, "iommu": read_iommu(root, cards), "acs": read_acs(root, cards),
          "matrices": matrices, "rmpeer": __version__, "boot": read_boot(root), "driver_load": read_driver_load(root)}
    if links is not None and facts is not None:
        fp["nvlinks"] = nvlinks_by_uuid({c.index: c.uuid for c in facts.cards}, links)
    if facts is not None:
        fp.update(_health(facts))
    return fp


def _health(facts) -> dict:
    """{"health": RM's platform facts (rm.health.identity)} where RM gave any; like the NVLinks,
    compared only when both fingerprints have them (the fresh path reads no RM)."""
    found = identity(facts)
    return {"health": found} if found else {}


def recorded_fingerprint(facts, *, links: dict | None = None, header: dict | None = None,
                         matrices: str | None = None) -> dict:
    """The fingerprint of a recorded host, from what the recording holds (RM's facts, the
    header's kernel); what a recording does not keep says so. A replay's certificate carries
    it to show what was replayed; it never holds for a live host (staleness refuses replays)."""
    if matrices is None:
        matrices = matrices_digest()
    missing = "not recorded (a replay)"
    fp = {"format": FORMAT, "source": "recording", "driver": facts.driver_version, "driver_flavour": facts.flavour,
          "kernel_module": missing, "kernel": (header or {}).get("kernel", missing),
          "cards": sorted(({"pci": c.pci.lower(), "uuid": c.uuid, "vbios": c.vbios, "model": c.name}
                           for c in facts.cards), key=lambda c: c["pci"]),
          "iommu": missing, "acs": missing, "matrices": matrices, "rmpeer": __version__,
          "boot": missing, "driver_load": missing}
    if links is not None:
        fp["nvlinks"] = nvlinks_by_uuid({c.index: c.uuid for c in facts.cards}, links)
    fp.update(_health(facts))
    return fp
