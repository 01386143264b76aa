"""Card selection (issue 25): every way of naming a card resolved through the PCI bus id and
UUID RM reports, on an 8-card host whose RM order, /dev/nvidia minors, PCI bus order and
gres.conf order all differ (a hand-made host: the expected cards below are worked out by hand
from the table, not by the resolver)."""

import itertools

import pytest

from board_host import HOST, GRES, subset_facts

from rmpeer.errors import EXIT_CONFIG, ConfigError
from rmpeer.machine.selection import (CUDA, NVIDIA, OPTION, SLURM, EmptySelection, HostCard, Request, Selection,
                              gres_minors, request_from, resolve)

pytestmark = pytest.mark.offline

def chosen(value, variable=None, environ=None, host=HOST):
    env = dict(environ or {})
    if variable is None:
        request = request_from(value, environ=env)
    else:
        env[variable] = value
        request = request_from(None, variables=(variable,), environ=env)
    return resolve(request, host).cards


@pytest.mark.parametrize("value, variable, environ, cards", [
    ("2", None, {}, (2,)),                                         # rmpeer's numbers are RM's order
    ("5,1", None, {}, (1, 5)),                                     # the run takes them in RM's order
    ("0-2", None, {}, (0, 1, 2)),
    ("GPU-c2000000-0000-0000-0000-000000000002", None, {}, (2,)),
    ("gpu-C2", None, {}, (2,)),                                    # an unambiguous prefix, any case
    ("0000:4c:00.0", None, {}, (2,)),
    ("00000000:4C:00.0", None, {}, (2,)),                          # nvidia-smi's spelling
    ("4c:00.0", None, {}, (2,)),
    ("all", None, {}, tuple(range(8))),
    # SLURM_JOB_GPUS without gres.conf: the index is the minor (File=/dev/nvidia[0-7])
    ("0", SLURM, {"RMPEER_GRES_CONF": "/nonexistent"}, (1,)),      # minor 0 is RM's card 1
    ("3,7", SLURM, {"RMPEER_GRES_CONF": "/nonexistent"}, (2, 6)),  # minors 3 and 7
    # CUDA in PCI bus order: index 0 is bus 1b (RM's 1), index 2 is bus 3b (RM's 0)
    ("0,2", CUDA, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, (0, 1)),
    ("GPU-f6", CUDA, {}, (6,)),                                     # UUIDs under any order
    ("GPU-e5000000-0000-0000-0000-000000000005", CUDA, {}, (5,)),
    # NVML's indices follow the bus: 0 is bus 1b (RM's 1), 7 is bus db (RM's 6)
    ("0,7", NVIDIA, {}, (1, 6)),
    ("GPU-07", NVIDIA, {}, (7,)),
    ("all", NVIDIA, {}, tuple(range(8))),
    ("all", CUDA, {}, tuple(range(8))),
])
def test_every_naming_form_resolves_to_the_card_rm_reports(value, variable, environ, cards):
    assert chosen(value, variable, environ) == cards


def test_slurm_indices_follow_gres_conf(tmp_path):
    conf = tmp_path / "gres.conf"
    conf.write_text(GRES)
    env = {"RMPEER_GRES_CONF": str(conf)}
    assert gres_minors(GRES) == (4, 5, 6, 7, 0, 1, 2, 3)
    # GPU 0 is /dev/nvidia4 (RM's card 5); GPU 5 is /dev/nvidia1 (RM's card 3)
    assert chosen("0", SLURM, env) == (5,)
    assert chosen("5", SLURM, env) == (3,)
    with pytest.raises(ConfigError, match="gres.conf names 8 GPU"):
        chosen("8", SLURM, env)


def test_gres_conf_spellings():
    assert gres_minors("Name=gpu File=/dev/nvidia0\nName=gpu File=/dev/nvidia2\n") == (0, 2)
    assert gres_minors("Name=gpu File=/dev/nvidia[0,2-3]  # comment\nName=mps Count=100\n") == (0, 2, 3)
    assert gres_minors("AutoDetect=nvml\nName=gpu Count=8\n") is None     # no files: index = minor


