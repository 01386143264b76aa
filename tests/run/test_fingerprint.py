"""The platform fingerprint, read from a fake /proc and /sys tree (tests/fake_host_tree.py)."""

from __future__ import annotations

import hashlib
import json
import os
import time

import pytest

from fake_host_tree import BRIDGE, CARDS, KERNEL, MODULE_BYTES, bridge_config, make_host, write
from rmpeer import __version__
from rmpeer.run.fingerprint import acs_control, platform_fingerprint, read_acs, read_kernel_module
from rmpeer.model.host import Card, HostFacts

pytestmark = pytest.mark.offline
MATRICES = "sha256:" + "ab" * 32


@pytest.fixture
def host(tmp_path):
    return make_host(tmp_path / "root")


def test_fingerprint_reads_what_the_host_shows(host, tmp_path):
    fp = platform_fingerprint(root=str(host), matrices=MATRICES, cache=tmp_path / "cache.json")
    assert fp["driver"] == "580.159.04" and fp["driver_flavour"] == "open"
    assert fp["kernel"] == KERNEL
    assert [(c["pci"], c["uuid"], c["vbios"]) for c in fp["cards"]] == [(p, u, v) for p, u, v in CARDS]
    assert fp["kernel_module"]["sha256"] == "sha256:" + hashlib.sha256(MODULE_BYTES).hexdigest()
    assert fp["kernel_module"]["file"].endswith("updates/dkms/nvidia.ko.zst")
    assert fp["kernel_module"]["srcversion"] == "0123456789ABCDEF0123456"
    assert fp["iommu"]["cmdline"] == {"intel_iommu": "on", "iommu": "pt"}
    assert fp["iommu"]["units"] == ["dmar0"]
    assert fp["iommu"]["groups"] == {CARDS[0][0]: "identity", CARDS[1][0]: "identity"}
    assert fp["acs"] == {CARDS[0][0]: {BRIDGE: "SrcValid ReqRedir CmpltRedir UpstreamFwd"},
                         CARDS[1][0]: "no bridge above the card (on a root bus)"}
    assert fp["matrices"] == MATRICES and fp["rmpeer"] == __version__
    assert "nvlinks" not in fp     # only RM knows them; the fast path has none


def test_nvlinks_are_keyed_by_the_uuid_rm_gave_each_card(host):
    facts = HostFacts("580.159.04", "open", "proc",
                      cards=[Card(0, 0, 6, CARDS[0][0], 0x2335, uuid=CARDS[0][1]),
                             Card(1, 1, 7, CARDS[1][0], 0x2335, uuid=CARDS[1][1])])
    links = {0: {"supported": True, "active": 18}, 1: {"supported": True, "active": 17}}
    fp = platform_fingerprint(facts, links=links, root=str(host), matrices=MATRICES)
    assert fp["nvlinks"] == {CARDS[0][1]: 18, CARDS[1][1]: 17}


@pytest.mark.parametrize("config, expected", [
    (bridge_config(), "SrcValid ReqRedir CmpltRedir UpstreamFwd"),
    (bridge_config(chain_first=True), "SrcValid ReqRedir CmpltRedir UpstreamFwd"),   # found along the chain
    (bridge_config(0), "ACS present, every control off"),
    (bytes(4096), "no ACS capability"),
    (bytes(64), "unreadable: config space is 64 bytes here (the extended capabilities need root to read)"),
])
def test_acs_state_of_the_bridge_above_a_card(tmp_path, config, expected):
    root = make_host(tmp_path / "root", bridge_cfg=config)
    assert read_acs(str(root), [{"pci": CARDS[0][0]}]) == {CARDS[0][0]: {BRIDGE: expected}}


def test_acs_walk_stops_on_a_looping_chain():
    from rmpeer.run.fingerprint import _pcie_facts

    config = bytearray(4096)
    config[0x100:0x104] = (0x0001 | 0x100 << 20).to_bytes(4, "little")   # points at itself
    assert acs_control(bytes(config), _pcie_facts()) == "no ACS capability"


