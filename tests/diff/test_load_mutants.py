"""rmpeer.diff.load (how `rmpeer diff` reads a recording, a certificate of either format, and
folders of them) called in this process, on files written by hand. Written to kill the mutants
mutmut left alive (docs/mutation.md): most tests of tests/diff/ run `rmpeer diff` as a process,
where no mutant runs. The expected values come from the module's docstrings (a field the file
cannot tell is None with its reason in `why_not`, "not comparable", never "same"; a file
another user may have written is read once, never through a link; a planted file in a folder
never stops the set's diff), the formats (rmpeer-transcript/2 and its notes, rmpeer-result/1,
the earlier certificates of docs/evidence/, rmpeer-manifest/1), matrices/drivers.yaml's struct
sizes as a real recording's requests show them (NVOS54_PARAMETERS 32 bytes, NVOS64_PARAMETERS
48, nv_ioctl_rm_api_version_t 72: fixtures/transcripts/h200x1-20261201T100856Z.jsonl.gz), and
medians worked by hand; every one is spelled out."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from rmpeer.diff import load as ld
from rmpeer.errors import ConfigError
from rmpeer.model.result import CERTIFIED, DEGRADED, CheckResult, LayoutResult, RunResult
from rmpeer.shim.records import CallRecord

pytestmark = pytest.mark.offline

ABI = "580.76.05"               # an entry of matrices/drivers.yaml (the ABI of the H200 recordings)
STRUCTS = {"NVOS54_PARAMETERS": 32, "NVOS64_PARAMETERS": 48, "nv_ioctl_rm_api_version_t": 72}
UNSIGNED = "unsigned (it carries no signature): nothing vouches for its content"
FAMILIES = {"1": {"alloc:p2p": "2026-11-30T00:31:19Z", "perf:boost": "2026-12-01T00:00:00Z"},
            "2": {"ce:copy": "2026-11-30T00:36:50Z"}}


@pytest.fixture(autouse=True)
def families(tmp_path_factory, monkeypatch):
    """A family table of its own (step-families.json as tools/step_families.py writes it), so that
    what a recording's rmpeer did not make yet is worked out from FAMILIES by hand."""
    folder = tmp_path_factory.mktemp("transcripts")
    (folder / ld.FAMILIES_FILE).write_text(json.dumps({"families": FAMILIES}))
    monkeypatch.setattr(ld, "transcripts_dir", lambda: folder)
    return folder


def header(**over) -> dict:
    head = {"format": "rmpeer-transcript/2", "tool": "rmpeer", "version": "0.1.0", "created": "2026-12-02T10:00:00Z",
            "label": "h200x1", "cards": 1,
            "run": {"boost": True, "gated": True, "tier": "full", "layouts": [["one-per-card", [0], 67108864]]}}
    head.update(over)
    return head


def write_recording(path: Path, head: dict | None = None, lines=(), end=True, gz=True) -> Path:
    rows = [{"header": head or header()}, *lines] + ([{"note": "end", "t_ns": 9}] if end else [])
    text = "\n".join(json.dumps(r) for r in rows) + "\n"
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def rec(seq, op, label, **fields) -> dict:
    return {"seq": seq, "op": op, "label": label, **fields}


HOST = {"driver_version": "580.159.04", "abi_release": ABI, "cards": [{"index": 0, "uuid": "GPU-1", "name": "NVIDIA H200"}]}
FITNESS = {"boost": {"asked": True, "results": {"0": {"raise": {"status": "NV_OK"}}}},
           "clocks": {"boosted": {"0": {"pstate": "P0", "graphics_mhz": 1980}}},
           "links": {"0": {"supported": False}}}


def full_lines() -> list:
    """A small recording: calls before any segment, in a layout's setup, in a test of it and in a
    segment of no layout; a struct and a payload; a wait and a compare; the host and fitness notes."""
    return [
        rec(1, "open", "open:nvidiactl:version", path="/dev/nvidiactl", result=5),
        rec(2, "ioctl", "driver:version", fd=5, struct="nv_ioctl_rm_api_version_t", request="00" * 72,
            reply="00" * 72),
        {"note": "driver", "version": "580.159.04", "abi": ABI},
        {"note": "host", "facts": HOST},
        {"note": "segment", "key": "setup:one-per-card"},
        rec(3, "ioctl", "alloc:p2p:card0", fd=5, struct="NVOS64_PARAMETERS", request="11" * 48, reply="11" * 48,
            status=0, status_name="NV_OK",
            payload={"struct": "NVOS54_PARAMETERS", "request": "22" * 32, "reply": "22" * 32}),
        rec(4, "mem.write", "ce:s0:semaphores:cpu", extra={"offset": 16}),
        {"note": "segment", "key": "test:test_cross_card_rw:test_read:one-per-card/s0->t0"},
        rec(5, "mem.wait", "ce:s0:semaphores:cpu", result=1, extra={"offset": 16, "want": 1, "seen": 1}),
        rec(6, "mem.compare", "check:read", extra={"mismatch": 3}),
        {"note": "segment", "key": "bandwidth:rig:256MiB"},
        rec(7, "close", "close:nvidiactl:version", fd=5, errno=9),
        {"note": "fitness", "summary": FITNESS},
    ]


# ---- outcome: one call's answer as a word --------------------------------------------------------

