"""rmpeer.tables.load: a matrix file that YAML itself cannot turn into values is one
MatrixError; and the matrices folder's digest (every *.yaml in it, loaded or not, is in
the certificate's fingerprint). Something other than a regular file named *.yaml there was
read at the run's end: a FIFO blocked the run (and the signal handler writing its INCOMPLETE
outputs) past SIGTERM and its deadline, a folder or a link to nothing was an internal error
(exit 5), and a link to /dev/zero filled the memory. Each is now exit 2 before the run, one
line naming the file (a hostile-input hunt)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.errors import MatrixError
from rmpeer.paths import matrices_dir, transcripts_dir
from rmpeer.tables.load import load_yaml

pytestmark = pytest.mark.offline
ONE = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
PASSIVE = transcripts_dir() / "passive" / "h200x1-passive-20261201T222835Z.jsonl.gz"

PLANTS = {
    "fifo": lambda p: os.mkfifo(p),
    "folder": lambda p: p.mkdir(),
    "link-to-nothing": lambda p: p.symlink_to(p.parent / "nowhere"),
    "link-to-dev-zero": lambda p: p.symlink_to("/dev/zero"),
}
SAID = {"fifo": "not a regular file", "folder": "not a regular file", "link-to-nothing": "cannot be read",
        "link-to-dev-zero": "not a regular file"}


@pytest.mark.parametrize("tier", ["full", "passive"])
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_matrices_folder_holding_no_regular_file_is_refused_before_the_run(tmp_path, plant, tier):
    matrices = tmp_path / "matrices"
    shutil.copytree(matrices_dir(), matrices)
    PLANTS[plant](matrices / "zz-notes.yaml")       # a name no loader reads: the digest does
    recording = PASSIVE if tier == "passive" else ONE
    env = dict(os.environ, RMPEER_MATRICES=str(matrices), RMPEER_STATE_DIR=str(tmp_path / "state"))
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording), "--output",
                           str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout[-1500:] + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "zz-notes.yaml" in lines[0] and SAID[plant] in lines[0], done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_digest_counts_every_matrix_and_its_name():
    from rmpeer.tables.load import matrices_digest

    assert matrices_digest().startswith("sha256:") and len(matrices_digest()) == len("sha256:") + 64


def test_a_changed_matrix_changes_the_digest(tmp_path, monkeypatch):
    from rmpeer.tables import load

    copy = tmp_path / "m"
    shutil.copytree(matrices_dir(), copy)
    monkeypatch.setenv("RMPEER_MATRICES", str(copy))
    before = load.matrices_digest()
    with open(copy / "layouts.yaml", "a") as f:
        f.write("\n# a comment is a change\n")
    assert load.matrices_digest() != before
    (copy / "layouts.yaml").rename(copy / "layouts2.yaml")
    assert Path(copy / "layouts2.yaml").exists() and load.matrices_digest() != before


def test_an_integer_past_pythons_digit_limit_is_a_matrix_error_naming_the_file(tmp_path):
    """Python refuses to convert an integer of more than 4300 digits (a ValueError out of
    YAML's int constructor): the user reads which file, in one short line."""
    path = tmp_path / "layouts.yaml"
    path.write_text("va:\n  page_size: " + "9" * 5000 + "\n")
    with pytest.raises(MatrixError) as err:
        load_yaml(path)
    text = str(err.value)
    assert str(path) in text and "cannot be read as YAML" in text
    assert "\n" not in text and "9" * 61 not in text and len(text) < len(str(path)) + 200
