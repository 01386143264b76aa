"""The matrices are schema-checked at load: a malformed file is refused with its name, the
entry and what is wrong; the layouts resolve against any card count."""


import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.abi.matrix import MATRICES
from rmpeer.errors import ConfigError, MatrixError
from rmpeer.layouts import LayoutMatrix, parse_layout_option, parse_size
from rmpeer.topology import TopologyMatrix

pytestmark = pytest.mark.offline


def edited(tmp_path, name, change):
    data = yaml.safe_load((MATRICES / name).read_text())
    change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("change,entry,problem", [
    (lambda d: d["releases"][0]["structs"]["NVOS46_PARAMETERS"]["fields"].update(dmaOffset=[60, "u64"]),
     "release 535.43.02: struct NVOS46_PARAMETERS.dmaOffset", "past the struct's size"),
    (lambda d: d["releases"][0]["structs"]["NVOS00_PARAMETERS"]["fields"].update(status=[12, "u31"]),
     "release 535.43.02: struct NVOS00_PARAMETERS.status", "unknown type 'u31'"),
    (lambda d: d["releases"].reverse(), "releases", "ascending version order"),
    (lambda d: d["releases"][1].update(kernels={}), "release", "unknown keys ['kernels']"),
    (lambda d: d["releases"][0]["controls"]["NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2"].pop("cmd"),
     "control NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", "missing key 'cmd'"),
    (lambda d: d.pop("ioctl_encoding"), "file", "missing key 'ioctl_encoding'"),
])
def test_a_malformed_driver_matrix_names_file_entry_and_fault(tmp_path, change, entry, problem):
    path = edited(tmp_path, "drivers.yaml", change)
    with pytest.raises(MatrixError) as err:
        DriverMatrix(path)
    assert str(path) in str(err.value) and entry in str(err.value) and problem in str(err.value)


def test_invalid_yaml_is_reported_not_raised(tmp_path):
    path = tmp_path / "drivers.yaml"
    path.write_text("releases: [\n")
    with pytest.raises(MatrixError, match="not valid YAML"):
        DriverMatrix(path)


@pytest.mark.parametrize("change,problem", [
    (lambda d: d["layouts"]["one-per-card"].update(sessions=3), "needs exactly one of"),
    (lambda d: d["layouts"]["interleaved"].update(order="zigzag"), "blocked or interleaved"),
    (lambda d: d["layouts"]["seed-three"].update(cards=[0, -1]), "list of card numbers"),
    (lambda d: d["layouts"]["sixteen"].update(colour="red"), "unknown keys ['colour']"),
    (lambda d: d["va"].pop("page_size"), "missing key 'page_size'"),
])
def test_a_malformed_layout_matrix_is_refused(tmp_path, change, problem):
    path = edited(tmp_path, "layouts.yaml", change)
    with pytest.raises(MatrixError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        LayoutMatrix(path)


def test_a_topology_expecting_an_unknown_status_is_refused(tmp_path):
    path = edited(tmp_path, "topologies.yaml",
                  lambda d: d["topologies"]["pcie-pair-no-p2p"]["expect"].update(pair="NV_ERR_NO_SUCH_THING"))
    with pytest.raises(MatrixError, match="pcie-pair-no-p2p.expect.pair"):
        TopologyMatrix(path, nvstatus_names={"NV_OK", "NV_ERR_NOT_SUPPORTED", "NV_ERR_INVALID_STATE"})


def test_the_shipped_topologies_name_only_real_statuses():
    from rmpeer.abi import status_names

    TopologyMatrix(nvstatus_names=status_names())
    assert TopologyMatrix().get("pcie-pair-no-p2p").expected("pair") == "NV_ERR_NOT_SUPPORTED"


@pytest.mark.parametrize("cards,name,expected", [
    (2, "two-per-card", (0, 0, 1, 1)), (2, "interleaved", (0, 1, 0, 1)), (1, "interleaved", None),
    (8, "sixteen", tuple(i % 8 for i in range(16))), (8, "four-per-card", None), (1, "seed-three", None),
    (2, "seed-three", (0, 1, 0)), (3, "all-on-one-4", (0, 0, 0, 0)), (1, "one-per-card", (0,))])
def test_layouts_resolve_against_the_card_count(cards, name, expected):
    layout = LayoutMatrix().resolve(name, cards)
    assert (layout.cards if layout else None) == expected


def test_explicit_layouts_and_sizes_from_the_command_line():
    m = LayoutMatrix()
    assert parse_layout_option("0,1,1,0", m, 2).cards == (0, 1, 1, 0)
    with pytest.raises(ConfigError, match="neither a layout name"):
        parse_layout_option("zero,one", m, 2)
    with pytest.raises(ConfigError, match="does not fit"):
        parse_layout_option("seed-three", m, 1)
    assert [parse_size(x) for x in ("64MiB", "2M", "0x4000000", "4096")] == [1 << 26, 1 << 21, 1 << 26, 4096]
    with pytest.raises(ConfigError):
        parse_size("lots")


def test_the_recorded_hosts_match_their_topology_entries():
    """The topology entries, checked against what RM reported on real hosts."""
    from rmpeer.targets import committed_transcripts
    from rmpeer.rm.host import HostFacts
    from rmpeer.shim.replay import recorded_note, transcript_summary

    matrix = TopologyMatrix()
    expected = {"h200x1": "h200x1", "h200x2": "h200x2-nv18"}
    seen = 0
    for path in committed_transcripts():
        label = transcript_summary(path)["label"]
        if label in expected:
            facts = HostFacts.from_dict(recorded_note(path, "host")["facts"])
            assert matrix.match(facts).name == expected[label]
            assert matrix.get("hgx-h200x8-nvswitch").mismatches(facts)[0].endswith("expected 8")
            seen += 1
    if not seen:
        pytest.skip("no recording of a known host is committed")
