"""Unit-level mutation: a module rebuilt from its own source with one change, so a test can
show that it fails when the code it guards is broken (the replay mutants are tests/mutants.py).

The copy is a fresh module object under the original's name and package (its relative
imports resolve to the real package); the real module is never touched."""

from __future__ import annotations

import importlib
import inspect
import types


def mutated(module_name: str, old: str, new: str) -> types.ModuleType:
    """`module_name` compiled from its source with `old` replaced by `new` (exactly once)."""
    real = importlib.import_module(module_name)
    source = inspect.getsource(real)
    assert source.count(old) == 1, f"the mutation's anchor {old!r} is not in {module_name} exactly once"
    copy = types.ModuleType(module_name)
    copy.__file__, copy.__package__ = real.__file__, real.__package__
    exec(compile(source.replace(old, new), f"{real.__file__} (mutated)", "exec"), copy.__dict__)
    return copy
