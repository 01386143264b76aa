"""Each health branch on replay: a real recording with one reply field of one health call
changed (tools/derive_health_fixtures.py, whose BRANCHES fixtures/transcripts/README.md lists),
derived here into a temporary folder; a passive replay of each gives the verdict docs/health.md
gives.

The derivation itself is checked here on a committed real recording: one field's bytes
change, every other byte of every line stays as RM wrote it."""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.run.execute import run_passive
from rmpeer.paths import transcripts_dir
from rmpeer.run.targets import replay_target

pytestmark = pytest.mark.offline
REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("derive_health_fixtures", REPO / "tools" / "derive_health_fixtures.py")
derive_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive_tool)
HOW = ("no real recording with rmpeer's health calls in fixtures/transcripts/: record one with "
       "tools/evidence/health.sh and commit it there")
# what the verdict line says for each severity row (docs/health.md)
FRAGMENT = {"remap-failure": "a row remapping failed", "remap-pending": "a row remap is pending",
            "reset-required": "needs a reset", "drain-recommended": "drain and reset",
            "recovery-drain-p2p": "DRAIN_P2P", "recovery-node-reboot": "NODE_REBOOT",
            "recovery-gpu-reset": "GPU_RESET", "ecc-uncorrectable": "uncorrectable errors",
            "ecc-fatal-poison": "fatal poison", "pcie-x8": "x8: the link trained below its width",
            "mig-enabled": "MIG is ENABLED", "fabric-uninitialized": "start nvidia-fabricmanager",
            "fabric-probe-not-started": "probe NOT_STARTED", "cc-on": "Confidential Computing",
            "remap-not-supported": None}


@pytest.fixture(scope="module")
def derived_dir(tmp_path_factory) -> Path:
    source = derive_tool.source_recording()
    if source is None:
        pytest.skip(HOW)
    return derive_tool.write_derived(source, tmp_path_factory.mktemp("derived"))


def derived(folder: Path, name: str) -> Path:
    (found,) = folder.glob(f"*-{name}.jsonl.gz")
    return found


def test_every_branch_has_its_expected_line_here():
    assert set(FRAGMENT) == set(derive_tool.BRANCHES)


@pytest.mark.parametrize("name", sorted(derive_tool.BRANCHES))
def test_each_branch_replays_to_its_verdict(name, tmp_path, derived_dir):
    path = derived(derived_dir, name)
    *_, verdict = derive_tool.BRANCHES[name]
    result = run_passive(replay_target(str(path)), state_path=tmp_path / "state.json")
    assert result.verdict == verdict, result.reasons
    if FRAGMENT[name]:
        assert any(FRAGMENT[name] in r for r in result.reasons), result.reasons
    else:   # refused by RM: not checked, never passed
        from rmpeer.judge.unchecked import not_checked

        # a replay also reads no kernel log and no process list: those are not checked either
        assert [i["check"] for i in not_checked(result) if i["check"] not in ("xid", "gpu-processes")] == ["row-remap"]


def test_the_readme_lists_every_branch():
    text = (transcripts_dir() / "README.md").read_text()
    source = derive_tool.source_recording()
    if source is None:
        pytest.skip(HOW)
    assert derive_tool.readme(source, derive_tool.BRANCHES) in text, "python tools/derive_health_fixtures.py --table"


def test_a_derivation_changes_one_field_and_nothing_else(monkeypatch):
    """On a committed real recording: p2pCaps of one P2P-caps reply, set by name."""
    source = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[0]
    lines = derive_tool._lines(source)
    abi = DriverMatrix().abi(next(x for x in lines if x.get("note") == "driver")["abi"])
    monkeypatch.setitem(derive_tool.BRANCHES, "demo", ("host:p2p-caps:0->0", "p2pCaps", 0x5, "a demo", "-"))
    out = derive_tool.derive(lines, abi, "demo")
    changed = [i for i, (a, b) in enumerate(zip(lines, out)) if a != b]
    hit = next(i for i, x in enumerate(lines) if x.get("label") == "host:p2p-caps:0->0")
    assert changed == [0, hit] and len(out) == len(lines)
    assert out[0]["header"]["derived"] == {"branch": "demo", "call": "host:p2p-caps:0->0",
                                           "field": "NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS.p2pCaps",
                                           "value": 5, "why": "a demo"}
    st = abi.struct("NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS")
    before, after = (bytes.fromhex(x[hit]["payload"]["reply"]) for x in (lines, out))
    assert [f.name for f in st.differing_fields(before, after)] == ["p2pCaps"] and st.get(after, "p2pCaps") == 5
    assert {k: v for k, v in out[hit].items() if k != "payload"} == {k: v for k, v in lines[hit].items()
                                                                      if k != "payload"}


def test_without_a_health_recording_the_tool_says_how_to_make_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["derive", str(sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[0]),
                                     "--out", str(tmp_path)])
    assert derive_tool.main() == 2
    assert "tools/evidence/health.sh" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_the_written_file_keeps_every_other_line_byte_for_byte(tmp_path, monkeypatch):
    source = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[0]
    monkeypatch.setattr(derive_tool, "BRANCHES", {"demo": ("host:p2p-caps:0->0", "p2pCaps", 0x5, "a demo", "-")})
    monkeypatch.setattr(derive_tool, "has_health", lambda path: True)
    monkeypatch.setattr("sys.argv", ["derive", str(source), "--out", str(tmp_path)])
    assert derive_tool.main() == 0
    before = gzip.open(source, "rt").read().splitlines()
    after = gzip.open(tmp_path / f"{source.name.split('.jsonl')[0]}-demo.jsonl.gz", "rt").read().splitlines()
    differ = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(differ) == 2 and differ[0] == 0
    assert json.loads(after[differ[1]])["label"] == "host:p2p-caps:0->0"
    assert "| `demo` | `host:p2p-caps:0->0` |" in derive_tool.readme(source, derive_tool.BRANCHES)
