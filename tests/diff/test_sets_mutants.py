"""rmpeer.diff.sets (the set diff of `rmpeer diff A B` over two sets of hosts) called in this
process, on hosts and sides built by hand: what tests/diff/test_sets.py checks through a
subprocess, where no mutant runs (docs/mutation.md). Written to kill the mutants mutmut left
alive. The expected values come from the module's docstring (a host of B matched by node name,
else by host kind, each host of A taken once while an untaken one of that kind is left; RM
steps, then struct sizes, then the other aspects, most hosts first; bandwidth per kind of pair,
the medians and minimums of each set and the matched hosts that moved most, largest drop first),
from rmpeer.diff.load's pair keys ("read card 0->1 256 MiB", "two-per-card read s1->t2 256
MiB"), and from arithmetic done by hand on the inputs; every one is spelled out."""

from __future__ import annotations

import pytest

from rmpeer.diff import sets
from rmpeer.diff.compare import Aspect
from rmpeer.diff.side import Side

pytestmark = pytest.mark.offline

H200 = "NVIDIA H200"
H100 = "NVIDIA H100 80GB HBM3"


def side(path="x", *, context=None, facts=None, **fields) -> Side:
    s = Side(path, "certificate", context=dict(context or {}), facts=facts)
    for key, value in fields.items():
        setattr(s, key, value)
    return s


def host(name, kind="2 x NVIDIA H200", **fields) -> sets.Host:
    return sets.Host(name, kind, side(name, **fields))


def cards(*names):
    return {"cards": [{"name": n} for n in names]}


# ---- host_kind ---------------------------------------------------------------------------------

def test_a_hosts_kind_is_its_card_count_and_model_from_the_facts_rm_gave():
    assert sets.host_kind(side(facts=cards(H200, H200))) == "2 x NVIDIA H200"


def test_the_card_count_a_run_states_comes_before_the_cards_its_facts_list():
    assert sets.host_kind(side(context={"cards": 8}, facts=cards(H200, H200))) == "8 x NVIDIA H200"


def test_a_host_of_two_models_names_each_once_in_alphabetical_order():
    assert sets.host_kind(side(facts=cards(H200, H100, H200))) == "3 x NVIDIA H100 80GB HBM3 + NVIDIA H200"


def test_only_named_cards_name_the_kind():
    """A card entry that is no mapping, one with an empty name and one with no name add no
    model (and never the word "None")."""
    facts = {"cards": ["GPU-0", {"name": ""}, {"uuid": "GPU-2"}, {"name": H200}]}
    assert sets.host_kind(side(context={"cards": 2}, facts=facts)) == "2 x NVIDIA H200"


@pytest.mark.parametrize("facts", [None, "not facts", {}, {"cards": None}, {"cards": "GPU-0"}, {"cards": []},
                                   {"cards": [{"uuid": "GPU-0"}]}])
def test_without_named_cards_the_kind_is_the_runs_label(facts):
    assert sets.host_kind(side(context={"label": "h200x2", "cards": 2}, facts=facts)) == "h200x2"


@pytest.mark.parametrize("context", [{}, {"label": None}, {"label": ""}])
def test_without_named_cards_or_a_label_the_kind_is_unknown(context):
    assert sets.host_kind(side(context=context, facts={"cards": []})) == "unknown host kind"


# ---- hosts_of --------------------------------------------------------------------------------

def test_hosts_keep_their_names_and_a_name_met_again_is_numbered_from_two():
    one, two, three, four = (side(f"f{i}", facts=cards(H200)) for i in range(4))
    named = side("f4", context={"label": "h100x1"})
    got = sets.hosts_of([("n1", one), ("n2", two), ("n1", three), ("n1", four), ("n3", named)])
    assert [h.name for h in got] == ["n1", "n2", "n1#2", "n1#3", "n3"]
    assert [h.kind for h in got] == ["1 x NVIDIA H200"] * 4 + ["h100x1"]
    assert [h.side for h in got] == [one, two, three, four, named]
    assert all(isinstance(h, sets.Host) for h in got)


def test_no_host_found_is_no_host():
    assert sets.hosts_of([]) == []


# ---- match -----------------------------------------------------------------------------------

def test_hosts_of_the_same_node_name_are_matched_by_node_in_bs_order():
    a1, a2 = host("n1"), host("n2")
    b2, b1 = host("n2"), host("n1")
    assert sets.match([a1, a2], [b2, b1]) == ([(a2, b2, "node"), (a1, b1, "node")], [], [])


