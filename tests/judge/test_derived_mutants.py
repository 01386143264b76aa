"""Mutants of rmpeer/judge/derived.py (issue 47, item 9; docs/mutation.md): each refusal of
matrices/efficiencies.yaml written out whole, the agreement check at its bound, a floor's figure
and formula, the links a pair counts (direct by PCI, all GPU links when none names a PCI, the
NVSwitch links, the fewer of the two cards), the PCIe width and generation both cards trained,
and what is named missing or unread, in its order.

Expected values are worked out here by hand from matrices/efficiencies.yaml as it reads (read
directly with yaml), the NVLink line rate RM reports for an H200 (106250 Mbps x 2 lanes / 8000 =
26.5625 GB/s a link), the PCI Express lane rates of that file, and the copy-engine class numbers
of NVIDIA's class headers (clc6b5.h ... clcab5.h), never from the function under test."""

from types import SimpleNamespace

import pytest
import yaml

from rmpeer.errors import MatrixError
from rmpeer.judge import derived as dv
from rmpeer.judge.derived import (AGREE, CALIBRATED, DERIVED, PROVISIONAL, DerivedFloors, Efficiency, Floor,
                                  derive_floors, link_rate_gbps, load_efficiencies, pair_nvlinks)
from rmpeer.model.host import Card
from rmpeer.paths import matrices_dir

pytestmark = pytest.mark.offline

# NVIDIA's copy-engine class numbers (open-gpu-kernel-modules, src/common/sdk/nvidia/inc/class/)
CLASS_NUMBERS = {"AMPERE_DMA_COPY_A": 0xC6B5, "AMPERE_DMA_COPY_B": 0xC7B5, "HOPPER_DMA_COPY_A": 0xC8B5,
                 "BLACKWELL_DMA_COPY_A": 0xC9B5, "BLACKWELL_DMA_COPY_B": 0xCAB5}
HOPPER, AMPERE_A, AMPERE_B, BLACKWELL_B = 0xC8B5, 0xC6B5, 0xC7B5, 0xCAB5
H200_LINK = {"line_rate_mbps": 106250, "sublink_width": 2}      # 26.5625 GB/s one way
HOPPER_FROM = "derived; efficiency calibrated on 2 x H200"
HOPPER_PCIE = ("provisional; efficiency 0.7 not measured: not measured by rmpeer (no PCIe peer host lent); "
               "0.9 x an assumed 78% of the link rate")
AMPERE_PCIE = "provisional; efficiency 0.7 not measured: not measured by rmpeer"


def shipped() -> dict:
    return yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())


def written(tmp_path, data):
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def refusal(tmp_path, data, class_names=None) -> str:
    path = written(tmp_path, data)
    with pytest.raises(MatrixError) as err:
        load_efficiencies(path, class_names=class_names)
    prefix = f"{path}: "
    assert str(err.value).startswith(prefix)
    return str(err.value)[len(prefix):]


def card(index, pci=None, classes=(HOPPER,), pces=0xFFF, caps=True, pcie=None, unread=None, name="NVIDIA H200"):
    return Card(index=index, minor=index, gpu_id=index, pci=pci or f"0000:{index + 1:02x}:00.0", pci_device_id=0x2335,
                name=name, ce_caps={4: ["CE_NVLINK_P2P"]} if caps else {}, ce_pces={4: pces} if caps else {},
                unread=dict(unread or {}), classes=list(classes), health={"pcie": pcie} if pcie is not None else {})


def gpu_links(n, pci, **extra):
    return [{"connected": True, "remote": {"type": "GPU", "pci": pci}, **H200_LINK, **extra} for _ in range(n)]


def switch_links(n, **extra):
    return [{"connected": True, "remote": {"type": "SWITCH"}, **H200_LINK, **extra} for _ in range(n)]


NV = {"caps": ["NVLINK_SUPPORTED", "READS_SUPPORTED", "WRITES_SUPPORTED"]}


# -- the file and its refusals -----------------------------------------------------------------

