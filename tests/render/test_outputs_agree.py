"""Every output says what the certificate says (issue 44, part 5): the JSON line, the
Prometheus textfile, JUnit and the Allure results, field by field, against the certificate of
the same run. Expected values are read from the certificate, never from the renderer under
test. Each run is a replay of a real recording: a CERTIFIED 2 x H200 one, the --no-boost one
(DEGRADED), and a wrong-memory one derived from the first (NOT CERTIFIED;
tests/slurm/recordings.py), and the first stalled until its deadline (INCOMPLETE); then every
other committed recording, the derived ones included, as it is."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from slurm.recordings import HEALTHY, IDLE_CLOCKS, wrong_memory  # noqa: E402

pytestmark = pytest.mark.offline
RUNS = {"certified": (lambda tmp: HEALTHY, [], {}), "degraded": (lambda tmp: IDLE_CLOCKS, [], {}),
        "not-certified": (lambda tmp: wrong_memory(tmp / "wrong.jsonl.gz"), [], {}),
        # the replay stalled at the bandwidth rig's first map, until its deadline ends it (15 s:
        # the stall is reached first even on a loaded machine, so no check runs on past it)
        "incomplete": (lambda tmp: HEALTHY, ["--deadline", "15"], {"RMPEER_REPLAY_STALL_AT": "bw:s0:scratch:map"})}
COMMITTED = sorted((HEALTHY.parent).rglob("*.jsonl.gz"))
RUNS.update({f"committed:{p.relative_to(HEALTHY.parent)}": ((lambda tmp, p=p: p), [], {})
             for p in COMMITTED if p not in (HEALTHY, IDLE_CLOCKS)})
PASSIVE = "the passive tier runs no pytest item and writes no report results (docs/report.md)"


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module", params=sorted(RUNS))
def outputs(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param.replace("/", "-").replace(":", "-"))
    recording, args, env = RUNS[request.param]
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recording(tmp)), "--json",
                           "--output", str(tmp / "out"), "--junit", str(tmp / "junit.xml"), "--prometheus",
                           str(tmp / "prom"), *args], cwd=tmp, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **env))
    cert = json.loads((tmp / "out" / "replay-certificate.json").read_text())
    line = json.loads([x for x in done.stdout.splitlines() if x.startswith("{")][-1])
    metrics = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in text_string_to_metric_families((tmp / "prom" / "rmpeer.prom").read_text())
               for s in fam.samples}
    allure = [json.loads(p.read_text()) for p in (tmp / "out" / "allure-results").glob("*-result.json")]
    return done.returncode, cert, line, metrics, ET.parse(tmp / "junit.xml").getroot(), allure


def _metric(metrics, name, **labels):
    found = [v for (n, ls), v in metrics.items() if n == name and all(dict(ls).get(k) == w for k, w in labels.items())]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_the_json_line_is_the_certificates(outputs):
    rc, cert, line, _, _, _ = outputs
    for key in ("node", "tier", "verdict", "reasons", "started", "valid_until", "certificate_id", "counts",
                "version", "not_checked"):
        assert line[key] == cert[key], key
    assert line["exit_code"] == rc
    assert line["duration_s"] == cert["duration_s"]
    assert [(c["card"], c["uuid"], c["verdict"]) for c in line["cards"]] == [
        (c["card"], c["uuid"], c["verdict"]) for c in cert["by_card"]["cards"]]
    assert [(p["pair"], p["verdict"]) for p in line["pairs"]] == [(p["pair"], p["verdict"]) for p in cert["by_card"]["pairs"]]


def test_prometheus_is_the_certificates(outputs):
    _, cert, _, metrics, _, _ = outputs
    assert _metric(metrics, "rmpeer_certified", tier=cert["tier"], verdict=cert["verdict"]) == (
        1.0 if cert["verdict"] == "CERTIFIED" else 0.0)
    if cert["valid_until"] is None:     # a run its deadline ended promises nothing: no expiry to alert on
        assert not [n for n, _ in metrics if n == "rmpeer_certificate_valid_until_timestamp_seconds"]
    else:
        assert _metric(metrics, "rmpeer_certificate_valid_until_timestamp_seconds") == _epoch(cert["valid_until"])
    assert _metric(metrics, "rmpeer_run_duration_seconds") == pytest.approx(cert["duration_s"])
    assert _metric(metrics, "rmpeer_last_run_timestamp_seconds") == pytest.approx(
        _epoch(cert["started"]) + cert["duration_s"])
    assert _metric(metrics, "rmpeer_build_info", version=cert["version"],
                   driver_version=cert["host"]["driver_version"]) == 1.0
    for card in cert["by_card"]["cards"]:
        assert _metric(metrics, "rmpeer_gpu_certified", UUID=card["uuid"], verdict=card["verdict"]) == (
            1.0 if card["verdict"] == "CERTIFIED" else 0.0)


def test_junit_counts_the_certificates_checks_and_states_its_verdict(outputs):
    _, cert, _, _, root, _ = outputs
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    checks = [c for c in cases if c.get("classname") not in ("rmpeer", "rmpeer.finding")]
    outcome = lambda c: ("failed" if c.find("failure") is not None else "error" if c.find("error") is not None  # noqa: E731
                         else "skipped" if c.find("skipped") is not None else "passed")
    counted = {}
    for c in checks:
        counted[outcome(c)] = counted.get(outcome(c), 0) + 1
    assert counted == cert["counts"]
    verdict = [c for c in cases if c.get("classname") == "rmpeer" and c.get("name") == "verdict"]
    assert len(verdict) == 1
    if cert["verdict"] == "CERTIFIED":
        assert outcome(verdict[0]) == "passed"
    else:
        said = (verdict[0].find("failure") if verdict[0].find("failure") is not None else verdict[0].find("error"))
        assert said.text.splitlines() == [cert["verdict"], *cert["reasons"]]


def test_allure_states_the_verdict_and_counts_the_certificates_checks(outputs):
    _, cert, _, _, _, allure = outputs
    if cert["tier"] == "passive":
        assert allure == []
        pytest.skip(PASSIVE)
    verdicts = [r for r in allure if r["name"].startswith("verdict: ")]
    assert len(verdicts) == 1 and verdicts[0]["name"] == f"verdict: {cert['verdict']}"
    # docs/report.md's table: only a CERTIFIED run is all green
    assert verdicts[0]["status"] == {"CERTIFIED": "passed", "NOT CERTIFIED": "failed", "DEGRADED": "broken",
                                     "INCOMPLETE": "unknown"}[cert["verdict"]]
    checks = [r for r in allure if not r.get("fullName", "").startswith("rmpeer.")]
    counted = {}
    for r in checks:
        key = {"broken": "error"}.get(r["status"], r["status"])
        counted[key] = counted.get(key, 0) + 1
    # the report's results are rendered from the RunResult (rmpeer.render.allure), a run cut
    # by its deadline too: the same checks as the certificate, never one more in flight
    assert counted == cert["counts"]
    # titles in words, errors on one line without pytest's rewritten assertion
    assert not [r["name"] for r in checks if "[" in r["name"] or r["name"].startswith("test_")]
    messages = [r["statusDetails"]["message"] for r in checks if r.get("statusDetails")]
    assert not [m for m in messages if "\n" in m or "assert " in m]
    if cert["verdict"] != "CERTIFIED":
        assert all(r["status"] != "passed" for r in verdicts)


def test_the_certificate_and_the_json_line_validate_against_their_schemas(outputs):
    from jsonschema import Draft202012Validator

    import rmpeer.model

    _, cert, line, _, _, _ = outputs
    for name, doc in (("certificate", cert), ("json-line", line)):
        schema = json.loads((Path(rmpeer.model.__file__).parent / "schemas" / f"{name}.schema.json").read_text())
        errors = [e.message for e in Draft202012Validator(schema).iter_errors(doc)]
        assert errors == [], (name, errors[:5])


def test_every_check_is_one_allure_result_titled_and_judged_as_the_certificate_says(outputs):
    """rmpeer.render.allure draws the report's checks from the RunResult: one result per check
    of the certificate, none more, its status the check's outcome, its title in words (the
    window's cards are the layout's, as the certificate lists them), a figure's GB/s the
    certificate's."""
    _, cert, _, _, _, allure = outputs
    if cert["tier"] == "passive":
        pytest.skip(PASSIVE)
    drawn = [r for r in allure if r["testCaseId"].startswith("check:")]
    by_id = {r["testCaseId"][len("check:"):]: r for r in drawn}
    assert len(by_id) == len(drawn) and set(by_id) == {c["id"] for c in cert["checks"]}
    cards = {lay["name"]: lay["cards"] for lay in cert["layouts"]}
    figures = {f"{f['op']} {f['src_card']}->{f['dst_card']}": f for f in cert["bandwidth"]}
    status = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "broken"}
    for c in cert["checks"]:
        r = by_id[c["id"]]
        assert r["status"] == ("broken" if c.get("unexpected") else status[c["outcome"]]), c
        if c.get("s") is not None:
            on = cards[c["layout"]]
            assert r["name"] == (f"{c['check']} {c['layout']} s{c['s']} (card {on[c['s']]}) -> "
                                 f"t{c['t']} (card {on[c['t']]})")
        elif c["check"] == "bandwidth-floor":
            figure = figures[c["subject"]]
            assert r["name"] == (f"bandwidth-floor {c['subject']}: {figure['gbps']:.1f} GB/s "
                                 f"({figure['bytes'] >> 20} MiB)")
        else:
            assert r["name"] == f"{c['check']} {c['subject']}"
        if c["outcome"] != "passed":
            assert r["statusDetails"]["message"] == c.get("reason", "")
        assert {"name": "host", "value": r["parameters"][0]["value"]} in r["parameters"]
    # a check's timing is the report's (its timeline), never the certificate's promise
    assert not any("span" in c for c in cert["checks"])
