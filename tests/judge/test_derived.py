"""Floors derived from what RM reports (rmpeer.judge.derived) and how a host's floors are chosen
(rmpeer.judge.floors.resolve_floors): calibrated where topologies.yaml measured the host, derived
elsewhere, "no floors" only where RM reports too little, and never silently.

The facts come from the committed recordings (their RM replies, replayed by the passive
tier); the expected floors from topologies.yaml's measured entries, the PCI Express
specification's lane rates, and RM's own reply fields, never from the function under test."""

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.judge.derived import derive_floors, load_efficiencies
from rmpeer.errors import MatrixError
from rmpeer.judge.floors import ANY, HostFloors, class_numbers, judge_bandwidth, resolve_floors
from rmpeer.run.execute import run_passive
from rmpeer.paths import matrices_dir
from rmpeer.model.host import HostFacts
from rmpeer.run.targets import replay_target
from rmpeer.tables.topology import TopologyMatrix

from source_mutation import mutated

pytestmark = pytest.mark.offline
TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
TWO = TRANSCRIPTS / "h200x2-20261130T151653Z.jsonl.gz"
ONE = TRANSCRIPTS / "h200x1-20261130T003119Z.jsonl.gz"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """{name: (HostFacts, links)} as RM answered on the recorded hosts."""
    out = {}
    for name, path in (("two", TWO), ("one", ONE)):
        r = run_passive(replay_target(str(path)), save=False, state_path=tmp_path_factory.mktemp(name) / "s.json")
        out[name] = (HostFacts.from_dict(r.host), {int(k): v for k, v in r.links.items()})
    return out


def _derive(facts, links, module=None):
    derive, load = (module.derive_floors, module.load_efficiencies) if module else (derive_floors, load_efficiencies)
    return derive(facts.cards, facts.p2p, links, load(), class_numbers(facts))


# -- derived floors reproduce the calibrated ones ---------------------------------------------

def reproduces_h200x2(derived) -> bool:
    """Within 5% of h200x2-nv18's calibrated floors, every kind, every pair and card."""
    calibrated = TopologyMatrix().get("h200x2-nv18").floors
    pairs = [(derived.cross_card, calibrated.cross_card_gbps, 2), (derived.same_card, calibrated.same_card_gbps, 2),
             (derived.bidirectional, calibrated.bidirectional_gbps, 1)]
    return all(len(table) == n and all(abs(f.gbps - want) <= 0.05 * want for f in table.values())
               for table, want, n in pairs)


def test_derived_floors_reproduce_the_calibrated_h200x2_floors_within_5_percent(recorded):
    facts, links = recorded["two"]
    derived = _derive(facts, links)
    assert derived.missing == () and reproduces_h200x2(derived)
    # the formula's figures are RM's: 106250 Mbps per lane x 2 lanes (the recorded reply), 18 links
    link = links[0]["links"][0]
    assert (link["line_rate_mbps"], link["sublink_width"], len(links[0]["links"])) == (106250, 2, 18)
    assert derived.cross_card[(0, 1)].formula == ("18 links x 26.562 GB/s x 0.743 = 355.2 GB/s "
                                                  "(derived; efficiency calibrated on 2 x H200)")
    assert derived.cross_card[(0, 1)].basis == "derived"
    assert derived.same_card[0].formula.startswith("12 PCEs x 46.580 GB/s x 0.9 = 503.1 GB/s (derived;")
    assert bin(facts.cards[0].ce_pces[4]).count("1") == 12      # LCE 4, the NVLink P2P engine (0xfff)


def test_the_one_card_floor_is_derived_the_same_way(recorded):
    facts, links = recorded["one"]
    derived = _derive(facts, links)
    want = TopologyMatrix().get("h200x1").floors.same_card_gbps
    assert list(derived.same_card) == [0] and abs(derived.same_card[0].gbps - want) <= 0.05 * want
    assert derived.cross_card == {} and derived.missing == ()


