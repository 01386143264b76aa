"""The assembler (rmpeer.run.assemble): what it makes of a run that did not end as a run must,
judged through the one judge. The spec is a real recording's (replay_spec), the host run one
that never opened (a signal or a deadline before RM's first call), so every rule below is
the assembler's own and no check's outcome decides it.

The rules come from README ("Fail closed: tool errors, signals, deadlines, checks that could
not run", and certify's options) and docs/architecture.md: a run stopped by a signal, before
or after its checks, or ended by its deadline is INCOMPLETE (exit 5), each card with it, and
the reason names the signal or the deadline; --valid-for sets the certificate's valid_until;
--expect-topology fails a host that is not that entry; a passive run's findings are its
result's; a finding is said once, the health facts' first."""

import dataclasses
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from rmpeer.errors import EXIT_INCOMPLETE
from rmpeer.model.result import DEGRADE, INFO, UNFINISHED, CheckResult, Finding
from rmpeer.model.spec import Outputs, Policies
from rmpeer.paths import transcripts_dir
from rmpeer.run import assemble
from rmpeer.run.hostrun import HostRun
from rmpeer.run.spec import replay_spec

pytestmark = pytest.mark.offline
QUICK_TWO = transcripts_dir() / "h200x2-20261130T005408Z.jsonl.gz"
needs_recording = pytest.mark.skipif(not QUICK_TWO.is_file(), reason=f"no {QUICK_TWO.name}")
PASSED = [CheckResult("read/one-per-card/s0->t1", "read", "read/write", "s0->t1", "passed")]


def spec(**outputs):
    s = replay_spec(str(QUICK_TWO), tier="quick", policies=Policies(no_floors=True))
    return dataclasses.replace(s, outputs=Outputs(**outputs)) if outputs else s


def result_of(s, *, stopped=None):
    r = assemble.host_result(s, HostRun(s), list(PASSED), started=datetime.now().timestamp(), stopped=stopped,
                             code=0, internal_error=False, refused=None)
    return assemble.judged(r)


def what_a_host_run_saw(**seen) -> SimpleNamespace:
    """A HostRun's readings as host_result reads them: nothing built, nothing found, but `seen`."""
    return SimpleNamespace(**{"layout_results": [], "pairs": [], "gpu_processes": {}, "host_facts": {},
                              "findings": [], "fitness": None, "floors": (None, []), "close_problems": [], **seen})


@needs_recording
def test_a_run_a_signal_stopped_is_incomplete_and_names_the_signal():
    r = result_of(spec(), stopped="SIGTERM")
    assert (r.verdict, r.exit_code) == ("INCOMPLETE", EXIT_INCOMPLETE)
    assert "run: host: expected the run to finish, found it was stopped by SIGTERM" in r.reasons
    # and so is each card's own verdict (the JSON line's and the fleet's per-card share)
    assert [(c["card"], c["verdict"]) for c in r.by_card["cards"]] == [(0, "INCOMPLETE"), (1, "INCOMPLETE")]


@needs_recording
def test_a_signal_after_the_checks_turns_a_finished_run_incomplete():
    r = result_of(spec())
    stopped = assemble.stopped_after(r, "SIGHUP")
    assert (stopped.verdict, stopped.exit_code) == ("INCOMPLETE", EXIT_INCOMPLETE)
    assert any("stopped by SIGHUP after its checks" in reason for reason in stopped.reasons)
    # a new RunResult: the one the outputs were first written from is as it was
    assert r.verdict != "INCOMPLETE" and not any("SIGHUP" in reason for reason in r.reasons)


@needs_recording
def test_a_run_its_deadline_ended_is_incomplete_and_keeps_the_checks_before_it():
    r = assemble.deadline_result(spec(), datetime.now().timestamp(), list(PASSED), 3.0)
    assert (r.verdict, r.exit_code) == ("INCOMPLETE", EXIT_INCOMPLETE)
    assert any(reason.startswith("deadline: host: expected the run to end within 3 s (--deadline)")
               for reason in r.reasons)
    assert [c.id for c in r.checks] == [c.id for c in PASSED]
    assert r.host.get("cards"), "the deadline's certificate still says which host it is of"