def test_the_shipped_file_reads_as_written():
    eff = load_efficiencies()
    assert eff.path == matrices_dir() / "efficiencies.yaml"
    assert eff.lane_gbps == {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
    assert list(eff.generations) == ["hopper", "ampere", "blackwell"]
    hopper = eff.generations["hopper"]
    assert (hopper.name, hopper.copy_classes) == ("hopper", ("HOPPER_DMA_COPY_A",))
    assert eff.generations["ampere"].copy_classes == ("AMPERE_DMA_COPY_B", "AMPERE_DMA_COPY_A")
    assert list(hopper.kinds) == ["nvlink", "nvlink_bidirectional", "same_card", "pcie"]
    same = hopper.kinds["same_card"]
    assert (same.kind, same.efficiency, same.status, same.note, same.per_pce_gbps) == (
        "same_card", 0.9, CALIBRATED, "", 46.58)
    assert same.measured["pces"] == 12 and same.measured["host"] == "2 x H200"
    nv = hopper.kinds["nvlink"]
    assert (nv.efficiency, nv.per_pce_gbps, nv.measured["nominal_gbps"]) == (0.743, None, 478.125)
    pcie = eff.generations["ampere"].kinds["pcie"]
    assert (pcie.status, pcie.note, pcie.measured) == (PROVISIONAL, "not measured by rmpeer", {})
    assert all(type(k.efficiency) is float for g in eff.generations.values() for k in g.kinds.values())
    # the class names drivers.yaml gives, as the spec checks them
    assert load_efficiencies(class_names=set(CLASS_NUMBERS)).generations.keys() == eff.generations.keys()


def test_a_generation_states_only_the_kinds_it_names(tmp_path):
    data = shipped()
    data["generations"] = {"x": {"copy_classes": ["X_COPY"]},
                           "y": {"copy_classes": ["Y_COPY"], "pcie": {"efficiency": 1, "status": "provisional",
                                                                      "note": "n"}}}
    eff = load_efficiencies(written(tmp_path, data))
    assert eff.generations["x"].kinds == {}
    y = eff.generations["y"].kinds
    assert list(y) == ["pcie"]
    assert (y["pcie"].efficiency, type(y["pcie"].efficiency), y["pcie"].note) == (1.0, float, "n")


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(extra=1), "file.extra: unknown key 'extra' (known: schema, pcie_lane_gbps, generations)"),
    (lambda d: d.pop("pcie_lane_gbps"), "file: missing key 'pcie_lane_gbps'"),
    (lambda d: d.pop("generations"), "file: missing key 'generations'"),
    (lambda d: d["pcie_lane_gbps"].update({"7": 9.0}),
     "pcie_lane_gbps.7: must be a generation number: GB/s above 0, found 9.0"),
    (lambda d: d["pcie_lane_gbps"].update({4: 0}), "pcie_lane_gbps.4: must be a generation number: GB/s above 0, found 0"),
    (lambda d: d["pcie_lane_gbps"].update({4: "fast"}),
     "pcie_lane_gbps.4: must be a generation number: GB/s above 0, found 'fast'"),
    (lambda d: d["generations"].update(hopper=["HOPPER_DMA_COPY_A"]), "generation hopper: must be a mapping, found list"),
    (lambda d: d["generations"]["hopper"].update(nvlnk={}),
     "generation hopper.nvlnk: unknown key 'nvlnk' (known: copy_classes, nvlink, nvlink_bidirectional, "
     "same_card, pcie); did you mean 'nvlink'?"),
    (lambda d: d["generations"]["hopper"].pop("copy_classes"), "generation hopper: missing key 'copy_classes'"),
    (lambda d: d["generations"]["hopper"].update(copy_classes=[]),
     "generation hopper.copy_classes: must list copy-engine class names of drivers.yaml"),
    (lambda d: d["generations"]["hopper"].update(copy_classes=["HOPPER_DMA_COPY_A", 0xC8B5]),
     "generation hopper.copy_classes: must list copy-engine class names of drivers.yaml"),
    (lambda d: d["generations"]["hopper"].update(nvlink="fast"), "generation hopper.nvlink: must be a mapping, found str"),
    (lambda d: d["generations"]["hopper"]["nvlink"].update(eficiency=1),
     "generation hopper.nvlink.eficiency: unknown key 'eficiency' (known: efficiency, status, measured, note, "
     "per_pce_gbps); did you mean 'efficiency'?"),
    (lambda d: d["generations"]["hopper"]["nvlink"].pop("efficiency"), "generation hopper.nvlink: missing key 'efficiency'"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(efficiency=True),
     "generation ampere.nvlink.efficiency: must be a fraction above 0 and at most 1, found True"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(efficiency=0),
     "generation ampere.nvlink.efficiency: must be a fraction above 0 and at most 1, found 0"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(efficiency=1.001),
     "generation ampere.nvlink.efficiency: must be a fraction above 0 and at most 1, found 1.001"),
    (lambda d: d["generations"]["ampere"]["nvlink"].pop("status"), "generation ampere.nvlink: missing key 'status'"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(status="measured"),
     "generation ampere.nvlink.status: 'measured' is not one of calibrated, provisional"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(status="derived"),
     "generation ampere.nvlink.status: 'derived' is not one of calibrated, provisional"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(per_pce_gbps=46.58),
     "generation ampere.nvlink: per_pce_gbps belongs to same_card, and same_card needs it"),
    (lambda d: d["generations"]["ampere"]["same_card"].pop("per_pce_gbps"),
     "generation ampere.same_card: per_pce_gbps belongs to same_card, and same_card needs it"),
    (lambda d: d["generations"]["ampere"]["same_card"].update(per_pce_gbps=0),
     "generation ampere.same_card.per_pce_gbps: must be a finite number above 0, found 0"),
    (lambda d: d["generations"]["ampere"]["nvlink"].pop("note"),
     "generation ampere.nvlink: a provisional efficiency needs a note saying why it was not measured"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(note=""),
     "generation ampere.nvlink: a provisional efficiency needs a note saying why it was not measured"),
    (lambda d: d["generations"]["hopper"]["nvlink"].pop("measured"), "generation hopper.nvlink.measured: missing key 'host'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].update(size=1),
     "generation hopper.nvlink.measured.size: unknown key 'size' (known: median_gbps, nominal_gbps, pces, margin, "
     "what, host, evidence)"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].pop("host"),
     "generation hopper.nvlink.measured: missing key 'host'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].update(evidence=1),
     "generation hopper.nvlink.measured.evidence: must be str, found 1"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].pop("median_gbps"),
     "generation hopper.nvlink.measured: missing key 'median_gbps'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].pop("margin"),
     "generation hopper.nvlink.measured: missing key 'margin'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].pop("nominal_gbps"),
     "generation hopper.nvlink.measured: missing key 'nominal_gbps'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].update(margin=-0.9),
     "generation hopper.nvlink.measured.margin: must be a finite number above 0, found -0.9"),
    (lambda d: d["generations"]["hopper"]["same_card"]["measured"].pop("pces"),
     "generation hopper.same_card.measured: missing key 'pces'"),
    (lambda d: d["generations"]["hopper"]["same_card"]["measured"].update(pces=0),
     "generation hopper.same_card.measured.pces: must be a count above 0, found 0"),
    (lambda d: d["generations"]["hopper"]["same_card"]["measured"].update(pces=-12),
     "generation hopper.same_card.measured.pces: must be a count above 0, found -12"),
    # 558.98 / 12 = 46.58166...; 0.9 x 394.48 / 478.125 = 0.742551...
    (lambda d: d["generations"]["hopper"]["same_card"].update(per_pce_gbps=50),
     "generation hopper.same_card.per_pce_gbps: 50 disagrees with the measurement it came from "
     "(median 558.98 / 12 PCEs = 46.5817)"),
    (lambda d: d["generations"]["hopper"]["same_card"].update(efficiency=0.8),
     "generation hopper.same_card.efficiency: 0.8 disagrees with the measurement it came from (the margin 0.9 = 0.9000)"),
    (lambda d: d["generations"]["hopper"]["nvlink"].update(efficiency=0.7),
     "generation hopper.nvlink.efficiency: 0.7 disagrees with the measurement it came from "
     "(margin 0.9 x median 394.48 / nominal 478.125 = 0.7426)"),
    (lambda d: d["generations"]["hopper"]["nvlink_bidirectional"].update(efficiency=0.743),
     "generation hopper.nvlink_bidirectional.efficiency: 0.743 disagrees with the measurement it came from "
     "(margin 0.9 x median 704.04 / nominal 956.25 = 0.6626)"),
])
def test_each_refusal_names_its_entry_and_fault_whole(tmp_path, change, message):
    data = shipped()
    change(data)
    assert refusal(tmp_path, data) == message