def test_a_host_without_its_node_takes_an_untaken_host_of_its_kind_then_any_of_its_kind():
    """B's h2 is A's h2 by node; x1 takes A's first host of its kind not taken (h1); x2 finds
    none untaken and takes the first of its kind (h1 again); y's kind is not in A. A's h3, of
    another kind, is matched by none."""
    h1, h2, h3 = host("h1"), host("h2"), host("h3", "8 x NVIDIA H100 80GB HBM3")
    bh2, x1, x2, y = host("h2"), host("x1"), host("x2"), host("y", "4 x NVIDIA H200")
    pairs, only_a, only_b = sets.match([h2, h1, h3], [bh2, x1, x2, y])
    assert pairs == [(h2, bh2, "node"), (h1, x1, "host kind"), (h2, x2, "host kind")]
    assert only_a == [h3] and only_b == [y]


def test_each_host_of_a_is_taken_once_while_one_of_its_kind_is_left():
    a = [host("a1"), host("a2"), host("a3")]
    b = [host("b1"), host("b2"), host("b3")]
    assert sets.match(a, b) == ([(a[0], b[0], "host kind"), (a[1], b[1], "host kind"), (a[2], b[2], "host kind")],
                                [], [])


def test_a_host_of_b_without_a_match_does_not_stop_the_hosts_after_it():
    a1 = host("a1")
    y, b1 = host("y", "4 x NVIDIA H200"), host("b1")
    assert sets.match([a1], [y, b1]) == ([(a1, b1, "host kind")], [], [y])


def test_no_host_of_a_kind_leaves_b_unmatched_and_a_listed():
    a, b = [host("a1")], [host("b1", "1 x NVIDIA H100 80GB HBM3")]
    assert sets.match(a, b) == ([], a, b)


# ---- pair_kind -------------------------------------------------------------------------------

@pytest.mark.parametrize("key, kind", [
    ("read card 0->1 256 MiB", ("read 256 MiB", "0->1")),
    ("write card 1->0 4096 B", ("write 4096 B", "1->0")),
    ("two-per-card read s1->t2 256 MiB", ("two-per-card read 256 MiB", "1->2")),
    ("one-per-card write s12->t3 1 MiB", ("one-per-card write 1 MiB", "12->3")),
    ("read card 3->3 256 MiB", ("read 256 MiB (same card)", "3->3")),
    ("two-per-card read s2->t2 256 MiB", ("two-per-card read 256 MiB (same card)", "2->2")),
    ("same-card card 2->2 256 MiB", ("same-card 256 MiB", "2->2")),
    ("layout same-card s0->t0 64 MiB", ("layout same-card 64 MiB", "0->0")),
])
def test_the_kind_of_pair_is_the_figures_key_with_its_cards_taken_out(key, kind):
    assert sets.pair_kind(key) == kind


@pytest.mark.parametrize("key", ["read card ?->? 256 MiB", "all 256 MiB", "", "read card 0-1 256 MiB"])
def test_a_key_with_no_pair_has_no_kind_of_pair(key):
    assert sets.pair_kind(key) is None


# ---- _spread ---------------------------------------------------------------------------------

def test_a_sets_figures_are_counted_with_their_median_and_minimum_to_a_tenth():
    # median of three: the middle one, 350.444 -> 350.4; the minimum 300.06 -> 300.1
    assert sets._spread([400.0, 300.06, 350.444]) == {"hosts": 3, "median": 350.4, "min": 300.1}
    # median of two: their mean
    assert sets._spread([1.0, 2.0]) == {"hosts": 2, "median": 1.5, "min": 1.0}


def test_no_figures_are_no_median_and_no_minimum():
    assert sets._spread([]) == {"hosts": 0, "median": None, "min": None}


# ---- bandwidth_by_kind -----------------------------------------------------------------------

def pair(a: sets.Host, b: sets.Host, by="node") -> sets.Pair:
    return sets.Pair(a, b, by)


