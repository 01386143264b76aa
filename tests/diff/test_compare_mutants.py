"""`rmpeer diff`'s comparison (rmpeer/diff/compare.py), aspect by aspect, on two runs' Sides
built here by hand: which differences, notes and reasons each aspect gives. Written to kill
the mutants mutmut left alive (docs/mutation.md). The expected values come from the rules in
compare.py's docstring (volatile readings left out, a field one side lacks "not comparable",
a step or check one side's rmpeer never made "only in A/B", only the layouts both ran), the
VOLATILE, IDENTITY and CLOCK_PHASES tables of rmpeer/diff/side.py, and arithmetic done by hand
on the inputs; every one is spelled out."""

from __future__ import annotations

from collections import Counter

import pytest

from rmpeer.diff import compare as cp
from rmpeer.diff.side import MISSING, Side

pytestmark = pytest.mark.offline


def side(name="a", kind="transcript", context=None, **fields) -> Side:
    s = Side(name, kind, context=dict(context or {}))
    for key, value in fields.items():
        setattr(s, key, value)
    return s


def transcript(calls, name="a", layouts=None, **kw) -> Side:
    return side(name, calls=list(calls), layouts=layouts, sources={"calls": "the transcript"}, **kw)


EVERYTHING = cp.Coverage(None)


# ---- volatile_rule, Aspect, Coverage ---------------------------------------------------------

@pytest.mark.parametrize("key, rule", [
    ("created", "timestamps"), ("started", "timestamps"), ("t_ns", "timestamps"), ("ended_at", "timestamps"),
    ("duration_s", "durations"), ("elapsed", "durations"), ("wall_s", "durations"),
    ("fb_free_mb", "free memory"), ("temperature", "temperatures"), ("gpu_temp_c", "temperatures"),
    ("power_w", "power and utilisation"), ("util", "power and utilisation"),
    ("sbe", "health counters"), ("gen", "health counters"),
    ("pstate", None), ("graphics_mhz", None), ("created_by", None), ("at", None), (7, None),
])
def test_a_field_is_left_out_by_the_first_volatile_rule_its_whole_name_matches(key, rule):
    assert cp.volatile_rule(key) == rule


def test_an_aspect_starts_empty_and_differs_only_with_a_difference():
    a = cp.Aspect("x")
    assert (a.name, a.source, a.differences, a.info, a.not_comparable, a.left_out, a.absent) == \
        ("x", "", [], [], "", Counter(), [])
    assert a.differs is False
    a.differences.append(("k", 1, 2))
    assert a.differs is True


def test_coverage_is_the_layouts_both_ran_in_each_sides_order():
    a, b = side(layouts=["l1", "l2", "l3", "l5"]), side("b", layouts=["l4", "l3", "l1", "l6"])
    got = cp.coverage(a, b)
    assert (got.common, got.only_a, got.only_b) == ({"l1", "l3"}, ["l2", "l5"], ["l4", "l6"])
    assert got.includes("l1") and got.includes("l3") and not got.includes("l2") and not got.includes("l4")
    assert got.includes(None)          # a call of no layout is every layout's


@pytest.mark.parametrize("la, lb", [(None, ["l1"]), (["l1"], None), (None, None)])
def test_a_side_that_does_not_say_which_layouts_it_ran_compares_every_layout(la, lb):
    got = cp.coverage(side(layouts=la), side("b", layouts=lb))
    assert (got.common, got.only_a, got.only_b) == (None, [], [])
    assert got.includes("anything") and got.includes(None)


# ---- _counts, _why_not -----------------------------------------------------------------------

def test_outcomes_are_counted_most_common_first():
    assert cp._counts([]) == "not called"
    assert cp._counts(["NV_ERR_X", "NV_OK", "NV_OK"]) == "NV_OK x2, NV_ERR_X x1"


@pytest.mark.parametrize("why_a, why_b, said", [
    ("no calls recorded", "no calls recorded", "A and B: no calls recorded"),
    ("no calls recorded", "an older format", "A: no calls recorded; B: an older format"),
    (None, "an older format", "B: an older format"),
    ("no calls recorded", None, "A: no calls recorded"),
    (None, None, "neither file records it"),
])
def test_why_an_aspect_cannot_be_compared_names_the_files_that_lack_it(why_a, why_b, said):
    a = side(why_not={"calls": why_a} if why_a else {"clocks": "other"})
    b = side("b", why_not={"calls": why_b} if why_b else {})
    assert cp._why_not(a, b, "calls") == said


# ---- compare_calls ---------------------------------------------------------------------------

SOURCE = "every call's outcome, grouped by its step label"


def test_calls_one_side_does_not_record_are_not_comparable_in_both_aspects():
    a = transcript([("l1", "setup:map", "NV_OK")])
    b = side("b", kind="certificate", why_not={"calls": "a certificate holds no calls"})
    statuses, counts = cp.compare_calls(a, b, EVERYTHING)
    for aspect, name in ((statuses, "RM statuses"), (counts, "RM call counts")):
        assert (aspect.name, aspect.source, aspect.not_comparable) == (name, SOURCE, "B: a certificate holds no calls")
        assert aspect.differences == [] and aspect.info == []
    statuses, counts = cp.compare_calls(b, a, EVERYTHING)
    assert statuses.not_comparable == counts.not_comparable == "A: a certificate holds no calls"


def test_calls_read_from_different_sources_are_not_comparable():
    a = transcript([(None, "setup:map", "NV_OK")])
    b = transcript([(None, "setup:map", "NV_ERR")], name="b")
    b.sources = {"calls": "a certificate's steps"}
    statuses, counts = cp.compare_calls(a, b, EVERYTHING)
    assert statuses.not_comparable == counts.not_comparable == "A holds the transcript, B a certificate's steps"
    assert statuses.differences == counts.differences == []