def test_a_copy_class_is_checked_against_drivers_yaml_only_when_its_names_are_given(tmp_path):
    data = shipped()
    data["generations"]["ampere"]["copy_classes"] = ["AMPERE_DMA_COPY_B", "AMPERE_COPY_X", "AMPERE_COPY_Y"]
    path = written(tmp_path, data)
    assert load_efficiencies(path).generations["ampere"].copy_classes == ("AMPERE_DMA_COPY_B", "AMPERE_COPY_X",
                                                                          "AMPERE_COPY_Y")
    assert refusal(tmp_path, data, set(CLASS_NUMBERS)) == (
        "generation ampere.copy_classes: 'AMPERE_COPY_X' is not a class of drivers.yaml")


def _calibrated_same_card(per_pce, median=100, pces=1, eff=0.9):
    data = shipped()
    data["generations"]["hopper"]["same_card"].update(per_pce_gbps=per_pce, efficiency=eff)
    data["generations"]["hopper"]["same_card"]["measured"].update(median_gbps=median, pces=pces, margin=0.9)
    return data


@pytest.mark.parametrize("per_pce, agrees", [(100.5, True), (99.5, True), (100, True), (100.51, False),
                                             (99.49, False), (101, False), (99, False)])
def test_agreement_is_within_half_a_percent_of_the_measurement_either_side(tmp_path, per_pce, agrees):
    """median 100 / 1 PCE: 0.5% of 100 is 0.5 GB/s either way, the bound itself agreeing."""
    assert AGREE == 0.005
    data = _calibrated_same_card(per_pce)
    if agrees:
        assert load_efficiencies(written(tmp_path, data)).generations["hopper"].kinds["same_card"].per_pce_gbps == per_pce
    else:
        assert "disagrees with the measurement it came from (median 100 / 1 PCEs = 100.0000)" in refusal(tmp_path, data)


