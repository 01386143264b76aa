"""matrices/topologies.yaml is schema-checked (a typo is an error naming the file, the entry
and the line, never a silently ignored key), and a host is judged against floors, or the run
is told that no floors apply (never a silent pass).

Broken copies are written line by line here, so each expected line number is the test's own
count; the host facts come from the committed recordings."""

import dataclasses
import os
import re
import subprocess
import sys

import pytest

from rmpeer.tables.load import MATRICES
from rmpeer.errors import EXIT_CONFIG, ConfigError, MatrixError
from rmpeer.judge.floors import floors_for
from rmpeer.paths import transcripts_dir
from rmpeer.model.result import DEGRADE, INFO, Finding
from rmpeer.model.host import HostFacts
from rmpeer.shim.replay import recorded_note, transcript_summary
from rmpeer.tables.topology import TopologyMatrix

pytestmark = pytest.mark.offline
SHIPPED = (MATRICES / "topologies.yaml").read_text().splitlines(keepends=True)


def recording(label):
    found = [p for p in sorted(transcripts_dir().glob("*.jsonl.gz")) if transcript_summary(p)["label"] == label]
    if not found:
        pytest.skip(f"no {label} recording in fixtures/transcripts/")
    return found[0]


def facts_of(label) -> HostFacts:
    return HostFacts.from_dict(recorded_note(recording(label), "host")["facts"])


def entry_line(lines, name) -> int:
    """1-based line of `  name:` under topologies."""
    return next(n for n, line in enumerate(lines, 1) if line.rstrip() == f"  {name}:")


def line_in_entry(lines, name, starts) -> int:
    """1-based line of the first line of entry `name` that starts (stripped) with `starts`."""
    first = entry_line(lines, name)
    return next(n for n, line in enumerate(lines[first:], first + 1) if line.strip().startswith(starts))


def broken(tmp_path, lines):
    path = tmp_path / "topologies.yaml"
    path.write_text("".join(lines))
    return path


def refused(path) -> str:
    with pytest.raises(MatrixError) as err:
        TopologyMatrix(path)
    assert err.value.exit_code == EXIT_CONFIG and "\n" not in str(err.value)
    return str(err.value)


def test_floor_for_floors_is_refused_naming_the_line(tmp_path):
    lines = list(SHIPPED)
    at = line_in_entry(lines, "h200x2-nv18", "floors:")
    lines[at - 1] = lines[at - 1].replace("floors:", "floor:")
    path = broken(tmp_path, lines)
    assert refused(path) == (f"{path}: line {at}: topology h200x2-nv18.floor: unknown key 'floor' (known: "
                             f"description, cards, model, links, p2p, expect, floors); did you mean 'floors'?")


def test_a_wrong_capability_name_is_refused_naming_the_line(tmp_path):
    lines = list(SHIPPED)
    at = line_in_entry(lines, "h200x2-nv18", "p2p:")
    assert "NVLINK_SUPPORTED" in lines[at - 1]
    lines[at - 1] = lines[at - 1].replace("NVLINK_SUPPORTED", "NVLINK_SUPPORT")
    path = broken(tmp_path, lines)
    assert refused(path) == (f"{path}: line {at}: topology h200x2-nv18.p2p.NVLINK_SUPPORT: 'NVLINK_SUPPORT' is not "
                             f"a P2P capability RM reports (the NV0000_CTRL_SYSTEM_GET_P2P_CAPS_* names of "
                             f"drivers.yaml, without the prefix); did you mean 'NVLINK_SUPPORTED'?")


def test_every_shipped_capability_name_is_a_drivers_yaml_constant():
    """The oracle: drivers.yaml's text itself, not the loader's list."""
    drivers = (MATRICES / "drivers.yaml").read_text()
    for topology in TopologyMatrix().topologies.values():
        for cap in topology.p2p:
            assert f"NV0000_CTRL_SYSTEM_GET_P2P_CAPS_{cap}:" in drivers


@pytest.mark.parametrize("starts,old,new,entry,problem", [
    ("floors:", "size: 256MiB", "sise: 256MiB", "floors.sise",
     "unknown keys ['sise'] (known: cross_card_gbps, same_card_gbps, bidirectional_gbps, warn_band, size)"),
    ("links:", "count: 18", "cuont: 18", "links.cuont", "unknown key 'cuont' (known: kind, count); did you mean 'count'?"),
    ("p2p:", "READS_SUPPORTED: true", "READS_SUPPORTED: 1", "p2p.READS_SUPPORTED", "must be true or false, found 1"),
    ("cards:", "cards: 2", "cards: 0", "cards", "must be at least 1, found 0"),
    # a NaN floor judged nothing (every figure passed it), an infinite one failed every host (DEGRADED)
    ("floors:", "cross_card_gbps: 355", "cross_card_gbps: .nan", "floors.cross_card_gbps",
     "must be a finite GB/s figure above 0, found nan"),
    ("floors:", "cross_card_gbps: 355", "cross_card_gbps: .inf", "floors.cross_card_gbps",
     "must be a finite GB/s figure above 0, found inf"),
    ("floors:", "same_card_gbps: 500", "same_card_gbps: 1" + "0" * 400, "floors.same_card_gbps",
     "must be a finite GB/s figure above 0, found 1" + "0" * 56 + "..."),
    ("floors:", "same_card_gbps: 500", "same_card_gbps: 0", "floors.same_card_gbps",
     "must be a finite GB/s figure above 0, found 0"),
])
def test_malformed_entry_keys_are_refused_naming_the_line(tmp_path, starts, old, new, entry, problem):
    lines = list(SHIPPED)
    at = line_in_entry(lines, "h200x2-nv18", starts)
    assert old in lines[at - 1]
    lines[at - 1] = lines[at - 1].replace(old, new)
    path = broken(tmp_path, lines)
    assert refused(path) == f"{path}: line {at}: topology h200x2-nv18.{entry}: {problem}"