def test_a_status_a_count_and_an_order_that_differ_each_go_to_their_aspect_in_label_order():
    a = transcript([(None, "z:order", s) for s in ("S1", "S2", "S3", "S4", "S5", "S6", "S7")]
                   + [(None, "m:count", "NV_OK"), (None, "m:count", "NV_OK"), (None, "a:status", "NV_OK"),
                      (None, "b:same", "NV_OK"), (None, "b:same", "NV_ERR")])
    b = transcript([(None, "z:order", s) for s in ("S7", "S1", "S2", "S3", "S4", "S5", "S6")]
                   + [(None, "m:count", "NV_OK"), (None, "a:status", "NV_ERR_INVALID_ARGUMENT"),
                      (None, "b:same", "NV_OK"), (None, "b:same", "NV_ERR")], name="b")
    statuses, counts = cp.compare_calls(a, b, EVERYTHING)
    assert statuses.differences == [("a:status", "NV_OK x1", "NV_ERR_INVALID_ARGUMENT x1"),
                                    ("z:order", "order: S1 S2 S3 S4 S5 S6", "order: S7 S1 S2 S3 S4 S5")]
    assert counts.differences == [("m:count", "NV_OK x2", "NV_OK x1")]
    assert statuses.info == counts.info == [] and statuses.not_comparable == counts.not_comparable == ""
    assert (statuses.name, counts.name, statuses.source, counts.source) == ("RM statuses", "RM call counts",
                                                                            SOURCE, SOURCE)


def test_calls_of_a_layout_only_one_side_ran_are_left_out():
    a = transcript([("l1", "setup:map", "NV_OK"), ("l2", "ce:copy", "NV_ERR")], layouts=["l1", "l2"])
    b = transcript([("l1", "setup:map", "NV_OK")], name="b", layouts=["l1"])
    statuses, counts = cp.compare_calls(a, b, cp.coverage(a, b))
    assert statuses.differences == counts.differences == [] and statuses.info == []
    statuses, _ = cp.compare_calls(a, b, EVERYTHING)        # every layout: ce:copy is a step B never called
    assert statuses.differences == [("ce:copy", "NV_ERR x1", "not called")]


MANIFEST = {"families": ["setup:map", "probe:x"], "checks": [], "fields": [], "figures": []}


def _made(families):
    return {"families": sorted(families), "checks": [], "fields": [], "figures": []}


@pytest.mark.parametrize("older", ["A", "B"])
def test_a_family_one_sides_rmpeer_never_made_is_named_not_a_difference(older):
    old = transcript([(None, "setup:map", "NV_OK")], name="old",
                     context={"rmpeer": "0.1.0", "created": "2026-11-30T00:00:00Z"}, manifest=_made({"setup:map"}))
    new = transcript([(None, "setup:map", "NV_OK"), (None, "probe:x:card0", "NV_OK"), (None, "probe:x:card1", "NV_OK"),
                      (None, "gpu:y", "NV_OK")], name="new",
                     context={"rmpeer": "0.2.0", "created": "2026-12-05T00:00:00Z"},
                     manifest=_made({"setup:map", "probe:x", "gpu:y"}))
    a, b = (old, new) if older == "A" else (new, old)
    statuses, counts = cp.compare_calls(a, b, EVERYTHING)
    assert statuses.differences == counts.differences == []
    newer = "B" if older == "A" else "A"
    who = {"old": "rmpeer 0.1.0, made 2026-11-30T00:00:00Z, by its manifest",
           "new": "rmpeer 0.2.0, made 2026-12-05T00:00:00Z, by its manifest"}
    assert statuses.info == [f"not comparable (only in {newer}): 3 step(s) of gpu:y:*, probe:x:*, which {older}'s "
                             f"rmpeer never made (A: {who[a.path]}; B: {who[b.path]})"]
    assert counts.info == []


def test_a_missing_step_of_a_family_the_side_called_otherwise_differs_even_if_its_rmpeer_never_made_it():
    """unknown only where the side made no call of that family at all."""
    a = transcript([(None, "probe:x:card0", "NV_OK")], manifest=_made(set()))
    b = transcript([(None, "probe:x:card0", "NV_OK"), (None, "probe:x:card1", "NV_OK")], name="b",
                   manifest=_made({"probe:x"}))
    statuses, _ = cp.compare_calls(a, b, EVERYTHING)
    assert statuses.differences == [("probe:x:card1", "not called", "NV_OK x1")] and statuses.info == []
    statuses, _ = cp.compare_calls(b, a, EVERYTHING)
    assert statuses.differences == [("probe:x:card1", "NV_OK x1", "not called")] and statuses.info == []


def test_a_family_both_rmpeers_made_that_one_side_did_not_call_differs():
    a = transcript([(None, "setup:map", "NV_OK")], manifest=_made({"setup:map", "alloc:p2p"}))
    b = transcript([(None, "setup:map", "NV_OK"), (None, "alloc:p2p", "NV_OK")], name="b",
                   manifest=_made({"setup:map", "alloc:p2p"}))
    statuses, _ = cp.compare_calls(a, b, EVERYTHING)
    assert statuses.differences == [("alloc:p2p", "not called", "NV_OK x1")] and statuses.info == []
    statuses, _ = cp.compare_calls(b, a, EVERYTHING)
    assert statuses.differences == [("alloc:p2p", "NV_OK x1", "not called")] and statuses.info == []


# ---- _unknown, _made_by, _check_unmade -------------------------------------------------------

def test_a_family_is_unknown_to_a_side_by_its_manifest_first():
    made = side(manifest=_made({"setup:map"}), unmade={"setup:map"})
    other = side("b")
    assert cp._unknown(made, other, "probe:x") is True
    assert cp._unknown(made, other, "setup:map") is False      # the manifest says it made it: unmade not read


