"""drivers.yaml's parent chain and how a driver version finds its entry: explicit parents,
schema-checked; no leak from a later release of an older branch; releases beyond the
newest entry; unknown branches and bad version strings refused with exit 2."""

import re

import pytest
import yaml

from rmpeer.abi import DriverMatrix
from rmpeer.tables.load import MATRICES
from rmpeer.errors import EXIT_CONFIG, ConfigError, MatrixError, UnknownDriverError

pytestmark = pytest.mark.offline
MATRIX = DriverMatrix()


def _write(tmp_path, doc) -> DriverMatrix:
    path = tmp_path / "drivers.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return DriverMatrix(path)


def _real():
    return yaml.safe_load((MATRICES / "drivers.yaml").read_text())


def test_every_entry_but_the_first_names_an_older_parent():
    first, *rest = MATRIX.entries
    assert "parent" not in first
    for entry in rest:
        parent = entry["parent"]
        assert parent in MATRIX.releases
        assert MATRIX.releases.index(parent) < MATRIX.releases.index(entry["version"])


def test_a_release_resolves_along_its_parent_chain_only():
    chain = [e["version"] for e in MATRIX.chain("580.65.06")]
    assert chain[0] == MATRIX.releases[0] and chain[-1] == "580.65.06"
    for child, parent in zip(chain[1:], chain):
        assert MATRIX.by_version[child]["parent"] == parent


def test_a_change_in_a_later_release_of_an_older_branch_does_not_leak(tmp_path):
    """A 535 update made after 545 branched (file order puts it before 545) changes
    NVOS46_PARAMETERS; 545 and everything after it derive from 535.86.05 and keep theirs."""
    doc = _real()
    releases = doc["releases"]
    at = next(i for i, e in enumerate(releases) if e["version"].startswith("545."))
    before = releases[at - 1]["version"]
    assert releases[at]["parent"] == before
    update = {"version": "535.300.01", "parent": before, "source": "a test's invention",
              "structs": {"NVOS46_PARAMETERS": {"size": 72, "fields": {"hClient": [0, "u32"], "status": [64, "u32"]}}}}
    releases.insert(at, update)
    matrix = _write(tmp_path, doc)
    assert matrix.abi("535.300.01").struct("NVOS46_PARAMETERS").size == 72
    assert matrix.abi(matrix.select("535.301.02")).struct("NVOS46_PARAMETERS").size == 72
    for release in [v for v in matrix.releases if int(v.split(".")[0]) > 535]:
        real = MATRIX.abi(release).struct("NVOS46_PARAMETERS").size
        assert matrix.abi(release).struct("NVOS46_PARAMETERS").size == real
    # The rule it replaces, merging every earlier entry in file order, would have leaked it:
    flat = {}
    for entry in matrix.entries[: matrix.releases.index("545.23.06") + 1]:
        flat.update(entry.get("structs") or {})
    assert flat["NVOS46_PARAMETERS"]["size"] == 72


@pytest.mark.parametrize("change,problem", [
    (lambda r: r[1].pop("parent"), "missing key 'parent'"),
    (lambda r: r[1].update(parent="999.1.1"), "'999.1.1' is not an entry"),
    (lambda r: r[1].update(parent=r[2]["version"]), "is not older than"),
    (lambda r: r[0].update(parent=r[1]["version"]), "the first entry has no parent"),
    (lambda r: r[1].update(parent=7), "must be str"),
])
def test_the_parent_is_schema_checked(tmp_path, change, problem):
    doc = _real()
    change(doc["releases"])
    with pytest.raises(MatrixError) as err:
        _write(tmp_path, doc)
    assert problem in str(err.value) and "drivers.yaml" in str(err.value)


def test_a_release_newer_than_its_branch_newest_entry_resolves_and_says_so():
    a = MATRIX.abi_for_driver("595.45.04")
    assert a.release == "595.44.02" and not a.forced
    assert a.note == "595.45.04 is newer than the newest known 595 entry, using 595.44.02's ABI"
    assert MATRIX.abi_for_driver("595.44.02").note == ""


def test_an_unknown_branch_fails_closed_naming_the_command_that_generates_its_entry():
    with pytest.raises(UnknownDriverError) as err:
        MATRIX.abi_for_driver("600.1")
    text = str(err.value)
    assert err.value.exit_code == EXIT_CONFIG
    assert "branch 600 is unknown" in text and "rmpeer abi from-headers SRC" in text and "600.1" in text


@pytest.mark.parametrize("forced,expected", [("575.64.05", "575.51.02"), ("590.48.01", "590.44.01")])
def test_a_forced_release_resolves_like_a_detected_one_and_says_which_entry(forced, expected):
    detected = MATRIX.abi_for_driver(forced)
    assert detected.release == expected and expected in detected.note
    a = MATRIX.abi_for_driver("580.159.04", forced_release=forced)
    assert a.release == expected and a.forced
    assert "--rm-abi" in a.note and f"using {expected}'s ABI" in a.note


def test_a_release_older_than_its_branch_first_entry_says_that():
    with pytest.raises(UnknownDriverError) as err:
        MATRIX.abi_for_driver("580.65.05")
    text = str(err.value)
    assert "older than the first known 580 entry (580.65.06)" in text
    assert "no ABI for branch" not in text


@pytest.mark.parametrize("text", ["abc", "580.x.06", "", "580", "580.65.06.1", "５８０.65.06", "-580.65.06"])
def test_a_version_that_is_not_numbers_is_a_config_error(text):
    for call in (lambda: MATRIX.abi_for_driver(text), lambda: MATRIX.abi_for_driver("580.159.04", forced_release=text)
                 if text else MATRIX.abi_for_driver(text)):
        with pytest.raises(ConfigError) as err:
            call()
        assert err.value.exit_code == EXIT_CONFIG
        assert re.search(r"is not a driver version such as 580\.65\.06", str(err.value))
