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


# -- the host's open: what it loads while the idle clocks' nvidia-smi runs ---------------------

def test_the_open_loads_what_it_is_given_before_rms_open_and_the_idle_reading(monkeypatch):
    """load() comes before RM's open, and so before the open waits for the idle clocks'
    nvidia-smi (started before it, read after it: hostrun.HostRun.open): the imports fill the
    wait instead of following it. A replay's HostRun, whose RM open and reading are recorded."""
    from rmpeer.paths import transcripts_dir
    from rmpeer.run.spec import replay_spec

    events = []
    real_open = hostrun.Runtime.open

    def rm_open(self):
        events.append("RM opened")
        return real_open(self)

    monkeypatch.setattr(hostrun.Runtime, "open", rm_open)
    real_start = hostrun.Fitness.start
    monkeypatch.setattr(hostrun.Fitness, "start", lambda self: events.append("clocks read") or real_start(self))
    host = HostRun(replay_spec(str(transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"), tier="quick"))
    try:
        host.open(load=lambda: events.append("loaded"))
    finally:
        host.abandon()
    assert events == ["loaded", "RM opened", "clocks read"], events