@pytest.mark.parametrize("mine, theirs, recorded, unmade, unknown", [
    ("t1", "t2", {"setup:map"}, set(), True),            # no committed recording holds it, and B is newer
    ("t2", "t1", {"setup:map"}, set(), False),           # A is the newer
    ("t1", "t1", {"setup:map"}, set(), False),           # made at the same time
    ("", "t2", {"setup:map"}, set(), False),             # A's time unknown
    (None, "t2", {"setup:map"}, set(), False),
    ("t1", None, {"setup:map"}, set(), False),
    ("2026-11-30T00:00:00Z", None, {"setup:map"}, set(), False),   # B's time unknown: no older side
    ("2026-11-30T00:00:00Z", "2026-12-05T00:00:00Z", {"setup:map"}, set(), True),
    ("t1", "t2", {"setup:map", "probe:x"}, set(), False),  # a committed recording holds it
    ("t1", "t2", None, set(), False),                    # which families are recorded: unknown
    ("t2", "t1", None, {"probe:x"}, True),               # Side.unmade says so, whatever the times
])
def test_without_a_manifest_a_family_is_unknown_by_unmade_or_by_time(mine, theirs, recorded, unmade, unknown):
    a = side(context={"created": mine}, recorded_families=recorded, unmade=unmade)
    b = side("b", context={"created": theirs})
    assert cp._unknown(a, b, "probe:x") is unknown


def test_who_made_a_file_is_its_rmpeer_its_time_and_how_that_was_found():
    assert cp._made_by(side(context={"rmpeer": "0.3.1", "created": "T"}, manifest=_made(set()))) == \
        "rmpeer 0.3.1, made T, by its manifest"
    assert cp._made_by(side()) == ("rmpeer of unknown version, made at an unknown time, "
                                   "inferred from when it was made (no manifest)")


def test_a_check_is_unmade_by_the_manifest_or_by_an_older_file_holding_no_test_of_it():
    by_manifest = side(manifest={"families": [], "checks": ["read"], "fields": [], "figures": []})
    newer = side("b", context={"created": "t2"})
    assert cp._check_unmade(by_manifest, newer, "xid") is True
    assert cp._check_unmade(by_manifest, newer, "read") is False
    assert cp._check_unmade(by_manifest, newer, None) is False
    older = side(context={"created": "t1"}, checks_of={"read/x": "read"})
    assert cp._check_unmade(older, newer, "xid") is True
    assert cp._check_unmade(older, newer, "read") is False            # it holds a test of that check
    assert cp._check_unmade(older, newer, None) is False
    assert cp._check_unmade(older, side("b", context={"created": "t1"}), "xid") is False   # not older
    assert cp._check_unmade(older, side("b", context={"created": "t0"}), "xid") is False
    assert cp._check_unmade(side(checks_of={}), newer, "xid") is False                    # time unknown
    assert cp._check_unmade(side(context={"created": None}), newer, "xid") is False
    assert cp._check_unmade(older, side("b", context={"created": None}), "xid") is False
    iso = side(context={"created": "2026-11-30T00:00:00Z"})
    assert cp._check_unmade(iso, side("b", context={"created": "2026-12-05T00:00:00Z"}), "xid") is True
    assert cp._check_unmade(iso, side("b", context={}), "xid") is False


# ---- compare_structs -------------------------------------------------------------------------

def test_struct_sizes_differ_by_name_and_the_ones_one_side_used_are_listed():
    a = side(structs={"NV0080_ALLOC": 48, "NV2080_CTRL": 24, "ONLY_A2": 8, "ONLY_A1": 4},
             sources={"struct sizes": "observed"})
    b = side("b", structs={"NV2080_CTRL": 32, "NV0080_ALLOC": 40, "ONLY_B": 16},
             sources={"struct sizes": "drivers.yaml"})
    got = cp.compare_structs(a, b)
    assert (got.name, got.source, got.not_comparable) == ("struct sizes", "A: observed; B: drivers.yaml", "")
    assert got.differences == [("NV0080_ALLOC", "48 bytes", "40 bytes"), ("NV2080_CTRL", "24 bytes", "32 bytes")]
    assert got.info == ["used only in A: ONLY_A1, ONLY_A2", "used only in B: ONLY_B"]


def test_the_same_structs_give_nothing_and_structs_one_side_lacks_are_not_comparable():
    same = cp.compare_structs(side(structs={"S": 8}), side("b", structs={"S": 8}))
    assert (same.differences, same.info, same.not_comparable) == ([], [], "")
    assert same.source == "A: None; B: None"
    lacking = cp.compare_structs(side(structs={"S": 8}), side("b", why_not={"struct sizes": "no ABI entry"}))
    assert lacking.not_comparable == "B: no ABI entry" and lacking.differences == []
    lacking = cp.compare_structs(side(why_not={"struct sizes": "no ABI entry"}), side("b", structs={"S": 8}))
    assert lacking.not_comparable == "A: no ABI entry"


# ---- diff_tree -------------------------------------------------------------------------------

def test_equal_trees_have_no_difference():
    tree = {"cards": [{"pstate": "P0", "links": [1, 2]}], "n": 2}
    assert cp.diff_tree(tree, {"cards": [{"pstate": "P0", "links": [1, 2]}], "n": 2}) == []


def test_leaves_that_differ_are_named_by_their_path():
    a = {"host": {"cards": {"0": {"pstate": "P0", "bar1": 64}}, "n": 2}, "abi": "r570"}
    b = {"host": {"cards": {"0": {"pstate": "P8", "bar1": 64}}, "n": 3}, "abi": "r580"}
    assert cp.diff_tree(a, b) == [("host.cards.0.pstate", "P0", "P8"), ("host.n", 2, 3), ("abi", "r570", "r580")]
    assert cp.diff_tree(a["abi"], b["abi"], "top") == [("top", "r570", "r580")]


def test_identity_and_volatile_fields_are_skipped_and_the_volatile_ones_counted_by_rule():
    aspect = cp.Aspect("reply fields")
    a = {"uuid": "GPU-1", "pci": "0000:1b:00.0", "created": 1, "duration_s": 2.0, "mem_free": 5, "gpu_temp": 30,
         "card": {"t_ns": 5, "power_w": 300}, "x": 1}
    b = {"uuid": "GPU-2", "pci": "0000:2b:00.0", "created": 9, "duration_s": 3.0, "mem_free": 6, "gpu_temp": 40,
         "card": {"t_ns": 6, "power_w": 310}, "x": 1}
    assert cp.diff_tree(a, b, aspect=aspect) == []
    assert aspect.left_out == Counter({"timestamps": 2, "durations": 1, "free memory": 1, "temperatures": 1,
                                       "power and utilisation": 1})
    assert aspect.absent == []