def test_each_hosts_figure_is_its_median_over_the_pairs_of_that_kind():
    """n1 in A: read 0->1 100, 1->0 200 (median 150.0), write 0->1 90; n1 in B: read 0->1 120,
    1->0 120 (median 120), write 0->1 90. Read: -20% (-30/150 = -0.2), write 0%."""
    a = host("n1", bandwidth={"read card 0->1 256 MiB": 100.0, "read card 1->0 256 MiB": 200.0,
                              "write card 0->1 256 MiB": 90.0, "total 256 MiB": 999.0})
    b = host("n1", bandwidth={"read card 0->1 256 MiB": 120.0, "read card 1->0 256 MiB": 120.0,
                              "write card 0->1 256 MiB": 90.0})
    rows = sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05)
    assert rows == [
        {"kind": "read 256 MiB", "a": {"hosts": 1, "median": 150.0, "min": 150.0},
         "b": {"hosts": 1, "median": 120.0, "min": 120.0}, "compared": 1, "beyond": 1,
         "moved": [{"a": "n1", "b": "n1", "a_gbps": 150.0, "b_gbps": 120.0, "change": -0.2}]},
        {"kind": "write 256 MiB", "a": {"hosts": 1, "median": 90.0, "min": 90.0},
         "b": {"hosts": 1, "median": 90.0, "min": 90.0}, "compared": 1, "beyond": 0,
         "moved": [{"a": "n1", "b": "n1", "a_gbps": 90.0, "b_gbps": 90.0, "change": 0.0}]},
    ]


def test_the_hosts_that_moved_most_are_the_largest_drops_first_three_of_them():
    """Four matched hosts of one kind: changes -0.5 (400 -> 200), +0.25 (400 -> 500), -0.1
    (400 -> 360), -0.3333 (300 -> 200, -1/3 to four places). Shown: the three lowest, in
    order; beyond 5%: all four; the spread of every host of each set, the unmatched one too."""
    key = "read card 0->1 256 MiB"
    a = [host("a1", bandwidth={key: 400.0}), host("a2", bandwidth={key: 400.0}),
         host("a3", bandwidth={key: 400.0}), host("a4", bandwidth={key: 300.0}), host("a5", bandwidth={key: 10.0})]
    b = [host("b1", bandwidth={key: 200.0}), host("b2", bandwidth={key: 500.0}),
         host("b3", bandwidth={key: 360.0}), host("b4", bandwidth={key: 200.0})]
    pairs = [pair(a[i], b[i], "host kind") for i in range(4)]
    [row] = sets.bandwidth_by_kind(pairs, a, b, 0.05)
    assert row["kind"] == "read 256 MiB"
    assert row["a"] == {"hosts": 5, "median": 400.0, "min": 10.0}
    assert row["b"] == {"hosts": 4, "median": 280.0, "min": 200.0}     # (200 + 360) / 2
    assert (row["compared"], row["beyond"]) == (4, 4)
    assert row["moved"] == [
        {"a": "a1", "b": "b1", "a_gbps": 400.0, "b_gbps": 200.0, "change": -0.5},
        {"a": "a4", "b": "b4", "a_gbps": 300.0, "b_gbps": 200.0, "change": -0.3333},
        {"a": "a3", "b": "b3", "a_gbps": 400.0, "b_gbps": 360.0, "change": -0.1},
    ]
    assert sets.MOVED_SHOWN == 3


def test_figures_are_rounded_to_a_tenth_and_changes_to_four_places():
    """300.06 -> 300.1, 280.44 -> 280.4; change (280.44 - 300.06) / 300.06 = -19.62 / 300.06
    = -0.065387... -> -0.0654."""
    key = "two-per-card read s1->t2 256 MiB"
    a, b = host("n", bandwidth={key: 300.06}), host("n", bandwidth={key: 280.44})
    [row] = sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05)
    assert row["moved"] == [{"a": "n", "b": "n", "a_gbps": 300.1, "b_gbps": 280.4, "change": -0.0654}]
    assert row["beyond"] == 1


def test_a_move_of_exactly_the_tolerance_is_not_beyond_it():
    """400 -> 380 is -5% (-20/400): beyond 5% means more than 5%, as `rmpeer diff`'s
    bandwidth aspect has it; beyond 4%."""
    key = "read card 0->1 256 MiB"
    a, b = host("n", bandwidth={key: 400.0}), host("n", bandwidth={key: 380.0})
    [row] = sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05)
    assert row["moved"][0]["change"] == -0.05 and row["beyond"] == 0
    [row] = sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.04)
    assert row["beyond"] == 1


