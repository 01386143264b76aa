"""rmpeer.fleet.files (`rmpeer fleet files slurm|kubernetes DIR`) called in this process: what
is copied where, with which modes, the ConfigMap, and each refusal. Written to kill the mutants
mutmut left alive (docs/mutation.md): tests/fleet/test_fleet_input.py checks the refusals
through a subprocess, where no mutant runs. The expected values come from the shipped tree
(rmpeer/integrations/), the module's docstrings (every name checked before any is written,
issue 47 row 11; the ConfigMap from the shipped npd/ alone), the hook scripts' own role (a
script the cluster runs is executable, a file it reads is not), and rmpeer.machine.writable's
and rmpeer.safewrite's refusals; every one is spelled out."""

from __future__ import annotations

import errno
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest
import yaml

from rmpeer.errors import ConfigError
from rmpeer.fleet import files

pytestmark = pytest.mark.offline

SLURM = ["rmpeer-healthcheck", "rmpeer-prolog", "check_rmpeer.nhc"]
KUBERNETES = ["npd/rmpeer-npd.sh", "npd/rmpeer-p2p.json", "rmpeer-rbac.yaml", "rmpeer-sweep-job.yaml"]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def tree(root: Path, names: dict) -> Path:
    """A stand-in for a shipped folder: {relative name: text}."""
    for name, text in names.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


# ---- what is copied, in which order, with which mode ------------------------------------------

def test_the_slurm_files_are_written_whole_executable_where_slurm_runs_them(tmp_path):
    """The prolog and HealthCheckProgram are run by slurmd: 0755. NHC sources its .nhc check:
    0644. Each exactly, whatever the umask (0 in a hook: never group- or world-writable)."""
    old = os.umask(0)
    try:
        written = files.copy_out("slurm", tmp_path / "out")
    finally:
        os.umask(old)
    out = tmp_path / "out"
    assert written == [out / "check_rmpeer.nhc", out / "rmpeer-healthcheck", out / "rmpeer-prolog"]
    shipped = Path(files.__file__).resolve().parents[1] / "integrations" / "slurm"
    for name in SLURM:
        assert (out / name).read_bytes() == (shipped / name).read_bytes()
    assert {p.name: oct(mode(p)) for p in written} == {"check_rmpeer.nhc": "0o644", "rmpeer-healthcheck": "0o755",
                                                       "rmpeer-prolog": "0o755"}


def test_the_kubernetes_files_are_the_manifests_the_npd_plugin_and_its_configmap(tmp_path):
    """npd/ first (its name sorts before "rmpeer-"), then the two manifests, then the ConfigMap.
    The plugin script NPD runs: 0755; its JSON config and the manifests kubectl reads: 0644."""
    out = tmp_path / "out"
    written = files.copy_out("kubernetes", out)
    assert written == [out / n for n in KUBERNETES] + [out / "rmpeer-npd-configmap.yaml"]
    shipped = Path(files.__file__).resolve().parents[1] / "integrations" / "kubernetes"
    for name in KUBERNETES:
        assert (out / name).read_bytes() == (shipped / name).read_bytes()
    assert {str(p.relative_to(out)): oct(mode(p)) for p in written} == {
        "npd/rmpeer-npd.sh": "0o755", "npd/rmpeer-p2p.json": "0o644", "rmpeer-rbac.yaml": "0o644",
        "rmpeer-sweep-job.yaml": "0o644", "rmpeer-npd-configmap.yaml": "0o644"}
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == sorted(
        [*KUBERNETES, "rmpeer-npd-configmap.yaml"])


def test_a_shipped_tree_is_copied_by_name_leaving_out_names_of_underscore_or_dot(tmp_path, monkeypatch):
    """A private or hidden name ("_x", ".x", a __pycache__ folder) is not shipped, and does not
    stop the copy of the names after it. Files of .json, .yaml or .nhc are read, not run."""
    src = tree(tmp_path / "src", {".hidden": "h", "_private": "p", "__pycache__/x.pyc": "c", "b-hook": "#!/bin/sh\n",
                                  "a.json": "{}", "c.yaml": "a: 1\n", "d.nhc": "x\n", "sub/z-hook": "#!/bin/sh\n",
                                  "sub/_also": "no", "sub/.also": "no", "E.JSON": "{}"})
    monkeypatch.setattr(files, "shipped", lambda engine: src)
    out = tmp_path / "out"
    written = files.copy_out("slurm", out)
    assert written == [out / "E.JSON", out / "a.json", out / "b-hook", out / "c.yaml", out / "d.nhc",
                       out / "sub" / "z-hook"]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == [
        "E.JSON", "a.json", "b-hook", "c.yaml", "d.nhc", "sub", "sub/z-hook"]
    modes = {str(p.relative_to(out)): oct(mode(p)) for p in written}
    # ".JSON" is not ".json": a name's ending is compared as it is spelt
    assert modes == {"E.JSON": "0o755", "a.json": "0o644", "b-hook": "0o755", "c.yaml": "0o644",
                     "d.nhc": "0o644", "sub/z-hook": "0o755"}