@needs_recording
def test_valid_for_sets_valid_until():
    r = result_of(spec(valid_for=timedelta(hours=2)))
    started = datetime.fromisoformat(r.started.replace("Z", "+00:00"))
    until = datetime.fromisoformat(r.valid_until.replace("Z", "+00:00"))
    assert until - started == timedelta(hours=2)


def test_a_passive_runs_findings_are_its_results():
    bad = Finding("xid", "card 0", "no Xid since the last run", "Xid 79", DEGRADE)
    seen = SimpleNamespace(started="2026-12-03T00:00:00Z", started_s=0.0, matrices="sha256:x", host={},
                           fingerprint={}, topology=None, clocks={}, links={}, xids={}, gpu_processes={},
                           checks=[CheckResult("xid/host", "xid", "fitness", "host", "failed")], findings=[bad],
                           duration_s=0.1)
    passive = SimpleNamespace(tier="passive", is_replay=False, target=SimpleNamespace(label="h"),
                              outputs=Outputs())
    r = assemble.judged(assemble.passive_result(passive, seen))
    assert r.findings == [bad] and r.verdict == "DEGRADED"


def test_the_fitness_findings_a_host_run_already_holds_are_not_added_twice():
    """A floor miss reaches the result once (issue 26: it was printed twice)."""
    miss = Finding("bandwidth-floor", "same-card 0->0", "at least 500 GB/s", "231.8 GB/s", DEGRADE)

    class Fitness:
        links_before = None

        def summary(self):
            return {"clocks": {}, "boost": {}, "links": {}, "bandwidth": [], "xids": {}}

    host = what_a_host_run_saw(findings=[miss], fitness=Fitness(), fitness_findings=lambda: [miss])
    s = SimpleNamespace(tier="quick", is_replay=False, target=SimpleNamespace(label="h"), outputs=Outputs(),
                        left_out=(), facts=None, topology=None, topology_name=None, topology_problems=lambda: [])
    r = assemble.host_result(s, host, list(PASSED), started=0.0, stopped=None, code=0, internal_error=False,
                             refused=None)
    assert r.findings.count(miss) == 1
    assert [f.severity for f in r.findings if f.severity in (INFO, UNFINISHED)] == []


@needs_recording
def test_a_host_that_is_not_the_topology_asked_for_is_not_certified():
    """--expect-topology NAME: "fail unless the host is this entry of matrices/topologies.yaml"."""
    s = replay_spec(str(QUICK_TWO), tier="quick", topology_name="h200x1", policies=Policies(no_floors=True))
    r = result_of(s)
    assert r.verdict == "NOT CERTIFIED" and any(reason.startswith("topology: host:") for reason in r.reasons)


@needs_recording
def test_the_certificate_says_why_it_ran_and_which_layouts_it_left_out():
    """--if-stale's reasons (README: "else run the tier and say why") and the layouts the
    target cannot run are the certificate's, as the spec carries them."""
    why = ("the certificate expired at 2026-12-02T00:00:00Z",)
    s = dataclasses.replace(spec(ran_because=why), left_out=("x8: needs 8 cards, the host has 2",))
    r = result_of(s)
    assert r.ran_because == list(why) and r.left_out == ["x8: needs 8 cards, the host has 2"]


HEALTH_ONE = transcripts_dir() / "h200x1-20261201T100856Z.jsonl.gz"


@pytest.mark.skipif(not HEALTH_ONE.is_file(), reason=f"no {HEALTH_ONE.name}")
def test_the_health_findings_come_first_in_the_reasons():
    """A card's health explains the check failures after it (docs/health.md: a failed row
    remap is the card's memory, not the peer setup): its reason is said first."""
    s = replay_spec(str(HEALTH_ONE), tier="quick", policies=Policies(no_floors=True))
    facts = s.facts.as_dict()
    facts["cards"][0]["health"]["remapped_rows"].update(failure=True, rows=3)
    wrong = Finding("read", "s0->t0", "every byte as written", "12 bytes differ", "fail")
    host = what_a_host_run_saw(host_facts=facts, findings=[wrong])
    r = assemble.judged(assemble.host_result(s, host, list(PASSED), started=0.0, stopped=None, code=0,
                                             internal_error=False, refused=None))
    assert r.reasons[0].startswith("row-remap: card 0") and r.reasons[1].startswith("read: s0->t0")