def test_a_move_past_the_tolerance_by_less_than_the_places_shown_is_beyond_it():
    """400 -> 379.99 is -5.0025%: shown as -0.05 (four places), and beyond 5% as the pair's
    own bandwidth comparison counts it (rmpeer.diff.compare: |379.99 - 400| / 400 > 0.05),
    so a set's row and its pairs never disagree on one host."""
    key = "read card 0->1 256 MiB"
    a, b = host("n", bandwidth={key: 400.0}), host("n", bandwidth={key: 379.99})
    [row] = sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05)
    assert row["moved"][0]["change"] == -0.05
    assert row["beyond"] == 1


def test_a_kind_one_set_alone_measured_is_a_row_with_nothing_compared():
    """A measured write on n (and n2, unmatched); B measured same-card copies. Neither kind is
    compared; each is a row, in the order of the kinds' names."""
    a = host("n", bandwidth={"write card 0->1 1 MiB": 50.0})
    a2 = host("n2", bandwidth={"write card 1->0 1 MiB": 70.0})
    b = host("n", bandwidth={"same-card card 0->0 1 MiB": 900.0})
    rows = sets.bandwidth_by_kind([pair(a, b)], [a, a2], [b], 0.05)
    assert rows == [
        {"kind": "same-card 1 MiB", "a": {"hosts": 0, "median": None, "min": None},
         "b": {"hosts": 1, "median": 900.0, "min": 900.0}, "compared": 0, "beyond": 0, "moved": []},
        {"kind": "write 1 MiB", "a": {"hosts": 2, "median": 60.0, "min": 50.0},
         "b": {"hosts": 0, "median": None, "min": None}, "compared": 0, "beyond": 0, "moved": []},
    ]


def test_a_figure_of_zero_in_a_has_no_change_and_one_of_zero_in_b_is_a_full_drop():
    """No change can be worked out from 0 GB/s (a copy that moved nothing in A); a drop to
    0 in B is -100%. A host without figures, or with none of the kind, is compared on none."""
    key = "read card 0->1 256 MiB"
    a = [host("z", bandwidth={key: 0.0}), host("d", bandwidth={key: 400.0}), host("none", bandwidth=None),
         host("other", bandwidth={"write card 0->1 256 MiB": 10.0})]
    b = [host("z", bandwidth={key: 300.0}), host("d", bandwidth={key: 0.0}), host("none", bandwidth={key: 5.0}),
         host("other", bandwidth={key: 5.0})]
    rows = sets.bandwidth_by_kind([pair(x, y) for x, y in zip(a, b)], a, b, 0.05)
    read = next(r for r in rows if r["kind"] == "read 256 MiB")
    assert read["moved"] == [{"a": "d", "b": "d", "a_gbps": 400.0, "b_gbps": 0.0, "change": -1.0}]
    assert (read["compared"], read["beyond"]) == (1, 1)
    assert read["a"] == {"hosts": 2, "median": 200.0, "min": 0.0}
    assert read["b"] == {"hosts": 4, "median": 5.0, "min": 0.0}


def test_a_hosts_figure_missing_in_b_is_not_compared():
    key = "read card 0->1 256 MiB"
    a, b = host("n", bandwidth={key: 400.0}), host("n", bandwidth={"write card 0->1 256 MiB": 1.0})
    read = next(r for r in sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05) if r["kind"] == "read 256 MiB")
    assert (read["compared"], read["moved"]) == (0, [])


def test_no_figures_on_either_side_are_no_rows():
    a, b = host("n", bandwidth=None), host("n", bandwidth={})
    assert sets.bandwidth_by_kind([pair(a, b)], [a], [b], 0.05) == []


# ---- changes_of ------------------------------------------------------------------------------

def aspect(name, *differences, not_comparable=""):
    return Aspect(name, differences=list(differences), not_comparable=not_comparable)


