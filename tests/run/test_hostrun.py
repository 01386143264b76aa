"""The run's account of other GPU processes: --require-idle refuses a busy host, and also a
host whose processes could not be listed (idle unproven is not idle); without it the run
records them, or why they are unknown."""

import pytest

from rmpeer.run import hostrun
from rmpeer.errors import NotIdleError
from rmpeer.run.hostrun import HostRun
from rmpeer.model.spec import Policies
from rmpeer.model.target import Target

pytestmark = pytest.mark.offline
HOLDER = {"pid": 4242, "command": "python3 train.py", "cards": [0, 1], "driver": True, "minors": [0, 1],
          "source": "proc+rm", "vidmem": {}}


class Spec:
    def __init__(self, require_idle):
        self.policies = Policies(require_idle=require_idle)


def run_with(monkeypatch, snapshot, *, require_idle, live=True):
    monkeypatch.setattr(hostrun, "snapshot_runtime", lambda *a, **k: snapshot)
    host = HostRun.__new__(HostRun)
    host.spec, host.shim, host.runtime, host.gpu_processes = Spec(require_idle), None, None, {}
    host.target = Target("live" if live else "replay", "h200x2", 2)
    host._other_processes("before")
    return host


def test_a_busy_host_is_refused_naming_the_process(monkeypatch):
    with pytest.raises(NotIdleError, match="pid 4242"):
        run_with(monkeypatch, {"processes": [HOLDER], "unreadable": [], "rm_errors": {}}, require_idle=True)


def test_processes_that_could_not_be_listed_are_refused_under_require_idle(monkeypatch):
    with pytest.raises(NotIdleError, match="could not tell.*Permission denied"):
        run_with(monkeypatch, {"processes": [], "unreadable": [], "error": "/proc: Permission denied"},
                 require_idle=True)


def test_processes_hidden_from_this_user_are_refused_when_rm_refused_its_list_too(monkeypatch):
    with pytest.raises(NotIdleError, match="2 processes whose open files"):
        run_with(monkeypatch, {"processes": [], "unreadable": [5, 6], "rm_errors": {"0": "NV_ERR_NOT_SUPPORTED"}},
                 require_idle=True)
    assert run_with(monkeypatch, {"processes": [], "unreadable": [5, 6], "rm_errors": {}},
                    require_idle=True).gpu_processes == {"before": []}


def test_an_idle_host_passes_and_the_others_are_recorded_without_require_idle(monkeypatch):
    assert run_with(monkeypatch, {"processes": [], "unreadable": [], "rm_errors": {}},
                    require_idle=True).gpu_processes == {"before": []}
    busy = run_with(monkeypatch, {"processes": [HOLDER], "unreadable": [], "rm_errors": {}}, require_idle=False)
    assert busy.gpu_processes == {"before": [HOLDER]}
    unknown = run_with(monkeypatch, {"processes": [], "error": "/proc: Permission denied"}, require_idle=False)
    assert unknown.gpu_processes == {"before_error": "/proc: Permission denied"}


def test_a_replay_is_never_refused(monkeypatch):
    """A replay checks rmpeer's requests, not this machine: its recorded holders are listed."""
    got = run_with(monkeypatch, {"processes": [HOLDER], "unreadable": [], "rm_errors": {}},
                   require_idle=True, live=False)
    assert got.gpu_processes == {"before": [HOLDER]}


# -- the host's open: what it loads on a thread of its own while this one waits on RM ---------

def _replay_host():
    from rmpeer.paths import transcripts_dir
    from rmpeer.run.spec import replay_spec

    return HostRun(replay_spec(str(transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"), tier="quick"))


def test_the_open_loads_on_another_thread_beside_rms_open_and_has_ended_by_its_return(monkeypatch):
    """load() runs on a thread of its own (rmpeer.machine.beside) while the caller's thread
    opens RM and reads the clocks; it has ended when the open returns, and the GIL's switch
    interval, made short beside it, is back. A replay's HostRun, whose RM open is recorded."""
    import sys
    import threading

    events, interval = [], sys.getswitchinterval()
    real_open = hostrun.Runtime.open

    def rm_open(self):
        events.append(("RM opened", threading.current_thread().name, sys.getswitchinterval()))
        release.set()
        return real_open(self)

    def load():
        events.append(("loading", threading.current_thread().name))
        assert release.wait(10), "RM's open never began beside the loading"   # the two at once
        events.append(("loaded", threading.current_thread().name))

    release = threading.Event()
    monkeypatch.setattr(hostrun.Runtime, "open", rm_open)
    host = _replay_host()
    try:
        host.open(load=load)
        assert sys.getswitchinterval() == interval
    finally:
        host.abandon()
    caller = threading.current_thread().name
    assert [e[0] for e in events if e[0] != "loading"] == ["RM opened", "loaded"], events
    assert events[-1] == ("loaded", "rmpeer-load")
    rm = next(e for e in events if e[0] == "RM opened")
    assert rm[1] == caller and rm[2] < interval, rm


def test_a_load_that_fails_fails_the_open_and_leaves_nothing_open(monkeypatch):
    """The loading thread's error is the open's, raised once RM's open is done, and the host's
    RM client is closed on the way out, as for any failure of the open."""
    closed = []
    real_close = hostrun.Runtime.close
    monkeypatch.setattr(hostrun.Runtime, "close", lambda self: closed.append(True) or real_close(self))

    def load():
        raise ImportError("No module named 'pytest'")

    host = _replay_host()
    with pytest.raises(ImportError, match="pytest"):
        host.open(load=load)
    assert closed and host.runtime is None


def test_an_open_that_fails_ends_the_loading_before_it_raises(monkeypatch):
    """RM's open failing (here: the device node refused) is the open's error, never the
    loading's; the loading has ended before it reaches the caller, who may import next."""
    import threading

    ended = threading.Event()

    def refused(self):
        raise PermissionError(13, "Permission denied", "/dev/nvidiactl")

    def load():
        import time

        time.sleep(0.2)
        ended.set()
        raise ImportError("not this one")

    monkeypatch.setattr(hostrun.Runtime, "open", refused)
    host = _replay_host()
    with pytest.raises(PermissionError, match="nvidiactl"):
        host.open(load=load)
    assert ended.is_set()