def test_a_shipped_tree_inside_a_zip_is_copied_as_one_on_disk(tmp_path, monkeypatch):
    """importlib.resources gives a zipfile.Path for a package imported from a zip: its entries
    are ordered by their names (as on disk), not compared as paths (zipfile.Path has no order)."""
    archive = tmp_path / "rmpeer.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name in ("slurm/rmpeer-prolog", "slurm/check_rmpeer.nhc", "slurm/rmpeer-healthcheck"):
            z.writestr(name, f"# {name}\n")
    monkeypatch.setattr(files, "shipped", lambda engine: zipfile.Path(archive, "slurm/"))
    out = tmp_path / "out"
    assert files.copy_out("slurm", out) == [out / "check_rmpeer.nhc", out / "rmpeer-healthcheck", out / "rmpeer-prolog"]
    assert (out / "rmpeer-prolog").read_text() == "# slurm/rmpeer-prolog\n"


def test_copying_again_replaces_the_files_an_earlier_copy_wrote(tmp_path):
    """An admin updating the hooks runs `fleet files` into the same DIR: each regular file
    there is replaced (it is a file, not a folder, that is checked at each name)."""
    out = tmp_path / "out"
    files.copy_out("kubernetes", out)
    (out / "npd" / "rmpeer-npd.sh").write_text("old\n")
    (out / "rmpeer-npd-configmap.yaml").write_text("old\n")
    files.copy_out("kubernetes", out)
    shipped = Path(files.__file__).resolve().parents[1] / "integrations" / "kubernetes"
    assert (out / "npd" / "rmpeer-npd.sh").read_bytes() == (shipped / "npd" / "rmpeer-npd.sh").read_bytes()
    assert (out / "rmpeer-npd-configmap.yaml").read_text().startswith("# node-problem-detector")


# ---- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["Slurm", "k8s", "", "kubernetes "])
def test_an_engine_not_shipped_is_refused_in_one_line_naming_both(engine, tmp_path):
    with pytest.raises(ConfigError) as e:
        files.copy_out(engine, tmp_path / "out")
    assert str(e.value) == f"{engine!r}: one of slurm, kubernetes"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("engine, name", [("slurm", "rmpeer-prolog"), ("kubernetes", "npd/rmpeer-p2p.json"),
                                          ("kubernetes", "rmpeer-npd-configmap.yaml")])
def test_a_link_planted_at_any_name_refuses_the_copy_before_anything_is_written(engine, name, tmp_path):
    """The ConfigMap's name too (it is written after the tree): refused by the option's name,
    `fleet files DIR`, with the link's path and where it points; nothing written, the target
    untouched (issue 47, row 11)."""
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    out = tmp_path / "out"
    (out / name).parent.mkdir(parents=True)
    (out / name).symlink_to(victim)
    with pytest.raises(ConfigError) as e:
        files.copy_out(engine, out)
    assert str(e.value) == (f"fleet files DIR {out / name}: refused: it is a symbolic link (to {victim}); "
                            "rmpeer writes only regular files")
    assert [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()] == []
    assert victim.read_text() == "root's file\n"


def refused_at_a_linked_folder(tmp_path, folder: str, copy) -> None:
    """A link planted at DIR/folder to a folder elsewhere: `copy(DIR)` refused in one line
    naming it, nothing written there or in DIR."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / folder).symlink_to(elsewhere)
    with pytest.raises(ConfigError) as e:
        copy(out)
    assert str(e.value) == (f"fleet files DIR {out / folder}: refused: it is a symbolic link (to {elsewhere}); "
                            "name the folder itself")
    assert list(elsewhere.iterdir()) == [] and [p.name for p in out.iterdir()] == [folder]


def test_a_link_planted_at_the_npd_folder_is_refused_before_anything_is_written(tmp_path):
    """npd/ is checked with the files' names, before any is written: a link there is refused as
    an output folder, and nothing reaches the folder it points to, nor DIR."""
    refused_at_a_linked_folder(tmp_path, "npd", lambda out: files.copy_out("kubernetes", out))


def test_a_link_at_a_sub_folder_named_after_a_file_refuses_the_copy_before_that_file(tmp_path):
    """A shipped tree of a hook "a-hook" and a folder "z/" (named after it): a link planted at
    z is refused before a-hook is written, so a copy is never half installed (issue 47, row 11)."""
    src = tree(tmp_path / "src", {"a-hook": "#!/bin/sh\n", "z/plugin.json": "{}\n"})
    refused_at_a_linked_folder(tmp_path, "z", lambda out: files._copy_tree(src, out, []))


def test_a_folder_planted_at_a_files_name_is_refused_as_a_folder(tmp_path):
    out = tmp_path / "out"
    (out / "rmpeer-prolog").mkdir(parents=True)
    with pytest.raises(ConfigError) as e:
        files.copy_out("slurm", out)
    assert str(e.value) == f"fleet files DIR {out / 'rmpeer-prolog'} is a directory: name the file to write"
    assert [p for p in out.rglob("*") if p.is_file()] == []


def test_slurm_checks_only_the_names_it_writes(tmp_path):
    """A link at the ConfigMap's name (a Kubernetes file) does not stop the Slurm copy, which
    never writes there."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "rmpeer-npd-configmap.yaml").symlink_to(tmp_path / "elsewhere")
    assert [p.name for p in files.copy_out("slurm", out)] == ["check_rmpeer.nhc", "rmpeer-healthcheck",
                                                              "rmpeer-prolog"]
    assert (out / "rmpeer-npd-configmap.yaml").is_symlink()