def test_changes_are_counted_over_the_set_rm_steps_then_struct_sizes_then_most_hosts():
    """RM statuses (on one host) before RM call counts (two) before struct sizes (one), before
    any other aspect, whatever their counts; the others by hosts (most first), then aspect,
    then key. A change seen on two hosts is one row naming both, in the pairs' order; a
    bandwidth difference is left to bandwidth_by_kind."""
    a = host("a")
    status = ("nvlink:counters", "NV_OK", "NV_ERR_NOT_SUPPORTED")
    pairs = [
        sets.Pair(a, host("b1"), "node", [aspect("clocks", ("boosted card 0 pstate", "P0", "P2")),
                                         aspect("test outcomes", ("t2", "passed", "failed")),
                                         aspect("bandwidth (±5%)", ("read card 0->1 256 MiB", "1.0 GB/s", "9.0 GB/s"),
                                                ("read card 1->0 256 MiB", "1.0 GB/s", "9.0 GB/s")),
                                         aspect("RM call counts", ("ce:copy", 4, 2))]),
        sets.Pair(a, host("b2"), "node", [aspect("clocks", ("boosted card 0 pstate", "P0", "P2")),
                                         aspect("struct sizes", ("NV2080_X", "8 bytes", "16 bytes")),
                                         aspect("RM call counts", ("ce:copy", 4, 2)),
                                         aspect("reply fields", ((1, "x"), None, 0))]),
        sets.Pair(a, host("b3"), "host kind", [aspect("test outcomes", ("t1", "passed", "skipped")),
                                              aspect("clocks", ("boosted card 0 pstate", "P0", "P2")),
                                              aspect("RM statuses", status)]),
    ]
    changes, unknown = sets.changes_of(pairs)
    assert changes == [
        {"aspect": "RM statuses", "key": "nvlink:counters", "a": "NV_OK", "b": "NV_ERR_NOT_SUPPORTED", "hosts": ["b3"]},
        {"aspect": "RM call counts", "key": "ce:copy", "a": "4", "b": "2", "hosts": ["b1", "b2"]},
        {"aspect": "struct sizes", "key": "NV2080_X", "a": "8 bytes", "b": "16 bytes", "hosts": ["b2"]},
        {"aspect": "clocks", "key": "boosted card 0 pstate", "a": "P0", "b": "P2", "hosts": ["b1", "b2", "b3"]},
        {"aspect": "reply fields", "key": "(1, 'x')", "a": "None", "b": "0", "hosts": ["b2"]},
        {"aspect": "test outcomes", "key": "t1", "a": "passed", "b": "skipped", "hosts": ["b3"]},
        {"aspect": "test outcomes", "key": "t2", "a": "passed", "b": "failed", "hosts": ["b1"]},
    ]
    assert unknown == {}


def test_one_key_with_other_values_is_another_change():
    a = host("a")
    pairs = [sets.Pair(a, host("b1"), "node", [aspect("struct sizes", ("S", "8 bytes", "16 bytes"))]),
             sets.Pair(a, host("b2"), "node", [aspect("struct sizes", ("S", "8 bytes", "24 bytes"))]),
             sets.Pair(a, host("b3"), "node", [aspect("struct sizes", ("S", "8 bytes", "16 bytes"))])]
    changes, _ = sets.changes_of(pairs)
    assert changes == [{"aspect": "struct sizes", "key": "S", "a": "8 bytes", "b": "16 bytes", "hosts": ["b1", "b3"]},
                       {"aspect": "struct sizes", "key": "S", "a": "8 bytes", "b": "24 bytes", "hosts": ["b2"]}]


def test_what_could_not_be_compared_names_the_b_hosts_of_each_aspect():
    a = host("a")
    pairs = [sets.Pair(a, host("b1"), "node", [aspect("links", not_comparable="A: no links"),
                                              aspect("clocks", ("c", 1, 2), not_comparable="B: no idle clocks")]),
             sets.Pair(a, host("b2"), "node", [aspect("links", not_comparable="A: no links"), aspect("clocks")])]
    changes, unknown = sets.changes_of(pairs)
    assert unknown == {"links": ["b1", "b2"], "clocks": ["b1"]}
    assert changes == [{"aspect": "clocks", "key": "c", "a": "1", "b": "2", "hosts": ["b1"]}]


def test_no_pairs_are_no_changes():
    assert sets.changes_of([]) == ([], {})


# ---- compare_sets ----------------------------------------------------------------------------

def cert(name, structs, bandwidth=None, **context):
    s = side(name, context={"cards": 2, **context}, facts=cards(H200, H200), structs=structs, bandwidth=bandwidth)
    if bandwidth is None:
        s.why_not["bandwidth"] = "the certificate records no bandwidth"
    return s


