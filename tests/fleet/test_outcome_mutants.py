"""What a sweep's node folder says (rmpeer/fleet/outcome.py), field by field: the node's state,
its drain reason, its summary line. Written to kill the mutants mutmut left alive
(docs/mutation.md). The expected values come from the rules in outcome.py's docstring and
docs/fleet.md (only a verdict moves a node; a node that gave no verdict is an `error`; a reason
is one line `rmpeer: <check>: <detail>`), status.schema.json's fields, errors.py's exit codes,
and a real certificate of a live run on an H200 (docs/evidence); every one is spelled out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rmpeer.errors import EXIT_DEGRADED, EXIT_NOT_CERTIFIED, EXIT_OK
from rmpeer.fleet import outcome as oc
from rmpeer.model.result import (CERTIFIED, DEGRADE, DEGRADED, FAIL, INCOMPLETE, NOT_CERTIFIED, CheckResult,
                                 Finding, RunResult)

pytestmark = pytest.mark.offline
CHECKOUT = Path(__file__).resolve().parents[2]
# certify --tier quick on one H200, live (the evidence of docs/evidence/README.md)
REAL = CHECKOUT / "docs" / "evidence" / "h200x1-20261201T1832Z-final" / "onepath" / "certificate-live-quick.json"
READ = Finding("read", "pair 0->1", "the bytes written", "3 bytes differ", FAIL, "wrong memory: x")
FLOOR = Finding("bandwidth-floor", "read 1->0", "at least 355 GB/s", "232.9 GB/s", DEGRADE)


def result(verdict=CERTIFIED, findings=(), reasons=(), **kw) -> RunResult:
    return RunResult(node="n1", tier="quick", verdict=verdict, findings=list(findings), reasons=list(reasons),
                     target=kw.pop("target", {"kind": "live"}),
                     checks=[CheckResult("read/x", "read", "read/write", "pair 0->1", "passed")], **kw)


def folder(tmp_path, cert=None, status=None, name="gpu-a", cert_name="certificate.json") -> Path:
    f = tmp_path / name
    f.mkdir()
    if cert is not None:
        (f / cert_name).write_text(cert if isinstance(cert, str) else json.dumps(cert))
    if status is not None:
        (f / oc.STATUS).write_text(status if isinstance(status, str) else json.dumps(status))
    return f


# ---- NodeOutcome.summary: the node's line of summary.jsonl

def test_the_summary_holds_every_field_by_its_name():
    o = oc.NodeOutcome("gpu-a", oc.FAIL_STATE, NOT_CERTIFIED, ["r1"], "rmpeer: read: x", exit_code=1,
                       duration_s=2.5, certificate=Path("/s/gpu-a/certificate.json"), replay_of="h.jsonl.gz",
                       trust="unsigned (x)")
    assert o.summary() == {"node": "gpu-a", "state": "fail", "verdict": "NOT CERTIFIED", "exit": 1,
                           "reason": "rmpeer: read: x", "reasons": ["r1"], "duration_s": 2.5,
                           "certificate": "/s/gpu-a/certificate.json", "replay_of": "h.jsonl.gz",
                           "signature": "unsigned (x)"}


def test_a_summary_without_certificate_or_trust_says_none():
    got = oc.NodeOutcome("gpu-b", oc.ERROR).summary()
    assert (got["certificate"], got["signature"], got["exit"], got["reason"]) == (None, None, None, "")


# ---- certificate_in, reason_line

def test_the_certificate_of_a_folder(tmp_path):
    assert oc.certificate_in(folder(tmp_path, name="none")) is None
    replay = folder(tmp_path, cert="{}", name="replay", cert_name="replay-certificate.json")
    assert oc.certificate_in(replay) == replay / "replay-certificate.json"
    both = folder(tmp_path, cert="{}", name="both")
    (both / "replay-certificate.json").write_text("{}")
    assert oc.certificate_in(both) == both / "certificate.json", "the live one first"
    planted = folder(tmp_path, name="planted")
    os.symlink(tmp_path / "nowhere", planted / "certificate.json")     # a dangling link: found, refused later
    assert oc.certificate_in(planted) == planted / "certificate.json"


def test_a_reason_is_one_line_of_at_most_200_characters():
    assert oc.reason_line("read", "pair 0->1:\n  3 bytes") == "rmpeer: read: pair 0->1: 3 bytes"
    long = oc.reason_line("read", "word " * 100)              # 8 + 500 characters
    assert len(long) <= 200 and long.startswith("rmpeer: read: word word") and long.endswith("...")
    assert len(long) > 190, "cut at the last word before 200, not shorter"


# ---- from_result: a certificate's RunResult as a node's state and drain reason

@pytest.mark.parametrize("verdict,state,code", [
    (CERTIFIED, "pass", EXIT_OK), (DEGRADED, "degraded", EXIT_DEGRADED), (NOT_CERTIFIED, "fail", EXIT_NOT_CERTIFIED),
    (INCOMPLETE, "error", None), ("SOMETHING ELSE", "error", None),
])
def test_only_a_verdict_moves_a_node(verdict, state, code):
    got = oc.from_result("gpu-a", result(verdict, reasons=["why"]))
    assert (got.node, got.state, got.verdict, got.exit_code) == ("gpu-a", state, verdict, code)


def test_a_pass_has_no_drain_reason_and_keeps_the_result():
    r = result(CERTIFIED, reasons=["all good"], duration_s=3.25)
    got = oc.from_result("gpu-a", r, Path("/s/gpu-a/certificate.json"))
    assert got.line == "" and got.reasons == ["all good"] and got.duration_s == 3.25
    assert got.certificate == Path("/s/gpu-a/certificate.json") and got.result is r
    assert got.replay_of == "" and got.floors_only is False


def test_a_fail_names_its_first_failing_check():
    # a DEGRADE finding before the FAIL: the FAIL is the reason
    got = oc.from_result("gpu-a", result(NOT_CERTIFIED, [FLOOR, READ]))
    assert got.line == "rmpeer: read: pair 0->1: expected the bytes written, found 3 bytes differ"
    assert got.state == "fail" and got.floors_only is False


def test_a_degraded_run_names_its_first_finding():
    xid = Finding("xid", "card 1", "no Xid", "Xid 79", DEGRADE)
    got = oc.from_result("gpu-a", result(DEGRADED, [xid, FLOOR]))
    assert got.line == "rmpeer: xid: card 1: expected no Xid, found Xid 79"
    assert got.floors_only is False
    floors = oc.from_result("gpu-a", result(DEGRADED, [FLOOR, FLOOR]))
    assert floors.floors_only is True
    assert floors.line == "rmpeer: bandwidth-floor: read 1->0: expected at least 355 GB/s, found 232.9 GB/s"


def test_a_fault_shared_by_several_checks_is_one_reason_counted():
    a = Finding("read", "pair 0->1", "e", "f", FAIL, "wrong memory: another session's pattern")
    b = Finding("write", "pair 1->0", "e", "f", FAIL, "wrong memory: another session's pattern")
    c = Finding("read", "pair 0->2", "e", "f", FAIL, "something else")
    got = oc.from_result("gpu-a", result(NOT_CERTIFIED, [a, c, b]))
    assert got.line == "rmpeer: read: 2 checks: wrong memory: another session's pattern (first: pair 0->1)"
    # two findings without a cause are two faults: the first is named, uncounted
    plain = oc.from_result("gpu-a", result(NOT_CERTIFIED, [Finding("read", "pair 0->1", "e", "f", FAIL),
                                                            Finding("read", "pair 1->0", "e", "f", FAIL)]))
    assert plain.line == "rmpeer: read: pair 0->1: expected e, found f"
    # one finding with a cause is not counted
    one = oc.from_result("gpu-a", result(NOT_CERTIFIED, [a]))
    assert one.line == "rmpeer: read: pair 0->1: expected e, found f"


def test_a_bad_verdict_without_findings_says_its_first_reason():
    got = oc.from_result("gpu-a", result(NOT_CERTIFIED, reasons=["the lock was held", "second"]))
    assert got.line == "rmpeer: not certified: the lock was held"
    bare = oc.from_result("gpu-a", result(DEGRADED))
    assert bare.line == "rmpeer: degraded: no reason given"


def test_a_replay_names_the_recording_it_stood_in_for():
    r = result(CERTIFIED, target={"kind": "replay", "transcript": "h200x2.jsonl.gz"})
    assert oc.from_result("gpu-a", r).replay_of == "h200x2.jsonl.gz"
    assert oc.from_result("gpu-a", result(CERTIFIED, target={"kind": "replay"})).replay_of == ""
    live = result(CERTIFIED, target={"kind": "live", "transcript": "ignored.jsonl.gz"})
    assert oc.from_result("gpu-a", live).replay_of == ""


# ---- load_certificate, load_node: a folder read, failing closed

def test_a_real_certificate_with_a_matching_status_is_its_verdict(tmp_path):
    doc = json.loads(REAL.read_text())
    assert doc["verdict"] == CERTIFIED
    f = folder(tmp_path, cert=REAL.read_text(), status={"node": "vm", "exit": 0, "duration_s": 1.4})
    got = oc.load_node(f)
    assert (got.node, got.state, got.verdict, got.exit_code, got.line) == ("gpu-a", "pass", CERTIFIED, 0, "")
    assert got.certificate == f / "certificate.json" and got.status_node == "vm"
    assert got.duration_s == doc["duration_s"] and got.reasons == doc["reasons"]
    assert got.trust and got.signature, "how far its signature could be checked here, in words"


def test_an_unsigned_certificate_says_so(tmp_path):
    f = folder(tmp_path, cert=result(CERTIFIED).to_dict(), status={"exit": 0})
    got = oc.load_node(f)
    assert got.state == "pass" and got.signature == "unsigned"
    assert got.trust == "unsigned (it carries no signature): nothing vouches for its content"
    assert got.summary()["signature"] == got.trust


def test_a_certificate_of_an_unknown_signature_is_an_error(tmp_path):
    doc = result(CERTIFIED).to_dict()
    doc["signature"] = {"alg": "MD5", "mac": "00"}
    f = folder(tmp_path, cert=doc, status={"exit": 0})
    got = oc.load_node(f)
    why = "signature of an unknown kind ('MD5'): not checked, not trusted"
    assert (got.node, got.state, got.signature, got.trust) == ("gpu-a", "error", "does not verify", why)
    assert got.line == f"rmpeer: certificate: {f / 'certificate.json'}: {why}"
    assert got.certificate == f / "certificate.json" and got.exit_code is None


def test_a_certificate_planted_as_a_link_is_refused(tmp_path):
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps(result(CERTIFIED).to_dict()))
    f = folder(tmp_path, status={"exit": 0})
    os.symlink(real, f / "certificate.json")
    got = oc.load_node(f)
    assert (got.node, got.state, got.certificate) == ("gpu-a", "error", f / "certificate.json")
    assert got.line == f"rmpeer: certificate: unreadable {f / 'certificate.json'}: refused: it is a symbolic link"


def test_a_certificate_that_is_no_run_result_is_an_error(tmp_path):
    f = folder(tmp_path, cert={"verdict": CERTIFIED, "findings": "not a list"}, status={"exit": 0})
    got = oc.load_node(f)
    assert (got.node, got.state, got.verdict, got.certificate) == ("gpu-a", "error", "", f / "certificate.json")
    assert got.line.startswith(f"rmpeer: certificate: {f / 'certificate.json'}: ")
    # JSON, but no object: read_certificate's own words (rmpeer/machine/signing.py), no link named
    listed = oc.load_node(folder(tmp_path, cert="[1, 2]", status={"exit": 0}, name="list"))
    assert (listed.node, listed.state) == ("list", "error")
    assert listed.line == (f"rmpeer: certificate: unreadable {tmp_path / 'list' / 'certificate.json'}: "
                           "not an rmpeer result (no JSON object)")


def test_a_node_with_neither_status_nor_certificate_did_not_run(tmp_path):
    got = oc.load_node(folder(tmp_path))
    assert (got.node, got.state, got.exit_code, got.duration_s, got.replay_of) == ("gpu-a", "error", None, None, "")
    assert got.line == "rmpeer: tool: no result: the node did not run, or did not finish"


@pytest.mark.parametrize("code", [2, 3, 5, 6, 7, 8])
def test_an_exit_that_gives_no_verdict_is_an_error_beside_any_certificate(tmp_path, code):
    """errors.py: 2 usage, 3 no GPU access, 5 incomplete, 6 lock held, 7 not idle, 8 unchecked."""
    f = folder(tmp_path, cert=result(CERTIFIED).to_dict(), status={"exit": code, "duration_s": 0.5,
                                                                    "stand_in": "x.jsonl.gz"})
    got = oc.load_node(f)
    assert (got.state, got.exit_code, got.duration_s, got.replay_of) == ("error", code, 0.5, "x.jsonl.gz")
    assert got.line == f"rmpeer: tool: exit {code}"


def test_a_status_line_is_the_reason_as_written(tmp_path):
    f = folder(tmp_path, status={"exit": 5, "line": "rmpeer: deadline: the run was still going at 60 s"})
    assert oc.load_node(f).line == "rmpeer: deadline: the run was still going at 60 s"
    g = folder(tmp_path, status={"exit": 3, "line": "no GPU access"}, name="gpu-b")
    assert oc.load_node(g).line == "rmpeer: tool: no GPU access"


def test_a_status_without_a_certificate_is_an_error_even_at_exit_0(tmp_path):
    got = oc.load_node(folder(tmp_path, status={"exit": 0}))
    assert got.state == "error" and got.exit_code == 0 and got.line == "rmpeer: tool: exit 0"


@pytest.mark.parametrize("verdict,code,findings", [
    (CERTIFIED, EXIT_OK, ()), (DEGRADED, EXIT_DEGRADED, (FLOOR,)), (NOT_CERTIFIED, EXIT_NOT_CERTIFIED, (READ,)),
])
def test_a_certificate_without_a_status_is_its_verdict(tmp_path, verdict, code, findings):
    got = oc.load_node(folder(tmp_path, cert=result(verdict, findings).to_dict()))
    assert (got.state, got.exit_code, got.status_node) == (oc.STATE_OF_VERDICT[verdict], code, "")


def test_an_exit_that_contradicts_the_certificate_is_an_error(tmp_path):
    f = folder(tmp_path, cert=result(NOT_CERTIFIED, [READ], reasons=["r"]).to_dict(), status={"exit": 0})
    got = oc.load_node(f)
    assert (got.node, got.state, got.verdict, got.reasons, got.exit_code) == ("gpu-a", "error", NOT_CERTIFIED, ["r"], 0)
    assert got.line == "rmpeer: tool: exit 0 does not match the certificate's NOT CERTIFIED"
    assert got.certificate == f / "certificate.json"
    agree = oc.load_node(folder(tmp_path, cert=result(NOT_CERTIFIED, [READ]).to_dict(), status={"exit": 1},
                                name="agree"))
    assert agree.state == "fail" and agree.exit_code == 1


# ---- read_status: status.json as fleet node writes it (rmpeer/model/schemas/status.schema.json)

def test_no_status_file_is_no_status(tmp_path):
    assert oc.read_status(folder(tmp_path)) == {}


def test_a_status_as_fleet_node_writes_it_is_read_whole(tmp_path):
    status = {"node": "gpu-a", "tier": "quick", "exit": 1, "line": "rmpeer: read: x", "stand_in": "",
              "verdict": NOT_CERTIFIED, "run_id": "r1", "certificate_id": "c1", "duration_s": 2, "at": "t"}
    assert oc.read_status(folder(tmp_path, status=status)) == status
    assert oc.read_status(folder(tmp_path, status={"exit": None, "duration_s": 1.5}, name="b")) == {
        "exit": None, "duration_s": 1.5}


@pytest.mark.parametrize("status,what", [
    ("[0]", "not a JSON object"),
    ('"exit"', "not a JSON object"),
    ({"exit": "0"}, "its exit is not what rmpeer fleet node writes"),
    ({"exit": True}, "its exit is not what rmpeer fleet node writes"),
    ({"exit": 0, "duration_s": False}, "its duration_s is not what rmpeer fleet node writes"),
    ({"exit": 0, "duration_s": "1"}, "its duration_s is not what rmpeer fleet node writes"),
    ({"exit": 0, "line": 5}, "its line is not what rmpeer fleet node writes"),
    ({"exit": 0, "node": ["a"]}, "its node is not what rmpeer fleet node writes"),
    ({"exit": 0, "certificate_id": 1}, "its certificate_id is not what rmpeer fleet node writes"),
    ({"exit": 0, "stand_in": {}, "line": 5}, "its line is not what rmpeer fleet node writes"),
])
def test_a_status_that_fleet_node_never_writes_is_unreadable(tmp_path, status, what):
    f = folder(tmp_path, status=status)
    assert oc.read_status(f) == {"exit": None, "line": f"rmpeer: tool: unreadable {f / oc.STATUS}: {what}"}
    got = oc.load_node(f)
    assert got.state == "error" and got.line == f"rmpeer: tool: unreadable {f / oc.STATUS}: {what}"


def test_a_status_that_is_no_json_or_a_link_is_unreadable(tmp_path):
    cut = folder(tmp_path, status="{")
    # the JSON parser's words for a lone "{" (Python's json: JSONDecodeError.msg), without the
    # position it adds to them ("line 1 column 2 (char 1)"): one short reason
    assert oc.read_status(cut) == {"exit": None, "line": f"rmpeer: tool: unreadable {cut / oc.STATUS}: "
                                                          "Expecting property name enclosed in double quotes"}
    linked = folder(tmp_path, name="linked")
    (tmp_path / "real-status.json").write_text(json.dumps({"exit": 0}))
    os.symlink(tmp_path / "real-status.json", linked / oc.STATUS)
    got = oc.read_status(linked)
    # the reason is cut at 200 characters (REASON_LIMIT): a long tmp path may end it at the name
    assert got["exit"] is None and got["line"].startswith(f"rmpeer: tool: unreadable {linked / oc.STATUS}")
    big = folder(tmp_path, status=" " * (oc.STATUS_LIMIT + 1) + "{}", name="big")
    assert oc.read_status(big)["exit"] is None, "a status past 1 MiB is never read whole"
