"""Step families: what a step label names, and which families rmpeer makes.

Every call rmpeer makes carries a label (`alloc:buffer:s3`, `ce:s0:g1:copy`,
`health:ecc:card2`). Its family is the label with the parts that only number an instance
left out (a session `s3`, a channel group `g1`, a card `card2`, a pair `0->1`), cut to its
first two parts: `alloc:buffer`, `ce:copy`, `health:ecc`.

Each module that makes steps declares the families it makes (`declare`), beside the code that
labels them; the shims refuse a call of a family no module declared (`check_label`), so code
cannot make a step the manifest does not know. The manifest (rmpeer/model/manifest.json,
written by tools/manifest.py from these declarations, the suites' checks, the host facts'
fields and the bandwidth figures; tests/model/test_manifest.py checks it is current) goes
into every recording's header and every certificate: `rmpeer diff` reads from it what each
side's rmpeer makes, so a family only one side's rmpeer makes is "not comparable", never a
difference.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

# a label part that numbers an instance rather than names a step
INSTANCE = re.compile(r"s\d+|g\d+|card\d+|\d+->\d+")
MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "rmpeer-manifest/1"
_DECLARED: dict[str, set] = {}        # family -> the modules that declare it


class UndeclaredStep(Exception):
    """rmpeer's own code made a call of a family no module declared: a bug of rmpeer (exit 5),
    never a fact of the host."""


def family_of(label: str) -> str:
    """A step label's family (`ce:s0:g1:copy` -> `ce:copy`); a key `rmpeer diff` adds an op
    to (`close:card0 [close]`) is read without it."""
    parts = [p for p in str(label).split(" [", 1)[0].split(":") if not INSTANCE.fullmatch(p)]
    return ":".join(parts[:2])


def declare(module: str, *families: str) -> frozenset:
    """The families `module` makes, registered for check_label and the manifest."""
    for family in families:
        if family_of(family) != family or not family:
            raise ValueError(f"{module}: {family!r} is not a step family (its family is {family_of(family)!r})")
        _DECLARED.setdefault(family, set()).add(_one_name(module))
    return frozenset(families)


def _one_name(module: str) -> str:
    """A suite is imported as suites.test_x from a checkout, rmpeer.suites.test_x from a wheel,
    and test_x by pytest: one name for the manifest, whichever imported it."""
    last = module.rsplit(".", 1)[-1]
    return f"suites.{last}" if last.startswith("test_") else module


def declared() -> dict:
    """{family: [the modules that declare it]}, of the modules imported so far."""
    return {family: sorted(mods) for family, mods in sorted(_DECLARED.items())}


@lru_cache(maxsize=4096)
def check_label(label: str) -> str:
    """The label's family, or UndeclaredStep when neither the manifest nor a module imported so
    far declares it (the shims call this for every call they make or serve, whatever modules a
    caller imported; labels repeat, so the answer is cached)."""
    family = family_of(label)
    if family not in _DECLARED and family not in manifest().get("families", ()):
        raise UndeclaredStep(f"rmpeer made a step {label!r} of the family {family!r}, which no module of rmpeer "
                             f"declares (rmpeer.model.steps.declare; then tools/manifest.py)")
    return family


@lru_cache(maxsize=1)
def manifest() -> dict:
    """What this rmpeer makes (rmpeer/model/manifest.json): {format, digest, families, fields,
    checks, figures}; empty when the file is missing or unreadable (a side with an empty
    manifest is read as one whose rmpeer's makings are unknown)."""
    try:
        doc = json.loads(resources.files("rmpeer.model").joinpath(MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT else {}