@pytest.mark.parametrize("old, new", [
    ('return rate * width / 8000 if rate and width else None', 'return rate / 8000 if rate and width else None'),
    ('direct_n + switch_n, ', 'direct_n + switch_n // 2, '),
    ('_floor(2 * n, ', '_floor(n, '),
    ('bin(c.ce_pces.get(lce, 0))', 'bin(c.ce_pces.get(0, 0))'),
])
def test_mutation_a_wrong_rate_link_count_or_engine_misses_the_calibrated_floors(recorded, old, new):
    facts, links = recorded["two"]
    assert not reproduces_h200x2(_derive(facts, links, mutated("rmpeer.judge.derived", old, new)))


# -- an 8-card NVSwitch host gets derived floors ------------------------------------------------

def hgx(facts, links, cards: int = 8, model: str | None = None):
    """The real H200 facts and NVLink readings of a recording, copied to `cards` cards with
    an HGX board's P2P matrix: every pair joined through NVSwitch, as card 0->1 was."""
    card0, pair = facts.cards[0], facts.p2p[(0, 1)]
    made = []
    for i in range(cards):
        made.append(dataclasses.replace(card0, index=i, minor=i, gpu_id=card0.gpu_id + i, pci=f"0000:{0x18 + i:02x}:00.0",
                                        uuid=f"GPU-{i:08x}-0000-0000-0000-000000000000", name=model or card0.name))
    p2p = {(a, b): copy.deepcopy(pair if a != b else facts.p2p[(0, 0)]) for a in range(cards) for b in range(cards)}
    readings = {i: {**copy.deepcopy(links[0]), "card": i} for i in range(cards)}
    return dataclasses.replace(facts, cards=made, p2p=p2p), readings


@pytest.mark.parametrize("entry, model", [("hgx-h200x8-nvswitch", None), ("hgx-h100x8-nvswitch", "NVIDIA H100 80GB HBM3")])
def test_an_hgx_host_gets_derived_floors_never_no_floors(recorded, entry, model):
    facts, links = hgx(*recorded["two"], model=model)
    matrix = TopologyMatrix()
    assert matrix.match(facts).name == entry and matrix.get(entry).floors is None
    floors, findings = resolve_floors(facts, links, matrix)
    assert findings == [] and isinstance(floors, HostFloors)
    assert len(floors.cross_card) == 8 * 7 and len(floors.bidirectional) == 28 and len(floors.same_card) == 8
    assert {f.gbps for f in floors.cross_card.values()} == {355.2}
    assert {f.basis for t in (floors.cross_card, floors.same_card, floors.bidirectional) for f in t.values()} == {"derived"}
    slow = [{"src_card": 3, "dst_card": 6, "op": "read", "bytes": 256 << 20, "gbps": 240.0}]
    (found,) = judge_bandwidth(floors, slow)
    assert found["level"] == "FAIL" and "18 links x 26.562 GB/s x 0.743 = 355.2 GB/s" in found["message"]


