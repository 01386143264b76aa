"""Text that a file holds (a recording, a certificate another user may have written), made
safe for a terminal."""

from __future__ import annotations


def escaped(text, *, lines: bool = False) -> str:
    """`text` with every control character (an escape that clears the screen or writes the
    clipboard, a line break) shown as its escape, never sent; `lines` keeps line breaks and
    tabs."""
    keep = "\n\t" if lines else ""
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in str(text))
