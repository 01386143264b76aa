"""RunSpec: built once, options checked before any device, and the forced-ABI mismatch said
in one line. Offline: replays of the committed recordings and a stand-in for RM's refusal."""

import dataclasses
from types import SimpleNamespace

import pytest
from damaged_matrix import write_damaged

from rmpeer.errors import ConfigError
from rmpeer.paths import transcripts_dir
from rmpeer.model.spec import CertifyRequest, Policies
from rmpeer.run.spec import replay_spec

pytestmark = pytest.mark.offline
TWO = sorted(transcripts_dir().glob("h200x2-*.jsonl.gz"))


@pytest.mark.skipif(not TWO, reason="no two-card recording")
def test_a_replay_spec_is_what_its_header_says():
    import gzip
    import json

    header = json.loads(gzip.open(TWO[0], "rt").readline())["header"]
    spec = replay_spec(str(TWO[0]), policies=Policies(no_floors=True))
    run = header["run"]
    assert spec.pattern_seed == run["pattern_seed"] and spec.boost == run.get("boost", False)
    assert [c.layout.name for c in spec.cases] == [entry[0] for entry in run["layouts"]]
    assert spec.staging_extent == run["extent"]
    assert spec.facts is not None and len(spec.facts.cards) == header["cards"]
    assert spec.topology is not None and spec.topology_matched_by == "match"   # the committed host matches an entry
    assert spec.policies.no_floors
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.boost = False


def test_a_forced_abi_that_does_not_match_is_one_line(monkeypatch):
    """--rm-abi of another branch: RM refuses discovery; certify says the ABI does not match."""
    import rmpeer.run.hostrun as runtime_module   # where HostRun.open looks Runtime up
    from rmpeer.run.hostrun import HostRun
    from rmpeer.rm.errors import RmError
    from rmpeer.model.spec import RunSpec
    from rmpeer.model.target import Case, Target

    refusal = RmError.__new__(RmError)
    refusal.label, refusal.status_name = "host:classlist", "NV_ERR_INVALID_ARGUMENT"

    class Refused:
        def __init__(self, shim, forced_abi=None, select=None):
            self.facts = SimpleNamespace(abi_release="575.64.05", driver_version="580.95.05")

        def open(self):
            raise refusal

        def close(self):
            pass

    monkeypatch.setattr(runtime_module, "Runtime", Refused)
    target = Target("live", "h200x2", 2)
    spec = RunSpec(target=target, cases=(Case(target, SimpleNamespace(name="two", cards=[0, 1]), 64 << 20),), abi="575.64.05")
    host = HostRun(spec)
    host.shim = SimpleNamespace(segment=lambda *a, **k: None, mode="live")
    with pytest.raises(ConfigError) as err:
        host.open()
    text = str(err.value)
    assert "\n" not in text and "--rm-abi 575.64.05" in text and "does not match the running driver 580.95.05" in text
    assert host.runtime is None


@pytest.mark.skipif(not TWO, reason="no two-card recording")
def test_quick_on_a_replay_takes_the_quick_layouts_it_holds():
    from rmpeer.tables.layouts import QUICK_LAYOUTS

    full = replay_spec(str(TWO[0]))
    quick = replay_spec(str(TWO[0]), tier="quick")
    held = [c.layout.name for c in full.cases]
    assert [c.layout.name for c in quick.cases] == [n for n in QUICK_LAYOUTS if n in held]
    assert quick.tier == "quick" and len(quick.cases) < len(full.cases)


def test_an_empty_output_is_refused_before_anything(tmp_path, monkeypatch):
    from rmpeer.run.spec import from_request

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="--output needs a folder"):
        from_request(CertifyRequest(output="", replay=str(TWO[0])))
    spec = from_request(CertifyRequest(output="a/b/c", replay=str(TWO[0])))
    assert spec.output == tmp_path / "a/b/c" and list(tmp_path.iterdir()) == []


# A 2-card and a 1-card live host, as targets.live_target would name them (no device is opened:
# the spec only plans). The layouts as card lists come from matrices/layouts.yaml's definitions:
# one-per-card is one session per card (0,1), interleaved two per card dealt round-robin (0,1,0,1).
def _live(cards):
    from rmpeer.model.target import Target

    return Target("live", f"h200x{cards}", cards)