def test_a_same_card_rate_divides_the_median_by_the_pces(tmp_path):
    """median 558.98 over 12 PCEs is 46.58 a PCE; over 6 it would be 93.16."""
    data = _calibrated_same_card(93.16, median=558.98, pces=6)
    assert load_efficiencies(written(tmp_path, data)).generations["hopper"].kinds["same_card"].measured["pces"] == 6
    data = _calibrated_same_card(46.58, median=558.98, pces=6)
    assert "(median 558.98 / 6 PCEs = 93.1633)" in refusal(tmp_path, data)


def test_a_calibrated_link_efficiency_is_margin_times_median_over_nominal(tmp_path):
    """0.9 x 400 / 500 = 0.72; 0.5 x 400 / 500 = 0.4."""
    data = shipped()
    nv = data["generations"]["hopper"]["nvlink"]
    nv.update(efficiency=0.72)
    nv["measured"].update(median_gbps=400, nominal_gbps=500, margin=0.9)
    assert load_efficiencies(written(tmp_path, data)).generations["hopper"].kinds["nvlink"].efficiency == 0.72
    nv["measured"]["margin"] = 0.5
    assert refusal(tmp_path, data).endswith("(margin 0.5 x median 400 / nominal 500 = 0.4000)")


# -- a floor, its basis and its formula --------------------------------------------------------

def test_a_floor_and_its_provenance_read_as_stated():
    assert Floor(355.2, DERIVED, "f").as_dict() == {"gbps": 355.2, "basis": "derived", "formula": "f"}
    cal = Efficiency("nvlink", 0.743, CALIBRATED, {"host": "2 x H200"})
    assert (cal.basis, cal.provenance) == ("derived", HOPPER_FROM)
    assert Efficiency("nvlink", 0.743, CALIBRATED).provenance == "derived; efficiency calibrated on ?"
    prov = Efficiency("pcie", 0.70, PROVISIONAL, note="not measured")
    assert (prov.basis, prov.provenance) == ("provisional", "provisional; efficiency 0.7 not measured: not measured")
    assert Efficiency("pcie", 0.7, PROVISIONAL).provenance == "provisional; efficiency 0.7 not measured: "
    assert Efficiency("x", 1.0, "calibrated").measured == {} and Efficiency("x", 1.0, "p").per_pce_gbps is None


@pytest.mark.parametrize("tables", [dict(same_card={0: 1}), dict(cross_card={(0, 1): 1}),
                                    dict(bidirectional={(0, 1): 1})])
def test_any_floor_of_any_kind_is_a_floor(tables):
    assert DerivedFloors(**tables).any is True
    assert DerivedFloors().any is False
    assert (DerivedFloors().missing, DerivedFloors().unread) == ((), ())