def _refused_pce_masks(tmp_path):
    """The facts of TWO as rmpeer.rm.host reads them when RM answers every
    CE_GET_CE_PCE_MASK with NV_ERR_NOT_SUPPORTED: the recording with those replies changed
    (tools/status_sweep.py's derive, as the status sweep changes one reply), replayed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("status_sweep", TRANSCRIPTS.parents[1] / "tools" / "status_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    lines = sweep._lines(TWO)
    abi = DriverMatrix().abi(next(x for x in lines if x.get("note") == "driver")["abi"])
    for seq in [x["seq"] for x in lines if x.get("op") == "ioctl" and x.get("label") == "host:ce-pces"]:
        lines, _ = sweep.derive(lines, abi, seq, "NV_ERR_NOT_SUPPORTED")
    path = sweep.write(lines, tmp_path / "ce-pces-refused.jsonl.gz")
    r = run_passive(replay_target(str(path)), save=False, state_path=tmp_path / "s.json")
    return HostFacts.from_dict(r.host), {int(k): v for k, v in r.links.items()}


REFUSED_PCES = "RM did not answer for its copy engine's PCEs (NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: NV_ERR_NOT_SUPPORTED)"


def test_a_pce_mask_rm_refused_is_no_floor_check_never_no_pces(tmp_path):
    """An HGX host (no calibrated floor) whose PCE masks RM refused: the same-card floor,
    which is derived from the PCE count, could not be derived, and the check says why
    (INCOMPLETE). Before: the mask read as 0 and the run was DEGRADED "RM reports no PCE of
    its copy engine", a statement about the cards that RM never made."""
    facts, links = _refused_pce_masks(tmp_path)
    assert all(c.unread and set(c.unread.values()) == {"NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: NV_ERR_NOT_SUPPORTED"}
               for c in facts.cards), [c.unread for c in facts.cards]
    facts, links = hgx(facts, links)
    floors, findings = resolve_floors(facts, links, TopologyMatrix())
    assert floors.same_card == {} and len(floors.cross_card) == 8 * 7     # the links need no PCE count
    assert [(f.severity, f.found) for f in findings] == [
        ("incomplete", f"no floor derived: card {i}: {REFUSED_PCES}") for i in range(8)]
    assert not any("RM reports no PCE" in f.found for f in findings)


def test_a_card_with_fewer_links_enabled_gets_a_lower_floor_not_a_down_link(recorded):
    """12 of 18 links enabled on every card (as on H100 PCIe NVL): the floor follows RM."""
    facts, links = hgx(*recorded["two"], cards=2)
    for reading in links.values():
        reading["links"] = reading["links"][:12]
    floors = _derive(facts, links)
    assert floors.cross_card[(0, 1)].formula.startswith("12 links x 26.562 GB/s x 0.743 = 236.8 GB/s")


# -- provisional, PCIe, too little to derive --------------------------------------------------

def _with_copy_class(facts, old: str, new: str):
    """The recorded cards listing another generation's copy class instead of Hopper's."""
    numbers = class_numbers(facts)
    cards = [dataclasses.replace(c, classes=sorted({*c.classes} - {numbers[old]} | ({numbers[new]} if new else set())))
             for c in facts.cards]
    return dataclasses.replace(facts, cards=cards)


def test_an_unmeasured_generation_gets_provisional_floors_that_say_so(recorded):
    facts, links = recorded["two"]
    ampere = _with_copy_class(facts, "HOPPER_DMA_COPY_A", "AMPERE_DMA_COPY_B")
    floors = _derive(ampere, links)
    assert {f.basis for f in floors.cross_card.values()} == {"provisional"}
    assert "provisional; efficiency 0.743 not measured: Hopper's efficiency; not measured on Ampere" in \
        floors.cross_card[(0, 1)].formula


def test_a_card_listing_an_older_copy_class_too_is_of_its_newest_generation(recorded):
    facts, links = recorded["two"]
    numbers = class_numbers(facts)
    both = dataclasses.replace(facts, cards=[dataclasses.replace(c, classes=sorted({*c.classes, numbers["AMPERE_DMA_COPY_B"]}))
                                             for c in facts.cards])
    assert {f.basis for f in _derive(both, links).cross_card.values()} == {"derived"}      # Hopper's, measured
    blackwell = dataclasses.replace(both, cards=[dataclasses.replace(c, classes=sorted({*c.classes, numbers["BLACKWELL_DMA_COPY_A"]}))
                                                 for c in both.cards])
    assert "not measured on Blackwell" in _derive(blackwell, links).cross_card[(0, 1)].formula


def _pcie(facts, **link):
    cards = [dataclasses.replace(c) for c in facts.cards]
    for c in cards:
        c.health = {"pcie": dict(link)} if link else {}
    p2p = {k: {**v, "caps": [x for x in v["caps"] if x != "NVLINK_SUPPORTED"]} for k, v in facts.p2p.items()}
    return dataclasses.replace(facts, cards=cards, p2p=p2p)


