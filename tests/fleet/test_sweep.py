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