@pytest.mark.parametrize("link, gbps", [(H200_LINK, 26.5625), ({"line_rate_mbps": 25781, "sublink_width": 4}, 12.8905),
                                        ({"line_rate_mbps": 0, "sublink_width": 2}, None),
                                        ({"line_rate_mbps": 106250, "sublink_width": 0}, None),
                                        ({"sublink_width": 2}, None), ({"line_rate_mbps": 106250}, None),
                                        ({}, None)])
def test_a_links_rate_is_the_lane_rate_times_its_lanes(link, gbps):
    assert link_rate_gbps(link) == gbps


# -- the generation of a card -----------------------------------------------------------------

@pytest.mark.parametrize("classes, gen", [([HOPPER], "hopper"), ([AMPERE_A, HOPPER], "hopper"),
                                          ([HOPPER, AMPERE_B, AMPERE_A], "hopper"), ([AMPERE_A], "ampere"),
                                          ([BLACKWELL_B, HOPPER], "blackwell"), ([0xC5B5], None), ([], None)])
def test_a_card_is_of_the_generation_of_its_newest_listed_class(classes, gen):
    eff = load_efficiencies()
    got = eff.generation_of(SimpleNamespace(classes=classes), CLASS_NUMBERS)
    assert (got.name if got else None) == gen


def test_a_card_without_classes_or_an_abi_without_the_class_is_of_no_generation():
    eff = load_efficiencies()
    assert eff.generation_of(SimpleNamespace(), CLASS_NUMBERS) is None
    assert eff.generation_of(SimpleNamespace(classes=None), CLASS_NUMBERS) is None
    assert eff.generation_of(SimpleNamespace(classes=[HOPPER]), {"AMPERE_DMA_COPY_A": AMPERE_A}) is None
    assert eff.generation_of(SimpleNamespace(classes=[AMPERE_A]), {"AMPERE_DMA_COPY_A": AMPERE_A}).name == "ampere"


# -- the links of a pair ----------------------------------------------------------------------

def test_direct_links_are_those_naming_the_other_cards_pci():
    a, b, c = card(0), card(1), card(2)
    health_a = {"links": gpu_links(6, b.pci) + gpu_links(4, c.pci)}
    health_b = {"links": gpu_links(5, a.pci) + gpu_links(7, c.pci)}
    n, used = pair_nvlinks(a, b, health_a, health_b)
    assert n == 5 and len(used) == 11
    assert {x["remote"]["pci"] for x in used[:6]} == {b.pci} and {x["remote"]["pci"] for x in used[6:]} == {a.pci}


def test_gpu_links_naming_no_pci_all_count_and_those_naming_another_card_none():
    a, b, c = card(0), card(1), card(2)
    anonymous = [{"connected": True, "remote": {"type": "GPU"}, **H200_LINK} for _ in range(3)]
    assert pair_nvlinks(a, b, {"links": anonymous}, {"links": anonymous * 2})[0] == 3
    assert pair_nvlinks(a, b, {"links": gpu_links(4, c.pci)}, {"links": gpu_links(4, a.pci)}) == (0, [])


def test_a_link_counts_only_connected_and_of_its_far_ends_kind():
    a, b = card(0), card(1)
    health_a = {"links": gpu_links(2, b.pci) + gpu_links(3, b.pci, connected=False)
                + [{"connected": True, "remote": None, **H200_LINK}, {"connected": True, **H200_LINK}]
                + switch_links(1, connected=False)}
    health_b = {"links": gpu_links(4, a.pci)}
    n, used = pair_nvlinks(a, b, health_a, health_b)
    assert n == 2 and len(used) == 6
    assert pair_nvlinks(a, b, {}, health_b) == (0, [])


def test_switch_links_count_the_fewer_of_the_two_cards_and_add_to_direct_ones():
    a, b = card(0), card(1)
    n, used = pair_nvlinks(a, b, {"links": switch_links(18)}, {"links": switch_links(16)})
    assert (n, len(used)) == (16, 34)
    n, used = pair_nvlinks(a, b, {"links": switch_links(3) + gpu_links(2, b.pci)},
                           {"links": switch_links(4) + gpu_links(2, a.pci)})
    assert (n, len(used)) == (5, 11)
    assert [x["remote"]["type"] for x in used] == ["GPU"] * 4 + ["SWITCH"] * 7
    # switch links on one card only: none counted, none used; direct links still are
    n, used = pair_nvlinks(a, b, {"links": switch_links(3) + gpu_links(2, b.pci)}, {"links": gpu_links(2, a.pci)})
    assert (n, [x["remote"]["type"] for x in used]) == (2, ["GPU"] * 4)
    # direct links on one card only: none counted, none used
    n, used = pair_nvlinks(a, b, {"links": switch_links(3) + gpu_links(2, b.pci)}, {"links": switch_links(3)})
    assert (n, [x["remote"]["type"] for x in used]) == (3, ["SWITCH"] * 6)


