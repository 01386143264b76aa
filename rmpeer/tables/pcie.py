"""matrices/pcie.yaml: the PCI Express facts the platform fingerprint's ACS walk reads, checked
at load. It was read raw at the end of a live run (rmpeer.run.fingerprint): a missing key was
a KeyError after every check had run (exit 5), an id_bits of 10**10 built a number of that
many bits, and a max_hops of 10**12 left the walk of a looping chain without its guard."""

from __future__ import annotations

from pathlib import Path

from rmpeer.errors import MatrixError, quoted
from rmpeer.tables.load import MATRICES, load_yaml, only_known, require, require_below

FILE_KEYS = ("schema", "extended_capabilities", "acs")
EXT_KEYS = ("start", "header_bytes", "id_bits", "next_shift", "next_mask", "max_hops")
ACS_KEYS = ("capability_id", "control_offset", "control_bytes", "control_bits")
REGISTER_MAX_BYTES = 8      # a capability header or register of config space: at most 64 bits


def load_pcie(path: Path | None = None) -> dict:
    """pcie.yaml, every key the ACS walk reads present and inside the word it is taken from
    (callers must not change what comes back: the parsed file is shared)."""
    path = Path(path or MATRICES / "pcie.yaml")
    data = load_yaml(path)
    only_known(path, "file", data, FILE_KEYS)
    ext = require(path, "file", data, "extended_capabilities", dict)
    only_known(path, "extended_capabilities", ext, EXT_KEYS)
    for key in EXT_KEYS:
        require(path, "extended_capabilities", ext, key, int)
    at = "extended_capabilities"
    width = 8 * require_below(path, f"{at}.header_bytes", ext["header_bytes"], REGISTER_MAX_BYTES + 1)
    if not width:
        raise MatrixError(path, f"{at}.header_bytes", "must be at least 1, found 0")
    require_below(path, f"{at}.id_bits", ext["id_bits"], width + 1)
    require_below(path, f"{at}.next_shift", ext["next_shift"], width)
    offsets = require_below(path, f"{at}.next_mask", ext["next_mask"], 1 << (width - ext["next_shift"])) + 1
    # a next pointer names at most next_mask + 1 offsets: a longer chain loops, and the guard
    # that stops it must stop it there
    require_below(path, f"{at}.start", ext["start"], offsets)
    hops = require_below(path, f"{at}.max_hops", ext["max_hops"], offsets + 1)
    if not hops:
        raise MatrixError(path, f"{at}.max_hops", "must be at least 1, found 0 (the walk would read no header)")
    acs = require(path, "file", data, "acs", dict)
    only_known(path, "acs", acs, ACS_KEYS)
    require_below(path, "acs.capability_id", require(path, "acs", acs, "capability_id", int), 1 << ext["id_bits"])
    require_below(path, "acs.control_offset", require(path, "acs", acs, "control_offset", int), offsets)
    control = require_below(path, "acs.control_bytes", require(path, "acs", acs, "control_bytes", int),
                            REGISTER_MAX_BYTES + 1)
    if not control:
        raise MatrixError(path, "acs.control_bytes", "must be at least 1, found 0 (the walk would read no bit)")
    for name, bit in require(path, "acs", acs, "control_bits", dict).items():
        if not isinstance(name, str) or not bit:
            raise MatrixError(path, f"acs.control_bits.{name}", f"must name a bit of the ACS Control register, "
                                                                f"found {quoted(bit)}")
        require_below(path, f"acs.control_bits.{name}", bit, 1 << 8 * control)
    return data