@pytest.mark.parametrize("value, variable, environ, says", [
    ("9", None, {}, "no card 9"),
    ("GPU-aa", None, {}, "ambiguous"),                         # cards 0 and 4 start so
    ("GPU-ff", None, {}, "no card has the UUID"),
    ("0000:ee:00.0", None, {}, "no card at PCI bus id"),
    ("2,0000:4c:00.0", None, {}, "are the same card"),
    ("0", CUDA, {}, "CUDA_DEVICE_ORDER=PCI_BUS_ID"),           # fastest first: refused, asking for UUIDs
    ("8", NVIDIA, {}, "no card 8"),
    ("9", SLURM, {"RMPEER_GRES_CONF": "/nonexistent"}, "/dev/nvidia9"),
])
def test_a_name_that_matches_no_card_or_several_is_exit_2_naming_the_cards(value, variable, environ, says):
    with pytest.raises(ConfigError, match=says) as caught:
        chosen(value, variable, environ)
    assert caught.value.exit_code == EXIT_CONFIG == 2
    assert "GPU-" in str(caught.value)      # it names the cards (present, or the ones in question)
    assert "\n" not in str(caught.value)


def test_cuda_indices_under_fastest_first_are_taken_only_on_a_one_card_host():
    one = [HOST[0]]
    assert chosen("0", CUDA, {}, host=one) == (0,)
    with pytest.raises(ConfigError, match="UUIDs"):
        chosen("0", CUDA, {"CUDA_DEVICE_ORDER": "FASTEST_FIRST"})


@pytest.mark.parametrize("value, variable, says", [
    ("MIG-1c2d", None, "MIG instance"),
    ("MIG-GPU-aa11/1/0", CUDA, "MIG instance"),
    ("0:1", NVIDIA, "MIG instance"),                          # the toolkit's GPU:MIG index
    ("1b:00", None, "is not a card"),                         # a bus id without its function
    ("0,,1", None, "empty name"),
    ("1,1", None, "named twice"),
    ("card1", None, "is not a card"),
    ("3-1", None, "is not a card"),                            # a range backwards names no card, never zero cards
])
def test_bad_names_are_refused_before_the_host_is_known(value, variable, says):
    env = {} if variable is None else {variable: value}
    with pytest.raises(ConfigError, match=says):
        request_from(None if variable else value, variables=(variable,) if variable else (CUDA,), environ=env)


@pytest.mark.parametrize("variable, value", [(NVIDIA, "none"), (NVIDIA, "void"), (NVIDIA, ""), (CUDA, ""),
                                             (CUDA, "-1"), (CUDA, "NoDevFiles"), (SLURM, "  ")])
def test_an_empty_selection_gives_no_verdict(variable, value):
    with pytest.raises(EmptySelection, match="names no card") as caught:
        request_from(None, variables=(variable,), environ={variable: value})
    assert caught.value.exit_code == 2
    with pytest.raises(EmptySelection):
        request_from("", environ={})


def test_the_environment_order_and_all_cards():
    env = {SLURM: "1", CUDA: "GPU-b1"}
    assert request_from(None, variables=(SLURM, CUDA), environ=env).source == SLURM
    assert request_from(None, variables=(CUDA,), environ=env).source == CUDA
    assert request_from(None, all_cards=True, environ=env).every          # --all-cards ignores it
    assert request_from("3", environ=env).source == OPTION                # --cards outranks it
    unset = request_from(None, variables=(CUDA,), environ={})
    assert unset.every and "none of CUDA_VISIBLE_DEVICES set" in unset.how


def test_the_line_certify_says():
    sel = resolve(Request(CUDA, "GPU-b1", ("GPU-b1",)), HOST[:2])
    assert sel.line() == "cards: 1 of 0-1 (from CUDA_VISIBLE_DEVICES)"
    assert Selection.from_dict(sel.as_dict()) == sel
    wide = resolve(request_from("0,1,2,5,7", environ={}), HOST)
    assert wide.line() == "cards: 0-2,5,7 of 0-7 (from --cards)"
    # on a one-card host it said "cards: 0 of 0", read as none of none
    assert resolve(request_from("0", environ={}), HOST[:1]).line() == "cards: 0, the host's only card (from --cards)"