# -- the derivation ---------------------------------------------------------------------------

def two_h200(links_a=18, links_b=18):
    a, b = card(0), card(1)
    links = {0: {"links": gpu_links(links_a, b.pci)}, 1: {"links": gpu_links(links_b, a.pci)}}
    return [a, b], {(0, 1): NV, (1, 0): NV}, links


def test_two_h200_get_their_floors_worked_out_by_hand():
    """18 links x 26.5625 x 0.743 = 355.246875; 36 x 26.5625 x 0.663 = 633.99375; 12 PCEs (0xfff)
    x 46.58 x 0.9 = 503.064."""
    cards, p2p, links = two_h200()
    got = derive_floors(cards, p2p, links, load_efficiencies(), CLASS_NUMBERS)
    same = Floor(503.1, DERIVED, f"12 PCEs x 46.580 GB/s x 0.9 = 503.1 GB/s ({HOPPER_FROM})")
    one = Floor(355.2, DERIVED, f"18 links x 26.562 GB/s x 0.743 = 355.2 GB/s ({HOPPER_FROM})")
    both = Floor(634.0, DERIVED, f"2 x 18 links x 26.562 GB/s x 0.663 = 634.0 GB/s ({HOPPER_FROM})")
    assert got == DerivedFloors({0: same, 1: same}, {(0, 1): one, (1, 0): one}, {(0, 1): both}, (), ())


def test_a_pair_takes_the_fewer_links_at_the_slowest_rate():
    """8 links, the slowest 53125 Mbps x 2 / 8000 = 13.28125 GB/s: 8 x 13.28125 x 0.743 = 78.94..."""
    cards, p2p, links = two_h200(8, 10)
    links[1]["links"][3]["line_rate_mbps"] = 53125
    got = derive_floors(cards, p2p, links, load_efficiencies(), CLASS_NUMBERS)
    assert got.cross_card[(0, 1)] == Floor(78.9, DERIVED, f"8 links x 13.281 GB/s x 0.743 = 78.9 GB/s ({HOPPER_FROM})")
    assert got.bidirectional[(0, 1)].gbps == 140.9      # 16 x 13.28125 x 0.663 = 140.886...


def test_what_cannot_be_derived_is_named_in_the_pairs_order_and_unread_last():
    eff = load_efficiencies()
    a = card(0, unread={"ce_pces[4]": "NV_ERR_NOT_SUPPORTED"})
    b = card(1, pces=0)
    c = card(2, classes=[0xC5B5], name="NVIDIA X")
    d = card(3, caps=False)
    links = {0: {"links": gpu_links(2, b.pci)}, 1: {"links": gpu_links(2, a.pci) + gpu_links(1, d.pci, sublink_width=0)},
             3: {"links": gpu_links(1, b.pci)}}
    p2p = {(1, 3): NV, (1, 0): NV, (0, 3): NV, (2, 0): NV, (0, 0): NV, (0, 9): NV, (1, 2): {"caps": []},
           (3, 1): {"status": "ok"}}
    got = derive_floors([a, b, c, d], p2p, links, eff, CLASS_NUMBERS)
    unread = "card 0: RM did not answer for its copy engine's PCEs (NV_ERR_NOT_SUPPORTED)"
    assert got.missing == (
        "card 1: RM reports no PCE of its copy engine",
        "card 2 (NVIDIA X): its copy-engine class is none of efficiencies.yaml's",
        "card 3: RM reports no PCE of its copy engine",
        "cards 0->3: P2P over NVLink, but RM reports no connected link between them",
        "cards 1->3: P2P over NVLink, but RM reports no line rate or lane count",
        unread)
    assert got.unread == (unread,)
    assert got.same_card == {} and list(got.cross_card) == [(1, 0)] and got.bidirectional == {}
    assert got.cross_card[(1, 0)].gbps == 39.5      # 2 x 26.5625 x 0.743 = 39.47...


