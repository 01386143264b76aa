"""rmpeer.fleet.checks (what `rmpeer fleet collect` checks of node folders it did not write)
called in this process, on node outcomes and sweep folders built by hand. Written to kill the
mutants mutmut left alive (docs/mutation.md). The expected values come from the module's
docstring and docs/threat-model.md ("What a head node can check": the certificate's node and
status.json's node equal the folder's name; the verdict is what the certificate's own findings
and checks give; no GPU UUID under two nodes, live certificates only, a copied folder an error
for both; every folder present is listed, an empty one an error), docs/fleet.md (a reason is one
line `rmpeer: <check>: <detail>`; an error is never drained, resumed nor re-run) and the rule
that a planted file never stops the collection; every line is spelled out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_DEGRADED, EXIT_OK, ConfigError
from rmpeer.fleet import checks
from rmpeer.fleet import outcome as oc
from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, NOT_CERTIFIED, CheckResult, Finding,
                                 RunResult)

pytestmark = pytest.mark.offline

READ = Finding("read", "pair 0->1", "the bytes written", "3 bytes differ", FAIL)
FLOOR = Finding("bandwidth-floor", "read 1->0", "at least 355 GB/s", "232.9 GB/s", DEGRADE)
GPU_A = "GPU-64a3b63e-24a1-5b98-f1f8-c9a571c5e5e8"      # the one H200 of docs/evidence's live runs
GPU_B = "GPU-c2837b82-0000-0000-0000-000000000001"
GPU_C = "GPU-f0000000-0000-0000-0000-000000000002"


def result(node="gpu-a", verdict=CERTIFIED, findings=(), uuids=(), fingerprint=None, kind="live",
           version="0.1.0") -> RunResult:
    """A certificate's RunResult: one passed read check, the findings given, host cards of these UUIDs."""
    host = {"cards": [{"index": i, "uuid": u} for i, u in enumerate(uuids)]} if uuids else {}
    return RunResult(node=node, tier="quick", verdict=verdict, findings=list(findings), version=version,
                     target={"kind": kind}, host=host, fingerprint=fingerprint or {},
                     checks=[CheckResult("read/x", "read", "read/write", "pair 0->1", "passed")])


def read(node: str, r: RunResult | None, status_node="") -> oc.NodeOutcome:
    """A node's outcome as load_node gives it (outcome.from_result), status.json's node beside it."""
    if r is None:
        return oc.NodeOutcome(node, oc.ERROR, line="rmpeer: tool: no result: the node did not run, or did not finish")
    o = oc.from_result(node, r, Path(f"/shared/{node}/certificate.json"))
    o.status_node, o.trust, o.signature = status_node, "unsigned (no signature)", "UNSIGNED"
    return o


def copy_line(uuid: str, other: str) -> str:
    return (f"rmpeer: certificate: GPU {uuid} is also in node {other}'s certificate: one of the folders is a copy "
            f"(both are errors)")


# ---- _error: a node made an error keeps what it read, never its result --------------------------

def test_a_node_made_an_error_keeps_its_fields_and_drops_its_result():
    """The verdict, reasons, exit code, time, certificate, stand-in and signature stay (the table
    and summary.jsonl show them); the state is `error` with the check's one line; the result is
    dropped (nothing after reads a certificate that failed a check); never floors-only (an error
    is never re-run)."""
    o = oc.NodeOutcome("gpu-a", oc.DEGRADED_STATE, DEGRADED, ["r1", "r2"], "rmpeer: bandwidth-floor: x", True,
                       EXIT_DEGRADED, 12.5, Path("/s/gpu-a/certificate.json"), result(verdict=DEGRADED),
                       "h200x1.jsonl.gz", "verified with this machine's key", "VERIFIED", "gpu-a")
    got = checks._error(o, "certificate", "it is\na copy")
    assert got == oc.NodeOutcome("gpu-a", oc.ERROR, DEGRADED, ["r1", "r2"], "rmpeer: certificate: it is a copy", False,
                                 EXIT_DEGRADED, 12.5, Path("/s/gpu-a/certificate.json"), None, "h200x1.jsonl.gz",
                                 "verified with this machine's key", "VERIFIED", "")


# ---- own_problem: a certificate of the node whose folder holds it, with its own verdict ---------

def test_a_node_without_a_certificate_has_no_problem_of_its_certificate():
    assert checks.own_problem(read("gpu-a", None)) is None


