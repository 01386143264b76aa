"""Options a typo or a hostile caller gives (issue 47, rows 4, 7, 8), as a table: the command,
its exit code, the one line it says, and that nothing is left on disk. Each row failed before
its fix: ',,' for --cards-env opened every card, --time 0 was written as Slurm's 'no limit',
--valid-for 0.0000001s held a certificate 24 hours."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.offline

ROWS = [
    (["certify", "--cards-env", ",,"], "names no variable"),
    (["certify", "--cards-env", " "], "names no variable"),
    (["certify", "--cards-env", "A\nB"], "is none of"),
    (["certify", "--valid-for", "0.0000001s"], "at least 1 minute"),
    (["certify", "--valid-for", "30s"], "at least 1 minute"),
    (["fleet", "sweep", "--nodes", "n1", "--shared", "{tmp}/shared", "--time", "0"], "at least 1 minute"),
    (["fleet", "sweep", "--nodes", "n1", "--shared", "{tmp}/shared", "--time", "-5"], "at least 1 minute"),
    (["fleet", "collect", "{tmp}/shared", "--time", "0"], "at least 1 minute"),
    # row 13: scontrol's four lines were the error, and the --shared folder was left behind
    (["fleet", "sweep", "--nodes", "n[1-", "--shared", "{tmp}/shared"], "scontrol could not expand it"),
]


@pytest.mark.parametrize("argv, says", ROWS, ids=[" ".join(a).replace("\n", "\\n") for a, _ in ROWS])
def test_a_bad_option_is_exit_2_in_one_line_and_leaves_nothing(tmp_path, argv, says):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    done = subprocess.run([sys.executable, "-m", "rmpeer", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, NO_COLOR="1"))
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith(("usage:", " "))]
    assert len(errors) == 1 and says in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