def test_a_field_one_side_lacks_is_absent_and_an_entry_one_side_lacks_differs():
    aspect = cp.Aspect("reply fields")
    a = {"cards": {"0": {"c2c": 1, "bar1": 64}, "1": {"bar1": 64}}, "numa": 0}
    b = {"cards": {"0": {"bar1": 64, "mig": "off"}}, "links": 4}
    got = cp.diff_tree(a, b, aspect=aspect)
    assert got == [("cards.1", {"bar1": 64}, MISSING)]
    assert aspect.absent == ["cards.0.c2c (only in A)", "cards.0.mig (only in B)", "numa (only in A)",
                             "links (only in B)"]
    entry = cp.diff_tree({}, {"0->1": 5}, aspect=aspect)
    assert entry == [("0->1", MISSING, 5)]


def test_without_an_aspect_the_absent_fields_go_nowhere():
    assert cp.diff_tree({"a": 1}, {"b": 2}) == []


def test_lists_of_plain_values_differ_by_the_items_only_one_side_holds():
    assert cp.diff_tree({"l": [3, 1, 2]}, {"l": [3, 1, 2]}) == []
    assert cp.diff_tree({"l": [1, 2, 5, 4]}, {"l": [1, 2, 3]}) == [("l", "4 items, only here: 4, 5", "3 items, only here: 3")]
    assert cp.diff_tree({"l": [1, 2]}, {"l": [1, 2, 3]}) == [("l", "2 items", "3 items, only here: 3")]
    assert cp.diff_tree({"l": [1, 2, 3]}, {"l": [1, 2]}) == [("l", "3 items, only here: 3", "2 items")]
    assert cp.diff_tree({"l": [2, 1]}, {"l": [1, 2]}) == [("l", "same items, other order", "2 items")]
    assert cp.diff_tree({"l": [1, 1, 2]}, {"l": [1, 2, 2]}) == [("l", "3 items", "3 items")]
    # items of two kinds are ordered by their text, never compared with each other
    assert cp.diff_tree({"l": ["b", 1]}, {"l": [1, "b"]}) == [("l", "same items, other order", "2 items")]
    assert cp.diff_tree({"l": ["z", 10, 9]}, {"l": []}) == [("l", "3 items, only here: 10, 9, z", "0 items")]
    assert cp.diff_tree({"l": []}, {"l": ["z", 10, 9]}) == [("l", "0 items", "3 items, only here: 10, 9, z")]


def test_lists_of_trees_compare_item_by_item_and_say_when_the_counts_differ():
    a = {"cards": [{"p": "P0"}, {"p": "P0"}]}
    b = {"cards": [{"p": "P0"}, {"p": "P8"}, {"p": "P0"}]}
    assert cp.diff_tree(a, b) == [("cards (count)", 2, 3), ("cards[1].p", "P0", "P8"), ("cards[2]", MISSING, {"p": "P0"})]
    assert cp.diff_tree(b, a) == [("cards (count)", 3, 2), ("cards[1].p", "P8", "P0"), ("cards[2]", {"p": "P0"}, MISSING)]
    assert cp.diff_tree([[1], [2]], [[1], [3]], "m") == [("m[1]", "1 items, only here: 2", "1 items, only here: 3")]
    aspect = cp.Aspect("x")
    assert cp.diff_tree([{"a": 1}], [{"b": 1}], "l", aspect) == []
    assert aspect.absent == ["l[0].a (only in A)", "l[0].b (only in B)"]


def test_a_value_against_a_missing_one_differs():
    assert cp.diff_tree(MISSING, 5, "k") == [("k", MISSING, 5)]
    assert cp.diff_tree(5, MISSING, "k") == [("k", 5, MISSING)]
    assert cp.diff_tree(None, None, "k") == []
    assert cp.diff_tree({"a": 1}, [1], "k") == [("k", {"a": 1}, [1])]


def test_more_than_four_absent_fields_are_shown_four_and_counted():
    aspect = cp.Aspect("x", absent=["f1", "f2", "f3", "f4", "f5", "f6"])
    cp._absent_info(aspect)
    assert aspect.info == ["not comparable, recorded by one side only: f1, f2, f3, f4 and 2 more"]
    aspect = cp.Aspect("x", absent=["f1", "f2", "f3", "f4", "f5"])
    cp._absent_info(aspect)
    assert aspect.info == ["not comparable, recorded by one side only: f1, f2, f3, f4 and 1 more"]
    aspect = cp.Aspect("x", absent=["f1", "f2", "f3", "f4"])
    cp._absent_info(aspect)
    assert aspect.info == ["not comparable, recorded by one side only: f1, f2, f3, f4"]
    aspect = cp.Aspect("x")
    cp._absent_info(aspect)
    assert aspect.info == []


# ---- compare_facts, compare_links, compare_selection -----------------------------------------

def test_reply_fields_are_compared_as_trees():
    a = side(facts={"cards": [{"bar1": 64, "c2c": 1}], "created": 1})
    b = side("b", facts={"cards": [{"bar1": 32}], "created": 2})
    got = cp.compare_facts(a, b)
    assert (got.name, got.source) == ("reply fields", "the host facts RM answered (volatile and identity fields "
                                                      "left out)")
    assert got.differences == [("cards[0].bar1", 64, 32)]
    assert got.left_out == Counter({"timestamps": 1}) and got.absent == ["cards[0].c2c (only in A)"]
    assert got.info == ["not comparable, recorded by one side only: cards[0].c2c (only in A)"]
    assert got.not_comparable == ""


def test_links_are_compared_as_trees_and_a_side_without_them_is_not_comparable():
    a = side(links={"0": {"active": 18, "supported": 18}})
    b = side("b", links={"0": {"active": 17, "supported": 18}})
    got = cp.compare_links(a, b)
    assert (got.name, got.source) == ("links", "each card's NVLinks as RM reports them before the traffic")
    assert got.differences == [("0.active", 18, 17)] and got.info == []
    got = cp.compare_links(a, side("b", why_not={"links": "recorded before links were"}))
    assert got.not_comparable == "B: recorded before links were" and got.differences == []
    got = cp.compare_facts(side(why_not={"reply fields": "no host line"}), b)
    assert got.not_comparable == "A: no host line"


