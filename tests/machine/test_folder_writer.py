"""rmpeer.safewrite.FolderWriter: a report's many files written in one real folder, never
through a link and never into anything but a regular file (the Allure results of a run)."""

import os
import stat

import pytest

from rmpeer.safewrite import FolderWriter, UnsafeTarget


def test_each_file_holds_what_was_written_with_its_mode_whatever_the_umask(tmp_path):
    old = os.umask(0)        # a Slurm hook runs with umask 0: the mode must not come from it
    try:
        with FolderWriter(tmp_path) as files:
            a = files.write("a-result.json", '{"name": "a"}')
            b = files.write("b.txt", b"\x00\x01")
    finally:
        os.umask(old)
    assert (a.read_text(), b.read_bytes()) == ('{"name": "a"}', b"\x00\x01")
    assert {stat.S_IMODE(os.lstat(p).st_mode) for p in (a, b)} == {0o644}
    assert sorted(os.listdir(tmp_path)) == ["a-result.json", "b.txt"]      # no temporary file left


def test_a_link_planted_at_a_name_is_refused_and_what_it_points_to_is_untouched(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "x-result.json").symlink_to(victim)
    with FolderWriter(out) as files, pytest.raises(UnsafeTarget, match="symbolic link"):
        files.write("x-result.json", "planted over?")
    assert victim.read_text() == "keep" and (out / "x-result.json").is_symlink()


def test_a_dangling_link_is_never_followed_to_make_a_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x-result.json").symlink_to(tmp_path / "made-through-the-link")
    with FolderWriter(out) as files, pytest.raises(UnsafeTarget):
        files.write("x-result.json", "{}")
    assert not (tmp_path / "made-through-the-link").exists()


def test_a_fifo_at_a_name_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "x-result.json")
    with FolderWriter(tmp_path) as files, pytest.raises(UnsafeTarget, match="FIFO"):
        files.write("x-result.json", "{}")


def test_an_earlier_regular_file_at_a_name_is_replaced(tmp_path):
    (tmp_path / "executor.json").write_text("an earlier run's")
    with FolderWriter(tmp_path) as files:
        files.write("executor.json", "this run's")
    assert (tmp_path / "executor.json").read_text() == "this run's"


def test_the_folder_itself_a_link_is_never_opened(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real)
    with pytest.raises(OSError):
        FolderWriter(tmp_path / "out")
    assert os.listdir(real) == []


@pytest.mark.parametrize("name", ["../up.json", "sub/x.json", "", ".", ".."])
def test_a_name_that_is_not_one_file_in_the_folder_is_refused(tmp_path, name):
    with FolderWriter(tmp_path) as files, pytest.raises(ValueError):
        files.write(name, "{}")
    assert os.listdir(tmp_path) == [] and not (tmp_path.parent / "up.json").exists()


def test_a_write_cut_short_leaves_no_half_file(tmp_path, monkeypatch):
    def cut(fd, data):
        raise KeyboardInterrupt       # a signal raised as an exception mid-write
    with FolderWriter(tmp_path) as files:
        monkeypatch.setattr(os, "write", cut)
        with pytest.raises(KeyboardInterrupt):
            files.write("x-result.json", "{}")
        monkeypatch.undo()
    assert os.listdir(tmp_path) == []
