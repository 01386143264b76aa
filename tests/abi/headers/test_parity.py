"""drivers.yaml against the headers of every tag it covers.

fixtures/abi-parity.json.gz is what the C compiler read from NVIDIA's headers for each tag
of open-gpu-kernel-modules from 535.43.02 to 595.45.04 (struct sizes, field offsets,
constants, escapes, classes, controls, bit fields; no header text). For every tag, the ABI
drivers.yaml selects for that version must equal it, key by key. After adding a name or a
release to drivers.yaml, write the fixture again: python tools/abi_parity_fixture.py --src CLONE
"""

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.abi.drivers import version_key
from rmpeer.abi.headers.parity import FIXTURE, read_fixture, resolved_flat

pytestmark = pytest.mark.offline
MATRIX = DriverMatrix()
TAGS = read_fixture()
REGENERATE = ("python tools/abi_parity_fixture.py --src CLONE "
              "(CLONE: git clone https://github.com/NVIDIA/open-gpu-kernel-modules; needs cc)")


def test_the_fixture_covers_the_releases_drivers_yaml_claims():
    tags = sorted(TAGS, key=version_key)
    assert tags[0] == "535.43.02" and len(tags) >= 144 and "595.45.04" in tags
    assert {535, 545, 550, 555, 560, 565, 570, 575, 580, 590, 595} <= {version_key(t)[0] for t in tags}
    assert set(MATRIX.branches()) <= {version_key(t)[0] for t in tags}
    assert set(MATRIX.releases) <= set(tags), "every entry is the first tag that carried its change"
    assert FIXTURE.stat().st_size < 200_000


@pytest.mark.parametrize("tag", sorted(TAGS, key=version_key))
def test_the_abi_selected_for_a_tag_equals_its_headers(tag):
    have, headers = resolved_flat(MATRIX, tag), TAGS[tag]
    wrong = sorted(k for k in set(have) | set(headers) if have.get(k) != headers.get(k))
    shown = "; ".join(f"{k}: drivers.yaml {have.get(k, 'absent')}, headers {headers.get(k, 'absent')}"
                      for k in wrong[:8])
    assert not wrong, f"{tag} (entry {MATRIX.select(tag)}): {len(wrong)} keys differ: {shown}. " \
                      f"If drivers.yaml gained a name, regenerate the fixture: {REGENERATE}"


def test_every_entry_is_a_tag_where_something_changed():
    """An entry that changes nothing against its parent would be noise in the chain."""
    for entry in MATRIX.entries[1:]:
        assert TAGS[entry["version"]] != TAGS[entry["parent"]], f"{entry['version']} equals its parent's headers"