def test_a_generation_without_a_kind_derives_none_of_it(tmp_path):
    data = shipped()
    hopper = data["generations"]["hopper"]
    for kind in ("nvlink_bidirectional", "same_card", "pcie"):
        hopper.pop(kind)
    eff = load_efficiencies(written(tmp_path, data))
    cards, p2p, links = two_h200()
    cards[0].unread["ce_pces[4]"] = "NV_ERR_NOT_SUPPORTED"      # no same_card kind: never read, so not unread
    got = derive_floors(cards, p2p, links, eff, CLASS_NUMBERS)
    assert got.missing == ("card 0: no same_card efficiency for hopper", "card 1: no same_card efficiency for hopper")
    assert got.unread == () and got.bidirectional == {} and set(got.cross_card) == {(0, 1), (1, 0)}
    hopper.pop("nvlink")
    hopper["nvlink_bidirectional"] = data_bidir = shipped()["generations"]["hopper"]["nvlink_bidirectional"]
    assert data_bidir["status"] == "calibrated"
    got = derive_floors(cards, p2p, links, load_efficiencies(written(tmp_path, data)), CLASS_NUMBERS)
    assert got.cross_card == {} and list(got.bidirectional) == [(0, 1)]
    # a generation with no PCIe kind: a PCIe pair is named missing
    p2p = {(0, 1): {"caps": ["READS_SUPPORTED"]}}
    for c in cards:
        c.health["pcie"] = {"width": 16, "max_gen": 4}
    got = derive_floors(cards, p2p, links, load_efficiencies(written(tmp_path, data)), CLASS_NUMBERS)
    assert got.missing[-1] == "cards 0->1: P2P over PCIe, but no PCIe efficiency or lane rate for generation 4"


