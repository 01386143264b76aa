"""The byte check sees every byte of a block: a 64 MiB block with one word flipped anywhere
(the first byte, across the 8 MiB slices the comparison is split into, the last 8 bytes, a
random place) is reported at exactly that word.

The oracle is the flip itself: the test chooses where it goes. The random offsets come from a
seed that every failure prints; RMPEER_TEST_SEED=N repeats a run."""

import os

import numpy as np
import pytest

from rmpeer.traffic import bytecheck

pytestmark = pytest.mark.offline
BLOCK = 64 << 20
SLICE = 8 << 20      # the comparison's own slicing: the places a sliced compare could miss
SEED = int(os.environ.get("RMPEER_TEST_SEED", int.from_bytes(os.urandom(4), "little")))


@pytest.fixture(scope="module")
def expected():
    """A 64 MiB block of words that differ from each other (like the suite's patterns)."""
    return np.arange(BLOCK // 8, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def offsets():
    rng = np.random.default_rng(SEED)
    fixed = [0, SLICE - 8, SLICE, SLICE + 8, 3 * SLICE + 4096, BLOCK - SLICE, BLOCK - 16, BLOCK - 8]
    anywhere = [int(rng.integers(0, BLOCK // 8)) * 8 for _ in range(6)]
    past_first_slice = [int(rng.integers(SLICE // 8, BLOCK // 8)) * 8 for _ in range(6)]
    return fixed + anywhere + past_first_slice


def flipped(expected, offset, *, bit=None):
    actual = expected.copy()
    view = actual.view(np.uint8)
    if bit is None:
        actual[offset // 8] = ~actual[offset // 8]       # every bit of the word
    else:
        view[offset] ^= np.uint8(1 << bit)               # one bit of one byte
    return actual


def finds_every_flip(compare, expected):
    """The check under test: with `compare`, every flipped word is found where it was put."""
    for offset in offsets():
        actual = flipped(expected, offset)
        found = compare(actual, expected)
        where = f"(seed {SEED}: RMPEER_TEST_SEED={SEED} repeats it) word flipped at {offset:#x}"
        assert found is not None, f"{where}: the compare said equal"
        assert found.offset == offset, f"{where}: reported at {found.offset:#x}"
        assert found.differing == 8, f"{where}: {found.differing} differing bytes, 8 were flipped"
        assert found.actual == actual.view(np.uint8)[offset:offset + bytecheck.EXCERPT_BYTES].tobytes(), where


def test_a_flipped_word_anywhere_is_found_at_its_offset(expected):
    finds_every_flip(bytecheck.compare, expected)


@pytest.mark.parametrize("byte_in_word", [0, 3, 7])
def test_one_flipped_bit_is_reported_at_its_word(expected, byte_in_word):
    rng = np.random.default_rng(SEED + byte_in_word)
    word = int(rng.integers(SLICE // 8, BLOCK // 8))
    actual = flipped(expected, word * 8 + byte_in_word, bit=int(rng.integers(0, 8)))
    found = bytecheck.compare(actual, expected)
    assert found is not None and (found.offset, found.differing) == (word * 8, 1), f"seed {SEED}, word {word:#x}"


def test_equal_blocks_and_blocks_of_another_length(expected):
    assert bytecheck.compare(expected.copy(), expected) is None
    assert bytecheck.equal(expected.copy(), expected)
    shorter = expected[:-1].copy()
    found = bytecheck.compare(shorter, expected)
    assert found is not None and found.differing == 8, "the missing last word counts as differing"


@pytest.mark.parametrize("mutant,old,new", [
    ("first-slice-only", "pb + at, n), a.size, COMPARE_SLICE)", "pb + at, n), min(a.size, COMPARE_SLICE), COMPARE_SLICE)"),
    ("slices-8-bytes-short", "memcmp(pa + at, pb + at, n)", "memcmp(pa + at, pb + at, n - 8)"),
])
def test_the_flip_test_fails_when_the_comparison_skips_bytes(expected, mutant, old, new):
    """Mutation: a compare that looks at the first 8 MiB slice only, or stops 8 bytes short of
    the end of each slice, is caught by finds_every_flip."""
    from source_mutation import mutated

    broken = mutated("rmpeer.traffic.bytecheck", old, new)
    with pytest.raises(AssertionError, match="the compare said equal"):
        finds_every_flip(broken.compare, expected)


def test_two_flipped_words_report_the_first():
    """Issue 27 row 4: a hand-made 32 KiB block with words 10 and 500 flipped is reported at
    word 10's offset (80), with both words' 16 bytes counted."""
    expected = np.arange(4096, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    actual = expected.copy()
    actual[[10, 500]] = ~actual[[10, 500]]
    found = bytecheck.compare(actual, expected)
    assert (found.offset, found.differing) == (80, 16)
    assert found.actual[:8] == actual[10:11].tobytes()


def differs_throughout(compare, expected):
    """A read-back of nothing but wrong bytes (a map that reached no memory): every byte is
    counted, the first is byte 0, and the count costs no index per byte. ~word differs from
    word in each of its 8 bytes, so every byte of the block differs."""
    import tracemalloc

    actual = ~expected
    tracemalloc.start()
    try:
        found = compare(actual, expected)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found is not None and (found.offset, found.differing) == (0, BLOCK)
    # a list of the differing offsets would be 8 bytes each: 8 x BLOCK
    assert peak < BLOCK, f"comparing a {BLOCK >> 20} MiB block took {peak >> 20} MiB"


def test_a_block_that_differs_throughout_is_counted_without_listing_it(expected):
    differs_throughout(bytecheck.compare, expected)


@pytest.mark.parametrize("mutant,old,new", [
    ("listed", "neq = a != b\n    count = int(np.count_nonzero(neq))",
     "neq = a != b\n    count = int(np.flatnonzero(neq).size)"),
    ("first-slice-counted", "sum(c for _, c in found)", "found[0][1]"),
])
def test_the_throughout_test_fails_on_a_listing_or_a_partial_count(expected, mutant, old, new):
    """Mutation: a count that lists every differing offset (512 MiB for a 64 MiB block), or
    one that counts the first slice only, is caught."""
    from source_mutation import mutated

    broken = mutated("rmpeer.traffic.bytecheck", old, new)
    with pytest.raises(AssertionError):
        differs_throughout(broken.compare, expected)


@pytest.mark.parametrize("size", [10 << 20, SLICE + 8, SLICE - 8, 4096], ids=["10MiB", "slice+8", "slice-8", "4KiB"])
def test_a_block_of_any_size_is_checked_to_its_last_byte(size):
    """Issue 47, row 12: --extent takes sizes that are no multiple of the 8 MiB slice (10 MiB);
    a flip in the last partial slice's last word, or its first, is found there, and in a
    pattern the suite itself writes (patterns.make, the fill of every block) too."""
    from rmpeer.traffic import patterns

    want = patterns.make(0x32DB, patterns.KIND_BUFFER, 0, size)
    for at in {size - 8, (size // SLICE) * SLICE if size > SLICE else 0}:
        have = want.copy()
        have.view(np.uint8)[at] ^= 0x01
        found = bytecheck.compare(have, want)
        assert found is not None and found.offset == at and found.differing == 1, (size, at, found)
    # the fill reaches the last word: word i of the pattern holds its own index i
    assert int(want[-1]) & ((1 << 36) - 1) == size // 8 - 1