def _facts(cards, taken=None, source="--cards"):
    facts = {"cards": [{"uuid": f"GPU-{i}"} for i in range(cards)]}
    if taken is not None:
        facts["selection"] = {"cards": list(taken), "source": source, "how": "asked",
                              "of": [{"index": i, "minor": i, "pci": f"0000:{i:02x}:00.0", "uuid": f"GPU-{i}"}
                                     for i in range(cards)]}
    return facts


def test_the_cards_selected_differ_only_in_how_many_of_how_many():
    got = cp.compare_selection(side(facts=_facts(2)), side("b", facts=_facts(2)))
    assert (got.name, got.source) == ("cards selected", "the selection each run recorded (UUIDs, and how they "
                                                        "were chosen)")
    assert got.differences == [] and got.info == ["every card (2; recorded before selection)"]
    got = cp.compare_selection(side(facts=_facts(1)), side("b", facts=_facts(2)))
    assert got.differences == [("cards", "every card (1; recorded before selection)",
                                "every card (2; recorded before selection)")] and got.info == []
    got = cp.compare_selection(side(facts=_facts(2, [0])), side("b", facts=_facts(2, [1])))
    assert got.differences == []
    assert got.info == ["A 0 of 0-1 (from --cards): GPU-0", "B 1 of 0-1 (from --cards): GPU-1"]


def test_cards_selected_without_facts_are_not_comparable():
    got = cp.compare_selection(side(why_not={"facts": "no host line"}), side("b", facts=_facts(2)))
    assert got.not_comparable == "A: no host line" and got.differences == [] and got.info == []
    got = cp.compare_selection(side(facts=_facts(2)), side("b", why_not={"facts": "no host line"}))
    assert got.not_comparable == "B: no host line"


# ---- _beyond, compare_clocks -----------------------------------------------------------------

@pytest.mark.parametrize("va, vb, beyond", [
    (100, 100, False), (100, 105, False), (100, 95, False), (100, 105.5, True), (100, 94.5, True),
    (0, 5, True), (None, 5, True), (-100, -106, True), (-100, -104, False),
])
def test_a_reading_is_beyond_the_tolerance_by_its_change_over_the_first(va, vb, beyond):
    assert cp._beyond(va, vb, 0.05) is beyond


def _clocks(**phases):
    return {phase: cards for phase, cards in phases.items()}


def test_p_states_always_count_and_mhz_only_where_rm_was_asked_to_hold_them():
    a = side(clocks=_clocks(idle={"0": {"pstate": "P8", "graphics_mhz": 345}},
                            released={"0": {"pstate": "P0", "graphics_mhz": 1200}},
                            boosted={"0": {"pstate": "P0", "graphics_mhz": 1980, "memory_mhz": 2619}}),
             boost={"asked": True})
    b = side("b", clocks=_clocks(idle={"0": {"pstate": "P0", "graphics_mhz": 600}},
                                 released={"0": {"pstate": "P0", "graphics_mhz": 900}},
                                 boosted={"0": {"pstate": "P0", "graphics_mhz": 1700, "memory_mhz": 2619}}),
             boost={"asked": True})
    got = cp.compare_clocks(a, b, 0.05)
    assert (got.name, got.source) == ("clocks", "P-state through RM, MHz through NVML, at each moment of the run")
    # (1700 - 1980) / 1980 = -0.1414...
    assert got.differences == [("idle.0.pstate", "P8", "P0"), ("boosted.0.graphics_mhz", "1980 MHz", "1700 MHz (-14.1%)")]
    assert got.left_out == Counter({"idle clock MHz": 1, "released clock MHz": 1})
    assert got.info == [] and got.absent == [] and got.not_comparable == ""


def test_mhz_within_the_tolerance_and_how_a_reading_was_taken_are_no_difference():
    a = side(clocks={"boosted": {"0": {"graphics_mhz": 1980, "mhz_source": "nvml", "rm_reasons": 1, "nvml_reason": "x"}}})
    b = side("b", clocks={"boosted": {"0": {"graphics_mhz": 1900, "mhz_source": "rm", "rm_reasons": 2,
                                            "nvml_reason": "y"}}})
    got = cp.compare_clocks(a, b, 0.05)       # 80 / 1980 = 4.0%
    assert got.differences == [] and got.absent == [] and got.info == []
    assert cp.compare_clocks(a, b, 0.04).differences == [("boosted.0.graphics_mhz", "1980 MHz", "1900 MHz (-4.0%)")]
    # how it was read, first in the reading: the fields after it still count
    a = side(clocks={"boosted": {"0": {"mhz_source": "nvml", "pstate": "P0"}}})
    b = side("b", clocks={"boosted": {"0": {"mhz_source": "rm", "pstate": "P8"}}})
    assert cp.compare_clocks(a, b, 0.05).differences == [("boosted.0.pstate", "P0", "P8")]


def test_every_idle_mhz_left_out_is_counted():
    a = side(clocks={"idle": {"0": {"graphics_mhz": 345, "memory_mhz": 1593}, "1": {"graphics_mhz": 600}}})
    b = side("b", clocks={"idle": {"0": {"graphics_mhz": 600, "memory_mhz": 1593}, "1": {"graphics_mhz": 345}}})
    got = cp.compare_clocks(a, b, 0.05)
    assert got.differences == [] and got.left_out == Counter({"idle clock MHz": 3})


def test_a_zero_mhz_reading_is_a_change_over_one():
    a = side(clocks={"after-traffic": {"0": {"graphics_mhz": 0}}}, boost={"asked": True})
    b = side("b", clocks={"after-traffic": {"0": {"graphics_mhz": 5}}}, boost={"asked": True})
    assert cp.compare_clocks(a, b, 0.05).differences == [("after-traffic.0.graphics_mhz", "0 MHz", "5 MHz (+500.0%)")]