def test_the_pair_takes_the_generation_of_its_first_card():
    """Card 0 is Ampere (pcie 0.7, provisional, 'not measured by rmpeer'), card 1 Hopper."""
    a = card(0, classes=[AMPERE_A], pcie={"width": 16, "max_gen": 4})
    b = card(1, pcie={"width": 16, "max_gen": 4})
    p2p = {(0, 1): {"caps": ["WRITES_SUPPORTED"]}, (1, 0): {"caps": ["READS_SUPPORTED"]}}
    got = derive_floors([a, b], p2p, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.cross_card[(0, 1)].formula.endswith(f"({AMPERE_PCIE})")
    assert got.cross_card[(1, 0)].formula.endswith(f"({HOPPER_PCIE})")
    c = card(2, classes=[0xC5B5], pcie={"width": 16, "max_gen": 4})
    got = derive_floors([b, c], {(1, 2): {"caps": ["READS_SUPPORTED"]}, (2, 1): {"caps": ["READS_SUPPORTED"]}}, {},
                        load_efficiencies(), CLASS_NUMBERS)
    assert list(got.cross_card) == [(1, 2)] and list(got.bidirectional) == [(1, 2)]


def test_a_pcie_pair_gets_the_narrower_width_at_the_lower_maximum_generation():
    """16 lanes of gen 4 (a card trained at gen 5 x 32 beside one of max gen 4 x 16): 16 x 1.969 x
    0.7 = 22.0528 one way, 44.1056 both ways."""
    a = card(0, classes=[AMPERE_A], pcie={"width": 32, "max_gen": 5, "gen": 1})
    b = card(1, classes=[AMPERE_A], pcie={"width": 16, "gen": 4})
    p2p = {(0, 1): {"caps": ["READS_SUPPORTED", "WRITES_SUPPORTED"]}, (1, 0): {"caps": ["WRITES_SUPPORTED"]}}
    got = derive_floors([a, b], p2p, {}, load_efficiencies(), CLASS_NUMBERS)
    one = Floor(22.1, PROVISIONAL, f"16 lanes (PCIe gen 4) x 1.969 GB/s x 0.7 = 22.1 GB/s ({AMPERE_PCIE})")
    both = Floor(44.1, PROVISIONAL, f"2 x 16 lanes (PCIe gen 4) x 1.969 GB/s x 0.7 = 44.1 GB/s ({AMPERE_PCIE})")
    assert got.cross_card == {(0, 1): one, (1, 0): one} and got.bidirectional == {(0, 1): both}
    assert got.same_card[0].gbps == 503.1 and got.missing == ()


@pytest.mark.parametrize("pcie_a, pcie_b", [({"width": 16}, {"width": 16, "max_gen": 4}),
                                            ({"width": 0, "max_gen": 4}, {"width": 16, "max_gen": 4}),
                                            ({"max_gen": 4}, {"width": 16, "max_gen": 4}),
                                            ({"width": 16, "max_gen": 4}, None), ({"width": 16, "gen": 4}, {})])
def test_a_pcie_link_rm_did_not_read_is_named(pcie_a, pcie_b):
    a = card(0, pcie=pcie_a)
    b = card(1, pcie=pcie_b)
    if pcie_b is None:
        b.health = {"pcie": None}
    got = derive_floors([a, b], {(0, 1): {"caps": ["READS_SUPPORTED"]}}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.missing == ("cards 0->1: P2P over PCIe, but cards 0 and 1: RM's PCIe link width and generation not read",)
    assert got.cross_card == {} and got.bidirectional == {}
    a.health = None
    got = derive_floors([a, b], {(0, 1): {"caps": ["READS_SUPPORTED"]}}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.missing[0].endswith("cards 0 and 1: RM's PCIe link width and generation not read")


def test_a_pcie_generation_without_a_lane_rate_is_named():
    a, b = card(0, pcie={"width": 16, "max_gen": 7}), card(1, pcie={"width": 16, "max_gen": 7})
    got = derive_floors([a, b], {(0, 1): {"caps": ["WRITES_SUPPORTED"]}}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.missing == ("cards 0->1: P2P over PCIe, but no PCIe efficiency or lane rate for generation 7",)
    assert got.cross_card == {}


def test_an_nvlink_pair_is_never_judged_as_pcie_and_a_pair_with_no_path_is_nothing():
    """NVLINK_SUPPORTED with no link: named missing, not given a PCIe floor; a pair whose caps name
    neither NVLink nor reads or writes: no floor and nothing missing."""
    a, b = card(0, pcie={"width": 16, "max_gen": 5}), card(1, pcie={"width": 16, "max_gen": 5})
    got = derive_floors([a, b], {(0, 1): NV}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.missing == ("cards 0->1: P2P over NVLink, but RM reports no connected link between them",)
    assert got.cross_card == {}
    got = derive_floors([a, b], {(0, 1): {"caps": ["ATOMICS_SUPPORTED"]}}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got == DerivedFloors({0: got.same_card[0], 1: got.same_card[1]}, {}, {}, (), ())


def test_the_pces_are_those_of_the_engine_the_run_drives():
    """pick_lce takes the LCE whose caps name NVLink P2P (LCE 4 here, 0x3f: 6 PCEs) over one with
    more PCEs: 6 x 46.58 x 0.9 = 251.532."""
    c = card(0)
    c.ce_caps = {2: ["CE_GRCE"], 3: [], 4: ["CE_NVLINK_P2P"]}
    c.ce_pces = {2: 0xFFFF, 3: 0xFFF, 4: 0x3F}
    got = derive_floors([c], {}, {}, load_efficiencies(), CLASS_NUMBERS)
    assert got.same_card == {0: Floor(251.5, DERIVED, f"6 PCEs x 46.580 GB/s x 0.9 = 251.5 GB/s ({HOPPER_FROM})")}
    c.unread = {"ce_pces[3]": "NV_ERR_NOT_SUPPORTED"}       # another engine's mask unread: no matter here
    assert derive_floors([c], {}, {}, load_efficiencies(), CLASS_NUMBERS).same_card[0].gbps == 251.5
    c.ce_pces = {2: 0xFFFF}                                  # the engine's mask not reported: no PCE
    assert derive_floors([c], {}, {}, load_efficiencies(), CLASS_NUMBERS).missing == (
        "card 0: RM reports no PCE of its copy engine",)


def test_module_constants_are_the_names_rm_and_the_file_use():
    assert dv.NVLINK_CAP == "NVLINK_SUPPORTED" and dv.PCIE_CAPS == ("READS_SUPPORTED", "WRITES_SUPPORTED")
    assert (dv.SWITCH, dv.GPU) == ("SWITCH", "GPU")
    assert (CALIBRATED, DERIVED, PROVISIONAL) == ("calibrated", "derived", "provisional")
