"""A matrix file with one field changed, for the tests of the loaders that must refuse it:
the shipped file's data, the field at `keys` set to `value` (KeyError: deleted)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml


def damaged(doc: dict, keys: list, value):
    """A deep copy of `doc` with its field at `keys` set to `value` (KeyError: deleted)."""
    doc = copy.deepcopy(doc)
    parent = doc
    for key in keys[:-1]:
        parent = parent[key]
    if value is KeyError:
        del parent[keys[-1]]
    else:
        parent[keys[-1]] = value
    return doc


def write_damaged(path: Path, doc: dict, keys: list, value) -> Path:
    """`doc` damaged (as `damaged`), written as YAML at `path`."""
    path.write_text(yaml.safe_dump(damaged(doc, keys, value), sort_keys=False))
    return path