# -- every subset of an 8-card host: its spec, its plan and its topology -------------------

SUBSETS = [s for k in range(1, 9) for s in itertools.combinations(range(8), k)]


@pytest.mark.parametrize("k", range(1, 9))
def test_every_subset_gets_the_layouts_and_plans_of_its_card_count(k):
    """The spec of a k-card subset runs the layouts that fit k cards, each planned on cards
    0..k-1 only; the run's card i is the subset's i-th card in RM's order."""
    from rmpeer.tables.layouts import LayoutMatrix
    from rmpeer.run.spec import live_spec
    from rmpeer.model.target import Target

    matrix = LayoutMatrix()
    fitting = {tuple(l.cards) for l in matrix.fitting_with_reasons(k)[0]}
    for subset in [s for s in SUBSETS if len(s) == k]:
        request = Request(OPTION, ",".join(map(str, subset)), tuple(map(str, subset)))
        spec = live_spec(target=Target("live", "h200x8", 8), cards=request, pattern_seed=1)
        assert spec.target.cards == k and spec.tier == "full"
        assert {tuple(c.layout.cards) for c in spec.cases} == fitting
        sel = resolve(request, HOST)
        for case in spec.cases:
            plan = matrix.plan(case.layout.cards, case.extent, host_cards=k)
            card = {s.index: s.card for s in plan.sessions}
            used = set(card.values()) | {card[x] for p in plan.pairs for x in (p.a, p.b)}
            used |= {card[x] for w in plan.maps for x in (w.s, w.t)}
            assert used <= set(range(k))
            assert {sel.cards[c] for c in used} <= set(subset)


def test_more_cards_named_than_the_host_has_is_refused_before_the_device():
    from rmpeer.run.spec import live_spec
    from rmpeer.model.target import Target

    with pytest.raises(ConfigError, match="names 3 cards; this host has 2"):
        live_spec(target=Target("live", "h200x2", 2), cards=request_from("0,1,2", environ={}))
    passive = live_spec(target=Target("live", "h200x2", 2), cards=request_from("1", environ={}), tier="passive")
    assert passive.target.cards == 1 and passive.cards.names == ("1",)     # the passive tier takes them too


def test_mutation_slurm_indices_read_as_rm_order_fail_the_gres_checks(tmp_path, monkeypatch):
    """Mutation: a SLURM_JOB_GPUS index taken as RM's card number (the orders assumed to
    agree) picks the wrong card on the fixture host."""
    from source_mutation import mutated

    broken = mutated("rmpeer.machine.selection", "found = [c for c in cards if c.minor == minor]",
                     "found = [c for c in cards if c.index == minor]")
    request = broken.request_from(None, variables=(SLURM,), environ={SLURM: "0", "RMPEER_GRES_CONF": "/nonexistent"})
    assert broken.resolve(request, [broken.HostCard(**vars(c)) for c in HOST]).cards != (1,)


def test_collect_and_diff_show_the_selection():
    from types import SimpleNamespace

    from rmpeer.model.selection import collect_cell, selection_words

    sub, whole = subset_facts((1, 3)), subset_facts(tuple(range(8)))
    assert collect_cell(SimpleNamespace(host={"selection": sub.selection})) == "1,3/8"
    assert collect_cell(SimpleNamespace(host={"selection": whole.selection})) == "all"
    assert collect_cell(SimpleNamespace(host={})) == "all" and collect_cell(None) == "-"
    words, shape = selection_words(sub.as_dict())
    assert shape == (2, 8) and words.startswith("1,3 of 0-7 (from --cards): GPU-b1000000")
    assert selection_words(whole.as_dict())[1] == (8, 8)


def test_diff_says_which_cards_each_run_took():
    from rmpeer.diff.compare import compare_selection
    from rmpeer.diff.side import Side

    two, one = subset_facts((1, 3)).as_dict(), subset_facts((1,)).as_dict()
    aspect = compare_selection(Side("a", "certificate", facts=two), Side("b", "certificate", facts=one))
    assert aspect.differs and aspect.differences[0][0] == "cards"
    same = compare_selection(Side("a", "certificate", facts=two), Side("b", "certificate", facts=two))
    assert not same.differs and same.info == [selection_words_of(two)]


