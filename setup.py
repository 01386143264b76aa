"""The wheel's built files, each a parse a run would otherwise repeat at every start:
- rmpeer/shim/_libc_ffi.py and rmpeer/machine/_nvml_ffi.py: libc's and NVML's declarations
  (rmpeer/shim/libc_calls.py, rmpeer/machine/nvml_calls.py) parsed by cffi (out-of-line ABI
  mode), so that rmpeer never imports a C parser at run time (rmpeer/shim/libc.py,
  rmpeer/machine/nvml.py);
- rmpeer/tables/_matrices.marshal: the shipped matrices parsed by rmpeer's own loader, by the
  sha256 of their bytes (rmpeer/tables/load.py).
Everything else about the package is in pyproject.toml."""

import marshal
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# (the built module, the file of its declarations)
FFI_MODULES = (("rmpeer.shim._libc_ffi", "rmpeer/shim/libc_calls.py"),
               ("rmpeer.machine._nvml_ffi", "rmpeer/machine/nvml_calls.py"))


class BuildPy(build_py):
    def run(self):
        super().run()
        if self.editable_mode:     # an editable install runs the checkout: libc.py parses there
            return
        import cffi

        for module, calls in FFI_MODULES:
            declarations = runpy.run_path(str(Path(__file__).parent / calls))["DECLARATIONS"]
            ffi = cffi.FFI()
            ffi.cdef(declarations)
            ffi.set_source(module, None)
            target = Path(self.build_lib, *module.split("."))
            ffi.emit_python_code(str(target.with_suffix(".py")))
        self._matrices()

    def _matrices(self):
        root = Path(__file__).parent
        sys.path.insert(0, str(root))      # the loader a run uses: the same parse, the same refusals
        try:
            from rmpeer.tables.load import BUILT, parsed_for_build
        finally:
            sys.path.remove(str(root))
        target = Path(self.build_lib, "rmpeer", "tables", BUILT.name)
        target.write_bytes(marshal.dumps(parsed_for_build(root / "matrices")))


setup(cmdclass={"build_py": BuildPy})
