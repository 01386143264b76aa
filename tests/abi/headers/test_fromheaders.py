"""`rmpeer abi from-headers`: the C compiler reads a source tree; the entry holds only what
changed against the parent; --check compares drivers.yaml with the tree.

A small tree written here (our own made-up header, shaped like NVIDIA's: a DRF range, a
byte:mask cap, a struct with a nested struct and arrays) runs everywhere a C compiler does.
The real 580.65.06 and 590.44.01 tags must reproduce their drivers.yaml entries exactly. No
registry ships NVIDIA's headers and they are not committed, so that test reads a source tree
named by RMPEER_DRIVER_SRC (README, "Tests"): a clone of open-gpu-kernel-modules (each tag is
read with `git archive`, nothing is checked out), or a tree checked out at one tag (then only
that tag is tested). Without it the test skips, saying how to run it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.abi.headers.fromheaders import check, entry_for, normalise, render_entry, tree_abi
from rmpeer.cli.abi import from_headers
from rmpeer.abi.headers.probe import INCLUDE_ROOTS
from rmpeer.errors import ConfigError

pytestmark = [pytest.mark.offline,
              pytest.mark.skipif(not shutil.which(os.environ.get("CC", "cc")), reason="needs a C compiler")]
DRIVER_SRC_ENV = "RMPEER_DRIVER_SRC"
OGKM = "https://github.com/NVIDIA/open-gpu-kernel-modules"
REAL_TAGS = ("580.65.06", "590.44.01")

TYPES = """typedef unsigned char NvU8; typedef unsigned int NvU32; typedef int NvS32;
typedef unsigned long long NvU64;
"""
HEADER = """#define DEMO_ESC_OPEN 0x2b
#define DEMO_BASE 200
#define DEMO_ESC_INFO (DEMO_BASE + 1)
#define DEMO_CLASS 0x503b
#define DEMO_FLAGS_MODE 5:4
#define DEMO_FLAGS_MODE_OFF 0x0
#define DEMO_FLAGS_MODE_ON 0x1
#define DEMO_FLAGS_KEEP 0:0
#define DEMO_FLAGS_KEEP_TRUE 1
#define DEMO_CAP_FAST 1:0x04
#define DEMO_CAP_BIT 3:3
#define DEMO_COUNT {count}
typedef struct {{ NvU32 lo; NvU32 hi; }} DEMO_PAIR;
typedef struct {{
    NvU32 handle;
    {extra}NvU64 offset;
    DEMO_PAIR pair;
    NvS32 fd;
    char name[10];
    NvU32 list[DEMO_COUNT];
    DEMO_PAIR table[12];
}} DEMO_PARAMS;
"""
MATRIX_DOC = {
    "schema": 1,
    "ioctl_encoding": {"magic": 70, "nr_shift": 0, "type_shift": 8, "size_shift": 16, "dir_shift": 30,
                       "dir_write": 1, "dir_read": 2},
    "max_params_size": 0x100000,
    "releases": [{
        "version": "100.10.01", "source": "made up",
        "escapes": {"DEMO_ESC_OPEN": 0x2B, "DEMO_ESC_INFO": 201},
        "classes": {"DEMO_CLASS": 0x503B},
        "constants": {"DEMO_COUNT": 4, "DEMO_CAP_FAST": {"byte": 1, "mask": 4}, "DEMO_CAP_BIT": 8},
        "bitfields": {"DEMO_FLAGS": {"KEEP": {"bits": "0:0", "values": {"TRUE": 1}},
                                     "MODE": {"bits": "5:4", "values": {"OFF": 0, "ON": 1}}}},
        # C layout rules: u64 aligned to 8, char[10] then u32[4] aligned to 4, 12 pairs of 8 bytes
        "structs": {"DEMO_PARAMS": {"size": 152, "fields": {
            "handle": [0, "u32"], "offset": [8, "u64"], "pair.lo": [16, "u32"], "pair.hi": [20, "u32"],
            "fd": [24, "i32"], "name": [28, "char", 10], "list": [40, "u32", 4], "table": [56, "u8", 96]}}},
    }],
}
# A later entry that names the field 'flags', as drivers.yaml names every field from the
# release that added it on.
LATER = {"version": "100.15.01", "parent": "100.10.01", "source": "made up",
         "structs": {"DEMO_PARAMS": {"size": 176, "fields": {
             "handle": [0, "u32"], "flags": [4, "u32"], "offset": [16, "u64"], "pair.lo": [24, "u32"],
             "pair.hi": [28, "u32"], "fd": [32, "i32"], "name": [36, "char", 10], "list": [48, "u32", 8],
             "table": [80, "u8", 96]}}}}


def make_tree(root: Path, release: str, *, count=4, extra="") -> Path:
    for inc in INCLUDE_ROOTS:
        (root / inc).mkdir(parents=True, exist_ok=True)
    (root / INCLUDE_ROOTS[0] / "nvtypes.h").write_text(TYPES)
    (root / INCLUDE_ROOTS[0] / "demo.h").write_text(HEADER.format(count=count, extra=extra))
    (root / "version.mk").write_text(f"NVIDIA_VERSION = {release}\n")
    return root


@pytest.fixture
def matrix(tmp_path):
    path = tmp_path / "drivers.yaml"
    path.write_text(yaml.safe_dump(MATRIX_DOC, sort_keys=False))
    return DriverMatrix(path)


def test_the_compiler_reads_sizes_offsets_values_and_ranges(tmp_path, matrix):
    tree = tree_abi(make_tree(tmp_path / "src", "100.10.01"), matrix)
    assert tree["escapes"] == {"DEMO_ESC_OPEN": 0x2B, "DEMO_ESC_INFO": 201}
    assert tree["constants"] == {"DEMO_COUNT": 4, "DEMO_CAP_FAST": {"byte": 1, "mask": 4}, "DEMO_CAP_BIT": 8}
    assert tree["bitfields"]["DEMO_FLAGS"]["MODE"] == {"bits": "5:4", "values": {"OFF": 0, "ON": 1}}
    assert normalise("structs", tree["structs"]["DEMO_PARAMS"]) == normalise(
        "structs", matrix.merged("100.10.01")["structs"]["DEMO_PARAMS"])
    assert check(matrix, "100.10.01", tree) == []


def test_a_newer_tree_gives_an_entry_with_only_what_changed(tmp_path):
    doc = yaml.safe_load(yaml.safe_dump(MATRIX_DOC))
    doc["releases"].append(LATER)
    path = tmp_path / "drivers.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    matrix = DriverMatrix(path)
    tree = tree_abi(make_tree(tmp_path / "src", "100.12.01", count=8, extra="NvU32 flags; NvU32 pad; "), matrix)
    entry, gone = entry_for(matrix, "100.12.01", tree)
    assert entry["parent"] == "100.10.01" and gone == []
    assert set(entry) == {"version", "parent", "source", "constants", "structs"}
    assert entry["constants"] == {"DEMO_COUNT": 8}
    assert entry["structs"] == LATER["structs"]   # 'pad' is no name drivers.yaml knows: left out
    # The text it prints is drivers.yaml's form and reads back as the same entry.
    text = render_entry(entry, base=matrix.merged("100.10.01"))
    assert yaml.safe_load("releases:\n" + text)["releases"][0] == entry
    assert "+flags@4" in text and "sizeof 152->176" in text
    assert check(matrix, "100.12.01", tree)   # drivers.yaml resolves 100.12.01 to 100.10.01: it differs


def test_a_new_branch_gets_an_entry_even_when_nothing_changed(tmp_path, matrix):
    src = make_tree(tmp_path / "src", "101.1.1")
    lines = []
    assert from_headers(SimpleNamespace(src=str(src), release=None, check=False), out=lines.append, matrix=matrix) == 0
    entry = yaml.safe_load("releases:\n" + lines[-1])["releases"][0]
    assert entry == {"version": "101.1.1", "parent": "100.10.01", "source": "open-gpu-kernel-modules tag 101.1.1"}
    lines = []
    assert from_headers(SimpleNamespace(src=str(src), release="100.10.07", check=False), out=lines.append, matrix=matrix) == 0
    assert lines == ["# 100.10.07: nothing differs from 100.10.01: no entry needed"]


def test_a_name_the_tree_lacks_is_left_out_and_reported_gone(tmp_path, matrix):
    root = make_tree(tmp_path / "src", "100.30.01")
    header = root / INCLUDE_ROOTS[0] / "demo.h"
    header.write_text(header.read_text().replace("#define DEMO_CLASS 0x503b\n", ""))
    tree = tree_abi(root, matrix)
    _, gone = entry_for(matrix, "100.30.01", tree)
    assert "DEMO_CLASS" not in tree["classes"] and gone == ["classes.DEMO_CLASS"]
    assert "classes.DEMO_CLASS: in drivers.yaml (100.10.01), not in the headers" in check(matrix, "100.30.01", tree)


def test_a_folder_that_is_not_a_source_tree_is_a_config_error(tmp_path, matrix):
    with pytest.raises(ConfigError, match="not an open-gpu-kernel-modules source tree"):
        tree_abi(tmp_path, matrix)
    done = subprocess.run([sys.executable, "-m", "rmpeer", "abi", "from-headers", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr and "source tree" in done.stderr


def how_to_run(tag: str) -> str:
    return (f"needs NVIDIA's driver sources: git clone {OGKM} /path/ogkm (or check out tag {tag} there: "
            f"git -C /path/ogkm checkout {tag}), then {DRIVER_SRC_ENV}=/path/ogkm pytest {Path(__file__).name}")


def tree_at(tmp_path, tag: str) -> Path:
    """The headers of `tag`: from the clone's history (git archive) when it has the tag, else
    the tree itself when it is checked out at that tag; a skip saying how otherwise."""
    src = os.environ.get(DRIVER_SRC_ENV)
    if not src:
        pytest.skip(f"{DRIVER_SRC_ENV} is not set: {how_to_run(tag)}")
    root = Path(src)
    if not root.is_dir():
        pytest.fail(f"{DRIVER_SRC_ENV}={src} is not a folder")   # named, yet wrong: not a skip
    has_tag = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}"],
                             capture_output=True).returncode == 0
    if has_tag:
        dest = tmp_path / tag
        dest.mkdir()
        archive = subprocess.run(["git", "-C", str(root), "archive", tag, "version.mk", *INCLUDE_ROOTS],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return dest
    version = (root / "version.mk").read_text() if (root / "version.mk").is_file() else ""
    if f"NVIDIA_VERSION = {tag}" in version:
        return root
    pytest.skip(f"{DRIVER_SRC_ENV}={src} has no tag {tag} and is not checked out at it: {how_to_run(tag)}")


@pytest.mark.parametrize("tag", REAL_TAGS)
def test_the_real_tags_reproduce_their_entries(tmp_path, tag):
    src = tree_at(tmp_path, tag)
    matrix = DriverMatrix()
    tree = tree_abi(src, matrix)
    entry, gone = entry_for(matrix, tag, tree)
    existing = matrix.by_version[tag]
    assert gone == [] and entry["parent"] == existing["parent"]
    for section in ("escapes", "classes", "controls", "constants", "bitfields", "structs"):
        assert {k: normalise(section, v) for k, v in (entry.get(section) or {}).items()} == \
            {k: normalise(section, v) for k, v in (existing.get(section) or {}).items()}
    lines = []
    assert from_headers(SimpleNamespace(src=str(src), release=None, check=True), out=lines.append) == 0