def test_a_certificate_of_its_own_node_with_the_verdict_its_checks_give_is_consistent():
    assert checks.own_problem(read("gpu-a", result("gpu-a"), status_node="gpu-a")) is None
    assert checks.own_problem(read("gpu-a", result("gpu-a", NOT_CERTIFIED, [READ]))) is None
    assert checks.own_problem(read("gpu-a", result("gpu-a", DEGRADED, [FLOOR]), status_node="")) is None, \
        "a status.json that names no node names no other"


def test_a_certificate_of_another_node_is_a_copied_folder():
    assert checks.own_problem(read("gpu-a", result("gpu-b"), status_node="gpu-a")) == \
        "the certificate in folder gpu-a is of node gpu-b: a copied folder?"
    assert checks.own_problem(read("gpu-a", result(""))) == \
        "the certificate in folder gpu-a is of node (unnamed): a copied folder?"


def test_a_status_of_another_node_is_a_copied_folder():
    assert checks.own_problem(read("gpu-a", result("gpu-a"), status_node="gpu-b")) == \
        "status.json in folder gpu-a is of node gpu-b: a copied folder?"


def test_the_certificates_node_is_checked_before_the_status_and_the_verdict():
    flipped = result("gpu-b", CERTIFIED, [READ])
    assert checks.own_problem(read("gpu-a", flipped, status_node="gpu-c")) == \
        "the certificate in folder gpu-a is of node gpu-b: a copied folder?"
    assert checks.own_problem(read("gpu-a", result("gpu-a", CERTIFIED, [READ]), status_node="gpu-c")) == \
        "status.json in folder gpu-a is of node gpu-c: a copied folder?"


def test_a_verdict_flipped_by_hand_is_caught():
    """CERTIFIED with a FAIL finding still inside: its findings give NOT CERTIFIED."""
    assert checks.own_problem(read("gpu-a", result("gpu-a", CERTIFIED, [READ]))) == (
        "the certificate says CERTIFIED, its own findings and checks give NOT CERTIFIED (rmpeer 0.1.0 wrote it): "
        "edited by hand?")


# ---- uuids_of: the GPUs a live certificate names ------------------------------------------------

def test_the_gpus_of_a_live_certificate_are_its_hosts_cards():
    assert checks.uuids_of(read("gpu-a", result(uuids=[GPU_A, GPU_B]))) == {GPU_A, GPU_B}


def test_no_gpu_of_a_node_without_a_certificate_or_of_a_replay():
    """A replay's UUIDs are the recorded host's: every stand-in of one recording names them."""
    assert checks.uuids_of(read("gpu-a", None)) == set()
    assert checks.uuids_of(read("gpu-a", result(uuids=[GPU_A], kind="replay"))) == set()


def test_only_cards_with_a_uuid_name_a_gpu():
    r = result(uuids=[GPU_A, "", GPU_B])
    assert checks.uuids_of(read("gpu-a", r)) == {GPU_A, GPU_B}
    no_uuid = RunResult(node="gpu-a", host={"cards": [{"index": 0}, {"index": 1, "uuid": GPU_C}]},
                        target={"kind": "live"})
    assert checks.uuids_of(read("gpu-a", no_uuid)) == {GPU_C}


def test_without_host_cards_the_fingerprints_cards_name_the_gpus():
    fp = {"cards": [{"pci": "0000:00:06.0", "uuid": GPU_A}, "GPU-not-a-card", {"pci": "0000:00:07.0"}]}
    assert checks.uuids_of(read("gpu-a", result(fingerprint=fp))) == {GPU_A}
    assert checks.uuids_of(read("gpu-a", result(uuids=[GPU_B], fingerprint=fp))) == {GPU_B}, \
        "the host's cards first"
    assert checks.uuids_of(read("gpu-a", result())) == set()


@pytest.mark.parametrize("cards", [5, [{"uuid": ["GPU-x"]}], [{"uuid": {"GPU-x": 1}}], [{"uuid": 7}], True],
                         ids=["a-number", "uuid-a-list", "uuid-a-mapping", "uuid-a-number", "true"])
def test_a_planted_fingerprint_of_another_shape_names_no_gpu_and_never_raises(cards):
    """fingerprint is not checked by RunResult.from_dict past being a mapping: its cards come from
    the file as written. Cards that are no list, or a UUID that is no text, name no GPU (a
    planted file never stops the collection)."""
    assert checks.uuids_of(read("gpu-a", result(fingerprint={"cards": cards}))) == set()