def test_a_reading_one_side_lacks_or_did_not_take_is_not_comparable():
    a = side(clocks={"boosted": {"0": {"graphics_mhz": None, "memory_mhz": 2619, "sm_mhz": 1980}}})
    b = side("b", clocks={"boosted": {"0": {"graphics_mhz": 1980, "memory_mhz": None, "pstate": "P0"}}})
    got = cp.compare_clocks(a, b, 0.05)
    assert got.differences == []
    assert got.absent == ["boosted.0.graphics_mhz (not read by A)", "boosted.0.memory_mhz (not read by B)",
                          "boosted.0.sm_mhz (only in A)", "boosted.0.pstate (only in B)"]
    assert got.info == ["not comparable, recorded by one side only: boosted.0.graphics_mhz (not read by A), "
                        "boosted.0.memory_mhz (not read by B), boosted.0.sm_mhz (only in A), "
                        "boosted.0.pstate (only in B)"]


def test_a_card_one_side_did_not_read_differs_cards_in_the_order_of_their_names():
    reading = {"pstate": "P0"}
    a = side(clocks={"boosted": {10: {"pstate": "P0"}, 9: {"pstate": "P0"}, 2: reading}})
    b = side("b", clocks={"boosted": {10: {"pstate": "P8"}, 9: {"pstate": "P8"}, 3: "garbled"}})
    got = cp.compare_clocks(a, b, 0.05)
    assert got.differences == [("boosted.10.pstate", "P0", "P8"), ("boosted.2", reading, MISSING),
                               ("boosted.3", MISSING, "garbled"), ("boosted.9.pstate", "P0", "P8")]
    got = cp.compare_clocks(side(clocks={"idle": None}), side("b", clocks={"idle": {"0": reading}}), 0.05)
    assert got.differences == [("idle.0", MISSING, reading)]
    got = cp.compare_clocks(side(clocks={"idle": {"0": reading}}), side("b", clocks={"idle": None}), 0.05)
    assert got.differences == [("idle.0", reading, MISSING)]


def test_after_traffic_mhz_count_unless_neither_run_asked_for_the_boost():
    def pair(asked_a, asked_b):
        return (side(clocks={"after-traffic": {"0": {"graphics_mhz": 1980}}}, boost={"asked": asked_a}),
                side("b", clocks={"after-traffic": {"0": {"graphics_mhz": 420}}}, boost={"asked": asked_b}))
    got = cp.compare_clocks(*pair(False, False), 0.05)
    assert got.differences == [] and got.left_out == Counter({"after-traffic clock MHz": 1})
    # (420 - 1980) / 1980 = -0.7878...
    for asked in ((True, True), (True, False), (False, True), (None, False), (False, None)):
        got = cp.compare_clocks(*pair(*asked), 0.05)
        assert got.differences == [("after-traffic.0.graphics_mhz", "1980 MHz", "420 MHz (-78.8%)")], asked
        assert got.left_out == Counter()


def test_whether_a_run_asked_for_the_boost_is_its_boost_record_else_its_context():
    assert cp._asked(side(boost={"asked": False}, context={"boost": True})) is False
    assert cp._asked(side(boost={"asked": True}, context={"boost": False})) is True
    assert cp._asked(side(boost={"results": {}}, context={"boost": False})) is False
    assert cp._asked(side(boost=None, context={"boost": True})) is True
    assert cp._asked(side()) is None
    assert (cp._yes(True), cp._yes(False), cp._yes(None), cp._yes("x")) == ("yes", "no", "not recorded", "not recorded")


def test_phases_one_side_read_are_listed_with_the_boost_each_asked():
    a = side(clocks={"idle": {}, "boosted": {}, "released": {}}, boost={"asked": True})
    b = side("b", clocks={"idle": {}, "after-traffic": {}}, boost={"asked": False})
    got = cp.compare_clocks(a, b, 0.05)
    assert got.info == ["read only in A: boosted, released (boost asked: A yes, B no)",
                        "read only in B: after-traffic (boost asked: A yes, B no)"]
    b.boost = None
    assert cp.compare_clocks(a, b, 0.05).info[0] == "read only in A: boosted, released (boost asked: A yes, B not recorded)"
    b.boost = {"asked": True}
    assert cp.compare_clocks(a, b, 0.05).info == ["read only in A: boosted, released",
                                                  "read only in B: after-traffic"]


def test_clocks_one_side_does_not_record_are_not_comparable():
    got = cp.compare_clocks(side(clocks={"idle": {}}), side("b", why_not={"clocks": "no fitness note"}), 0.05)
    assert got.not_comparable == "B: no fitness note" and got.differences == got.info == []
    got = cp.compare_clocks(side(why_not={"clocks": "no fitness note"}), side("b", clocks={"idle": {}}), 0.05)
    assert got.not_comparable == "A: no fitness note"


def _boost(results, asked=True):
    return {"asked": asked, "results": results}


def test_the_boosts_rm_statuses_are_compared_where_both_asked():
    ok = {"raise": {"status": "NV_OK"}, "clear": {"status": "NV_OK"}}
    a = side(clocks={}, boost=_boost({10: ok, 9: ok, 2: ok}))
    b = side("b", clocks={}, boost=_boost({10: {"raise": {"status": "NV_OK"}, "clear": {"status": "NV_ERR_X"}},
                                           9: {"raise": {"status": "NV_ERR_Y"}}, 3: ok}))
    got = cp.compare_clocks(a, b, 0.05)
    assert got.differences == [("boost.10.clear", "NV_OK", "NV_ERR_X"), ("boost.2.raise", "NV_OK", MISSING),
                               ("boost.2.clear", "NV_OK", MISSING), ("boost.3.raise", MISSING, "NV_OK"),
                               ("boost.3.clear", MISSING, "NV_OK"), ("boost.9.raise", "NV_OK", "NV_ERR_Y"),
                               ("boost.9.clear", "NV_OK", MISSING)]
    same = cp.compare_clocks(a, side("b", clocks={}, boost=_boost({10: ok, 9: ok, 2: ok})), 0.05)
    assert same.differences == []
    # no results recorded on one side: every status of the other's differs
    got = cp.compare_clocks(side(clocks={}, boost=_boost(None)), side("b", clocks={}, boost=_boost({0: ok})), 0.05)
    assert got.differences == [("boost.0.raise", MISSING, "NV_OK"), ("boost.0.clear", MISSING, "NV_OK")]
    got = cp.compare_clocks(side(clocks={}, boost=_boost({0: None})), side("b", clocks={}, boost=_boost({0: ok})), 0.05)
    assert got.differences == [("boost.0.raise", MISSING, "NV_OK"), ("boost.0.clear", MISSING, "NV_OK")]
    got = cp.compare_clocks(side(clocks={}, boost=_boost({0: {"raise": None}})),
                            side("b", clocks={}, boost=_boost({0: ok})), 0.05)
    assert got.differences == [("boost.0.raise", MISSING, "NV_OK"), ("boost.0.clear", MISSING, "NV_OK")]