def test_a_pcie_pair_gets_a_provisional_floor_from_width_and_generation(recorded):
    facts, links = recorded["two"]
    pcie = _pcie(facts, gen=5, width=16, max_gen=5, max_width=16)
    floors = _derive(pcie, {})
    # PCIe gen 5: 32 GT/s x 128/130 / 8 bits = 3.938 GB/s per lane, one direction
    assert floors.cross_card[(0, 1)].gbps == round(16 * 32 * 128 / 130 / 8 * 0.7, 1) == 44.1
    assert floors.cross_card[(0, 1)].basis == "provisional" and "16 lanes (PCIe gen 5)" in floors.cross_card[(0, 1)].formula
    assert floors.bidirectional[(0, 1)].gbps == round(2 * 16 * 32 * 128 / 130 / 8 * 0.7, 1)
    narrow = _derive(_pcie(facts, gen=4, width=8, max_gen=5, max_width=16), {})
    # trained at x8: the narrower width counts, and the maximum generation (it drops at idle)
    assert narrow.cross_card[(0, 1)].gbps == round(8 * 32 * 128 / 130 / 8 * 0.7, 1)


def test_a_pcie_pair_whose_link_rm_did_not_report_is_a_degrade_naming_it(recorded):
    facts, _ = recorded["two"]
    floors, findings = resolve_floors(_pcie(facts), {}, TopologyMatrix())
    assert floors is not None and floors.cross_card == {}       # same card still derived
    assert [(f.severity, f.found) for f in findings][:1] == [
        ("degraded", "no floor derived: cards 0->1: P2P over PCIe, but cards 0 and 1: RM's PCIe link width and "
                     "generation not read")]


def test_no_floors_only_where_rm_reports_too_little_and_never_silently(recorded):
    facts, links = recorded["two"]
    bare = _with_copy_class(facts, "HOPPER_DMA_COPY_A", None)
    matrix = TopologyMatrix()
    floors, findings = resolve_floors(bare, links, matrix, expected="hgx-h200x8-nvswitch")
    assert floors is None and len(findings) == 1 and findings[0].severity == "degraded"
    assert "no floors for this host" in findings[0].found and "its copy-engine class is none" in findings[0].found
    floors, findings = resolve_floors(bare, links, matrix, expected="hgx-h200x8-nvswitch", no_floors=True)
    assert floors is None and [f.severity for f in findings] == ["info"] and "--no-floors" in findings[0].found


def test_a_calibrated_entry_comes_first_and_no_floors_keeps_only_it(recorded):
    facts, links = recorded["two"]
    floors, findings = resolve_floors(facts, links, TopologyMatrix())
    assert findings == [] and floors.name == "h200x2-nv18"
    assert floors.cross_card[ANY].gbps == 355 and floors.cross_card[ANY].basis == "calibrated"
    only, _ = resolve_floors(*hgx(*recorded["two"]), TopologyMatrix(), no_floors=True)
    assert only is None
    kept, findings = resolve_floors(facts, links, TopologyMatrix(), no_floors=True)
    assert findings == [] and kept.name == "h200x2-nv18" and kept.cross_card[ANY].gbps == 355


# -- efficiencies.yaml is schema-checked -------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda d: d["generations"]["hopper"]["nvlink"].update(efficiency=0.8), r"disagrees with the measurement"),
    (lambda d: d["generations"]["hopper"]["nvlink"].update(status="guessed"), r"'guessed' is not one of"),
    (lambda d: d["generations"]["ampere"]["nvlink"].pop("note"), r"provisional efficiency needs a note"),
    (lambda d: d["generations"]["ampere"]["nvlink"].update(efficiency=1.2), r"a fraction above 0 and at most 1"),
    (lambda d: d["generations"]["hopper"]["nvlink"].update(efficency=1), r"unknown key 'efficency'.*'efficiency'"),
    (lambda d: d["generations"]["hopper"]["nvlink"]["measured"].pop("evidence"), r"evidence"),
    (lambda d: d["generations"]["hopper"]["same_card"].update(per_pce_gbps=60), r"per_pce_gbps.*disagrees"),
])
def test_a_wrong_efficiency_file_is_refused_naming_the_entry(tmp_path, change, message):
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    change(data)
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MatrixError, match=message):
        load_efficiencies(path)