def test_a_write_that_fails_is_one_line_naming_the_folder_and_why(tmp_path, monkeypatch):
    """The disk full at the first file (write_file's OSError, stood in for)."""
    def full(path, data, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(files, "write_file", full)
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as e:
        files.copy_out("kubernetes", out)
    assert str(e.value) == f"{out}: cannot write there (No space left on device)"


# ---- the ConfigMap -----------------------------------------------------------------------------

def test_the_configmap_is_the_shipped_npd_folder_as_node_problem_detector_mounts_it(tmp_path):
    """Its three comment lines say where to mount it and the flag to add (the plugin config's
    rule runs /config/plugin/rmpeer-npd.sh: the mount is /config/plugin); then apiVersion,
    kind, metadata and data in that order (as Kubernetes' own manifests are written, not
    sorted); named rmpeer-npd in kube-system (node-problem-detector's namespace) with the
    label of the other shipped manifests; data: each shipped npd file by name."""
    out = tmp_path / "out"
    files.copy_out("kubernetes", out)
    text = (out / "rmpeer-npd-configmap.yaml").read_text()
    npd = Path(files.__file__).resolve().parents[1] / "integrations" / "kubernetes" / "npd"
    config = json.loads((npd / "rmpeer-p2p.json").read_text())
    assert os.path.dirname(config["rules"][0]["path"]) == "/config/plugin"
    assert text.splitlines()[:3] == [
        "# node-problem-detector: rmpeer's passive custom plugin. Mount it at /config/plugin in",
        "# NPD's DaemonSet and add --config.custom-plugin-monitor=/config/plugin/rmpeer-p2p.json.",
        "# Generated by `rmpeer fleet files kubernetes` from npd/.",
    ]
    assert [line for line in text.splitlines()[3:] if line and not line.startswith(" ")] == [
        "apiVersion: v1", "kind: ConfigMap", "metadata:", "data:"]
    assert text.splitlines()[5:10] == ["metadata:", "  name: rmpeer-npd", "  namespace: kube-system", "  labels:",
                                       "    app.kubernetes.io/name: rmpeer"]
    doc = yaml.safe_load(text)
    job = next(d for d in yaml.safe_load_all((out / "rmpeer-sweep-job.yaml").read_text())
               if d and d.get("kind") == "Job")
    assert doc["metadata"] == {"name": "rmpeer-npd", "namespace": "kube-system",
                               "labels": {"app.kubernetes.io/name": job["metadata"]["labels"]["app.kubernetes.io/name"]}}
    assert doc["metadata"]["labels"] == {"app.kubernetes.io/name": "rmpeer"}
    assert list(doc["data"]) == ["rmpeer-npd.sh", "rmpeer-p2p.json"]
    assert doc["data"] == {"rmpeer-npd.sh": (npd / "rmpeer-npd.sh").read_text(),
                           "rmpeer-p2p.json": (npd / "rmpeer-p2p.json").read_text()}


def test_the_configmap_holds_the_regular_files_of_npd_but_private_and_hidden_ones(tmp_path):
    npd = tree(tmp_path / "npd", {"b.sh": "b\n", "a.json": "{}\n", "_private": "p", ".hidden": "h",
                                  "sub/c": "c", "zz/d": "d"})
    doc = yaml.safe_load(files.npd_configmap(npd))
    assert list(doc["data"]) == ["a.json", "b.sh"]
    assert doc["data"] == {"a.json": "{}\n", "b.sh": "b\n"}


def test_the_configmap_of_an_npd_folder_inside_a_zip(tmp_path):
    archive = tmp_path / "rmpeer.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("npd/z.sh", "z\n")
        z.writestr("npd/a.json", "{}\n")
    doc = yaml.safe_load(files.npd_configmap(zipfile.Path(archive, "npd/")))
    assert list(doc["data"]) == ["a.json", "z.sh"]


# ---- main_files ------------------------------------------------------------------------------

def test_main_files_prints_each_file_written_one_a_line_and_exits_0(tmp_path, capsys):
    assert files.main_files("slurm", str(tmp_path / "out")) == 0
    out = tmp_path / "out"
    assert capsys.readouterr().out.splitlines() == [str(out / n) for n in
                                                    ("check_rmpeer.nhc", "rmpeer-healthcheck", "rmpeer-prolog")]


def test_main_files_shows_a_control_character_of_the_destination_as_its_escape(tmp_path, capsys):
    dest = tmp_path / "a\x1b[2Jb"
    assert files.main_files("slurm", str(dest)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{tmp_path}/a\\x1b[2Jb/check_rmpeer.nhc" and len(lines) == 3
    assert (dest / "rmpeer-prolog").is_file()