@pytest.mark.parametrize("boost_a, boost_b", [
    (_boost({0: {"raise": {"status": "NV_OK"}}}, asked=False), _boost({0: {"raise": {"status": "NV_ERR"}}})),
    (_boost({0: {"raise": {"status": "NV_OK"}}}), _boost({0: {"raise": {"status": "NV_ERR"}}}, asked=False)),
    (None, _boost({0: {"raise": {"status": "NV_ERR"}}})),
    (_boost({0: {"raise": {"status": "NV_OK"}}}), None),
    ({"results": {0: {"raise": {"status": "NV_OK"}}}}, _boost({0: {"raise": {"status": "NV_ERR"}}})),
    (_boost({0: {"raise": {"status": "NV_OK"}}}), {"results": {0: {"raise": {"status": "NV_ERR"}}}}),
])
def test_the_boosts_statuses_are_not_compared_unless_both_runs_asked(boost_a, boost_b):
    got = cp.compare_clocks(side(clocks={}, boost=boost_a), side("b", clocks={}, boost=boost_b), 0.05)
    assert got.differences == []


# ---- compare_tests ---------------------------------------------------------------------------

def certificate(tests, name="a", verdict="CERTIFIED", source="check ids", created=None, manifest=None, checks=None):
    return side(name, kind="certificate", tests=dict(tests), verdict=verdict, sources={"tests": source},
                context={"rmpeer": "0.1.0", "created": created}, manifest=manifest, checks_of=dict(checks or {}))


def test_test_outcomes_differ_by_test_with_the_verdict_first():
    a = certificate({"read/0->1": (None, "passed"), "xid/host": (None, "passed"), "ce/s0": (None, "failed")},
                    verdict="CERTIFIED")
    b = certificate({"read/0->1": (None, "failed"), "ce/s0": (None, "failed"), "nvlink/host": (None, "passed")},
                    name="b", verdict="NOT CERTIFIED")
    got = cp.compare_tests(a, b, EVERYTHING)
    assert (got.name, got.source) == ("test outcomes", "the tests of the layouts both ran, target label taken out "
                                                       "of the id")
    assert got.differences == [("verdict", "CERTIFIED", "NOT CERTIFIED"), ("nvlink/host", "absent", "passed"),
                               ("read/0->1", "passed", "failed"), ("xid/host", "passed", "absent")]
    assert got.info == [] and got.not_comparable == ""


def test_tests_of_a_layout_only_one_side_ran_are_left_out_and_counted():
    a = certificate({"read/x": ("l1", "passed"), "read/y": ("l2", "passed"), "read/z": ("l2", "failed")})
    b = certificate({"read/x": ("l1", "passed"), "read/w": ("l3", "failed"), "read/v": (None, "failed")}, name="b")
    got = cp.compare_tests(a, b, cp.Coverage({"l1"}))
    # read/y, read/z (A's, of l2) and read/w (B's, of l3) left out; read/v is of no layout: it counts
    assert got.differences == [("read/v", "absent", "failed")]
    assert got.info == ["3 tests of layouts only one side ran left out"]


def test_tests_of_a_check_one_sides_rmpeer_never_made_are_named_by_check():
    made = {"families": [], "checks": ["read"], "fields": [], "figures": []}
    a = certificate({"read/x": (None, "passed")}, created="t1", manifest=made, checks={"read/x": "read"})
    b = certificate({"read/x": (None, "passed"), "xid/host": (None, "passed"), "xid/card1": (None, "failed"),
                     "ce/s0": (None, "passed")}, name="b", created="t2",
                    checks={"read/x": "read", "xid/host": "xid", "xid/card1": "xid", "ce/s0": "ce"})
    got = cp.compare_tests(a, b, EVERYTHING)
    assert got.differences == []
    assert got.info == ["not comparable (only in B): 3 test(s) of the check(s) ce, xid, which A's rmpeer never made "
                        "(A: rmpeer 0.1.0, made t1, by its manifest; B: rmpeer 0.1.0, made t2, inferred from when it "
                        "was made (no manifest))"]
    got = cp.compare_tests(b, a, EVERYTHING)
    assert got.differences == []
    assert got.info == ["not comparable (only in A): 3 test(s) of the check(s) ce, xid, which B's rmpeer never made "
                        "(A: rmpeer 0.1.0, made t2, inferred from when it was made (no manifest); B: rmpeer 0.1.0, "
                        "made t1, by its manifest)"]


def test_tests_of_a_check_only_the_first_sides_newer_rmpeer_made_are_named_by_check():
    """B, older and without a manifest, holds no test of the check: its rmpeer did not make it."""
    a = certificate({"read/x": (None, "passed"), "xid/host": (None, "failed")}, created="2026-12-05T00:00:00Z",
                    checks={"read/x": "read", "xid/host": "xid"})
    b = certificate({"read/x": (None, "passed")}, name="b", created="2026-11-30T00:00:00Z", checks={"read/x": "read"})
    got = cp.compare_tests(a, b, EVERYTHING)
    assert got.differences == []
    assert got.info == ["not comparable (only in A): 1 test(s) of the check(s) xid, which B's rmpeer never made "
                        "(A: rmpeer 0.1.0, made 2026-12-05T00:00:00Z, inferred from when it was made (no manifest); "
                        "B: rmpeer 0.1.0, made 2026-11-30T00:00:00Z, inferred from when it was made (no manifest))"]