def test_what_cannot_be_read_says_so(tmp_path):
    root = make_host(tmp_path / "root")
    (root / "proc/driver/nvidia/version").unlink()
    (root / f"lib/modules/{KERNEL}/modules.dep").unlink()
    (root / "sys/module/nvidia/srcversion").unlink()
    (root / "sys/bus/pci/devices" / CARDS[1][0]).unlink()
    fp = platform_fingerprint(root=str(root), matrices=MATRICES)
    assert fp["driver"].startswith("unreadable: ")
    assert fp["kernel_module"]["sha256"].startswith("none: no nvidia.ko")   # no file to hash: a fact, comparable
    assert fp["kernel_module"]["srcversion"].startswith("unreadable: ")
    assert fp["acs"][CARDS[1][0]] == "unreadable: not in /sys/bus/pci/devices"
    assert fp["iommu"]["groups"][CARDS[1][0]] == "unreadable: not in /sys/bus/pci/devices"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_module_file_is_named(host):
    module = host / f"lib/modules/{KERNEL}/updates/dkms/nvidia.ko.zst"
    module.chmod(0)
    try:
        got = read_kernel_module(str(host), KERNEL)["sha256"]
    finally:
        module.chmod(0o644)
    assert got.startswith("unreadable: Permission denied")


def test_a_replaced_module_file_gets_a_new_hash_despite_the_cache(host, tmp_path):
    cache = tmp_path / "cache.json"
    first = read_kernel_module(str(host), KERNEL, cache)["sha256"]
    assert cache.exists()
    time.sleep(0.01)
    write(host, f"/lib/modules/{KERNEL}/updates/dkms/nvidia.ko.zst", MODULE_BYTES + b"patched")
    second = read_kernel_module(str(host), KERNEL, cache)["sha256"]
    assert first != second == "sha256:" + hashlib.sha256(MODULE_BYTES + b"patched").hexdigest()


def test_a_module_rewritten_in_place_with_its_old_size_and_mtime_gets_a_new_hash(host, tmp_path):
    """The cache is keyed by inode, size, mtime and ctime: a user can set a file's mtime back
    (touch -d), never its ctime, so a same-size rewrite in place is hashed again."""
    module = host / f"lib/modules/{KERNEL}/updates/dkms/nvidia.ko.zst"
    cache = tmp_path / "cache.json"
    first = read_kernel_module(str(host), KERNEL, cache)["sha256"]
    st = os.stat(module)
    time.sleep(0.01)
    patched = MODULE_BYTES[:-7] + b"patched"
    with open(module, "r+b") as f:
        f.write(patched)
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(module).st_ino, os.stat(module).st_size) == (st.st_ino, st.st_size)
    second = read_kernel_module(str(host), KERNEL, cache)["sha256"]
    assert first != second == "sha256:" + hashlib.sha256(patched).hexdigest()


@pytest.mark.parametrize("plant", [lambda p: p.chmod(0o666), lambda p: os.chown(p, 1001, 1001)],
                         ids=["world-writable", "another-users"])
def test_a_hash_cache_another_user_could_write_is_not_believed(host, tmp_path, plant):
    """A cache file that names a forged hash for the module's very key, but that another user
    could have written (mode 0666, or uid 1001's): the module is hashed again."""
    cache = tmp_path / "cache.json"
    read_kernel_module(str(host), KERNEL, cache)
    cache.write_text(json.dumps({key: "sha256:forged" for key in json.loads(cache.read_text())}))
    plant(cache)
    got = read_kernel_module(str(host), KERNEL, cache)["sha256"]
    assert got == "sha256:" + hashlib.sha256(MODULE_BYTES).hexdigest()


def test_a_module_being_loaded_or_unloaded_is_no_load_to_match(host):
    """/sys/module/nvidia/initstate other than "live" (coming, going): the folder's inode names
    no load that will last, so the load reads as unreadable, which matches nothing."""
    from rmpeer.run.fingerprint import read_driver_load

    assert read_driver_load(str(host)).startswith("/sys/module/nvidia inode ")
    write(host, "/sys/module/nvidia/initstate", "going\n")
    assert read_driver_load(str(host)) == "unreadable: the nvidia module is going, not live"


def test_a_card_without_nvlink_is_said_so_in_the_fingerprint_not_counted_as_zero_links():
    """A link reading of a card RM says has no NVLink ({supported: False}) is "no NVLink", set
    apart from a card with NVLink and none active (0)."""
    from rmpeer.run.fingerprint import nvlinks_by_uuid

    links = {0: {"supported": False, "active": 0}, 1: {"supported": True, "active": 0}}
    assert nvlinks_by_uuid({0: "GPU-a", 1: "GPU-b"}, links) == {"GPU-a": "no NVLink", "GPU-b": 0}