@pytest.mark.parametrize("count, refused_too", [(64, False), (65, True), (10**20, True)])
def test_more_nvlinks_than_a_card_reports_are_refused(tmp_path, count, refused_too):
    """links.count 10**20 was taken: no card shows that many ACTIVE, so every host of the entry was
    DEGRADED (exit 4) for a broken matrix. The bound is drivers.yaml's most links, which the spec
    passes (tables/ cannot read the ABI)."""
    lines = list(SHIPPED)
    at = line_in_entry(lines, "h200x2-nv18", "links:")
    lines[at - 1] = lines[at - 1].replace("count: 18", f"count: {count}")
    path = broken(tmp_path, lines)
    TopologyMatrix(path)        # without the bound: the file alone is well formed
    if not refused_too:
        assert TopologyMatrix(path, max_links=64).get("h200x2-nv18").expected_nvlinks == count
        return
    with pytest.raises(MatrixError) as err:
        TopologyMatrix(path, max_links=64)
    assert str(err.value) == (f"{path}: line {at}: topology h200x2-nv18.links.count: {count} is more NVLinks than "
                              f"a card reports (at most 64: NV2080_CTRL_NVLINK_MAX_LINKS of drivers.yaml)")


def test_an_unknown_top_level_key_is_refused_naming_the_line(tmp_path):
    lines = list(SHIPPED)
    at = next(n for n, line in enumerate(lines, 1) if line.startswith("topologies:"))
    lines.insert(at - 1, "topolgies_extra: 1\n")
    path = broken(tmp_path, lines)
    assert refused(path) == (f"{path}: line {at}: file.topolgies_extra: unknown key 'topolgies_extra' "
                             f"(known: schema, topologies); did you mean 'topologies'?")


def test_two_entries_matching_one_host_are_refused_naming_both(tmp_path):
    facts = facts_of("h200x2")
    lines = list(SHIPPED) + ["\n", "  any-two-nvlink:\n", "    description: a second entry for the same host\n",
                             "    cards: 2\n", "    model: any\n"]
    path = broken(tmp_path, lines)
    matrix = TopologyMatrix(path)            # the file itself is well formed
    first, second = entry_line(lines, "h200x2-nv18"), entry_line(lines, "any-two-nvlink")
    with pytest.raises(MatrixError) as err:
        matrix.match(facts)
    assert str(err.value) == (f"{path}: line {second}: topology any-two-nvlink: matches this host as well as "
                              f"topology h200x2-nv18 (line {first}): make the entries exclusive (cards, model or p2p)")
    with pytest.raises(MatrixError):
        floors_for(facts, matrix)


def test_a_broken_matrix_named_by_rmpeer_matrices_stops_certify_with_the_line(tmp_path):
    """The whole path a user takes: RMPEER_MATRICES names a copy with the typo; certify
    refuses with exit 2 and the line, and writes nothing."""
    import shutil

    recorded = recording("h200x2")
    matrices = tmp_path / "matrices"
    shutil.copytree(MATRICES, matrices)
    lines = list(SHIPPED)
    at = line_in_entry(lines, "h200x2-nv18", "floors:")
    lines[at - 1] = lines[at - 1].replace("floors:", "floor:")
    (matrices / "topologies.yaml").write_text("".join(lines))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "rmpeer", "certify", "--replay", str(recorded), "--output", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,   # rmpeer as installed
                          env=dict(os.environ, RMPEER_MATRICES=str(matrices)))
    assert done.returncode == EXIT_CONFIG, done.stderr[-2000:]
    assert f"topologies.yaml: line {at}: topology h200x2-nv18.floor: unknown key 'floor'" in done.stderr
    assert "Traceback" not in done.stderr and not out.exists()


# -- floors_for ----------------------------------------------------------------------------------

