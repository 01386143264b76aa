"""The wheel's one built file: rmpeer/shim/_libc_ffi.py, libc's declarations
(rmpeer/shim/libc_calls.py) parsed by cffi when the wheel is built (out-of-line ABI mode), so
that rmpeer never imports a C parser at run time (rmpeer/shim/libc.py). Everything else about
the package is in pyproject.toml."""

import runpy
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

MODULE = "rmpeer.shim._libc_ffi"


class BuildPy(build_py):
    def run(self):
        super().run()
        if self.editable_mode:     # an editable install runs the checkout: libc.py parses there
            return
        import cffi

        declarations = runpy.run_path(str(Path(__file__).parent / "rmpeer" / "shim" / "libc_calls.py"))["DECLARATIONS"]
        ffi = cffi.FFI()
        ffi.cdef(declarations)
        ffi.set_source(MODULE, None)
        target = Path(self.build_lib, *MODULE.split("."))
        ffi.emit_python_code(str(target.with_suffix(".py")))


setup(cmdclass={"build_py": BuildPy})
