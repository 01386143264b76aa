"""Tests that kill the mutants of rmpeer/render/text.py (docs/mutation.md): text with control
characters, each expected string written out here by hand from Python's escape rules (a control
character shows as the escape Python spells it with: \\x1b, \\n, \\t, \\r, \\u2028), never taken
from escaped."""

import pytest

from rmpeer.render.text import escaped

pytestmark = pytest.mark.offline


@pytest.mark.parametrize("text, shown", [
    ("plain text", "plain text"),
    ("", ""),
    ("ab", "ab"),                                            # nothing between the characters
    ("\x1b[2J\x1b]52;c;aGk=\x07", "\\x1b[2J\\x1b]52;c;aGk=\\x07"),   # clears the screen, writes the clipboard
    ("one\ntwo\tthree\r", "one\\ntwo\\tthree\\r"),           # line breaks and tabs too, by default
    ("a\x00b\x7fc", "a\\x00b\\x7fc"),
    ("line\u2028sep\x85", "line\\u2028sep\\x85"),
    ("caf\u00e9 \u2192 GB/s", "caf\u00e9 \u2192 GB/s"),      # printable beyond ASCII: as it is
    ("it's \"quoted\" \\", "it's \"quoted\" \\"),
])
def test_each_control_character_is_shown_as_its_escape(text, shown):
    assert escaped(text) == shown


def test_lines_keeps_line_breaks_and_tabs_and_nothing_else():
    assert escaped("one\ntwo\tthree", lines=True) == "one\ntwo\tthree"
    assert escaped("a\r\nb\x1b[0m\tc\x0bd", lines=True) == "a\\r\nb\\x1b[0m\tc\\x0bd"
    assert escaped("one\ntwo\tthree", lines=False) == "one\\ntwo\\tthree"


def test_anything_is_shown_as_its_text():
    assert escaped(42) == "42"
    assert escaped(None) == "None"
    assert escaped(["a\nb"]) == "['a\\nb']"   # str() of a list already spells the break
