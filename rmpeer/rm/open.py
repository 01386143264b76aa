"""Opening this host through RM: the driver found, the ABI chosen, the cards discovered.

Everything opened here is closed by Runtime.close(), also after a failure, so that
nothing stays allocated on the GPUs (freeing the client frees every object under it).
"""

from __future__ import annotations

from rmpeer.abi import DriverMatrix
from rmpeer.errors import NoDeviceError
from rmpeer.rm.client import CTL_PATH, RmClient, open_device_node
from rmpeer.model.host import HostFacts
from rmpeer.rm.host import PROC_VERSION, Host, checked_version, query_driver_version, read_proc_version
from rmpeer.model.steps import declare

# the step families this module makes (rmpeer.model.steps: the shims refuse any other)
STEPS = declare(__name__, "open:nvidiactl", "close:nvidiactl")


class Runtime:
    """The runtime of one run (docs/architecture.md, Glossary): the RM connection it opens, from
    runtime:open to runtime:close: the shim, the RM client, the ABI chosen, the host discovered."""

    def __init__(self, shim, *, forced_abi: str | None = None, matrix: DriverMatrix | None = None,
                 select=None):
        self.shim = shim
        self.select = select     # which cards to open (rmpeer.machine.selection.Chooser); None: every card
        self.matrix = (matrix or DriverMatrix()).check_sends()
        self.rm = None
        self.host = None
        ctl = open_device_node(shim, CTL_PATH, label="open:nvidiactl:version")
        try:
            bootstrap = self.matrix.abi(self.matrix.releases[-1])
            queried = query_driver_version(shim, bootstrap, ctl)
        finally:
            shim.close(ctl, label="close:nvidiactl:version")
        proc_version, flavour = (read_proc_version() if shim.mode == "live"
                                 else read_proc_version(text=shim.header.get("driver_text", "")))
        version = queried or proc_version
        if not version:
            raise NoDeviceError("the NVIDIA driver answered no version (RM API query and "
                                "/proc/driver/nvidia/version both failed)")
        if not forced_abi:   # a forced ABI needs no release number; the facts keep what RM said
            version = checked_version(version, "RM API version query" if queried else PROC_VERSION)
        self.abi = self.matrix.abi_for_driver(version, forced_release=forced_abi)
        self.facts = HostFacts(version, flavour, "rm-api-query" if queried else "proc",
                               self.abi.release, self.abi.forced, self.abi.note)
        shim.note("driver", version=version, flavour=flavour, abi=self.abi.release, forced=self.abi.forced,
                  abi_note=self.abi.note)

    def open(self) -> "Runtime":
        self.rm = RmClient(self.shim, self.abi)
        self.host = Host(self.rm, self.facts).discover(self.select)
        self.shim.note("host", facts=self.facts.as_dict())
        return self

    def close(self) -> None:
        if self.rm is not None:
            self.rm.close()   # frees the client and, with it, every object left
        if self.host is not None:
            self.host.close()
        self.rm = self.host = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