def test_a_test_of_a_check_both_made_missing_on_one_side_differs():
    made = {"families": [], "checks": ["read", "xid"], "fields": [], "figures": []}
    a = certificate({"read/x": (None, "passed")}, created="t1", manifest=made, checks={"read/x": "read"})
    b = certificate({"read/x": (None, "passed"), "xid/host": (None, "passed")}, name="b", created="t2", manifest=made,
                    checks={"read/x": "read", "xid/host": "xid"})
    assert cp.compare_tests(a, b, EVERYTHING).differences == [("xid/host", "absent", "passed")]
    assert cp.compare_tests(b, a, EVERYTHING).differences == [("xid/host", "passed", "absent")]
    # a test whose check is not known (no checks_of entry) differs
    c = certificate({"read/x": (None, "passed"), "new/host": (None, "passed")}, name="b", created="t2", manifest=made,
                    checks={"read/x": "read"})
    assert cp.compare_tests(a, c, EVERYTHING).differences == [("new/host", "absent", "passed")]
    assert cp.compare_tests(c, a, EVERYTHING).differences == [("new/host", "passed", "absent")]


def test_tests_not_comparable_when_one_side_has_none_or_names_them_otherwise():
    a = certificate({"read/x": (None, "passed")})
    got = cp.compare_tests(a, side("b", why_not={"test outcomes": "a recording of no test"}), EVERYTHING)
    assert got.not_comparable == "B: a recording of no test" and got.differences == []
    got = cp.compare_tests(side(why_not={"test outcomes": "no tests"}), a, EVERYTHING)
    assert got.not_comparable == "A: no tests"
    b = certificate({"read/x": (None, "failed")}, name="b", verdict="NOT CERTIFIED", source="pytest ids")
    got = cp.compare_tests(a, b, EVERYTHING)
    assert got.not_comparable == "A names its tests by check ids, B by pytest ids"
    assert got.differences == [] and got.info == []


# ---- compare_bandwidth, compare --------------------------------------------------------------

def test_bandwidth_beyond_the_tolerance_differs_per_pair():
    a = side(bandwidth={"0->1": 400.0, "1->0": 400.0, "0->2": 0.0, "only-a": 1.0, "only-a2": 2.0},
             sources={"bandwidth": "certificate"})
    b = side("b", bandwidth={"0->1": 300.0, "1->0": 410.0, "0->2": 5.0, "only-b": 1.0},
             sources={"bandwidth": "transcript"})
    got = cp.compare_bandwidth(a, b, 0.05)
    assert (got.name, got.source) == ("bandwidth (±5%)", "A: certificate; B: transcript")
    # (300 - 400) / 400 = -25%; 410 is 2.5% over 400: within
    assert got.differences == [("0->1", "400.0 GB/s", "300.0 GB/s (-25.0%)"), ("0->2", "0.0 GB/s", "5.0 GB/s")]
    assert got.info == ["3 pairs compared", "2 pairs measured only in A", "1 pairs measured only in B"]
    assert got.not_comparable == ""
    assert cp.compare_bandwidth(a, b, 0.02).differences[2] == ("1->0", "400.0 GB/s", "410.0 GB/s (+2.5%)")
    assert cp.compare_bandwidth(a, b, 0.125).name == "bandwidth (±12.5%)"


def test_bandwidth_with_no_pair_in_both_or_none_on_one_side_is_not_comparable():
    got = cp.compare_bandwidth(side(bandwidth={"0->1": 1.0}), side("b", bandwidth={"1->0": 1.0}), 0.05)
    assert got.not_comparable == "no pair was measured in both" and got.differences == []
    assert got.info == ["0 pairs compared", "1 pairs measured only in A", "1 pairs measured only in B"]
    got = cp.compare_bandwidth(side(bandwidth={}), side("b", why_not={"bandwidth": "no traffic"}), 0.05)
    assert got.not_comparable == "B: no traffic" and got.info == []
    got = cp.compare_bandwidth(side(why_not={"bandwidth": "no traffic"}), side("b", bandwidth={}), 0.05)
    assert got.not_comparable == "A: no traffic"


def test_compare_gives_every_aspect_in_order_with_the_tolerance_of_five_percent():
    a = side(layouts=["l1"], calls=[("l1", "setup:map", "NV_OK")], sources={"calls": "t", "tests": "ids"},
             structs={}, facts={"n": 1}, clocks={"boosted": {"0": {"graphics_mhz": 1000}}}, links={},
             tests={"x": ("l1", "passed")}, verdict="CERTIFIED", bandwidth={"0->1": 100.0})
    b = side("b", layouts=["l1", "l2"], calls=[("l1", "setup:map", "NV_OK"), ("l2", "setup:map", "NV_ERR")],
             sources={"calls": "t", "tests": "ids"}, structs={}, facts={"n": 1},
             clocks={"boosted": {"0": {"graphics_mhz": 1040}}}, links={},
             tests={"x": ("l1", "passed"), "y": ("l2", "failed")}, verdict="CERTIFIED", bandwidth={"0->1": 104.0})
    got = cp.compare(a, b)
    assert [x.name for x in got] == ["RM statuses", "RM call counts", "struct sizes", "cards selected", "reply fields",
                                     "clocks", "links", "test outcomes", "bandwidth (±5%)"]
    assert [x.differences for x in got] == [[]] * 9          # l2 is B's alone; 4% is within 5%
    assert got[7].info == ["1 tests of layouts only one side ran left out"]
    b.clocks = {"boosted": {"0": {"graphics_mhz": 1060}}}
    b.bandwidth = {"0->1": 106.0}
    got = cp.compare(a, b)
    assert got[5].differences == [("boosted.0.graphics_mhz", "1000 MHz", "1060 MHz (+6.0%)")]
    assert got[8].differences == [("0->1", "100.0 GB/s", "106.0 GB/s (+6.0%)")]
    got = cp.compare(a, b, 0.1)
    assert got[5].differences == got[8].differences == []
