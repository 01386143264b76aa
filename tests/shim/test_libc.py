"""rmpeer/shim/libc.py: a wheel carries libc's declarations parsed when it was built
(setup.py, cffi's out-of-line ABI mode), so a certify process imports no C parser (pycparser
cost about 30 ms at every start: a tenth of a passive run in a prolog). The built module must
declare exactly what rmpeer/shim/libc_calls.py says; a checkout parses the same text itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from rmpeer.shim import libc
from rmpeer.shim.libc_calls import DECLARATIONS

pytestmark = pytest.mark.offline
FROM_WHEEL = bool(os.environ.get("RMPEER_CI_WHEEL"))    # .ci/run: the installed wheel is under test
built = pytest.mark.skipif(not (FROM_WHEEL or libc.PARSED_AT_BUILD),
                           reason="a checkout parses libc's declarations when rmpeer starts; the module setup.py "
                                  "builds is in the wheel, which CI installs and tests (RMPEER_CI_WHEEL=1)")
NAMES = re.findall(r"(\w+)\(", DECLARATIONS)      # the functions declared, by the text itself


@built
def test_the_wheel_loads_libc_without_a_c_parser():
    done = subprocess.run([sys.executable, "-P", "-c", "import sys, rmpeer.shim.libc as l; "
                           "print(l.PARSED_AT_BUILD, 'pycparser' in sys.modules, l.libc().close(-1))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "-1"], done.stdout + done.stderr


@built
def test_the_built_module_declares_what_the_declarations_say():
    import cffi

    parsed = cffi.FFI()
    parsed.cdef(DECLARATIONS)
    theirs, ours = parsed.dlopen(None), libc.libc()
    assert NAMES == ["open", "close", "ioctl", "mmap", "munmap", "memcmp", "memcpy"]
    assert sorted(n for n in dir(ours) if not n.startswith("_")) == sorted(NAMES)
    for name in NAMES:
        assert str(libc.ffi.typeof(getattr(ours, name))) == str(parsed.typeof(getattr(theirs, name))), name


def test_a_checkout_parses_the_same_declarations():
    """Whichever way libc came, the seven calls answer as libc does (close of no descriptor
    is -1; memcmp of equal bytes is 0)."""
    calls = libc.libc()
    assert calls.close(-1) == -1
    a, b = bytearray(b"rmpeer"), bytearray(b"rmpeer")
    assert calls.memcmp(libc.ffi.from_buffer(a), libc.ffi.from_buffer(b), len(a)) == 0
    assert sorted(n for n in dir(calls) if not n.startswith("_")) == sorted(NAMES)