# ---- cross_check: each node's checks, then the GPUs of every node --------------------------------

def test_nodes_that_pass_every_check_are_returned_as_they_were_in_their_order():
    a, b, c = read("gpu-b", result("gpu-b", uuids=[GPU_B])), read("gpu-a", result("gpu-a", uuids=[GPU_A])), \
        read("gpu-c", None)
    got = checks.cross_check([a, b, c])
    assert len(got) == 3 and got[0] is a and got[1] is b and got[2] is c


def test_a_node_failing_its_own_check_is_an_error_naming_it():
    ok, flipped, copied = (read("gpu-a", result("gpu-a")), read("gpu-b", result("gpu-b", CERTIFIED, [READ])),
                           read("gpu-c", result("gpu-a")))
    got = checks.cross_check([ok, flipped, copied])
    assert got[0] is ok
    assert (got[1].node, got[1].state, got[1].verdict, got[1].result) == ("gpu-b", "error", CERTIFIED, None)
    assert got[1].line == ("rmpeer: certificate: the certificate says CERTIFIED, its own findings and checks give "
                           "NOT CERTIFIED (rmpeer 0.1.0 wrote it): edited by hand?")
    assert (got[2].state, got[2].line) == ("error", "rmpeer: certificate: the certificate in folder gpu-c is of node "
                                                    "gpu-a: a copied folder?")


def test_a_gpu_under_two_nodes_makes_both_errors_each_naming_the_other():
    a = read("gpu-a", result("gpu-a", uuids=[GPU_A]))
    b = read("gpu-b", result("gpu-b", uuids=[GPU_B, GPU_A]))
    c = read("gpu-c", result("gpu-c", uuids=[GPU_C]))
    got = checks.cross_check([a, b, c])
    assert [(o.node, o.state, o.line) for o in got] == [
        ("gpu-a", "error", copy_line(GPU_A, "gpu-b")), ("gpu-b", "error", copy_line(GPU_A, "gpu-a")),
        ("gpu-c", "pass", "")]
    assert got[0].verdict == CERTIFIED and got[0].result is None and got[2] is c


def test_a_node_sharing_gpus_with_several_names_the_first_gpu_then_the_first_node():
    a = read("gpu-a", result("gpu-a", uuids=[GPU_C, GPU_B]))
    b = read("gpu-b", result("gpu-b", uuids=[GPU_C]))
    c = read("gpu-c", result("gpu-c", uuids=[GPU_B]))
    d = read("gpu-d", result("gpu-d", uuids=[GPU_B]))
    got = {o.node: o.line for o in checks.cross_check([d, c, b, a])}
    assert got == {"gpu-a": copy_line(GPU_B, "gpu-c"), "gpu-b": copy_line(GPU_C, "gpu-a"),
                   "gpu-c": copy_line(GPU_B, "gpu-a"), "gpu-d": copy_line(GPU_B, "gpu-a")}


def test_a_copied_folder_made_an_error_keeps_its_reason_and_still_names_its_gpus():
    """gpu-b holds gpu-a's certificate (a copy): gpu-b is an error for being of another node (its
    first reason, kept), and the GPUs it names make gpu-a an error too."""
    a = read("gpu-a", result("gpu-a", uuids=[GPU_A]))
    copy = read("gpu-b", result("gpu-a", uuids=[GPU_A]))
    got = checks.cross_check([a, copy])
    assert [(o.node, o.state, o.line) for o in got] == [
        ("gpu-a", "error", copy_line(GPU_A, "gpu-b")),
        ("gpu-b", "error", "rmpeer: certificate: the certificate in folder gpu-b is of node gpu-a: a copied folder?")]


def test_a_replay_names_no_gpu_so_stand_ins_of_one_recording_are_no_copies():
    a = read("gpu-a", result("gpu-a", uuids=[GPU_A], kind="replay"))
    b = read("gpu-b", result("gpu-b", uuids=[GPU_A], kind="replay"))
    live = read("gpu-c", result("gpu-c", uuids=[GPU_A]))
    got = checks.cross_check([a, b, live])
    assert got[0] is a and got[1] is b and got[2] is live


def test_a_gpu_named_twice_by_one_node_is_no_copy():
    a = read("gpu-a", result("gpu-a", uuids=[GPU_A, GPU_A]))
    assert checks.cross_check([a])[0] is a


# ---- load_sweep: every folder of the shared folder -------------------------------------------------

