"""rmpeer.fleet.sweep's refusals and its job script, offline (the real sbatch runs in
tests/fleet/test_slurm.py). Each case failed before its fix (a hostile-input hunt)."""

import pytest

from rmpeer.errors import EXIT_CONFIG, ConfigError
from rmpeer.fleet.sweep import batch_script, submit

pytestmark = pytest.mark.offline


@pytest.mark.parametrize("options, says", [
    # a line break in --shared ended the #SBATCH --output line: the next line ran as the job
    ({"shared": "/tmp/v1\ntouch /tmp/PWNED\n#"}, "without line breaks or control characters"),
    ({"max_nodes": 0}, "--max-nodes 0: give at least 1"),        # was a ValueError (a range step of 0): exit 5
    ({"max_nodes": -1}, "--max-nodes -1: give at least 1"),      # was exit 0, nothing submitted
    ({"rmpeer": "'a"}, "--rmpeer \"'a\": not a command line"),     # was ValueError: exit 5
])
def test_a_sweep_it_cannot_submit_is_refused_before_anything_is_made(tmp_path, options, says):
    given = {"nodes": "node1", "tier": "passive", "shared": str(tmp_path / "v"), **options}
    with pytest.raises(ConfigError) as refused:
        submit(**given)
    assert refused.value.exit_code == EXIT_CONFIG and says in str(refused.value)
    assert not (tmp_path / "v").exists()


def test_the_job_script_names_no_path_in_a_directive():
    """The log's path goes on sbatch's command line: no folder name can end a directive."""
    script = batch_script(["n1", "n2"], "quick", "/shared/a b", ["rmpeer"], 30, "id")
    directives = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    assert directives and not [d for d in directives if "/shared" in d]
    assert "--shared '/shared/a b'" in script


@pytest.mark.parametrize("planted", ["fifo-at-record", "folder-at-record", "link-at-a-later-script"])
def test_a_name_planted_in_the_shared_folder_is_refused_before_any_job_is_submitted(tmp_path, monkeypatch, planted):
    """A FIFO at sweep.json or a link at sweep-2.sh was refused (exit 2) only after every job,
    or the chunks before it, had been submitted: nodes ran with no record for the collector
    to check their run id against. Fake sbatch and scontrol record what they were asked."""
    import os

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text('#!/bin/sh\necho "$3" | tr , "\\n"\n')
    (bin_ / "sbatch").write_text(f'#!/bin/sh\necho "$@" >>{tmp_path}/submitted\necho 7\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    shared = tmp_path / "v"
    shared.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    if planted == "fifo-at-record":
        os.mkfifo(shared / "sweep.json")
    elif planted == "folder-at-record":
        (shared / "sweep.json").mkdir()
    else:
        (shared / "sweep-2.sh").symlink_to(victim)
    with pytest.raises(ConfigError) as refused:
        submit(nodes="n1,n2,n3", tier="passive", shared=str(shared), max_nodes=1)
    assert refused.value.exit_code == EXIT_CONFIG and "refused" in str(refused.value)
    assert not (tmp_path / "submitted").exists() and victim.read_text() == "kept\n"
    assert sorted(p.name for p in shared.iterdir()) == [planted == "link-at-a-later-script" and "sweep-2.sh"
                                                         or "sweep.json"]