@pytest.mark.parametrize("cards, asked, layouts, extent, earned", [
    (2, "full", (), None, "full"),
    (2, "quick", (), None, "quick"),
    (1, "full", (), None, "full"),
    (1, "quick", (), None, "quick"),
    (2, "full", ("one-per-card", "interleaved"), None, "quick"),   # asked full, ran quick's layouts
    (2, "full", ("0,1,0,1", "0,1"), None, "quick"),                # the same layouts as card lists
    (2, "quick", ("one-per-card",), None, "partial"),              # half of quick
    (2, "full", ("two-per-card", "seed-three"), None, "partial"),
    (2, "full", (), 8 << 20, "partial"),                           # every layout, at 8 MiB instead of 64
    (2, "full", (), 128 << 20, "full"),                            # every layout, larger than asked
])
def test_a_run_claims_only_the_tier_its_layouts_cover(cards, asked, layouts, extent, earned):
    from rmpeer.run.spec import live_spec

    assert live_spec(layouts=layouts, tier=asked, extent=extent, target=_live(cards)).tier == earned


# The quick tier's extents (matrices/layouts.yaml: interleaved's quick_extent 0x1000000, 16
# MiB, from 3 cards; extent.default 0x4000000, 64 MiB): the quick tier on many cards moves
# less through each window of its 16-session layout, never fewer windows.
@pytest.mark.parametrize("cards, tier, extents", [
    (2, "quick", {"one-per-card": 64 << 20, "interleaved": 64 << 20}),   # as every committed recording
    (3, "quick", {"one-per-card": 64 << 20, "interleaved": 16 << 20}),
    (8, "quick", {"one-per-card": 64 << 20, "interleaved": 16 << 20}),
    (8, "full", {"one-per-card": 64 << 20, "interleaved": 64 << 20}),
])
def test_the_quick_tier_on_many_cards_runs_interleaved_at_its_quick_extent(cards, tier, extents):
    from rmpeer.run.spec import live_spec

    spec = live_spec(tier=tier, target=_live(cards), pattern_seed=1)
    got = {c.layout.name: c.extent for c in spec.cases if c.layout.name in extents}
    assert got == extents and spec.tier == tier


@pytest.mark.parametrize("cards, extent, earned", [
    (8, 16 << 20, "quick"),       # the quick extent is the quick tier's, on 8 cards
    (2, 16 << 20, "partial"),     # on 2 cards the quick tier is 64 MiB: 16 covers nothing
    (8, 8 << 20, "partial"),      # below the quick extent
])
def test_a_quick_run_below_its_extent_claims_no_tier(cards, extent, earned):
    from rmpeer.run.spec import live_spec

    spec = live_spec(layouts=("one-per-card", "interleaved"), tier="quick", target=_live(cards), pattern_seed=1)
    cases = [dataclasses.replace(c, extent=extent) if c.layout.name == "interleaved" else c for c in spec.cases]
    from rmpeer.tables.layouts import LayoutMatrix

    assert LayoutMatrix().covered_tier("quick", cases, cards) == earned


