"""rmpeer.report.hosts and the report command over folders another user may have filled (a
shared sweep folder): a certificate of fields rmpeer never writes is the host's reason, not
an internal error; a result that is not an Allure result, a FIFO, a device or a link is
refused before anything reads it; a planted link is never followed; what a folder holds
reaches the terminal escaped. Each case failed before its fix (a hostile-input hunt)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmpeer.errors import ConfigError
from rmpeer.paths import suites_dir
from rmpeer.report import hosts
from rmpeer.report.page import NO_CERTIFICATE

pytestmark = pytest.mark.offline
REPO = suites_dir().parent


def results(folder: Path, host, **fields) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"name": "t", "status": "passed", "start": 1000, "stop": 3000,
           "labels": [{"name": hosts.HOST_LABEL, "value": host}], **fields}
    (folder / "x-result.json").write_text(json.dumps(doc))
    return folder


def fleet(tmp_path) -> tuple[Path, Path]:
    return (results(tmp_path / "F" / "a" / "allure-results", "a"),
            results(tmp_path / "F" / "b" / "allure-results", "b"))


def report(*args):
    done = subprocess.run([sys.executable, "-m", "rmpeer", "report", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("text", ['{"host": "s"}', "[1]", '{"reasons": 5}', '{"verdict": ["x"]}',
                                  '{"host": {"driver_version": 5}}', '{"duration_s": NaN}',
                                  '{"duration_s": 1e999}', '{"duration_s": "2"}', "[" * 100000])
def test_a_certificate_of_fields_rmpeer_never_writes_is_the_hosts_reason(tmp_path, text):
    a, b = fleet(tmp_path)
    (a.parent / "certificate.json").write_text(text)
    found = {h.host: h for h in hosts.collect([a, b])}
    assert found["a"].verdict == NO_CERTIFICATE and found["a"].duration_s is None
    assert found["a"].reasons[0].startswith(f"{a.parent / 'certificate.json'}: not a readable certificate")


def test_a_certificate_planted_as_a_link_is_not_read_through_it(tmp_path):
    a, b = fleet(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"verdict": "CERTIFIED", "reasons": [], "duration_s": 1.0, "host": {}}))
    (a.parent / "certificate.json").symlink_to(elsewhere)
    found = {h.host: h for h in hosts.collect([a, b])}
    assert found["a"].verdict == NO_CERTIFICATE and "symbolic link" in found["a"].reasons[0]


@pytest.mark.parametrize("fields, message", [
    ({"labels": 5}, "labels are not a list"),
    ({"labels": [{"name": hosts.HOST_LABEL, "value": [1]}]}, "is not a host's name"),
])
def test_a_result_that_is_not_an_allure_result_is_refused(tmp_path, fields, message):
    folder = results(tmp_path / "r", "a")
    (folder / "y-result.json").write_text(json.dumps({"name": "u", **fields}))
    with pytest.raises(ConfigError, match=message):
        hosts.hosts_of(folder)


def test_a_result_nested_past_pythons_reach_is_refused(tmp_path):
    folder = results(tmp_path / "r", "a")
    (folder / "y-result.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ConfigError, match="nested deeper"):
        hosts.hosts_of(folder)


def test_stamps_that_are_not_numbers_count_for_nothing(tmp_path):
    a, b = fleet(tmp_path)
    (a / "y-result.json").write_text(json.dumps({"name": "u", "start": "x", "stop": True,
                                                 "labels": [{"name": hosts.HOST_LABEL, "value": "a"}]}))
    found = {h.host: h for h in hosts.collect([a, b])}
    assert found["a"].span_s == 2.0          # the good result's own 1000..3000 ms


def test_an_environment_file_is_read_in_one_pass_and_bounded(tmp_path):
    a, b = fleet(tmp_path)
    value = "v" * (hosts.PROPERTIES_LIMIT - 100)
    (b / "environment.properties").write_text(f"key={value}\n")
    assert {h.host: h for h in hosts.collect([a, b])}["b"].environment == {"key": value}
    (b / "environment.properties").write_text("k=" + "v" * (hosts.PROPERTIES_LIMIT + 1))
    with pytest.raises(ConfigError, match="larger than"):
        hosts.collect([a, b])


def test_a_host_folder_planted_as_a_link_is_refused(tmp_path):
    fleet(tmp_path)
    other = results(tmp_path / "other" / "allure-results", "z")
    (tmp_path / "F" / "z").symlink_to(other.parent)
    with pytest.raises(ConfigError, match="symbolic link"):
        hosts.result_dirs([tmp_path / "F"])


@pytest.mark.parametrize("plant", ["fifo", "zero"])
def test_a_fifo_or_a_device_in_a_results_folder_is_refused_before_it_is_read(tmp_path, plant):
    folder = results(tmp_path / "S", "a")
    if plant == "fifo":
        os.mkfifo(folder / "p-result.json")       # a read would wait for a writer for ever
    else:
        (folder / "z-result.json").symlink_to("/dev/zero")    # a read would fill the memory
    rc, out, err = report("--results", folder, "--output", tmp_path / "r.html")
    assert rc == 2 and "refused" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r.html").exists()


def test_a_folder_name_with_controls_is_said_escaped(tmp_path):
    folder = tmp_path / "F\x1b[31mX"
    folder.mkdir()
    rc, out, err = report("--results", folder / "nothing-here", "--output", tmp_path / "r.html")
    assert rc == 2 and "\x1b" not in out + err and "\\x1b" in err
