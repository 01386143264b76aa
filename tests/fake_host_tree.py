"""A fake root file system (/proc, /sys, /lib/modules) of a 2-card NVIDIA host, for the
fingerprint and staleness self-tests. Values are written here as a host shows them (the
PCIe ACS bytes from the PCI Express Base Specification, not from rmpeer's matrices)."""

from __future__ import annotations

import os
from pathlib import Path

KERNEL = "6.18.44-test"
DRIVER_LINE = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  "
               "(builder@host)  Mon Nov  2 00:00:00 UTC 2026\nGCC version:  gcc version 14.2.0\n")
CARDS = [("0000:00:06.0", "GPU-58ff84fd-2665-94a9-d339-b955185b0400", "96.00.AF.00.01"),
         ("0000:00:07.0", "GPU-c2837b82-9cfc-2d58-f6a0-53aa0b66081c", "96.00.AF.00.01")]
BRIDGE = "0000:00:01.0"
MODULE_BYTES = b"\x7fELF fake nvidia.ko " * 1000
# ACS extended capability (PCIe Base Spec 7.7.8): header id 0x000D version 1 next 0, then the
# capability register (16 bits) and the control register (16 bits) at +6.
ACS_CONTROL = 0x001D        # SrcValid, ReqRedir, CmpltRedir, UpstreamFwd


def ext_cap(cap_id: int, next_offset: int, body: bytes) -> bytes:
    return (cap_id | 1 << 16 | next_offset << 20).to_bytes(4, "little") + body


def bridge_config(control: int = ACS_CONTROL, *, chain_first: bool = False) -> bytes:
    """4096 bytes of config space; ACS at 0x100, or behind another capability at 0x100."""
    config = bytearray(4096)
    acs = ext_cap(0x000D, 0, (0x5F).to_bytes(2, "little") + control.to_bytes(2, "little"))
    if chain_first:
        config[0x100:0x104] = ext_cap(0x0001, 0x148, b"")   # AER first, pointing at ACS
        config[0x148:0x148 + len(acs)] = acs
    else:
        config[0x100:0x100 + len(acs)] = acs
    return bytes(config)


BOOT_ID = "6f1c2e0a-4b7d-4e19-9a53-2f8d1c0b7e44"   # any UUID: a boot's id, drawn by the kernel


def reload_module(root: Path) -> None:
    """What an unload and reload of the nvidia module leaves: a new /sys/module/nvidia folder
    (a new inode), the same files in it."""
    module = root / "sys/module/nvidia"
    new = root / "sys/module/.nvidia-new"        # made while the old one exists: another inode
    new.mkdir()
    for p in module.iterdir():
        p.rename(new / p.name)
    module.rmdir()
    new.rename(module)


def write(root: Path, path: str, text) -> Path:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
    return p


def make_host(root: Path, *, version: str = "580.159.04", cards=CARDS, bridge_cfg: bytes | None = None,
              cmdline: str = "BOOT_IMAGE=/vmlinuz root=/dev/vda1 intel_iommu=on iommu=pt quiet") -> Path:
    write(root, "/proc/driver/nvidia/version", DRIVER_LINE.format(version=version))
    write(root, "/proc/sys/kernel/osrelease", KERNEL + "\n")
    write(root, "/proc/cmdline", cmdline + "\n")
    write(root, "/sys/module/nvidia/srcversion", "0123456789ABCDEF0123456\n")
    write(root, "/sys/module/nvidia/initstate", "live\n")
    write(root, "/proc/sys/kernel/random/boot_id", BOOT_ID + "\n")
    write(root, f"/lib/modules/{KERNEL}/modules.dep",
          "kernel/drivers/net/e1000.ko.zst:\nupdates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\n"
          "updates/dkms/nvidia.ko.zst:\n")
    write(root, f"/lib/modules/{KERNEL}/updates/dkms/nvidia.ko.zst", MODULE_BYTES)
    (root / "sys/class/iommu/dmar0").mkdir(parents=True, exist_ok=True)
    devices = root / "sys/devices/pci0000:00"
    write(root, f"/sys/devices/pci0000:00/{BRIDGE}/config", bridge_cfg if bridge_cfg is not None else bridge_config())
    links = root / "sys/bus/pci/devices"
    links.mkdir(parents=True, exist_ok=True)
    os.symlink(devices / BRIDGE, links / BRIDGE)
    for i, (pci, uuid, vbios) in enumerate(cards):
        write(root, f"/proc/driver/nvidia/gpus/{pci}/information",
              f"Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t {uuid}\nVideo BIOS: \t {vbios}\n"
              f"Bus Type: \t PCIe\nBus Location: \t {pci}\nDevice Minor: \t 0\nGPU Excluded:\t No\n")
        card_dir = devices / BRIDGE / pci if i == 0 else devices / pci   # card 0 behind a bridge
        write(root, str(card_dir.relative_to(root)) + "/config", bytes(64))
        write(root, str(card_dir.relative_to(root)) + "/iommu_group/type", "identity\n")
        os.symlink(card_dir, links / pci)
    return root