def test_a_recorded_host_is_judged_by_the_floors_of_its_entry():
    matrix = TopologyMatrix()
    floors, source, finding = floors_for(facts_of("h200x2"), matrix)
    # the oracle: topologies.yaml's own line for h200x2-nv18
    at = line_in_entry(SHIPPED, "h200x2-nv18", "floors:")
    assert "cross_card_gbps: 355" in SHIPPED[at - 1] and "bidirectional_gbps: 650" in SHIPPED[at - 1]
    assert (source, finding) == ("match:h200x2-nv18", None)
    assert (floors.cross_card_gbps, floors.bidirectional_gbps) == (355, 650)
    floors, source, _ = floors_for(facts_of("h200x1"), matrix)
    assert (floors.same_card_gbps, floors.cross_card_gbps, source) == (500, None, "match:h200x1")


def test_asked_for_floors_come_from_the_entry_asked_for():
    floors, source, finding = floors_for(facts_of("h200x1"), TopologyMatrix(), expected="h200x2-nv18")
    assert (floors.cross_card_gbps, source, finding) == (355, "expected:h200x2-nv18", None)
    with pytest.raises(ConfigError, match="unknown topology 'nowhere'"):
        floors_for(facts_of("h200x1"), TopologyMatrix(), expected="nowhere")


def other_model(facts, name="NVIDIA H100 PCIe"):
    return dataclasses.replace(facts, cards=[dataclasses.replace(c, name=name) for c in facts.cards])


def test_a_host_no_entry_matches_is_degraded_no_floors():
    facts = other_model(facts_of("h200x2"))
    floors, source, finding = floors_for(facts, TopologyMatrix())
    assert (floors, source) == (None, "none")
    assert finding == Finding(
        check="bandwidth-floor", subject="host", expected="floors for this host (a topologies.yaml entry)",
        found="no floors for this host: no entry of topologies.yaml matches it (2 x NVIDIA H100 PCIe; nearest "
              "h200x2-nv18: card 0 is 'NVIDIA H100 PCIe', expected 'NVIDIA H200')", severity=DEGRADE)


def test_no_floors_turns_the_degrade_into_a_note():
    floors, source, finding = floors_for(other_model(facts_of("h200x2")), TopologyMatrix(), no_floors=True)
    assert (floors, source, finding.severity) == (None, "none", INFO)
    assert finding.found.endswith("; not judged (--no-floors)")


def test_an_entry_without_floors_is_degraded_naming_the_entry():
    """hgx-h200x8-nvswitch states no floors in the shipped file (its text is the oracle)."""
    first = entry_line(SHIPPED, "hgx-h200x8-nvswitch")
    body = SHIPPED[first:next(n for n in range(first, len(SHIPPED)) if SHIPPED[n].startswith("  ") and
                              not SHIPPED[n].startswith("    "))]
    assert not any(line.strip().startswith("floors:") for line in body)
    floors, source, finding = floors_for(facts_of("h200x2"), TopologyMatrix(), expected="hgx-h200x8-nvswitch")
    assert (floors, source, finding.severity) == (None, "expected:hgx-h200x8-nvswitch", DEGRADE)
    assert finding.found == (f"no floors for this host: topology hgx-h200x8-nvswitch (topologies.yaml line {first}) "
                             f"states none")


@pytest.mark.parametrize("mutant", ["match-first", "always-none"])
def test_the_checks_fail_when_the_matching_is_broken(monkeypatch, tmp_path, mutant):
    """Mutation: a match() that takes the first entry without a word, or finds nothing, is
    caught by the tests above (run here against the broken code)."""
    if mutant == "match-first":
        monkeypatch.setattr(TopologyMatrix, "match",
                            lambda self, host: next((t for t in self.topologies.values() if not t.mismatches(host)), None))
        with pytest.raises(pytest.fail.Exception):
            test_two_entries_matching_one_host_are_refused_naming_both(tmp_path)
    else:
        monkeypatch.setattr(TopologyMatrix, "match", lambda self, host: None)
        with pytest.raises(AssertionError):
            test_a_recorded_host_is_judged_by_the_floors_of_its_entry()


@pytest.mark.parametrize("releases, problem", [("x", "file.releases: must be list, found 'x'"),
                                               (1, "file.releases: must be list, found 1"),
                                               ([1], "releases[0]: must be a mapping, found int")])
def test_a_broken_releases_list_of_drivers_yaml_is_refused_naming_it(tmp_path, releases, problem):
    """The capability names are read from drivers.yaml before its own loader may have checked it:
    a releases list of the wrong shape is the file's error, not an AttributeError."""
    import shutil

    import yaml

    from rmpeer.tables.topology import p2p_cap_names

    shutil.copy(MATRICES / "topologies.yaml", tmp_path / "topologies.yaml")
    doc = yaml.safe_load((MATRICES / "drivers.yaml").read_text())
    (tmp_path / "drivers.yaml").write_text(yaml.safe_dump({**doc, "releases": releases}))
    with pytest.raises(MatrixError) as caught:
        p2p_cap_names(tmp_path / "drivers.yaml")
    assert str(caught.value) == f"{tmp_path / 'drivers.yaml'}: {problem}"
    with pytest.raises(MatrixError, match=re.escape(problem)):
        TopologyMatrix(tmp_path / "topologies.yaml")
