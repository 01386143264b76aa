"""The seven libc calls the shim needs, through cffi in ABI mode (no compiler on the host).

Their declarations (rmpeer/shim/libc_calls.py) are C text that cffi parses with pycparser:
about 30 ms at every start, a tenth of a passive run in a prolog. A wheel carries them parsed
already: setup.py writes rmpeer/shim/_libc_ffi.py when the wheel is built (cffi's
out-of-line ABI mode), which loads with no C parser. A checkout, or a wheel whose module this
cffi cannot load, parses them here."""

from __future__ import annotations

import os

from rmpeer.shim.libc_calls import DECLARATIONS

try:
    from rmpeer.shim._libc_ffi import ffi
    PARSED_AT_BUILD = True
except ImportError:           # a checkout (or another cffi's module): parsed now
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(DECLARATIONS)
    PARSED_AT_BUILD = False
_libc = None

MAP_FAILED = 2**64 - 1  # (void *) -1 as an address
PROT_RW = 0x1 | 0x2      # PROT_READ | PROT_WRITE
MAP_SHARED = 0x01
O_RDWR_CLOEXEC = os.O_RDWR | os.O_CLOEXEC


def libc():
    """libc, loaded on first use so that importing rmpeer never touches it."""
    global _libc
    if _libc is None:
        _libc = ffi.dlopen(None)
    return _libc


def address(cdata) -> int:
    return int(ffi.cast("uintptr_t", cdata))
