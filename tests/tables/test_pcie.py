"""rmpeer.tables.pcie: matrices/pcie.yaml is checked at load, each number inside the word it is
taken from. It was read raw by a live run's fingerprint after every check had run: a missing
key was a KeyError there (exit 5), id_bits 10**10 a number of ten billion bits, max_hops 10**12
a walk of a looping chain without its guard."""

import pytest
import yaml
from damaged_matrix import write_damaged

from rmpeer.errors import EXIT_CONFIG, MatrixError
from rmpeer.tables.load import MATRICES
from rmpeer.tables.pcie import load_pcie

pytestmark = pytest.mark.offline
REAL = yaml.safe_load((MATRICES / "pcie.yaml").read_text())
EXT, ACS = ["extended_capabilities"], ["acs"]
CASES = [
    (ACS, KeyError, "file: missing key 'acs'"),
    (ACS + ["control_offest"], 6, "acs.control_offest: unknown key (known: capability_id, control_offset, control_bytes, control_bits)"),
    (ACS + ["control_offset"], "x", "acs.control_offset: must be int, found 'x'"),
    (ACS + ["control_offset"], -1, "acs.control_offset: must be a whole number from 0 to 0xffc, found -1"),
    (ACS + ["capability_id"], 0x10000, "acs.capability_id: must be a whole number from 0 to 0xffff, found 65536"),
    (ACS + ["control_bits", "SrcValid"], 0x10000, "acs.control_bits.SrcValid: must be a whole number from 0 to 0xffff"),
    (ACS + ["control_bits", "SrcValid"], 0, "acs.control_bits.SrcValid: must name a bit of the ACS Control register, "
                                            "found 0"),
    (EXT + ["id_bits"], 10**10, "extended_capabilities.id_bits: must be a whole number from 0 to 0x20, found 10000000000"),
    (EXT + ["header_bytes"], 10**9, "extended_capabilities.header_bytes: must be a whole number from 0 to 0x8"),
    (EXT + ["header_bytes"], 0, "extended_capabilities.header_bytes: must be at least 1, found 0"),
    (EXT + ["next_shift"], 32, "extended_capabilities.next_shift: must be a whole number from 0 to 0x1f, found 32"),
    (EXT + ["next_mask"], 0x1000, "extended_capabilities.next_mask: must be a whole number from 0 to 0xfff"),
    (EXT + ["max_hops"], 10**12, "extended_capabilities.max_hops: must be a whole number from 0 to 0xffd, "
                                 "found 1000000000000"),
    (EXT + ["max_hops"], 0, "extended_capabilities.max_hops: must be at least 1, found 0"),
    (EXT + ["start"], 0x1000, "extended_capabilities.start: must be a whole number from 0 to 0xffc, found 4096"),
    (EXT + ["start"], KeyError, "extended_capabilities: missing key 'start'"),
]


@pytest.mark.parametrize("keys, value, message", CASES,
                         ids=[f"{'.'.join(k)}={'deleted' if v is KeyError else v!r}" for k, v, _ in CASES])
def test_a_broken_pcie_matrix_is_refused_naming_the_key(tmp_path, keys, value, message):
    path = write_damaged(tmp_path / "pcie.yaml", REAL, keys, value)
    with pytest.raises(MatrixError) as caught:
        load_pcie(path)
    assert caught.value.exit_code == EXIT_CONFIG
    assert str(caught.value).startswith(f"{path}: {message}"), str(caught.value)


def test_the_shipped_matrix_loads():
    assert load_pcie()["acs"]["capability_id"] == 0x000D


def test_the_fingerprint_of_a_host_refuses_a_broken_file_by_name(tmp_path, monkeypatch):
    """The ACS walk of a live run's fingerprint (after the run) read it raw: a KeyError."""
    from fake_host_tree import make_host
    from rmpeer.paths import MATRICES_ENV
    from rmpeer.run.fingerprint import platform_fingerprint

    folder = tmp_path / "matrices"
    folder.mkdir()
    write_damaged(folder / "pcie.yaml", REAL, ACS, KeyError)
    monkeypatch.setenv(MATRICES_ENV, str(folder))
    with pytest.raises(MatrixError, match="pcie.yaml: file: missing key 'acs'"):
        platform_fingerprint(root=str(make_host(tmp_path / "root")), matrices="sha256:" + "ab" * 32)
