"""`rmpeer abi fitness-facts`: the perf/NVLink oracle of test_fitness_offline, read by the C
compiler from each tag of a clone.

A small made-up clone (our own header and export table, shaped like NVIDIA's: a nested
struct, an array sized by a macro, a control exported at one tag and not the other) runs
wherever git and a C compiler do; its expected offsets follow from the C layout rules, worked
out by hand below. With RMPEER_DRIVER_SRC naming a clone of open-gpu-kernel-modules (README,
"Tests"), the committed fixtures/abi/fitness-facts.json must come out byte for byte."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.abi.headers.fitnessfacts import EXPORTS, OUTPUT, default_tags
from rmpeer.abi.headers.probe import INCLUDE_ROOTS

pytestmark = [pytest.mark.offline,
              pytest.mark.skipif(not shutil.which(os.environ.get("CC", "cc")), reason="needs a C compiler"),
              pytest.mark.skipif(not shutil.which("git"), reason="needs git")]

TYPES = "typedef unsigned char NvU8; typedef unsigned int NvU32; typedef unsigned long long NvU64;\n"
HEADER = """#define DEMO_CTRL_CMD_GET (0x20800000 | 0x101)
#define DEMO_CTRL_CMD_SET 0x20800102
#define DEMO_MAX {max}
typedef struct {{ NvU8 len; NvU64 masks[2]; }} DEMO_MASK;
typedef struct {{
    NvU32 id;
    {extra}DEMO_MASK links;
    NvU8 flag;
    NvU32 values[DEMO_MAX];
}} DEMO_GET_PARAMS;
"""
ENTRY = """    {{  /*pFunc=*/ (void (*)(void)) {func},
        /*methodId=*/ {cmd:#x}u,
        /*func=*/ "{func}"
    }},
"""
NAMES = {"strip": "DEMO_",
         "structs": {"DEMO_GET_PARAMS": ["id", "links", "links.masks", "flag", "values", "gone"],
                     "DEMO_ABSENT_PARAMS": ["x"]},
         "constants": ["DEMO_MAX", "DEMO_ABSENT"],
         "controls": ["DEMO_CTRL_CMD_GET", "DEMO_CTRL_CMD_SET"]}
# 100.10.01: id@0, links (8-aligned, 24 bytes: len@0, masks@8) @8, flag@32, values u32[8] @36..68,
# size rounded to 8 -> 72; only GET exported. 100.20.01 adds a u64 after id and 16 values:
# links@16, flag@40, values@44..108 -> 112; both exported.
EXPECTED = {
    "100.10.01": {"constants": {"MAX": 8},
                  "controls": {"CTRL_CMD_GET": [0x20800101, True], "CTRL_CMD_SET": [0x20800102, False]},
                  "structs": {"GET_PARAMS": [72, {"id": 0, "links": 8, "links.masks": 16, "flag": 32, "values": 36}]}},
    "100.20.01": {"constants": {"MAX": 16},
                  "controls": {"CTRL_CMD_GET": [0x20800101, True], "CTRL_CMD_SET": [0x20800102, True]},
                  "structs": {"GET_PARAMS": [112, {"id": 0, "links": 16, "links.masks": 24, "flag": 40,
                                                   "values": 44}]}},
}


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


@pytest.fixture
def clone(tmp_path):
    repo = tmp_path / "ogkm"
    for inc in INCLUDE_ROOTS:
        (repo / inc).mkdir(parents=True)
        (repo / inc / ".keep").write_text("")
    (repo / EXPORTS).parent.mkdir(parents=True)
    (repo / INCLUDE_ROOTS[0] / "nvtypes.h").write_text(TYPES)
    git(repo, "init", "-q")
    for tag, max_, extra, exported in (("100.10.01", 8, "", {"demoGet": 0x20800101}),
                                       ("100.20.01", 16, "NvU64 extra; ",
                                        {"demoGet": 0x20800101, "demoSet": 0x20800102})):
        (repo / INCLUDE_ROOTS[0] / "demo.h").write_text(HEADER.format(max=max_, extra=extra))
        (repo / EXPORTS).write_text("".join(ENTRY.format(func=f, cmd=c) for f, c in exported.items()))
        (repo / "version.mk").write_text(f"NVIDIA_VERSION = {tag}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", tag)
        git(repo, "tag", tag)
    names = tmp_path / "names.yaml"
    names.write_text(yaml.safe_dump(NAMES))
    return repo, names


def rmpeer(*args, env=None):
    return subprocess.run([sys.executable, "-m", "rmpeer", "abi", "fitness-facts", *map(str, args)],
                          capture_output=True, text=True, env=env)


def test_each_tag_is_read_from_the_clone_by_the_compiler(tmp_path, clone):
    repo, names = clone
    out = tmp_path / "facts.json"
    done = rmpeer(repo, "--tags", "100.10.01", "100.20.01", "--names", names, "-o", out)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["tags"] == EXPECTED


def test_the_clone_may_come_from_rmpeer_driver_src(tmp_path, clone):
    repo, names = clone
    out = tmp_path / "facts.json"
    env = {**os.environ, "RMPEER_DRIVER_SRC": str(repo)}
    done = rmpeer("--tags", "100.10.01", "--names", names, "-o", out, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["tags"] == {"100.10.01": EXPECTED["100.10.01"]}


def test_without_sources_it_says_in_one_line_how_to_get_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RMPEER_DRIVER_SRC"}
    done = rmpeer("-o", tmp_path / "x.json", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "git clone https://github.com/NVIDIA/open-gpu-kernel-modules" in done.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    done = rmpeer(plain, "--tags", "100.10.01", "-o", tmp_path / "x.json", env=env)
    assert done.returncode == 2 and "not a clone" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_a_tag_the_clone_lacks_is_a_config_error(tmp_path, clone):
    repo, names = clone
    done = rmpeer(repo, "--tags", "100.30.01", "--names", names, "-o", tmp_path / "x.json")
    assert done.returncode == 2 and "no tag 100.30.01" in done.stderr and "Traceback" not in done.stderr


def test_the_default_tags_are_every_entry_and_each_branchs_first_and_last(tmp_path):
    doc = {"schema": 1, "ioctl_encoding": {"magic": 70, "nr_shift": 0, "type_shift": 8, "size_shift": 16,
                                           "dir_shift": 30, "dir_write": 1, "dir_read": 2},
           "max_params_size": 0x100000,
           "releases": [{"version": "100.10.01", "source": "made up"},
                        {"version": "100.15.01", "parent": "100.10.01", "source": "made up"},
                        {"version": "102.1.1", "parent": "100.15.01", "source": "made up"}]}
    path = tmp_path / "drivers.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    available = {"99.1.1", "100.9.5", "100.10.01", "100.12.3", "100.15.01", "100.99.1", "101.0.1",
                 "102.1.1", "102.3", "not-a-release"}
    assert default_tags(available, DriverMatrix(path)) == [
        "100.9.5", "100.10.01", "100.15.01", "100.99.1", "102.1.1", "102.3"]


def test_the_real_tags_give_the_committed_fixture_byte_for_byte(tmp_path):
    src = os.environ.get("RMPEER_DRIVER_SRC")
    if not src:
        pytest.skip("RMPEER_DRIVER_SRC is not set: git clone https://github.com/NVIDIA/open-gpu-kernel-modules "
                    f"/path/ogkm, then RMPEER_DRIVER_SRC=/path/ogkm pytest {Path(__file__).name}")
    committed = OUTPUT.read_bytes()
    tags = sorted(json.loads(committed)["tags"])   # the fixture's own tags: a newer clone adds later ones
    out = tmp_path / "facts.json"
    done = rmpeer(src, "--tags", *tags, "-o", out)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == committed


# -- input it cannot use: one line, exit 2 (a hostile-input hunt: each was exit 5) -----------

def _bare_tag(repo, tag):
    """A tag whose tree lacks the include folders the archive asks for."""
    shutil.rmtree(repo / INCLUDE_ROOTS[1])
    (repo / "version.mk").write_text(f"NVIDIA_VERSION = {tag}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", tag)
    git(repo, "tag", tag)


def _refusal(done):
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_a_tag_given_twice_is_refused(tmp_path, clone):
    repo, names = clone
    said = _refusal(rmpeer(repo, "--tags", "100.10.01", "100.10.01", "--names", names, "-o", tmp_path / "f.json"))
    assert "a tag is given twice (100.10.01)" in said


def test_a_tag_with_a_slash_in_its_name_is_read(tmp_path, clone):
    repo, names = clone
    git(repo, "tag", "rel/100.10.01", "100.10.01")
    done = rmpeer(repo, "--tags", "rel/100.10.01", "--names", names, "-o", tmp_path / "f.json")
    assert done.returncode == 0, done.stderr
    assert "rel/100.10.01" in json.loads((tmp_path / "f.json").read_text())["tags"]


def test_a_tag_that_lacks_the_headers_is_refused(tmp_path, clone):
    repo, names = clone
    _bare_tag(repo, "100.30.01")
    said = _refusal(rmpeer(repo, "--tags", "100.30.01", "--names", names, "-o", tmp_path / "f.json"))
    assert "git archive 100.30.01 failed" in said


def test_an_output_it_cannot_write_is_refused_before_the_work(tmp_path, clone):
    repo, names = clone
    (tmp_path / "file").write_text("")
    said = _refusal(rmpeer(repo, "--tags", "100.10.01", "--names", names, "-o", tmp_path / "file" / "f.json"))
    assert said.startswith("rmpeer: -o ") and "cannot write there" in said


def test_a_names_file_of_another_shape_is_refused(tmp_path, clone):
    repo, _ = clone
    (tmp_path / "names.yaml").write_text("structs: [1]\n")
    said = _refusal(rmpeer(repo, "--tags", "100.10.01", "--names", tmp_path / "names.yaml", "-o", tmp_path / "f.json"))
    assert "not a names file" in said
