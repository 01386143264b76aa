"""`rmpeer` as a user meets it on bad input: a message and a documented exit code, never a
traceback."""

import errno
import os
import subprocess
import sys
import tempfile

import pytest

from rmpeer import paths as resources
from rmpeer.errors import AccessError, NoDeviceError

pytestmark = pytest.mark.offline


def rmpeer(*args, env=None):
    """The command as a user runs it: from a directory of its own, outside the checkout."""
    with tempfile.TemporaryDirectory(prefix="rmpeer-cli-") as cwd:
        done = subprocess.run([sys.executable, "-m", "rmpeer", *args], cwd=cwd, capture_output=True, text=True,
                              env=dict(os.environ, **(env or {})), timeout=120)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="this machine has an NVIDIA device")
def test_certify_without_a_gpu_says_so_and_exits_3():
    rc, out, err = rmpeer("certify")
    assert rc == 3
    assert "no NVIDIA device" in err and "Traceback" not in err + out


def test_help_documents_the_exit_codes():
    rc, out, _ = rmpeer("certify", "--help")
    assert rc == 0
    for line in ("0  CERTIFIED", "1  NOT CERTIFIED: a conformance check failed", "2  usage or configuration error",
                 "3  no access", "4  DEGRADED", "5  INCOMPLETE", "6  BUSY", "7  NOT IDLE"):
        assert line in out


def test_a_malformed_matrix_exits_2_naming_it(tmp_path):
    import shutil

    bad = tmp_path / "matrices"
    shutil.copytree(resources.matrices_dir(), bad)
    (bad / "layouts.yaml").write_text("layouts: {one: {per_card: 1, sessions: 2}}\nva: {}\nextent: {}\n")
    rc, out, err = rmpeer("plan", "0,1", env={"RMPEER_MATRICES": str(bad)})
    assert rc == 2 and "layouts.yaml" in err and "Traceback" not in err


def test_a_plan_it_cannot_express_exits_2():
    rc, _, err = rmpeer("plan", ",".join(["0", "1"] * 9))
    assert rc == 2 and "18 sessions" in err and "Traceback" not in err


def test_the_plan_command_prints_a_header_then_the_seed_order():
    rc, out, _ = rmpeer("plan", "0,1", "--extent", "2MiB")
    header, ops = out.split("\n\n", 1)
    assert rc == 0 and header.startswith("layout    0,1")
    assert "sessions  2: s0 on card 0, s1 on card 1" in header and "extent    2 MiB (0x200000)" in header
    first = ops.splitlines()[0]
    assert first.startswith("alloc:p2p") and "handle=0xb2000001" in first
    assert "P2P_ENABLE=NOSLI" in ops


def test_a_missing_transcript_exits_2():
    rc, _, err = rmpeer("certify", "--replay", "/nonexistent/transcript.jsonl.gz")
    assert rc == 2 and "recording /nonexistent/transcript.jsonl.gz cannot be replayed" in err and "Traceback" not in err


@pytest.mark.parametrize("code,exc", [(errno.EACCES, AccessError), (errno.ENOENT, NoDeviceError)])
def test_opening_the_device_maps_errors_to_exit_3(code, exc):
    from rmpeer.rm.client import open_device_node

    class Refusing:
        mode = "replay"   # skip the existence check: the node "exists" but refuses

        def open(self, path, label):
            raise OSError(code, os.strerror(code), path)

    with pytest.raises(exc) as err:
        open_device_node(Refusing(), "/dev/nvidiactl", label="open")
    assert err.value.exit_code == 3 and "/dev/nvidiactl" in str(err.value)


def test_show_prints_a_transcript_readably():
    one_gpu = [str(p) for p in sorted(resources.transcripts_dir().glob("*.jsonl*")) if "x1" in p.name]
    if not one_gpu:
        pytest.skip("no one-GPU transcript committed")
    rc, out, err = rmpeer("show", one_gpu[0])
    assert rc == 0, err
    assert "label: h200x1" in out and "card 0: NVIDIA H200" in out and "calls:" in out
    rc, out, _ = rmpeer("show", one_gpu[0], "--calls")
    assert "NVOS46_PARAMETERS" in out and "dmaOffset" in out and "DMA_OFFSET_FIXED=TRUE | PAGE_SIZE=HUGE" in out