def folder(shared: Path, name: str, r: RunResult | None, code=EXIT_OK, status_node=None) -> Path:
    """A node's folder as `rmpeer fleet node` leaves it; r None: an empty folder."""
    f = shared / name
    f.mkdir(parents=True)
    if r is not None:
        (f / "certificate.json").write_text(json.dumps(r.to_dict()))
        (f / oc.STATUS).write_text(json.dumps({"node": status_node or name, "exit": code}))
    return f


def test_every_folder_is_a_node_in_name_order_and_nothing_else_is(tmp_path):
    folder(tmp_path, "gpu-b", result("gpu-b", uuids=[GPU_B]))
    folder(tmp_path, "gpu-a", result("gpu-a", uuids=[GPU_A]))
    folder(tmp_path, "gpu-c", None)
    folder(tmp_path, ".hidden", result(".hidden"))
    (tmp_path / "sweep.json").write_text("{}")
    (tmp_path / "gpu-file").write_text("not a folder")
    got = checks.load_sweep(tmp_path)
    assert [(o.node, o.state) for o in got] == [("gpu-a", "pass"), ("gpu-b", "pass"), ("gpu-c", "error")]
    assert got[2].line == "rmpeer: tool: no result: the node did not run, or did not finish"
    assert got[0].result.node == "gpu-a" and got[0].certificate == tmp_path / "gpu-a" / "certificate.json"


def test_a_sweep_folder_that_cannot_be_listed_is_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError) as e:
        checks.load_sweep(tmp_path / "a-file")
    assert str(e.value) == f"{tmp_path / 'a-file'}: cannot list the sweep's folder (Not a directory)"
    with pytest.raises(ConfigError) as e:
        checks.load_sweep(tmp_path / "none")
    assert str(e.value) == f"{tmp_path / 'none'}: cannot list the sweep's folder (No such file or directory)"


def test_a_link_planted_for_a_node_is_an_error_never_read(tmp_path):
    shared = tmp_path / "shared"
    real = folder(tmp_path, "elsewhere", result("gpu-b", uuids=[GPU_B]))
    shared.mkdir()
    os.symlink(real, shared / "gpu-b")
    folder(shared, "gpu-a", result("gpu-a", uuids=[GPU_A]))
    got = checks.load_sweep(shared)
    assert [(o.node, o.state) for o in got] == [("gpu-a", "pass"), ("gpu-b", "error")]
    link = got[1]
    assert link == oc.NodeOutcome("gpu-b", oc.ERROR, line=f"rmpeer: tool: {shared / 'gpu-b'} is a symbolic link, "
                                                          f"not the node's own folder: not read")


def test_folders_are_cross_checked_copies_and_flips_are_errors(tmp_path):
    folder(tmp_path, "gpu-a", result("gpu-a", uuids=[GPU_A]))
    folder(tmp_path, "gpu-b", result("gpu-b", uuids=[GPU_A]))
    folder(tmp_path, "gpu-c", result("gpu-c", CERTIFIED, [READ], uuids=[GPU_C]))
    folder(tmp_path, "gpu-d", result("gpu-d", uuids=[GPU_B]), status_node="gpu-a")
    got = checks.load_sweep(tmp_path)
    assert [(o.node, o.state, o.line) for o in got] == [
        ("gpu-a", "error", copy_line(GPU_A, "gpu-b")), ("gpu-b", "error", copy_line(GPU_A, "gpu-a")),
        ("gpu-c", "error", "rmpeer: certificate: the certificate says CERTIFIED, its own findings and checks give "
                           "NOT CERTIFIED (rmpeer 0.1.0 wrote it): edited by hand?"),
        ("gpu-d", "error", "rmpeer: certificate: status.json in folder gpu-d is of node gpu-a: a copied folder?")]


def test_a_planted_fingerprint_never_stops_the_collection(tmp_path):
    """A certificate whose fingerprint's cards are a number (no list) or name a UUID that is no
    text (a list) reads as a certificate naming no GPU: the other nodes are still collected."""
    folder(tmp_path, "gpu-a", result("gpu-a", uuids=[GPU_A]))
    folder(tmp_path, "gpu-b", result("gpu-b", fingerprint={"cards": 5}))
    folder(tmp_path, "gpu-c", result("gpu-c", fingerprint={"cards": [{"uuid": [GPU_A]}]}))
    assert [(o.node, o.state) for o in checks.load_sweep(tmp_path)] == [("gpu-a", "pass"), ("gpu-b", "pass"),
                                                                          ("gpu-c", "pass")]
