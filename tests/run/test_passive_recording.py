"""A passive run's own recording (fixtures/transcripts/passive/: `rmpeer certify --tier
passive --record` on 1 x H200, beside another process's idle CUDA context, pid 682 on card 0)
replayed by `rmpeer certify --replay`. Its header says extent 0 and no layout, as the passive
recorder writes it; the replay covers the passive tier whatever tier was asked, gives the live
run's verdict and counts (CERTIFIED, 7 passed: docs/evidence/h200x1-20261201T2228Z-observed,
summary line passive-beside-record) and lists the process the run saw. Before, the replay
refused the header (extent 0 "not a size in bytes"), then found "no layout to check"."""

import json
import os
import subprocess
import sys

import pytest

from rmpeer.paths import transcripts_dir

pytestmark = pytest.mark.offline
PASSIVE = sorted((transcripts_dir() / "passive").glob("*.jsonl.gz"))[0]
HOLDER = 682         # the recorded process: the evidence's "idle CUDA context held by pid 682"


def certify(tmp_path, *args, recording=PASSIVE):
    env = dict(os.environ, NO_COLOR="1", RMPEER_KEY=str(tmp_path / "host.key"), RMPEER_STATE_DIR=str(tmp_path / "s"))
    return subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording),
                           "--output", str(tmp_path / "out"), *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("tier", [[], ["--tier", "passive"], ["--tier", "full"]], ids=["default", "passive", "full"])
def test_a_passive_recording_replays_as_the_passive_run_it_was(tmp_path, tier):
    done = certify(tmp_path, *tier)
    assert done.returncode == 0, done.stdout + done.stderr
    cert = json.loads((tmp_path / "out" / "replay-certificate.json").read_text())
    assert (cert["tier"], cert["verdict"], cert["counts"]) == ("passive", "CERTIFIED", {"passed": 7})
    assert cert["target"]["kind"] == "replay" and not cert["layouts"]
    seen = cert["gpu_processes"]["now"]["processes"]
    assert [(p["pid"], p["cards"]) for p in seen] == [(HOLDER, [0])]
    # the terminal says the tier it earned when a deeper one was asked (issue 47, row 13)
    asked = tier[1] if tier else "full"
    said = [line for line in done.stdout.splitlines() if line.startswith("tier: ")]
    assert said == ([] if asked == "passive" else [line for line in said if line.startswith(f"tier: passive, not {asked}:")])
    assert bool(said) == (asked != "passive"), done.stdout


@pytest.mark.parametrize("option", [["--layout", "one-per-card"], ["--require-idle"]], ids=["layout", "require-idle"])
def test_what_the_recorded_passive_run_did_not_do_is_refused(tmp_path, option):
    done = certify(tmp_path, *option)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert option[0] in done.stderr and not (tmp_path / "out").exists()


def derived(tmp_path, name, change):
    """The passive recording with one line changed by `change(lines)`, written under tmp_path."""
    import gzip

    lines = [json.loads(line) for line in gzip.open(PASSIVE, "rt")]
    change(lines)
    path = tmp_path / f"{PASSIVE.name.split('.')[0]}-{name}.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(d) + "\n" for d in lines).encode()))
    return path


def _xid_text(text):
    def change(lines):
        xids = next(d for d in lines if d.get("label") == "host:xids")["extra"]["value"]
        xids["xids"].append({"pci": "0000:00:06", "xid": 79, "text": text, "seq": 1})
    return change


def test_an_xid_text_of_a_recording_reaches_no_terminal_raw(tmp_path):
    """An Xid line a recording holds (the kernel log's words, or anyone's who wrote the file)
    with a screen clear, a title escape, DEL and an 8-bit CSI: the verdict line quotes it
    escaped (it sent it raw), and the --json line is ASCII (it held U+009B and DEL raw)."""
    path = derived(tmp_path, "xid-escapes", _xid_text("\x1b[2J\x1b]0;pwned\x07\u009b2J\x7f"))
    done = certify(tmp_path, "--json", recording=path)
    assert done.returncode == 4, done.stderr      # an Xid 79 since the last run: DEGRADED
    said = done.stderr
    verdict = next(line for line in said.splitlines() if line.startswith("REPLAY of "))
    assert "Xid 79" in verdict and "\\x1b[2J" in verdict
    assert not [c for c in said if not c.isprintable() and c not in "\n"], said
    assert done.stdout.isascii() and json.loads(done.stdout)["verdict"] == "DEGRADED"


def test_a_header_tier_the_recorder_never_writes_is_refused(tmp_path):
    def change(lines):
        lines[0]["header"]["run"]["tier"] = "\x1b[31mgold"
    done = certify(tmp_path, recording=derived(tmp_path, "tier", change))
    assert done.returncode == 2 and "its header's run tier is" in done.stderr, done.stderr
