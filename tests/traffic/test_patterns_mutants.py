"""The data patterns (rmpeer/traffic/patterns.py) word by word, against oracles of their own:
the words a real two-card H200 run read back (a committed recording), and words laid out by
hand from the layout in patterns.py's docstring,

    word = pattern seed (16 bits) | kind (4) | owner session (4) | spare (4) | word index (36)

that is, in hex digits from the top: SSSS K O P IIIIIIIII. Written to kill the mutants mutmut
left alive (docs/mutation.md); every expected value below is spelled out, never taken from the
code under test."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from rmpeer.traffic import patterns

pytestmark = pytest.mark.offline
CHECKOUT = Path(__file__).resolve().parents[2]
# A real run on two H200s (interleaved layout: four sessions), every block read back recorded as
# runs of words counting up by one: [first word, count, first value] (fixtures/transcripts/README.md).
RECORDING = CHECKOUT / "fixtures" / "transcripts" / "h200x2-20261130T005408Z.jsonl.gz"


def recorded_readbacks():
    """(the header's run facts, {first value: (count, complete)} of every block read back)."""
    with gzip.open(RECORDING, "rt") as f:
        header = json.loads(f.readline())["header"]["run"]
        blocks = {}
        for line in f:
            extra = json.loads(line).get("extra") or {}
            if "runs" in extra and extra.get("complete") and len(extra["runs"]) == 1:
                first, count, value = extra["runs"][0]
                assert first == 0
                blocks[value] = count
    return header, blocks


def test_the_words_made_are_the_words_a_real_run_read_back():
    header, blocks = recorded_readbacks()
    seed, extent = header["pattern_seed"], header["extent"]
    assert (seed, extent) == (0x32DB, 64 << 20)            # 13019 in the header
    # The interleaved layout has sessions 0..3; each session's buffer pattern (kind 1) and its
    # writes into the others (kind 2) were read back whole: 8 patterns, each one run of
    # 64 MiB / 8 = 8388608 words counting up from word 0.
    made = {int(patterns.make(seed, kind, owner, 8)[0]): (kind, owner)
            for kind in (patterns.KIND_BUFFER, patterns.KIND_WRITE) for owner in range(4)}
    assert set(made) == set(blocks), "the first words of the recorded blocks"
    assert set(blocks.values()) == {extent // 8}
    # by hand: 0x32DB << 48 | 1 << 44 | 3 << 40 = 0x32DB_1300_0000_0000, session 3's buffer
    assert made[0x32DB_1300_0000_0000] == (1, 3)
    for value, (kind, owner) in made.items():
        last = patterns.make(seed, kind, owner, 8, first_word=extent // 8 - 1)
        assert int(last[0]) == value + extent // 8 - 1, "the block's last word counts on from its first"
    whole = patterns.make(seed, patterns.KIND_WRITE, 2, extent)
    want = np.uint64(0x32DB_2200_0000_0000) + np.arange(extent // 8, dtype=np.uint64)
    assert np.array_equal(whole, want) and 0x32DB_2200_0000_0000 in blocks


@pytest.mark.parametrize("seed,kind,owner,word", [
    (0xABCD, 2, 5, 0xABCD_2500_0000_0000),
    (0x0001, 1, 0, 0x0001_1000_0000_0000),
    (0xFFFF, 0xF, 0xF, 0xFFFF_FF00_0000_0000),
    # each field keeps to its bits: a wider seed, kind or owner is cut to them, never spills
    # into its neighbour (0x7ABCD -> 0xABCD, 0x12 -> 0x2, 0x13 -> 0x3)
    (0x7ABCD, 0x12, 0x13, 0xABCD_2300_0000_0000),
])
def test_tag_lays_seed_kind_and_owner_out_as_documented(seed, kind, owner, word):
    assert patterns.tag(seed, kind, owner) == word
    got = patterns.make(seed, kind, owner, 3 * 8, first_word=5)
    assert [int(w) for w in got] == [word + 5, word + 6, word + 7]


def test_a_kept_pattern_is_read_only():
    """cached() hands every layout of a run the same words: a caller that could write into
    them would spoil every later comparison against that pattern (the counting words under
    every pattern: tests/machine/test_slices_mutants.py)."""
    kept = patterns.cached(0x1234, patterns.KIND_BUFFER, 1, 64)
    with pytest.raises(ValueError):
        kept[0] = 7


def test_decode_reads_every_field_and_skips_the_spare_bits():
    # 0xABCD_2_5_F_123456789: seed ABCD, kind 2, owner 5, spare F, index 0x123456789
    assert patterns.Word.decode(0xABCD_25F1_2345_6789) == patterns.Word(0xABCD, 2, 5, 0x1_2345_6789)
    assert patterns.Word.decode(0xFFFF_FFFF_FFFF_FFFF) == patterns.Word(0xFFFF, 0xF, 0xF, (1 << 36) - 1)
    assert patterns.Word.decode(0x0001_1000_0000_0000) == patterns.Word(1, 1, 0, 0)
    assert patterns.Word.decode(0x8000_0100_0000_0001) == patterns.Word(0x8000, 0, 1, 1)


def test_describe_names_kind_session_card_seed_and_word():
    word = patterns.Word(0x32DB, patterns.KIND_WRITE, 1, 12)
    assert word.describe() == "write pattern of session 1, pattern seed 0x32db, word 12"
    # cards[owner]: session 1 runs on card 3
    assert word.describe((5, 3)) == "write pattern of session 1 (card 3), pattern seed 0x32db, word 12"
    # a session past the cards given is named without a card; an unknown kind by its number
    assert patterns.Word(0x0007, 9, 2, 0).describe((5, 3)) == "kind 9 pattern of session 2, pattern seed 0x0007, word 0"
    assert patterns.Word(0x0007, 1, 2, 0).describe((5, 3, 4)) == "buffer pattern of session 2 (card 4), pattern seed 0x0007, word 0"


def le(word: int) -> bytes:
    return word.to_bytes(8, "little")


WANT = dict(pattern_seed=0x32DB, kind=patterns.KIND_BUFFER, owner=0, cards=(0, 1))


def test_diagnose_tells_each_fault_by_its_cause():
    # session 0's buffer pattern, seed 0x32DB: word i is 0x32DB_1000_0000_0000 + i
    own = 0x32DB_1000_0000_0000
    at = 0x40                                             # byte 0x40: word 8
    assert patterns.diagnose(le(own + 8), at, **WANT) == ("", "matches")
    assert patterns.diagnose(le(own + 8) + b"more", at, **WANT) == ("", "matches"), "the first 8 bytes are the word"
    assert patterns.diagnose(b"\x00" * 7, at, **WANT) == (patterns.NO_DATA, "no data")
    assert patterns.diagnose(b"", at, **WANT) == (patterns.NO_DATA, "no data")
    # word 6 where word 8 belongs: (6 - 8) * 8 = -16 bytes
    assert patterns.diagnose(le(own + 6), at, **WANT) == (
        patterns.SHIFTED, "shifted: word 8 holds word 6 (-0x10 bytes)")
    assert patterns.diagnose(le(own + 9), at, **WANT) == (
        patterns.SHIFTED, "shifted: word 8 holds word 9 (+0x8 bytes)")
    # session 1's buffer (0x32DB_1100_...): the other card's memory
    assert patterns.diagnose(le(0x32DB_1100_0000_0008), at, **WANT) == (
        patterns.WRONG_MEMORY, "wrong memory: found the buffer pattern of session 1 (card 1), pattern seed 0x32db, "
        "word 8 where the buffer pattern of session 0 (card 0), pattern seed 0x32db, word 8 belongs")
    # session 0's own writes (kind 2, 0x32DB_2000_...): same owner, another kind, still wrong
    assert patterns.diagnose(le(0x32DB_2000_0000_0008), at, **WANT)[0] == patterns.WRONG_MEMORY
    # another run's seed (0x1111), a kind this suite writes: stale
    assert patterns.diagnose(le(0x1111_1000_0000_0008), at, **WANT) == (
        patterns.STALE, "stale data from another run: found the buffer pattern of session 0 (card 0), "
        "pattern seed 0x1111, word 8")
    # kind 0 (and any other than 1, 2): never written by this suite, seed alike or not
    for word in (0x32DB_0000_0000_0008, 0x1111_3000_0000_0008, 0):
        assert patterns.diagnose(le(word), at, **WANT) == (
            patterns.UNRECOGNISED, f"unrecognised data {word:#018x} (never written by this suite)")


def test_diagnose_compares_the_seed_cut_to_16_bits():
    """A seed wider than 16 bits is written cut to them (tag): its own words match it."""
    own = 0x32DB_1000_0000_0000
    assert patterns.diagnose(le(own + 1), 8, **{**WANT, "pattern_seed": 0x5_32DB}) == ("", "matches")


def test_explain_is_the_words_of_diagnose():
    at = 0x40
    assert patterns.explain(le(0x32DB_1000_0000_0008), at, **WANT) == "matches"
    assert patterns.explain(b"", at, **WANT) == "no data"
    assert patterns.explain(le(0x32DB_1000_0000_0007), at, **WANT) == "shifted: word 8 holds word 7 (-0x8 bytes)"
    assert patterns.explain(le(0x1111_2100_0000_0008), at, **WANT) == (
        "stale data from another run: found the write pattern of session 1 (card 1), pattern seed 0x1111, word 8")


def test_an_excerpt_of_many_words_is_judged_by_its_first():
    """The byte check hands diagnose its excerpt (bytecheck.EXCERPT_BYTES, 64 bytes: 8 words);
    the unrecognised word shown is the first 8 bytes alone, whatever follows it."""
    first, then = 0x1111_3000_0000_0008, 0xFFFF_FFFF_FFFF_FFFF
    excerpt = le(first) + le(then) * 7
    assert len(excerpt) == 64
    assert patterns.diagnose(excerpt, 0x40, **WANT) == (
        patterns.UNRECOGNISED, "unrecognised data 0x1111300000000008 (never written by this suite)")
    assert patterns.diagnose(le(0x32DB_1000_0000_0008) + le(then), 0x40, **WANT) == ("", "matches")