def _class_names():
    from rmpeer.abi import DriverMatrix

    return {c for entry in DriverMatrix().entries for c in entry.get("classes") or {}}


def test_a_copy_class_drivers_yaml_does_not_name_is_refused(tmp_path):
    """A typo of a class name matched no card: every host relying on derived floors (the HGX
    entries) was DEGRADED, "no floors for this host"."""
    assert load_efficiencies(class_names=_class_names()).generations["hopper"].copy_classes == ("HOPPER_DMA_COPY_A",)
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    data["generations"]["hopper"]["copy_classes"] = ["HOPPER_DMA_COPY_AX"]
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MatrixError) as err:
        load_efficiencies(path, class_names=_class_names())
    assert str(err.value) == f"{path}: generation hopper.copy_classes: 'HOPPER_DMA_COPY_AX' is not a class of drivers.yaml"


def test_a_copy_class_in_two_generations_is_refused(tmp_path):
    """A card of that class took the generation written first in the file, whichever it was:
    its floors would follow the file's order."""
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    later = [name for name in data["generations"] if name != "hopper"][0]
    data["generations"][later]["copy_classes"].append("HOPPER_DMA_COPY_A")
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(MatrixError) as err:
        load_efficiencies(path, class_names=_class_names())
    assert str(err.value) == (f"{path}: generation {later}.copy_classes: 'HOPPER_DMA_COPY_A' is already a class of "
                              "generation hopper: a class belongs to one generation")


@pytest.mark.parametrize("where, value", [
    (("same_card", "per_pce_gbps"), "x"), (("same_card", "per_pce_gbps"), [46.58]),
    (("same_card", "per_pce_gbps"), float("nan")), (("same_card", "per_pce_gbps"), -46.58),
    (("same_card", "measured"), -1), (("same_card", "measured"), 10**30), (("nvlink", "measured"), "x"),
    (("same_card", "measured", "pces"), 0), (("same_card", "measured", "pces"), "12"),
    pytest.param(("same_card", "measured", "pces"), 10**400, id="pces-400-digits"), (("same_card", "measured", "median_gbps"), "fast"),
    (("nvlink", "measured", "margin"), [0.9]), (("nvlink", "measured", "nominal_gbps"), 0),
    (("nvlink", "measured", "median_gbps"), float("inf")), (("nvlink", "measured", "host"), 2),
])
def test_a_value_of_the_wrong_type_or_range_is_refused_naming_its_key(tmp_path, where, value):
    """A wrong type in a kind's entry is named before any arithmetic runs on it (a TypeError,
    a ZeroDivisionError or an OverflowError was exit 5)."""
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    entry = data["generations"]["hopper"]
    for key in where[:-1]:
        entry = entry[key]
    entry[where[-1]] = value
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MatrixError) as err:
        load_efficiencies(path)
    key = ".".join(where)
    assert str(err.value).startswith(f"{path}: generation hopper.{key}: must be ")


def test_a_pcie_lane_rate_that_is_no_finite_number_is_refused(tmp_path):
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    data["pcie_lane_gbps"][4] = float("inf")
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MatrixError, match=r"pcie_lane_gbps\.4: must be"):
        load_efficiencies(path)


def test_the_shipped_efficiencies_agree_with_their_measurements():
    eff = load_efficiencies()
    hopper = eff.generations["hopper"].kinds
    # 0.9 x the slowest one-direction median of the 2 x H200 certificate / 18 x 26.5625 GB/s
    assert abs(hopper["nvlink"].efficiency - 0.9 * 394.48 / (18 * 106250 * 2 / 8000)) < 0.001
    assert {k: v.status for k, v in eff.generations["ampere"].kinds.items()} == dict.fromkeys(
        ("nvlink", "nvlink_bidirectional", "same_card", "pcie"), "provisional")
    assert hopper["pcie"].status == "provisional"
    numbers = DriverMatrix().abi("580.65.06").classes
    assert all(name in numbers for g in eff.generations.values() for name in g.copy_classes)