@pytest.mark.parametrize("record, word", [
    (CallRecord(1, "mem.wait", "w", result=1), "arrived"),
    (CallRecord(1, "mem.wait", "w", result=0), "did not arrive"),
    (CallRecord(1, "mem.wait", "w", result=0, status_name="NV_OK"), "did not arrive"),
    (CallRecord(1, "mem.compare", "c", extra={"mismatch": 2}), "differs"),
    (CallRecord(1, "mem.compare", "c", extra={"mismatch": 0}), "equal"),
    (CallRecord(1, "mem.compare", "c"), "equal"),
    (CallRecord(1, "ioctl", "x", status=0x1f, status_name="NV_ERR_NOT_SUPPORTED", errno=22), "NV_ERR_NOT_SUPPORTED"),
    (CallRecord(1, "ioctl", "x", status=0x1f), "status 0x1f"),
    (CallRecord(1, "ioctl", "x", status=0x1f, errno=22), "status 0x1f"),
    (CallRecord(1, "ioctl", "x", status=0, errno=22), "errno 22"),
    (CallRecord(1, "open", "x"), "ok"),
])
def test_each_call_is_the_word_of_what_answered_it(record, word):
    assert ld.outcome(record) == word


# ---- segment_layout --------------------------------------------------------------------------------

@pytest.mark.parametrize("key, layout", [
    ("setup:one-per-card", "one-per-card"),
    ("traffic:one-per-card", "one-per-card"),
    ("traffic-close:one-per-card", "one-per-card"),
    ("teardown:two-per-card", "two-per-card"),
    ("test:test_cross_card_rw:test_read:one-per-card/s0->t1", "one-per-card"),
    ("fresh:test_x:two-per-card", "two-per-card"),
    ("test:test_x:test_y:interleaved", None),        # a layout the run did not run
    ("setup:", None),
    ("setup", None),
    ("runtime:open", None),
    ("bandwidth:rig:256MiB", None),
    ("teardown:bandwidth", None),
    (None, None),
])
def test_a_segment_names_its_layout_only_where_its_kind_runs_in_one_of_the_runs(key, layout):
    assert ld.segment_layout(key, ["one-per-card", "two-per-card"]) == layout


# ---- load: which reader, and each refusal in one line -----------------------------------------------

def test_a_path_that_is_not_a_file_is_refused_naming_what_to_give(tmp_path):
    with pytest.raises(ConfigError) as e:
        ld.load(str(tmp_path / "none.json"))
    assert str(e.value) == (f"{tmp_path / 'none.json'}: no such file (give a recording *.jsonl[.gz] or a certificate "
                            f"*.json[.gz])")
    with pytest.raises(ConfigError) as e:
        ld.load(str(tmp_path))
    assert str(e.value) == f"{tmp_path}: not a regular file (give a recording *.jsonl[.gz] or a certificate *.json[.gz])"