def test_a_quick_extent_without_the_cards_it_applies_from_is_refused(tmp_path):
    import yaml

    from rmpeer.errors import MatrixError
    from rmpeer.paths import matrices_dir
    from rmpeer.tables.layouts import LayoutMatrix

    doc = yaml.safe_load((matrices_dir() / "layouts.yaml").read_text())
    del doc["layouts"]["interleaved"]["quick_from_cards"]
    (tmp_path / "layouts.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(MatrixError, match="quick_extent and quick_from_cards go together"):
        LayoutMatrix(tmp_path / "layouts.yaml")


def test_a_replay_of_a_quick_recording_is_quick_whatever_was_asked():
    from rmpeer.shim.replay import transcript_summary
    from rmpeer.tables.layouts import QUICK_LAYOUTS

    quick_recordings = [p for p in TWO if [e[0] for e in transcript_summary(p)["run"]["layouts"]] == list(QUICK_LAYOUTS)]
    assert quick_recordings, "the committed quick recordings (h200x2-20261130T005408Z, ...T162924Z)"
    for path in quick_recordings:
        assert replay_spec(str(path), tier="full").tier == "quick"


def test_mutant_a_spec_that_keeps_the_asked_tier_claims_full_for_one_layout():
    """The guard above, against spec.py with the covered tier left out of live_spec."""
    from source_mutation import mutated

    broken = mutated("rmpeer.run.spec", "    tier = matrix.covered_tier(tier, cases, target.cards)\n    seed",
                     "    seed")
    assert broken.live_spec(layouts=("one-per-card",), tier="full", target=_live(2)).tier == "full"


@pytest.mark.skipif(not TWO, reason="no two-card recording")
def test_the_spec_carries_what_the_outputs_need(tmp_path):
    """certify's outputs come from the spec (rmpeer.model.spec.Outputs), never from the
    command line's arguments: each option given reaches spec.outputs as given."""
    from datetime import timedelta

    from rmpeer.model.spec import CertifyRequest
    from rmpeer.run.spec import from_request

    out = tmp_path / "out"
    out.mkdir()
    request = CertifyRequest(output=str(out), replay=str(TWO[0]), tier="passive", json=True,
                             junit=str(tmp_path / "j.xml"), prometheus=str(tmp_path), valid_for="2h", deadline="9",
                             require_complete=True, ran_because=("the tier asked is deeper",))
    spec = from_request(request)
    o = spec.outputs
    assert (o.json, o.junit, o.prometheus) == (True, str(tmp_path / "j.xml"), str(tmp_path))
    assert o.valid_for == timedelta(hours=2) and o.deadline_s == 9.0 and o.require_complete
    assert o.ran_because == ("the tier asked is deeper",) and o.tier_asked == "passive"
    assert spec.certificate_path == out / "replay-certificate.json"


def test_the_builder_takes_no_namespace_and_refuses_a_bad_tier_first():
    from rmpeer.model.spec import CertifyRequest
    from rmpeer.run.spec import from_request

    with pytest.raises(ConfigError, match="--tier 'deep'"):
        from_request(CertifyRequest(tier="deep"))
    with pytest.raises(ConfigError, match="--quick and --tier full"):
        from_request(CertifyRequest(tier="full", quick=True))


# -- matrices/channel.yaml is checked while the spec is built ------------------------------------

ONE_LAYOUT = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
PASSIVE = transcripts_dir() / "passive" / "h200x1-passive-20261201T222835Z.jsonl.gz"


@pytest.fixture
def broken_channel(tmp_path, monkeypatch):
    """The matrices' channel.yaml with a negative ring_offset (a run once wrote its ring
    there and said NOT CERTIFIED): where the channel loader looks."""
    import yaml

    import rmpeer.tables.channel as channel
    from rmpeer.paths import matrices_dir

    data = yaml.safe_load((matrices_dir() / "channel.yaml").read_text())
    data["channel"]["ring_offset"] = -1
    (tmp_path / "channel.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setattr(channel, "MATRICES", tmp_path)
    return tmp_path / "channel.yaml"


@pytest.mark.skipif(not ONE_LAYOUT.is_file(), reason="no one-card recording")
def test_a_replay_with_a_broken_channel_file_is_refused_before_the_run(broken_channel):
    from rmpeer.errors import MatrixError

    with pytest.raises(MatrixError) as err:
        replay_spec(str(ONE_LAYOUT))
    assert str(err.value).startswith(f"{broken_channel}: channel.ring_offset: must be ")


def test_a_live_run_with_a_broken_channel_file_is_refused_before_the_device(broken_channel, monkeypatch):
    import rmpeer.run.spec as spec_module
    from rmpeer.errors import MatrixError, NoDeviceError
    from rmpeer.run.spec import live_spec

    monkeypatch.setattr(spec_module, "live_target", lambda: None)     # this machine has no GPU either way
    with pytest.raises(MatrixError, match="channel.ring_offset"):
        live_spec()
    with pytest.raises(NoDeviceError):      # the passive tier drives no engine: channel.yaml is not its input
        live_spec(tier="passive")


@pytest.mark.skipif(not ONE_LAYOUT.is_file(), reason="no one-card recording")
def test_a_launch_field_the_copy_class_lacks_is_refused_before_the_run(tmp_path, monkeypatch):
    """A LAUNCH_DMA field of channel.yaml that engines.yaml's copy class lacks was a KeyError at
    the first copy (exit 5): the spec checks the two files against each other."""
    import yaml

    import rmpeer.tables.channel as channel
    from rmpeer.errors import MatrixError
    from rmpeer.paths import matrices_dir

    data = yaml.safe_load((matrices_dir() / "channel.yaml").read_text())
    data["channel"]["launch_copy"]["DATA_TRANSFER_TYP"] = data["channel"]["launch_copy"].pop("DATA_TRANSFER_TYPE")
    (tmp_path / "channel.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setattr(channel, "MATRICES", tmp_path)
    with pytest.raises(MatrixError) as err:
        replay_spec(str(ONE_LAYOUT))
    assert str(err.value).startswith(f"{tmp_path / 'channel.yaml'}: channel.launch_copy.DATA_TRANSFER_TYP: not a field")


@pytest.mark.skipif(not ONE_LAYOUT.is_file(), reason="no one-card recording")
def test_an_error_notifier_smaller_than_drivers_nvnotification_is_refused_before_the_run(tmp_path, monkeypatch):
    """channel.yaml's notifier_size of 8 bytes is a valid size alone; beside drivers.yaml's
    16-byte NvNotification it is a mapping RM writes past (the spec checks the two files)."""
    import yaml

    import rmpeer.tables.channel as channel
    from rmpeer.errors import MatrixError
    from rmpeer.paths import matrices_dir

    data = yaml.safe_load((matrices_dir() / "channel.yaml").read_text())
    data["channel"]["notifier_size"] = 8
    (tmp_path / "channel.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setattr(channel, "MATRICES", tmp_path)
    with pytest.raises(MatrixError) as err:
        replay_spec(str(ONE_LAYOUT))
    assert str(err.value).startswith(f"{tmp_path / 'channel.yaml'}: channel.notifier_size: 0x8 bytes do not hold")


def _broken_efficiencies(tmp_path, monkeypatch, change):
    """The matrices' efficiencies.yaml changed by `change`, where its loader looks."""
    import yaml

    import rmpeer.judge.derived as derived
    from rmpeer.paths import matrices_dir

    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    change(data["generations"]["hopper"])
    (tmp_path / "efficiencies.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setattr(derived, "MATRICES", tmp_path)
    return tmp_path / "efficiencies.yaml"


@pytest.mark.skipif(not ONE_LAYOUT.is_file() or not PASSIVE.is_file(), reason="no recordings")
@pytest.mark.parametrize("change, problem", [
    (lambda gen: gen["same_card"].update(efficiency=2), "same_card.efficiency: must be "),
    (lambda gen: gen.update(copy_classes=["HOPPER_DMA_COPY_AX"]), "copy_classes: 'HOPPER_DMA_COPY_AX' is not a class"),
], ids=["efficiency-2", "copy-class-typo"])
def test_a_broken_efficiencies_file_is_refused_before_the_run(tmp_path, monkeypatch, change, problem):
    """It is read when the copies are judged: a broken one was exit 2 after the whole run had
    driven the GPUs, and a copy class typo DEGRADED every host on derived floors. The passive
    tier judges no copy."""
    from rmpeer.errors import MatrixError

    path = _broken_efficiencies(tmp_path, monkeypatch, change)
    with pytest.raises(MatrixError) as err:
        replay_spec(str(ONE_LAYOUT))
    assert str(err.value).startswith(f"{path}: generation hopper.{problem}")
    assert replay_spec(str(PASSIVE)).tier == "passive"


@pytest.mark.skipif(not PASSIVE.is_file(), reason="no passive recording")
def test_a_link_count_no_card_reports_is_refused_before_the_run(tmp_path, monkeypatch):
    """The spec bounds topologies.yaml's links.count by drivers.yaml's NV2080_CTRL_NVLINK_MAX_LINKS
    (the most any release reports): 10**20 was every matching host DEGRADED. Every tier judges links."""
    import rmpeer.tables.topology as topology
    from rmpeer.errors import MatrixError
    from rmpeer.paths import matrices_dir

    text = (matrices_dir() / "topologies.yaml").read_text()
    (tmp_path / "topologies.yaml").write_text(text.replace("{kind: nvlink, count: 18}", "{kind: nvlink, count: 65}"))
    (tmp_path / "drivers.yaml").write_text((matrices_dir() / "drivers.yaml").read_text())   # its P2P names
    monkeypatch.setattr(topology, "MATRICES", tmp_path)
    with pytest.raises(MatrixError, match=r"h200x2-nv18\.links\.count: 65 is more NVLinks than a card reports \(at "
                                          r"most 64"):
        replay_spec(str(PASSIVE))


@pytest.mark.skipif(not PASSIVE.is_file(), reason="no passive recording")
def test_a_broken_pcie_file_is_refused_before_the_run(tmp_path, monkeypatch):
    """A live run's fingerprint reads pcie.yaml after every check (a KeyError there was exit 5):
    the spec checks it first, in every tier."""
    import rmpeer.tables.pcie as pcie
    from rmpeer.errors import MatrixError
    from rmpeer.paths import matrices_dir

    text = (matrices_dir() / "pcie.yaml").read_text()
    (tmp_path / "pcie.yaml").write_text(text.replace("max_hops: 96", "max_hops: 1000000000000"))
    monkeypatch.setattr(pcie, "MATRICES", tmp_path)
    with pytest.raises(MatrixError, match=r"pcie.yaml: extended_capabilities.max_hops: must be a whole number"):
        replay_spec(str(PASSIVE))


@pytest.mark.skipif(not PASSIVE.is_file(), reason="no passive recording")
def test_a_broken_nvml_file_is_refused_before_the_run(tmp_path, monkeypatch):
    """Every tier's clock readings read nvml.yaml (a broken one would stop the run at its first
    reading): the spec checks it first, in every tier, exit 2 naming the key."""
    import rmpeer.tables.nvml as nvml
    from rmpeer.errors import EXIT_CONFIG, MatrixError
    from rmpeer.paths import matrices_dir

    text = (matrices_dir() / "nvml.yaml").read_text()
    (tmp_path / "nvml.yaml").write_text(text.replace("sw_power_cap: {bit: 0x4,", "sw_power_cap: {bit: 0x40,"))
    monkeypatch.setattr(nvml, "MATRICES", tmp_path)
    with pytest.raises(MatrixError, match=r"nvml.yaml: clock_event_reasons.hw_thermal_slowdown.bit: must be one bit") as e:
        replay_spec(str(PASSIVE))
    assert e.value.exit_code == EXIT_CONFIG


@pytest.mark.skipif(not PASSIVE.is_file(), reason="no passive recording")
def test_a_passive_replay_never_reads_the_channel_file(broken_channel):
    assert replay_spec(str(PASSIVE)).tier == "passive"


# -- the ABI matrices are checked while the spec is built -----------------------------------------

SMALL = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"
BROKEN = {   # file, keys, value (KeyError: deleted), what the one line says
    "an escape deleted": ("drivers.yaml", ["releases", 0, "escapes", "NV_ESC_RM_ALLOC"], KeyError,
                          "release 535.43.02: escapes: missing NV_ESC_RM_ALLOC, which rmpeer sends"),
    "NV_OK's code": ("nvstatus.yaml", ["statuses", "NV_OK", "code"], -1,
                     "status NV_OK.code: must be a whole number from 0 to 0xffffffff, found -1"),
    "an expected status": ("topologies.yaml", ["topologies", "h200x1", "expect", "map_same"], "x",
                           "topology h200x1.expect.map_same: 'x' is not a status in nvstatus.yaml"),
    "hopper's copy class": ("engines.yaml", ["generations", "hopper", "copy"], "x",
                            "generation hopper.copy: class 'x' is not described under classes"),
}


@pytest.mark.skipif(not SMALL.is_file(), reason="no small one-card recording")
@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_abi_matrix_stops_a_replay_before_it_runs(tmp_path, case):
    """The whole path a user takes (RMPEER_MATRICES names a damaged copy): exit 2, one line
    naming the file and the key, and nothing written; never NOT CERTIFIED (exit 1) or a crash."""
    import os
    import shutil
    import subprocess
    import sys

    import yaml

    from rmpeer.errors import EXIT_CONFIG
    from rmpeer.tables.load import MATRICES

    name, keys, value, message = BROKEN[case]
    shutil.copytree(MATRICES, tmp_path / "m")
    write_damaged(tmp_path / "m" / name, yaml.safe_load((tmp_path / "m" / name).read_text()), keys, value)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(SMALL), "--output", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=dict(os.environ, RMPEER_MATRICES=str(tmp_path / "m")))
    assert done.returncode == EXIT_CONFIG, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and message in done.stderr
    assert f"{tmp_path / 'm' / name}: " in done.stderr and not out.exists()