@pytest.mark.parametrize("old, new", [
    ('        return None, [Finding(FLOOR_CHECK, "host", FLOOR_EXPECTED, found,\n', "        return None, [] and [Finding(FLOOR_CHECK, \"host\", FLOOR_EXPECTED, found,\n"),
    ("    uncovered = [m for m in derived.missing if not _covered(m, base)]", "    uncovered = []"),
])
def test_mutation_a_host_left_without_a_floor_is_never_silent(recorded, old, new):
    facts, links = recorded["two"]
    cases = [(_with_copy_class(facts, "HOPPER_DMA_COPY_A", None), links, "hgx-h200x8-nvswitch"), (_pcie(facts), {}, None)]
    broken = mutated("rmpeer.judge.floors", old, new)
    for bare, readings, expected in cases:
        assert [f.severity for f in resolve_floors(bare, readings, TopologyMatrix(), expected=expected)[1]][:1] == ["degraded"]
    assert any(broken.resolve_floors(bare, readings, TopologyMatrix(), expected=expected)[1] == []
               for bare, readings, expected in cases)


def test_mutation_a_fixed_link_count_would_fail_links_disabled_by_design():
    from rmpeer.judge.nvlink import check_active

    twelve = {"card": 0, "supported": True, "active": 12,
              "links": [{"index": i, "state": "ACTIVE", "active": True, "connected": True} for i in range(12)]}
    assert check_active(twelve, 18) == []
    fixed = mutated("rmpeer.judge.nvlink", "    elif not enabled and expected:", "    elif len(enabled) != expected:")
    assert fixed.check_active(twelve, 18) != []


def test_mutation_an_efficiency_that_disagrees_with_its_measurement_gets_through_without_the_check(tmp_path):
    data = yaml.safe_load((matrices_dir() / "efficiencies.yaml").read_text())
    data["generations"]["hopper"]["nvlink"]["efficiency"] = 0.8
    path = tmp_path / "efficiencies.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MatrixError):
        load_efficiencies(path)
    lax = mutated("rmpeer.judge.derived", "    if abs(stated - computed) > AGREE * computed:", "    if False:")
    assert lax.load_efficiencies(path).generations["hopper"].kinds["nvlink"].efficiency == 0.8


def test_mutation_the_narrower_link_counts(recorded):
    facts, _ = recorded["two"]
    pcie = _pcie(facts)
    for c, width in zip(pcie.cards, (8, 16)):
        c.health = {"pcie": {"gen": 5, "width": width, "max_gen": 5, "max_width": 16}}
    want = round(8 * 3.938 * 0.7, 1)          # the x8 card's lanes
    assert _derive(pcie, {}).cross_card[(0, 1)].gbps == want
    wide = mutated("rmpeer.judge.derived", "    return min(widths), min(gens)", "    return max(widths), min(gens)")
    assert _derive(pcie, {}, wide).cross_card[(0, 1)].gbps != want


def test_mutation_the_newest_copy_class_names_the_generation(recorded):
    facts, links = recorded["two"]
    numbers = class_numbers(facts)
    both = dataclasses.replace(facts, cards=[dataclasses.replace(c, classes=sorted({*c.classes, numbers["AMPERE_DMA_COPY_B"]}))
                                             for c in facts.cards])
    oldest = mutated("rmpeer.judge.derived", "return max(listed, key=lambda ng: ng[0])[1] if listed else None",
                     "return min(listed, key=lambda ng: ng[0])[1] if listed else None")
    assert _derive(both, links).cross_card[(0, 1)].basis == "derived"
    assert _derive(both, links, oldest).cross_card[(0, 1)].basis == "provisional"