@pytest.mark.parametrize("text, why", [
    ("", "the file is empty"),
    (" \n\t\n", "the file is empty"),
    ("{", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ('{"format": "rmpeer-result/9"}', "not an rmpeer result (format 'rmpeer-result/9', expected 'rmpeer-result/1')"),
])
def test_a_file_that_cannot_be_read_is_one_line_with_the_first_line_of_why(tmp_path, text, why):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(ConfigError) as e:
        ld.load(str(bad))
    assert str(e.value) == f"{bad}: not a readable rmpeer recording or certificate ({why})"


@pytest.mark.parametrize("doc", [[], {"host": {}}, {"tests": []}, {"host": [], "tests": []}, {"host": {}, "tests": {}},
                                 "text"])
def test_json_of_neither_format_is_named_so(tmp_path, doc):
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as e:
        ld.load(str(bad))
    assert str(e.value) == (f"{bad}: not an rmpeer recording or certificate (no header line; no 'host' and 'tests' in "
                            f"the JSON)")


def test_short_is_the_first_line_of_an_error_cut_at_160_or_its_kind():
    assert ld._short(ValueError("first line\nsecond")) == "first line"
    assert ld._short(ValueError("x" * 170)) == "x" * 160
    assert ld._short(KeyError()) == "KeyError"


def test_a_recording_is_told_by_its_header_line_packed_or_not(tmp_path):
    plain = ld.load(str(write_recording(tmp_path / "r.jsonl", lines=full_lines(), gz=False)))
    packed = ld.load(str(write_recording(tmp_path / "r.jsonl.gz", lines=full_lines())))
    assert plain.kind == packed.kind == "transcript" and plain.calls == packed.calls


def test_a_json_object_on_its_first_line_that_is_no_header_is_read_as_a_certificate(tmp_path):
    one_line = tmp_path / "c.json"
    one_line.write_text(json.dumps(legacy_doc()))
    assert ld.load(str(one_line)).kind == "certificate"
    pretty = tmp_path / "p.json"
    pretty.write_text(json.dumps(legacy_doc(), indent=1))
    assert ld.load(str(pretty)).kind == "certificate"


# ---- a recording -----------------------------------------------------------------------------------

def test_a_recording_without_its_end_line_was_cut_short(tmp_path):
    path = write_recording(tmp_path / "cut.jsonl.gz", lines=full_lines(), end=False)
    with pytest.raises(ConfigError) as e:
        ld.load(str(path))
    assert str(e.value) == (f"{path}: truncated: the recording has no end line (it was cut short), so its calls "
                            f"cannot stand for a run")


def test_a_recording_gives_its_calls_by_layout_struct_sizes_facts_and_fitness(tmp_path):
    path = write_recording(tmp_path / "r.jsonl.gz", lines=full_lines())
    side = ld.load(str(path))
    assert (side.path, side.kind, side.layouts) == (str(path), "transcript", ["one-per-card"])
    assert side.context == {"label": "h200x1", "created": "2026-12-02T10:00:00Z", "driver": "580.159.04", "abi": ABI,
                            "cards": 1, "layouts": ["one-per-card"], "boost": True, "tier": "full", "rmpeer": "0.1.0"}
    assert side.calls == [(None, "open:nvidiactl:version [open]", "ok"),
                          (None, "driver:version", "ok"),
                          ("one-per-card", "alloc:p2p:card0", "NV_OK"),
                          ("one-per-card", "ce:s0:semaphores:cpu [mem.wait]", "arrived"),
                          ("one-per-card", "check:read [mem.compare]", "differs"),
                          (None, "close:nvidiactl:version [close]", "errno 9")]
    assert side.structs == STRUCTS
    assert side.facts == HOST
    assert (side.clocks, side.links, side.boost) == (FITNESS["clocks"], FITNESS["links"], FITNESS["boost"])
    assert side.sources == {"calls": "every call the recording holds", "struct sizes": "the requests recorded"}
    assert side.why_not == {
        "test outcomes": "a recording records calls, not test outcomes (diff the certificates)",
        "bandwidth": "a recording's copy records carry no GB/s, and it has no bandwidth note"}
    assert side.bandwidth is None and side.tests is None and side.verdict is None and side.manifest is None
    # made after every family of FAMILIES came: none unmade; every family of the table is recorded
    assert side.unmade == set()
    assert side.recorded_families == {"alloc:p2p", "perf:boost", "ce:copy"}


def test_a_recording_without_host_or_fitness_notes_says_why_each_is_not_comparable(tmp_path):
    lines = [rec(1, "open", "open:nvidiactl:version", result=5)]
    side = ld.load(str(write_recording(tmp_path / "r.jsonl.gz", header(run={}), lines)))
    cut = "the recording has no fitness note (made before clocks and links were recorded, or cut short)"
    assert side.why_not == {"reply fields": "the recording holds no host note (cut short?)", "clocks": cut,
                            "links": cut,
                            "test outcomes": "a recording records calls, not test outcomes (diff the certificates)",
                            "bandwidth": "a recording's copy records carry no GB/s, and it has no bandwidth note"}
    assert (side.facts, side.clocks, side.links, side.boost, side.layouts) == (None, None, None, None, [])
    assert side.context["driver"] is None and side.context["abi"] is None and side.context["boost"] is None


def test_a_recordings_figures_are_its_bandwidth_notes_medians_and_its_test_notes_its_outcomes(tmp_path):
    rows = [{"src_card": 0, "dst_card": 0, "op": "same-card", "bytes": 268435456, "gbps": 560.5},
            {"src_card": 0, "dst_card": 0, "op": "same-card", "bytes": 268435456, "gbps": 550.5},
            {"src_card": 0, "dst_card": 0, "op": "same-card", "bytes": 268435456, "gbps": 500.0}]
    lines = [{"note": "bandwidth", "t_ns": 1, "figures": rows},
             {"note": "verdict", "nodeid": "suites/test_rw.py::test_read[h200x1/one-per-card/s0->t0]", "outcome": "passed",
              "params": {"target": "h200x1"}}]
    side = ld.load(str(write_recording(tmp_path / "r.jsonl.gz", lines=lines)))
    assert side.bandwidth == {"same-card card 0->0 256 MiB": 550.5}
    assert side.bandwidth_ops == {"same-card card 0->0 256 MiB": "same-card"}
    assert side.sources["bandwidth"] == "the recording's bandwidth note"
    assert side.tests == {"test_rw.py::test_read[one-per-card/s0->t0]": ("one-per-card", "passed")}
    assert side.sources["tests"] == "pytest node ids"
    assert "bandwidth" not in side.why_not and "test outcomes" not in side.why_not


def test_the_methods_of_a_recording_without_a_manifest_come_from_its_gate_and_its_time(tmp_path):
    today = ld.manifest()["figures"]
    gated = ld.load(str(write_recording(tmp_path / "g.jsonl.gz", lines=[])))
    assert gated.figure_methods == today
    head = header(run={"gated": False})
    ungated = ld.load(str(write_recording(tmp_path / "u.jsonl.gz", head, [])))
    assert ungated.figure_methods == {op: "ungated" if m == "gated" else m for op, m in today.items()}
    head = header(run={"gated": True}, created="2026-11-30T15:16:53Z")
    early = ld.load(str(write_recording(tmp_path / "e.jsonl.gz", head, [])))
    assert early.figure_methods == {**today, "bidirectional": "gated, one card's clock", "all": "gated, one card's clock"}


def test_a_recording_made_before_a_family_came_did_not_make_it(tmp_path):
    head = header(created="2026-11-30T12:00:00Z", cards=1)
    side = ld.load(str(write_recording(tmp_path / "old.jsonl.gz", head, [])))
    assert side.unmade == {"perf:boost"}
    made = [rec(1, "ioctl", "perf:boost:boost_to_max:card0", status=0, status_name="NV_OK")]
    side = ld.load(str(write_recording(tmp_path / "made.jsonl.gz", head, made)))
    assert side.unmade == set(), "a family it called it made"


def test_a_recordings_manifest_is_read_whole(tmp_path):
    made = manifest_doc()
    side = ld.load(str(write_recording(tmp_path / "m.jsonl.gz", header(manifest=made), [])))
    assert side.manifest == {"families": ["alloc:p2p", "ce:copy"], "checks": ["read", "write"],
                             "fields": ["cards", "driver_version"], "figures": {"read": "own-clock", "write": "gated"}}
    assert side.figure_methods == {"read": "own-clock", "write": "gated"}


# ---- first_seen, family_table, unmade_families -------------------------------------------------------

def test_first_seen_is_the_earliest_recording_of_each_family_per_card_count(tmp_path):
    a = write_recording(tmp_path / "a.jsonl.gz", header(created="2026-12-02T00:00:00Z", cards=1), [
        rec(1, "ioctl", "alloc:p2p:card0"), rec(2, "open", "open:nvidiactl:version"),
        rec(3, "mem.write", "ce:s0:semaphores:cpu")])
    b = write_recording(tmp_path / "b.jsonl.gz", header(created="2026-12-01T00:00:00Z", cards=1), [
        rec(1, "ioctl", "alloc:p2p:card1"), rec(2, "mem.wait", "ce:s0:semaphores:cpu", result=1)])
    c = write_recording(tmp_path / "c.jsonl.gz", header(created="2026-11-30T00:00:00Z", cards=2), [
        rec(1, "ioctl", "ce:s3:g1:copy")])
    undated = write_recording(tmp_path / "d.jsonl.gz", header(created=None, cards=2), [rec(1, "ioctl", "setup:map")])
    assert ld.first_seen([a, b, c, undated]) == {
        "1": {"alloc:p2p": "2026-12-01T00:00:00Z", "ce:semaphores": "2026-12-01T00:00:00Z",
              "open:nvidiactl": "2026-12-02T00:00:00Z"},
        "2": {"ce:copy": "2026-11-30T00:00:00Z"}}
    assert list(ld.first_seen([c, b])) == ["1", "2"], "card counts in order"


def test_the_family_table_is_the_committed_files_families_as_text(families):
    (families / ld.FAMILIES_FILE).write_text(json.dumps({"families": {"1": {"a:b": "t1", "c:d": 5}, "2": "x", 3: {}}}))
    assert ld.family_table() == {"1": {"a:b": "t1", "c:d": "5"}, "3": {}}


@pytest.mark.parametrize("text", ["[]", '{"families": []}', "{}", "{", "NaN"])
def test_a_family_table_that_cannot_be_read_is_none_so_no_difference_is_hidden(families, text):
    (families / ld.FAMILIES_FILE).write_text(text)
    assert ld.family_table() == {}


def test_a_missing_or_oversized_family_table_is_none(families):
    (families / ld.FAMILIES_FILE).unlink()
    assert ld.family_table() == {}
    (families / ld.FAMILIES_FILE).write_text('{"families": {}, "pad": "' + "x" * (1 << 20) + '"}')
    assert ld.family_table() == {}
    (families / ld.FAMILIES_FILE).write_text(json.dumps({"families": {"1": {"a:b": "t"}}}).ljust(1 << 20))
    assert ld.family_table() == {"1": {"a:b": "t"}}, "1 MiB is read"


def test_unmade_families_are_those_that_came_after_the_recording_of_its_card_count():
    calls = [(None, "alloc:p2p:card0", "NV_OK")]
    assert ld.unmade_families("2026-11-30T00:00:00Z", 1, calls) == {"perf:boost"}
    assert ld.unmade_families("2026-11-30T00:00:00Z", 1, []) == {"alloc:p2p", "perf:boost"}
    assert ld.unmade_families("2026-12-01T00:00:00Z", 1, []) == set(), "the same time is no later"
    assert ld.unmade_families("2026-11-30T00:00:00Z", 2, []) == {"ce:copy"}
    assert ld.unmade_families("2026-11-30T00:00:00Z", 3, []) == set()
    assert ld.unmade_families(None, 1, []) == set() and ld.unmade_families("", 1, []) == set()


# ---- manifest_of, figure_methods ------------------------------------------------------------------

def manifest_doc(**over) -> dict:
    doc = {"format": "rmpeer-manifest/1", "families": {"ce:copy": "x", "alloc:p2p": "y"}, "checks": {"write": "", "read": ""},
           "fields": ["driver_version", "cards"], "figures": {"write": "gated", "read": "own-clock"}}
    doc.update(over)
    return doc


def test_no_manifest_or_an_empty_one_is_none():
    assert ld.manifest_of(Path("f"), None) is None
    assert ld.manifest_of(Path("f"), {}) is None


@pytest.mark.parametrize("doc, said", [
    ([], "not an object"),
    ("x", "not an object"),
    (manifest_doc(format="rmpeer-manifest/2"), "malformed: format 'rmpeer-manifest/2', not 'rmpeer-manifest/1'"),
    ({"families": {}}, "malformed: format 'None', not 'rmpeer-manifest/1'"),
    (manifest_doc(format="x" * 50), f"malformed: format {'x' * 40!r}, not 'rmpeer-manifest/1'"),
    (manifest_doc(families=["a"]), "malformed: families is not an object of names"),
    (manifest_doc(checks=None), "malformed: checks is not an object of names"),
    (manifest_doc(fields={"a": 1}), "malformed: fields is not a list of names"),
    (manifest_doc(fields=["a", 1]), "malformed: fields is not a list of names"),
    (manifest_doc(figures=["read"]), "malformed: figures is not an object of names"),
    (manifest_doc(figures={"read": 1}), "malformed: figures does not name how each is timed"),
])
def test_a_malformed_manifest_is_the_files_fault_in_one_line(doc, said):
    with pytest.raises(ConfigError) as e:
        ld.manifest_of(Path("/r/f.json"), doc)
    assert str(e.value) == f"/r/f.json: its manifest (what its rmpeer makes) is {said}"


def test_figure_methods_of_a_manifest_are_its_own_and_of_a_certificate_without_one_none():
    made = {"figures": {"read": "own-clock"}}
    got = ld.figure_methods(made, False, "2020-01-01T00:00:00Z")
    assert got == {"read": "own-clock"} and got is not made["figures"]
    assert ld.figure_methods(None, None, "2020-01-01T00:00:00Z") == {}


def test_an_earlier_method_only_before_its_change_and_only_where_today_s_is_the_one_it_replaced():
    today = ld.manifest()["figures"]
    changed = {"bidirectional": "gated, one card's clock", "all": "gated, one card's clock"}
    assert ld.figure_methods(None, True, "2026-11-30T15:30:52Z") == {**today, **changed}
    assert ld.figure_methods(None, True, "2026-11-30T15:30:53Z") == today
    assert ld.figure_methods(None, True, None) == today
    assert ld.figure_methods(None, True) == today
    ungated = {op: "ungated" if m == "gated" else m for op, m in today.items()}
    assert ld.figure_methods(None, False, "2026-11-30T15:00:00Z") == ungated, "ungated before the change too"


# ---- a certificate: RunResult.to_dict() ------------------------------------------------------------

def run_result(**over) -> RunResult:
    fields = dict(node="gpu-a", tier="quick", started="2026-12-02T10:00:00Z", version="0.1.0", verdict=DEGRADED,
                  target={"kind": "live", "label": "h200x1"}, host=HOST,
                  layouts=[LayoutResult("one-per-card", [0], 1 << 26, statuses=[{"label": "alloc:p2p:card0", "status": "NV_OK"},
                                                                       "not a status",
                                                                       {"label": "map:card0", "status": "NV_ERR_X"}])],
                  checks=[CheckResult("read/x", "read", "read/write", "pair 0->0", "passed", layout="one-per-card"),
                          CheckResult("clocks", "clocks", "fitness", "host", "failed")],
                  clocks=FITNESS["clocks"], links=FITNESS["links"], boost=FITNESS["boost"],
                  bandwidth=[{"src_card": 0, "dst_card": 0, "op": "read", "bytes": 1 << 28, "gbps": 300.0},
                             {"src_card": 0, "dst_card": 0, "op": "read", "bytes": 1 << 28, "gbps": 310.0}])
    fields.update(over)
    return RunResult(**fields)


def write_json(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_a_certificate_gives_its_context_calls_checks_and_figures(tmp_path):
    path = write_json(tmp_path / "certificate.json", run_result().to_dict())
    side = ld.load(str(path))
    assert (side.path, side.kind, side.layouts, side.verdict) == (str(path), "certificate", ["one-per-card"], DEGRADED)
    assert side.context == {"label": "h200x1", "created": "2026-12-02T10:00:00Z", "driver": "580.159.04", "abi": ABI,
                            "cards": 1, "tier": "quick", "layouts": ["one-per-card"], "subject": "live",
                            "rmpeer": "0.1.0", "node": "gpu-a", "signature": UNSIGNED}
    assert side.facts == HOST
    assert side.calls == [("one-per-card", "alloc:p2p:card0", "NV_OK"), ("one-per-card", "map:card0", "NV_ERR_X")]
    assert side.tests == {"read/x": ("one-per-card", "passed"), "clocks": (None, "failed")}
    assert side.checks_of == {"read/x": "read", "clocks": "clocks"}
    assert (side.clocks, side.links, side.boost) == (FITNESS["clocks"], FITNESS["links"], FITNESS["boost"])
    assert side.bandwidth == {"read card 0->0 256 MiB": 305.0}
    assert side.bandwidth_ops == {"read card 0->0 256 MiB": "read"}
    assert side.sources == {"calls": "the setup statuses each layout recorded", "tests": "check ids",
                            "struct sizes": f"drivers.yaml entry {ABI}", "bandwidth": "the certificate's bandwidth list"}
    assert side.why_not == {}
    assert {k: side.structs[k] for k in STRUCTS} == STRUCTS
    assert side.manifest is None and side.figure_methods == {}


def test_what_a_certificate_does_not_record_is_not_comparable_with_its_reason(tmp_path):
    r = run_result(layouts=[LayoutResult("one-per-card", [0], 1 << 26)], clocks={}, links={}, boost={}, bandwidth=[],
                   host={"abi_release": "9.9.9"})
    side = ld.load(str(write_json(tmp_path / "c.json", r.to_dict())))
    assert side.calls is None and side.bandwidth is None and side.structs is None
    assert side.why_not == {"calls": "the certificate records no RM statuses",
                            "clocks": "the certificate records no clocks and no links",
                            "links": "the certificate records no clocks and no links",
                            "struct sizes": "its ABI '9.9.9' is not an entry of matrices/drivers.yaml",
                            "bandwidth": "the certificate records no bandwidth"}
    assert side.context["cards"] == 0 and side.context["driver"] is None


def test_a_certificate_of_nothing_a_run_writes_is_refused(tmp_path):
    path = write_json(tmp_path / "c.json", RunResult(node="x").to_dict())
    with pytest.raises(ConfigError) as e:
        ld.load(str(path))
    assert str(e.value) == f"{path}: not an rmpeer certificate (it records no host, no layout and no check)"
    for kept in (dict(host=HOST), dict(layouts=[LayoutResult("one-per-card", [0], 1 << 26)]),
                 dict(checks=[CheckResult("c", "clocks", "fitness", "host", "passed")])):
        assert ld.load(str(write_json(tmp_path / "k.json", RunResult(**kept).to_dict()))).kind == "certificate"


def test_a_certificates_manifest_is_read_and_a_bad_one_refused(tmp_path):
    doc = {**run_result().to_dict(), "manifest": manifest_doc()}
    side = ld.load(str(write_json(tmp_path / "c.json", doc)))
    assert side.manifest["checks"] == ["read", "write"] and side.figure_methods == {"read": "own-clock", "write": "gated"}
    doc["manifest"] = manifest_doc(fields="x")
    with pytest.raises(ConfigError, match="fields is not a list of names"):
        ld.load(str(write_json(tmp_path / "c.json", doc)))


# ---- a certificate of the earlier format -------------------------------------------------------------

def legacy_doc(**over) -> dict:
    doc = {"created": "2026-11-28T12:00:00Z", "verdict": CERTIFIED, "host": HOST,
           "tests": [{"nodeid": "suites/test_rw.py::test_read[h200x2/one-per-card/s0->t1]", "outcome": "passed",
                      "params": {"target": "h200x2", "layout": "one-per-card"},
                      "properties": {"bandwidth": {"op": "read", "s": 0, "t": 1, "bytes": 1 << 28, "steady_gbps": 300.0}}},
                     {"nodeid": "suites/test_rw.py::test_write[h200x2/cards-0-1/s0->t1]", "outcome": "failed",
                      "params": {"layout": "two-per-card"},
                      "properties": {"bandwidth": {"op": "write", "s": 0, "t": 1, "bytes": 1 << 28,
                                                   "steady_gbps": 200.0}}},
                     {"nodeid": "suites/test_rw.py::test_copy[h200x2/one-per-card/s1->t0]", "outcome": "passed"},
                     {"nodeid": "suites/test_host.py::test_facts[h200x2]", "outcome": "passed"},
                     "not a test", {"outcome": "passed"}]}
    doc.update(over)
    return doc


def test_an_earlier_certificate_gives_its_tests_by_layout_and_its_read_write_figures(tmp_path):
    side = ld.load(str(write_json(tmp_path / "old.json", legacy_doc())))
    assert side.tests == {"test_rw.py::test_read[one-per-card/s0->t1]": ("one-per-card", "passed"),
                          "test_rw.py::test_write[cards-0-1/s0->t1]": ("two-per-card", "failed"),
                          "test_rw.py::test_copy[one-per-card/s1->t0]": ("one-per-card", "passed"),
                          "test_host.py::test_facts[]": (None, "passed")}
    assert side.layouts == ["one-per-card", "two-per-card"]
    assert side.context == {"label": "h200x2", "created": "2026-11-28T12:00:00Z", "driver": "580.159.04", "abi": ABI,
                            "cards": 1, "subject": None, "layouts": ["one-per-card", "two-per-card"],
                            "signature": "unsigned (the earlier format): nothing vouches for its content"}
    assert side.verdict == CERTIFIED and side.facts == HOST and side.calls is None
    assert side.bandwidth == {"one-per-card read s0->t1 256 MiB": 300.0, "two-per-card write s0->t1 256 MiB": 200.0}
    assert side.sources == {"tests": "pytest node ids", "struct sizes": f"drivers.yaml entry {ABI}",
                            "bandwidth": "the read/write tests' steady GB/s"}
    made_before = "the certificate records no clocks and no links (made before they were recorded)"
    assert side.why_not == {"clocks": made_before, "links": made_before,
                            "calls": "this certificate holds test results, not RM calls (diff the recordings)"}
    assert {k: side.structs[k] for k in STRUCTS} == STRUCTS


def test_an_earlier_certificates_subject_target_fitness_and_bench(tmp_path):
    doc = legacy_doc(subject={"kind": "replay", "recorded_label": "h200x2-rec"}, target="h200x2",
                     fitness={"clocks": FITNESS["clocks"], "links": FITNESS["links"], "boost": FITNESS["boost"]},
                     bench=[{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 4096, "gbps": 10.0}])
    side = ld.load(str(write_json(tmp_path / "old.json", doc)))
    assert (side.context["label"], side.context["subject"]) == ("h200x2-rec", "replay")
    assert (side.clocks, side.links, side.boost) == (FITNESS["clocks"], FITNESS["links"], FITNESS["boost"])
    assert side.bandwidth == {"read card 0->1 4096 B": 10.0}
    assert side.bandwidth_ops == {"read card 0->1 4096 B": "read"}
    assert side.sources["bandwidth"] == "the certificate's bandwidth list"
    fitness_rows = legacy_doc(fitness={"bandwidth": [{"src_card": 1, "dst_card": 0, "op": "write", "bytes": 1 << 20,
                                                      "gbps": 5.0}]}, bench=[{"op": "x", "gbps": 1.0}])
    assert ld.load(str(write_json(tmp_path / "f.json", fitness_rows))).bandwidth == {"write card 1->0 1 MiB": 5.0}


def test_an_earlier_certificate_without_figures_or_a_known_abi_says_so(tmp_path):
    doc = legacy_doc(host={"abi_release": "1.0"}, tests=[{"nodeid": "suites/t.py::a[h200x1]", "outcome": "passed"}],
                     fitness="not a mapping", bench=[])
    side = ld.load(str(write_json(tmp_path / "old.json", doc)))
    assert side.bandwidth is None and side.structs is None and side.context["cards"] == 0
    assert side.why_not["bandwidth"] == "the certificate records no bandwidth"
    assert side.why_not["struct sizes"] == "its ABI '1.0' is not an entry of matrices/drivers.yaml"
    assert side.sources["struct sizes"] == "drivers.yaml entry 1.0"


# ---- test ids, targets and layouts ---------------------------------------------------------------

def test_the_target_is_a_tests_parameter_else_the_first_id_that_names_one():
    assert ld._target([{"params": {}}, {"params": {"target": "h200x8"}}, {"params": {"target": "x"}}]) == "h200x8"
    assert ld._target(["x", {"nodeid": "t.py::a"}, {"nodeid": "t.py::b[h200x2/one-per-card]"},
                       {"nodeid": "t.py::c[h100x4]"}]) == "h200x2"
    assert ld._target([{"nodeid": "t.py::a[replay:h200x2-2026/one-per-card]"}]) == "replay:h200x2-2026"
    assert ld._target([{"nodeid": "t.py::a[h200x1]"}]) == "h200x1"
    assert ld._target([{"nodeid": "t.py::a[one-per-card]"}, {"params": None}]) is None
    assert ld._target([]) is None


@pytest.mark.parametrize("test, target, tid", [
    ({"nodeid": "suites/t.py::a[h200x2/one-per-card/s0->t1]"}, "h200x2", "t.py::a[one-per-card/s0->t1]"),
    ({"nodeid": "suites/t.py::a[h200x2]"}, "h200x2", "t.py::a[]"),
    ({"nodeid": "suites/t.py::a[replay:h200x2/one-per-card]"}, "h200x2", "t.py::a[one-per-card]"),
    ({"nodeid": "suites/t.py::a[replay:h200x2]"}, "h200x2", "t.py::a[]"),
    ({"nodeid": "t.py::a[h100x8/x]", "params": {"target": "h100x8"}}, None, "t.py::a[x]"),
    ({"nodeid": "t.py::a[h100x8/x]", "params": {"target": "h100x8"}}, "h200x2", "t.py::a[x]"),
    ({"nodeid": "t.py::a[replay:anything-else/x]"}, None, "t.py::a[x]"),
    ({"nodeid": "suites/t.py::a[h200x2/x]"}, None, "t.py::a[h200x2/x]"),
    ({"nodeid": "other/suites/t.py::a"}, None, "other/suites/t.py::a"),
])
def test_a_test_id_loses_its_target_so_two_hosts_align(test, target, tid):
    assert ld._test_id(test, target) == tid


@pytest.mark.parametrize("test, layout", [
    ({"nodeid": "t.py::a[h200x2/one-per-card/s0->t1]", "params": {"layout": "named"}}, "named"),
    ({"nodeid": "t.py::a[h200x2/one-per-card/s0->t1]"}, "one-per-card"),
    ({"nodeid": "t.py::a[h200x2/cards-0-2/s0->t1]"}, "cards-0-2"),
    ({"nodeid": "t.py::a[h200x2/s0->t1]"}, None),
    ({"nodeid": "t.py::a[h200x2]"}, None),
    ({"nodeid": "t.py::a"}, None),
    ({"nodeid": "t.py::a[h200x2/one-per-card]::b"}, None),
])
def test_a_tests_layout_is_its_parameter_else_the_first_part_of_its_id_that_is_one(test, layout):
    assert ld._test_layout(test, {"one-per-card", "two-per-card"}, "h200x2") == layout


def test_the_layout_names_are_the_layout_matrixs():
    assert ld._layout_names() >= {"one-per-card", "two-per-card", "interleaved", "four-per-card"}


def test_struct_sizes_are_the_abis_entry_in_drivers_yaml():
    sizes = ld._abi_struct_sizes(ABI)
    assert {k: sizes[k] for k in STRUCTS} == STRUCTS
    assert ld._abi_struct_sizes("580.159.04") is None and ld._abi_struct_sizes(None) is None


# ---- _bandwidth, _key, _ops ------------------------------------------------------------------------

def test_each_figure_is_the_median_of_its_rows_by_pair_key():
    rows = [{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 28, "gbps": g} for g in (3, 1, 2, 10)]
    rows += [{"layout": "two-per-card", "op": "write", "s": 1, "t": 2, "bytes": 1 << 28, "steady_gbps": 7.5},
             {"src_card": 1, "dst_card": 0, "op": "read", "bytes": 512, "gbps": None},
             {"src": 2, "dst": 3, "op": "read", "bytes": 0, "gbps": 4}]
    assert ld._bandwidth(rows) == {"read card 0->1 256 MiB": 2.5, "read s2->t3": 4.0,
                                   "two-per-card write s1->t2 256 MiB": 7.5}
    assert list(ld._bandwidth(rows)) == sorted(ld._bandwidth(rows))


@pytest.mark.parametrize("row, key", [
    ({"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 20}, "read card 0->1 1 MiB"),
    ({"src_card": 0, "dst_card": 1, "op": "read", "bytes": (1 << 20) - 1}, "read card 0->1 1048575 B"),
    ({"src": 0, "dst": 1, "op": "read"}, "read s0->t1"),
    ({"s": 4, "t": 5, "layout": "sixteen", "op": "all", "bytes": 3 << 30}, "sixteen all s4->t5 3072 MiB"),
    ({"op": "read"}, "read s?->t?"),
    ({"src_card": 2, "dst": 1, "op": "read", "bytes": 1}, "read card 2->1 1 B"),
])
def test_a_pair_key_names_layout_op_pair_and_size(row, key):
    assert ld._key(row) == key


@pytest.mark.parametrize("row, said", [
    ("x", "bandwidth[0] is str, not a mapping"),
    ({"gbps": "fast"}, "bandwidth[0]'s gbps is 'fast', not of the kind rmpeer writes"),
    ({"dst_card": None, "gbps": 1.0}, "bandwidth[0]'s dst_card is 'None', not of the kind rmpeer writes"),
    ({"src_card": True, "gbps": 1.0}, "bandwidth[0]'s src_card is 'True', not of the kind rmpeer writes"),
    ({"op": 3, "gbps": 1.0}, "bandwidth[0]'s op is '3', not of the kind rmpeer writes"),
    ({"bytes": 1.5, "gbps": 1.0}, "bandwidth[0]'s bytes is '1.5', not of the kind rmpeer writes"),
    ({"layout": ["x"], "gbps": 1.0}, "bandwidth[0]'s layout is \"['x']\", not of the kind rmpeer writes"),
    ({"steady_gbps": "x" * 30}, f"bandwidth[0]'s steady_gbps is {'x' * 20!r}, not of the kind rmpeer writes"),
])
def test_a_row_of_another_kind_is_refused_never_left_out(row, said):
    with pytest.raises(ValueError) as e:
        ld._bandwidth([row])
    assert str(e.value) == said


def test_a_row_without_a_figure_or_of_none_moved_nothing():
    assert ld._bandwidth([{"op": "read", "src_card": 0, "dst_card": 1, "steady_gbps": None}, {"op": "read"}]) == {}


def test_ops_name_each_keys_op_where_a_row_has_one():
    rows = [{"src_card": 0, "dst_card": 1, "op": "read", "bytes": 1 << 20}, {"src_card": 0, "dst_card": 1}, "x",
            {"src_card": 1, "dst_card": 0, "op": "", "bytes": 1}]
    assert ld._ops(rows) == {"read card 0->1 1 MiB": "read"}


# ---- load_pinned, _runs_in, host_name, load_set --------------------------------------------------------

def test_a_file_in_a_folder_is_read_through_its_own_descriptor_and_named_by_its_path(tmp_path):
    path = write_json(tmp_path / "c.json", run_result().to_dict())
    side = ld.load_pinned(path)
    assert side.path == str(path) and side.verdict == DEGRADED


def test_a_link_a_fifo_or_a_missing_file_in_a_folder_is_refused(tmp_path):
    target = write_json(tmp_path / "real.json", run_result().to_dict())
    os.symlink(target, tmp_path / "link.json")
    with pytest.raises(ConfigError) as e:
        ld.load_pinned(tmp_path / "link.json")
    assert str(e.value) == f"{tmp_path / 'link.json'}: a symbolic link: refused"
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(ConfigError) as e:
        ld.load_pinned(tmp_path / "fifo.json")
    assert str(e.value) == f"{tmp_path / 'fifo.json'}: not a regular file"
    with pytest.raises(ConfigError) as e:
        ld.load_pinned(tmp_path / "gone.json")
    assert str(e.value) == f"{tmp_path / 'gone.json'}: No such file or directory"


def test_a_pinned_files_refusal_names_the_file_not_its_descriptor(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(ConfigError) as e:
        ld.load_pinned(bad)
    assert str(e.value) == f"{bad}: not an rmpeer recording or certificate (no header line; no 'host' and 'tests' in the JSON)"


def test_the_runs_of_a_folder_to_two_levels_no_link_followed(tmp_path):
    for name in ("b.json", "a.jsonl.gz", "status.json", "notes.txt", "n1/certificate.json", "n1/summary.jsonl",
                 "n1/history.json", "n1/deep/x.json", "n0/r.jsonl", "n0/c.json.gz"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "n1" / "folder.json").mkdir()
    os.symlink(tmp_path / "b.json", tmp_path / "link.json")
    os.symlink(tmp_path / "b.json", tmp_path / "link.txt")
    os.symlink(tmp_path / "n0", tmp_path / "n2")
    os.symlink(tmp_path / "b.json", tmp_path / "n1" / "inner.json")
    assert ld._runs_in(tmp_path) == [tmp_path / "a.jsonl.gz", tmp_path / "b.json", tmp_path / "link.json",
                                     tmp_path / "n0" / "c.json.gz", tmp_path / "n0" / "r.jsonl",
                                     tmp_path / "n1" / "certificate.json", tmp_path / "n1" / "inner.json"]


def test_a_hosts_name_is_its_fleet_folder_else_its_certificates_node_else_its_recording(tmp_path):
    side = ld.Side("x", "certificate", context={"node": "gpu-a"})
    assert ld.host_name(tmp_path / "n1" / "certificate.json", side, tmp_path) == "n1"
    assert ld.host_name(tmp_path / "certificate.json", side, tmp_path) == "gpu-a"
    assert ld.host_name(tmp_path / "certificate.json", side, None) == "gpu-a"
    rec_side = ld.Side("x", "transcript", context={"node": None})
    assert ld.host_name(tmp_path / "h200x2-20261130T151653Z.jsonl.gz", rec_side, None) == "h200x2-20261130T151653Z"
    assert ld.host_name(tmp_path / "n1" / "h200x1.jsonl", ld.Side("x", "transcript"), None) == "h200x1"


def test_a_set_reads_every_run_of_its_folders_and_lists_what_it_cannot(tmp_path):
    fleet = tmp_path / "fleet"
    (fleet / "gpu-a").mkdir(parents=True)
    (fleet / "gpu-b").mkdir()
    write_json(fleet / "gpu-a" / "certificate.json", run_result(node="gpu-a").to_dict())
    write_json(fleet / "gpu-b" / "certificate.json", [])
    os.symlink(fleet / "gpu-a" / "certificate.json", fleet / "planted.json")
    alone = write_json(tmp_path / "alone.json", run_result(node="gpu-z").to_dict())
    hosts, unreadable = ld.load_set([str(fleet), str(alone)])
    assert [(name, side.path) for name, side in hosts] == [("gpu-a", str(fleet / "gpu-a" / "certificate.json")),
                                                           ("gpu-z", str(alone))]
    assert unreadable == [
        (str(fleet / "gpu-b" / "certificate.json"),
         "not an rmpeer recording or certificate (no header line; no 'host' and 'tests' in the JSON)"),
        (str(fleet / "planted.json"), "a symbolic link: refused")]


def test_a_file_named_on_the_command_line_that_cannot_be_read_stops_the_set(tmp_path):
    bad = write_json(tmp_path / "bad.json", [])
    with pytest.raises(ConfigError, match="not an rmpeer recording or certificate"):
        ld.load_set([str(bad)])


def test_a_link_named_on_the_command_line_is_read_as_a_file(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    write_json(real / "c.json", run_result(node="gpu-a").to_dict())
    os.symlink(real / "c.json", tmp_path / "c.json")
    hosts, unreadable = ld.load_set([str(tmp_path / "c.json")])
    assert [name for name, _ in hosts] == ["gpu-a"] and unreadable == []
    os.symlink(real, tmp_path / "folder")
    with pytest.raises(ConfigError, match="not a regular file"):
        ld.load_set([str(tmp_path / "folder")])


def test_a_set_of_nothing_to_compare_is_one_line_counting_the_unreadable(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError) as e:
        ld.load_set([str(empty)])
    assert str(e.value) == f"{empty}: no recording or certificate to compare"
    (empty / "x.json").write_text("{")
    (empty / "y.json").write_text("[]")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ConfigError) as e:
        ld.load_set([str(empty), str(other)])
    assert str(e.value) == f"{empty} {other}: no recording or certificate to compare (2 unreadable)"


def test_a_folder_that_cannot_be_listed_is_one_line(tmp_path, monkeypatch):
    folder = tmp_path / "f"
    folder.mkdir()

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", refuse)
    with pytest.raises(ConfigError) as e:
        ld.load_set([str(folder)])
    assert str(e.value) == f"{folder}: cannot list the folder (Permission denied)"
