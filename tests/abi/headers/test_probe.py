"""The header probe reads enum constants too: some RM values the health facts decode are
enumerators, not macros (NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS_*, NV2080_CTRL_GPU_RECOVERY_ACTION_*).

A made-up header that declares its values only in a typedef enum, in a file no macro of
drivers.yaml leads to: the probe must find that header and let the compiler evaluate them."""

import os
import shutil

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.abi.headers.fromheaders import tree_abi
from rmpeer.abi.headers.probe import INCLUDE_ROOTS

pytestmark = [pytest.mark.offline,
              pytest.mark.skipif(not shutil.which(os.environ.get("CC", "cc")), reason="needs a C compiler")]

ENUM_HEADER = """typedef enum DEMO_STATE {
    DEMO_STATE_SKIP = 1,
    DEMO_STATE_READY = 0x4, // a comment after the value
    DEMO_STATE_LAST = DEMO_STATE_READY + 3,
} DEMO_STATE;
typedef struct DEMO_STATE_PARAMS { DEMO_STATE state; } DEMO_STATE_PARAMS;
"""
DOC = {"schema": 1,
       "ioctl_encoding": {"magic": 70, "nr_shift": 0, "type_shift": 8, "size_shift": 16, "dir_shift": 30,
                          "dir_write": 1, "dir_read": 2},
       "max_params_size": 0x100000,
       "releases": [{"version": "100.10.01", "source": "made up",
                     # deliberately wrong values: the tree's are what the compiler says
                     "constants": {"DEMO_STATE_SKIP": 0, "DEMO_STATE_READY": 0, "DEMO_STATE_LAST": 0,
                                   "DEMO_STATE_MISSING": 9},
                     "structs": {"DEMO_STATE_PARAMS": {"size": 4, "fields": {"state": [0, "u32"]}}}}]}


def test_enumerators_are_measured_and_a_missing_one_left_out(tmp_path):
    src = tmp_path / "src"
    for inc in INCLUDE_ROOTS:
        (src / inc).mkdir(parents=True)
    (src / INCLUDE_ROOTS[0] / "nvtypes.h").write_text("typedef unsigned int NvU32;\n")
    (src / INCLUDE_ROOTS[0] / "ctrl").mkdir()
    (src / INCLUDE_ROOTS[0] / "ctrl" / "demostate.h").write_text(ENUM_HEADER)
    (src / "version.mk").write_text("NVIDIA_VERSION = 100.10.01\n")
    path = tmp_path / "drivers.yaml"
    path.write_text(yaml.safe_dump(DOC, sort_keys=False))
    tree = tree_abi(src, DriverMatrix(path))
    assert tree["constants"] == {"DEMO_STATE_SKIP": 1, "DEMO_STATE_READY": 4, "DEMO_STATE_LAST": 7}
    assert tree["structs"]["DEMO_STATE_PARAMS"]["size"] == 4


# -- a source tree or a compiler it cannot use (a hostile-input hunt: each was exit 5 or a hang) --

def _minimal_tree(root):
    """version.mk, the three include folders and an empty nvtypes.h: a tree that runs."""
    for r in INCLUDE_ROOTS:
        (root / r).mkdir(parents=True)
    (root / "version.mk").write_text("NVIDIA_VERSION = 580.65.06\n")
    (root / INCLUDE_ROOTS[0] / "nvtypes.h").write_text("")
    return root


def _from_headers(src, **env):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "rmpeer", "abi", "from-headers", str(src)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **env})


@pytest.mark.parametrize("odd", ["folder", "broken-link", "fifo"])
def test_a_header_name_that_is_no_header_is_passed_over(tmp_path, odd):
    src = _minimal_tree(tmp_path / "src")
    path = src / INCLUDE_ROOTS[1] / "odd.h"
    {"folder": path.mkdir, "broken-link": lambda: path.symlink_to("/nonexistent"), "fifo": lambda: os.mkfifo(path)}[odd]()
    done = _from_headers(src)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("cc, says", [("/nonexistent/cc", "/nonexistent/cc: cannot run it"),
                                      ("no-such-wrapper gcc", "no-such-wrapper: cannot run it"), ("'a", "not a command")])
def test_a_compiler_it_cannot_run_is_one_line(tmp_path, cc, says):
    done = _from_headers(_minimal_tree(tmp_path / "src"), CC=cc)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and says in lines[0], done.stderr