def test_a_down_link_is_judged_on_a_host_no_entry_names():
    from rmpeer.judge.verdict import link_findings

    links = [{"index": i, "state": "ACTIVE" if i else "FAIL", "active": bool(i), "connected": True} for i in range(18)]
    health = {"card": 0, "supported": True, "active": 17, "links": links}
    found = link_findings(0, health, None, None)
    assert [(f.check, f.found) for f in found][:1] == [("nvlink-active", "card 0: 17 of 18 enabled NVLinks active")]
    blind = mutated("rmpeer.judge.nvlink", "    if not health.get(\"supported\"):\n        return []",
                    "    if expected is None or not health.get(\"supported\"):\n        return []")
    assert blind.check_active(health, None) == []


def test_a_pair_an_entry_calibrates_no_floor_for_is_still_named_when_none_is_derived(recorded):
    """--expect-topology h200x1 on the 2 x H200 recording with its PCIe link unread: h200x1
    calibrates the same card only (matrices/topologies.yaml, read with yaml), so the pair
    0->1, left with no floor derived either, is a DEGRADE naming it, not covered by the
    card's floor."""
    stated = yaml.safe_load((matrices_dir() / "topologies.yaml").read_text())["topologies"]["h200x1"]["floors"]
    assert "cross_card_gbps" not in stated and "same_card_gbps" in stated
    facts, _ = recorded["two"]
    floors, findings = resolve_floors(_pcie(facts), {}, TopologyMatrix(), expected="h200x1")
    assert floors.same_card[ANY].gbps == stated["same_card_gbps"] and floors.cross_card == {}
    assert {(f.severity, f.found.split(":")[0] + ":" + f.found.split(":")[1]) for f in findings} == {
        ("degraded", "no floor derived: cards 0->1"), ("degraded", "no floor derived: cards 1->0")}


def test_a_pair_counts_the_fewer_connected_links_of_its_two_cards_at_the_slowest_rate(recorded):
    """Two cards of the recorded NV18 readings (18 links into the NVSwitch fabric, 26.562 GB/s
    a link each way, the formula above): card 1 with 12 of its links enabled beside card 0's
    18, or card 0 with 6 of its 18 not connected beside card 1's 18: the pair is joined by 12
    links, either way. Then one of card 0's links at half the line rate: the slowest link
    bounds every link's share (18 x 13.281 GB/s)."""
    def fewer(card, change):
        facts, links = hgx(*recorded["two"], cards=2)
        change(links[card])
        return _derive(facts, links)

    def unconnected(reading):
        for link in reading["links"][:6]:
            link["connected"] = False

    for floors in (fewer(1, lambda r: r.update(links=r["links"][:12])), fewer(0, unconnected)):
        for pair in ((0, 1), (1, 0)):
            assert floors.cross_card[pair].formula.startswith("12 links x 26.562 GB/s x 0.743 = 236.8 GB/s"), pair
    facts, links = hgx(*recorded["two"], cards=2)
    links[0]["links"][0]["line_rate_mbps"] //= 2
    assert _derive(facts, links).cross_card[(0, 1)].formula.startswith("18 links x 13.281 GB/s")


def test_the_certificate_states_the_lowest_floor_of_each_kind(recorded):
    """as_dict keeps each kind's lowest floor, as topologies.yaml states one floor per kind:
    on two cards, one with 12 of 18 links enabled, the 12-link floor (236.8 GB/s, above)."""
    facts, links = hgx(*recorded["two"], cards=2)
    links[1]["links"] = links[1]["links"][:12]
    full = _derive(facts, {0: links[0], 1: links[0] | {"card": 1}}).cross_card[(0, 1)]
    floors = HostFloors("derived", cross_card={(0, 1): full, (1, 0): _derive(facts, links).cross_card[(1, 0)]})
    assert (full.gbps, floors.as_dict()["cross_card_gbps"]) == (355.2, 236.8)
