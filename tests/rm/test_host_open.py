"""A card's device node that this user may not open (a container allowed nvidiactl and not
/dev/nvidia0) is exit 3 naming the node, as nvidiactl's own refusal is, never an internal
error. Shown on a recording derived from a committed one (fixtures/transcripts, the first
1 x H200 one) with one reply field changed: the open of card 0 answered errno 13 (EACCES)."""

import errno
import gzip
import json
import os
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
ONE = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[0]


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM])
def test_a_card_node_this_user_may_not_open_is_exit_3(tmp_path, code):
    lines = [json.loads(line) for line in gzip.decompress(ONE.read_bytes()).decode().splitlines()]
    opened = [line for line in lines if line.get("label") == "open:card0"]
    assert opened, "the recording opens card 0"
    opened[0]["errno"], opened[0]["result"] = code, -1
    derived = tmp_path / "card0-eacces.jsonl.gz"
    derived.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(derived), "--output",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, NO_COLOR="1"))
    assert done.returncode == 3, done.stdout[-800:] + done.stderr
    assert "/dev/nvidia0: permission denied" in done.stderr and "internal error" not in done.stderr