def selection_words_of(facts):
    from rmpeer.model.selection import selection_words

    return selection_words(facts)[0]


def test_each_card_rm_lists_gets_the_uuid_proc_gives_its_bus():
    """RM lists its cards in its own order and /proc/driver/nvidia/gpus in the bus order: the
    two are joined by PCI bus id (spelt 0000:4c:00.0 by RM, 0000:4C:00.0 by /proc), never
    by position."""
    from rmpeer.machine.selection import host_cards

    infos = [{"pci": "0000:4c:00.0", "minor": 1}, {"pci": "0000:18:00.0", "minor": 0}]
    proc = [{"bus": "0000:18:00.0", "uuid": "GPU-aa", "model": "NVIDIA H200"},
            {"bus": "0000:4C:00.0", "uuid": "GPU-bb", "model": "NVIDIA H200"}]
    assert [(c.index, c.pci, c.uuid) for c in host_cards(infos, proc)] == [(0, "0000:4c:00.0", "GPU-bb"),
                                                                         (1, "0000:18:00.0", "GPU-aa")]


def test_diff_says_every_card_of_a_run_that_asked_for_none():
    """The newest 1 x H200 recording took its one card unasked: "every card (1, none asked)"
    and the UUID its host note holds, never "0 of 0 (from no selection)"."""
    import gzip
    import json

    from rmpeer.model.selection import selection_words
    from rmpeer.paths import transcripts_dir

    path = sorted(transcripts_dir().glob("h200x1-*.jsonl.gz"))[-1]
    facts = next(d["facts"] for d in map(json.loads, gzip.open(path, "rt")) if d.get("note") == "host")
    assert selection_words(facts) == (f"every card (1, none asked): {facts['selection']['uuids'][0]}", (1, 1))


HUGE = "9" * 5000      # past the 4300 digits Python converts to an int


@pytest.mark.parametrize("value, variable", [
    ("0-999999999", None), ("0-999999999", SLURM), ("0-5000000", CUDA), ("0-" + HUGE, None), (HUGE, None),
    (HUGE + "-" + HUGE, CUDA),
])
def test_a_range_or_index_no_host_has_is_refused_before_it_is_expanded(value, variable):
    """A hostile range (--cards 0-999999999 took 160 GB before any check) or a number of
    thousands of digits (a ValueError, exit 5) is bad input: one line, exit 2."""
    env = {variable: value} if variable else {}
    with pytest.raises(ConfigError) as got:
        request_from(None if variable else value, variables=(variable,) if variable else (CUDA,), environ=env)
    assert got.value.exit_code == EXIT_CONFIG and len(str(got.value)) < 400


def test_a_range_of_every_card_a_host_may_have_is_taken():
    assert len(request_from("0-1023", environ={}).names) == 1024


@pytest.mark.parametrize("files", ["/dev/nvidia[0-3,]", "/dev/nvidia[a-b]", "/dev/nvidia[3-0]",
                                   "/dev/nvidia[0-999999999]", f"/dev/nvidia[0-{HUGE}]"])
def test_a_gres_conf_that_lists_no_minors_is_a_configuration_error(tmp_path, files):
    """gres.conf is root's: a File= list it cannot mean is exit 2 naming the line, never a
    ValueError or a list of a billion minors."""
    with pytest.raises(ConfigError, match=r"gres.conf, line 2"):
        gres_minors(f"# gres.conf\nName=gpu File={files}\n")


def test_a_fifo_at_gres_conf_never_blocks(tmp_path):
    """A FIFO at RMPEER_GRES_CONF blocked the open for ever, in the prolog, before any
    deadline is armed: it is refused, as a file that is not regular."""
    import os
    import threading

    fifo = tmp_path / "gres.conf"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(_refusal(fifo)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():      # unblock the open before failing, so the test run goes on
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(timeout=5)
    assert got and "not a regular file" in got[0]


def _refusal(fifo) -> str:
    try:
        request_from(None, variables=(SLURM,), environ={SLURM: "0", "RMPEER_GRES_CONF": str(fifo)})
    except ConfigError as exc:
        return str(exc)
    return "taken"
