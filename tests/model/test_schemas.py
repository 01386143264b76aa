"""The versioned JSON Schemas of what rmpeer writes for machines to read (issue 44, part 6):
the certificate, the --json line and fleet node's status.json, in rmpeer/model/schemas/
(shipped in the wheel). Each is checked as a schema, validates real outputs (here: status.json
of a fleet node run on real recordings, the live certificates of the latest evidence run;
tests/render/test_outputs_agree.py: the replays' certificates and JSON lines), and refuses an
output that breaks a rule a reader relies on."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import rmpeer.model

pytestmark = pytest.mark.offline
SCHEMAS = Path(rmpeer.model.__file__).resolve().parent / "schemas"
EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "evidence" / "h200x1-20261204T1755Z-report" / "report"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from slurm.recordings import HEALTHY, wrong_memory  # noqa: E402


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def errors(name: str, doc) -> list:
    return [e.message for e in Draft202012Validator(schema(name)).iter_errors(doc)]


@pytest.mark.parametrize("name", ["certificate", "json-line", "status"])
def test_each_schema_is_a_valid_versioned_schema(name):
    doc = schema(name)
    Draft202012Validator.check_schema(doc)
    assert doc["$id"].endswith("/1")


@pytest.mark.skipif(not EVIDENCE.is_dir(), reason="docs/evidence is in the checkout, not in the installed package")
@pytest.mark.parametrize("run", ["full", "quick-noboost"])
def test_the_live_certificates_and_lines_validate(run):
    assert errors("certificate", json.loads((EVIDENCE / run / "certificate.json").read_text())) == []
    assert errors("json-line", json.loads((EVIDENCE / run / "line.json").read_text())) == []


@pytest.fixture(scope="module")
def statuses(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("status")
    out = {}
    for node, recording in (("healthy", HEALTHY), ("wrong", wrong_memory(tmp / "wrong.jsonl.gz"))):
        done = subprocess.run([sys.executable, "-m", "rmpeer", "fleet", "node", "--tier", "quick", "--output",
                               str(tmp / node)], cwd=tmp, capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, RMPEER_NODE_NAME=node, RMPEER_STAND_IN=str(recording)))
        out[node] = (done.returncode, json.loads((tmp / node / "status.json").read_text()))
    return out


def test_fleet_node_status_validates(statuses):
    assert [rc for rc, _ in statuses.values()] == [0, 1]
    for _, status in statuses.values():
        assert errors("status", status) == []


def test_the_schemas_refuse_what_a_reader_must_not_meet(statuses):
    cert = json.loads((EVIDENCE / "quick-noboost" / "certificate.json").read_text()) if EVIDENCE.is_dir() else None
    if cert is not None:
        for change in (lambda c: c.update(verdict="PASS"), lambda c: c.update(reasons=[]),
                       lambda c: c["findings"][0].update(severity="fatal"), lambda c: c.pop("counts"),
                       lambda c: c.update(format="rmpeer-result/2")):
            bad = copy.deepcopy(cert)
            change(bad)
            assert errors("certificate", bad), bad.get("verdict")
    _, status = statuses["wrong"]
    for change in (lambda s: s.update(verdict="DEGRADED"), lambda s: s.update(at="yesterday"),
                   lambda s: s.update(extra=1), lambda s: s.pop("run_id")):
        bad = dict(status)
        change(bad)
        assert errors("status", bad), bad