def test_two_sets_are_matched_compared_pair_by_pair_and_counted():
    """A: n1, n2 (2 x H200, struct S of 8 bytes), n3 of another kind; B: n1 and x (2 x H200, S
    of 16 bytes). n1 by node, x by host kind with n2; n3 only in A; each pair differs in S.
    n1's read 0->1 fell 400 -> 300 (-25%): beyond the default 5%."""
    key = "read card 0->1 256 MiB"
    a = [sets.Host("n1", "2 x NVIDIA H200", cert("a/n1", {"S": 8}, {key: 400.0})),
         sets.Host("n2", "2 x NVIDIA H200", cert("a/n2", {"S": 8})),
         sets.Host("n3", "8 x NVIDIA H200", cert("a/n3", {"S": 8}))]
    b = [sets.Host("n1", "2 x NVIDIA H200", cert("b/n1", {"S": 16}, {key: 300.0})),
         sets.Host("x", "2 x NVIDIA H200", cert("b/x", {"S": 16}))]
    found = sets.compare_sets(a, b)
    assert isinstance(found, sets.SetDiff)
    assert [(p.a, p.b, p.by) for p in found.pairs] == [(a[0], b[0], "node"), (a[1], b[1], "host kind")]
    assert found.only_a == [a[2]] and found.only_b == []
    for p in found.pairs:
        structs = next(x for x in p.aspects if x.name == "struct sizes")
        assert structs.differences == [("S", "8 bytes", "16 bytes")]
        assert p.differs
    assert found.differs
    assert found.changes[0] == {"aspect": "struct sizes", "key": "S", "a": "8 bytes", "b": "16 bytes",
                                "hosts": ["n1", "x"]}
    assert [x.name for x in found.pairs[0].aspects if x.name.startswith("bandwidth")] == ["bandwidth (±5%)"]
    assert found.not_comparable["bandwidth (±5%)"] == ["x"]
    assert "struct sizes" not in found.not_comparable
    assert found.bandwidth == [
        {"kind": "read 256 MiB", "a": {"hosts": 1, "median": 400.0, "min": 400.0},
         "b": {"hosts": 1, "median": 300.0, "min": 300.0}, "compared": 1, "beyond": 1,
         "moved": [{"a": "n1", "b": "n1", "a_gbps": 400.0, "b_gbps": 300.0, "change": -0.25}]}]


def test_the_tolerance_reaches_each_pairs_comparison_and_the_bandwidth_rows():
    """-25% is within a tolerance of 30%: the pair's bandwidth aspect says ±30% and finds no
    difference, and the row counts no host beyond it."""
    key = "read card 0->1 256 MiB"
    a = [sets.Host("n1", "2 x NVIDIA H200", cert("a/n1", {"S": 8}, {key: 400.0}))]
    b = [sets.Host("n1", "2 x NVIDIA H200", cert("b/n1", {"S": 8}, {key: 300.0}))]
    found = sets.compare_sets(a, b, 0.3)
    [bw] = [x for x in found.pairs[0].aspects if x.name.startswith("bandwidth")]
    assert bw.name == "bandwidth (±30%)" and bw.differences == []
    assert found.bandwidth[0]["beyond"] == 0 and found.bandwidth[0]["moved"][0]["change"] == -0.25
    assert not found.differs and found.changes == []
    found = sets.compare_sets(a, b, 0.2)
    [bw] = [x for x in found.pairs[0].aspects if x.name.startswith("bandwidth")]
    assert bw.name == "bandwidth (±20%)" and bw.differences == [(key, "400.0 GB/s", "300.0 GB/s (-25.0%)")]
    assert found.bandwidth[0]["beyond"] == 1 and found.differs
    assert found.changes == []           # bandwidth is counted per kind of pair, never as a change


def test_a_set_against_itself_is_the_same_behaviour_and_a_lonely_b_host_is_listed():
    a = [sets.Host("n1", "2 x NVIDIA H200", cert("a/n1", {"S": 8}))]
    b = [sets.Host("n1", "2 x NVIDIA H200", cert("b/n1", {"S": 8})),
         sets.Host("y", "1 x NVIDIA H100 80GB HBM3", cert("b/y", {"S": 8}))]
    found = sets.compare_sets(a, b)
    assert [(p.a.name, p.b.name, p.by) for p in found.pairs] == [("n1", "n1", "node")]
    assert found.only_a == [] and found.only_b == [b[1]]
    assert not found.differs and found.changes == [] and found.bandwidth == []
    assert found.not_comparable["bandwidth (±5%)"] == ["n1"]
