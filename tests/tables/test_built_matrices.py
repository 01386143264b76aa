"""The shipped matrices parsed when the wheel is built (setup.py, rmpeer/tables/load.py BUILT):
a run takes that parse only for bytes that are the shipped ones, and parses anything else."""

import marshal
import os
import shutil

import pytest
import yaml

from rmpeer.paths import matrices_dir
from rmpeer.tables import load

FROM_WHEEL = bool(os.environ.get("RMPEER_CI_WHEEL"))    # .ci/run: the installed wheel is under test


@pytest.fixture
def fresh_caches():
    load._built.cache_clear()
    load._parse.cache_clear()
    yield
    load._built.cache_clear()
    load._parse.cache_clear()


def plain_parse(path) -> dict:
    """The reference: libyaml's (or PyYAML's) safe loader, not rmpeer's."""
    return yaml.load(path.read_bytes(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@pytest.mark.skipif(not (FROM_WHEEL or load.BUILT.is_file()),
                    reason="the matrices parsed at build are in the wheel, which CI installs and tests "
                           "(RMPEER_CI_WHEEL=1); a checkout parses them at each run")
def test_the_wheel_holds_every_shipped_matrix_as_its_yaml_says(fresh_caches):
    built = marshal.loads(load.BUILT.read_bytes())
    shipped = sorted(matrices_dir().glob("*.yaml"))
    assert len(built) == len(shipped) >= 9
    for path in shipped:
        assert load.load_yaml(path) == plain_parse(path), path.name
        assert load.load_yaml(path) is load._built()[load._digest(path.read_bytes())], path.name


def test_bytes_that_are_not_the_built_ones_are_parsed_from_their_yaml(tmp_path, monkeypatch, fresh_caches):
    folder = tmp_path / "matrices"
    shutil.copytree(matrices_dir(), folder)
    layouts = folder / "layouts.yaml"
    # a build's parse of the shipped bytes, told apart from any YAML by a key no matrix has
    built = tmp_path / "_matrices.marshal"
    built.write_bytes(marshal.dumps({load._digest(layouts.read_bytes()): {"parsed at build": True}}))
    monkeypatch.setattr(load, "BUILT", built)
    assert load.load_yaml(layouts) == {"parsed at build": True}

    layouts.write_bytes(layouts.read_bytes() + b"\n# an operator's edit\n")
    os.utime(layouts, ns=(1, 1))          # a new mtime: load_yaml's own cache is keyed by it
    assert load.load_yaml(layouts) == plain_parse(layouts) != {"parsed at build": True}


@pytest.mark.parametrize("content", [b"", b"not marshal", marshal.dumps(["a list"])],
                         ids=["empty", "not-marshal", "a-list"])
def test_a_built_file_that_cannot_be_read_leaves_every_matrix_parsed(tmp_path, monkeypatch, fresh_caches, content):
    built = tmp_path / "_matrices.marshal"
    built.write_bytes(content)
    monkeypatch.setattr(load, "BUILT", built)
    path = matrices_dir() / "channel.yaml"
    assert load.load_yaml(path) == plain_parse(path)


def test_a_matrix_that_cannot_be_read_is_a_matrix_error_naming_it(tmp_path, monkeypatch, fresh_caches):
    import errno
    from pathlib import Path

    from rmpeer.errors import MatrixError

    path = tmp_path / "layouts.yaml"
    path.write_text("a: 1\n")

    def failing(self):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(Path, "read_bytes", failing)     # a disk error, which root meets too
    with pytest.raises(MatrixError, match="cannot be read as YAML: .*Input/output error") as raised:
        load.load_yaml(path)
    assert str(path) in str(raised.value)
