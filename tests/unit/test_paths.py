"""desktop_memory.paths: the one normalisation, "inside a folder" rule and index range, on POSIX and Windows paths.

The rules are string rules (a stored path may be gone, or come from another machine), so Windows paths are
tested here as backslash strings on any OS, and ``normalise`` with ``ntpath`` passed as the path flavour.
"""

from __future__ import annotations

import ntpath
import os
import posixpath

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from desktop_memory.paths import below, inside_any, is_inside, normalise, prefix_range, separator


@pytest.mark.parametrize(("path", "folder", "inside"), [
    ("/lib/notes/a.md", "/lib/notes", True),
    ("/lib/notes", "/lib/notes", True),
    ("/lib/notes/a.md", "/lib/notes/", True),  # a trailing separator on the folder
    ("/lib/notes", "/lib/notes/", True),
    ("/lib/notes/", "/lib/notes", True),
    ("/lib/notes2/a.md", "/lib/notes", False),  # a sibling sharing a prefix
    ("/lib/notes-old/a.md", "/lib/notes", False),
    ("/lib/not", "/lib/notes", False),
    ("/lib", "/lib/notes", False),  # a parent is not inside its child
    ("/Lib/notes/a.md", "/lib/notes", False),  # case-sensitive, like the store's path index
    ("/anything/at/all", "/", True),  # the root holds everything
    ("/", "/", True),
    ("/lib/notes\\x.md", "/lib/notes\\", False),  # POSIX: a backslash is part of a name, never stripped
    ("/lib/notes\\/x.md", "/lib/notes\\", True),
])
def test_inside_on_posix_paths(path: str, folder: str, inside: bool) -> None:
    assert is_inside(path, folder) is inside


@pytest.mark.parametrize(("path", "folder", "inside"), [
    ("C:\\notes\\a.md", "C:\\notes", True),
    ("C:\\notes", "C:\\notes", True),
    ("C:\\notes\\a.md", "C:\\notes\\", True),
    ("C:\\notes", "C:\\notes\\", True),
    ("C:\\notes2\\a.md", "C:\\notes", False),  # the sibling that shares a prefix
    ("C:\\notes-old\\a.md", "C:\\notes", False),
    ("C:\\notes\\deep\\er\\a.md", "C:\\notes", True),
    ("C:\\anything\\a.md", "C:\\", True),  # a drive's root
    ("C:\\", "C:\\", True),
    ("D:\\notes\\a.md", "C:\\", False),
    ("\\\\server\\share\\a.md", "\\\\server\\share", True),  # UNC
    ("\\\\server\\share2\\a.md", "\\\\server\\share", False),
    ("C:\\Notes\\a.md", "C:\\notes", False),  # case-sensitive: the stored name is the name
])
def test_inside_on_windows_paths(path: str, folder: str, inside: bool) -> None:
    assert is_inside(path, folder) is inside


def test_separator_follows_the_folder_not_the_machine() -> None:
    assert separator("C:\\notes") == "\\"
    assert separator("/home/a") == "/"
    assert separator("/home/odd\\name") == "/"  # POSIX path with a backslash in a name
    assert below("C:\\notes\\") == "C:\\notes\\"
    assert below("C:\\") == "C:\\"
    assert below("/") == "/"
    assert below("/a/b//") == "/a/b/"


def test_inside_any() -> None:
    assert inside_any("/a/b/c", ["/x", "/a/b"])
    assert not inside_any("/a/bc", ["/x", "/a/b"])
    assert not inside_any("/a/b", [])


def test_normalise_expands_home_folds_dots_and_keeps_links(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert normalise("~/notes/../docs/") == os.path.join(str(tmp_path), "docs")
    assert normalise("rel/a.md") == os.path.join(str(tmp_path), "rel", "a.md")
    assert normalise(tmp_path / "x" / ".." / "y") == os.path.join(str(tmp_path), "y")  # a PathLike
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert normalise(tmp_path / "alias") == os.path.join(str(tmp_path), "alias")  # not resolved


def test_normalise_with_windows_rules(monkeypatch) -> None:
    monkeypatch.setenv("USERPROFILE", "C:\\Users\\ann")
    assert normalise("C:\\notes\\..\\docs\\a.md", ntpath) == "C:\\docs\\a.md"
    assert normalise("C:/notes//sub/", ntpath) == "C:\\notes\\sub"  # forward slashes become backslashes
    assert normalise("~\\notes", ntpath) == "C:\\Users\\ann\\notes"
    assert normalise("C:\\", ntpath) == "C:\\"
    # '..' is folded before the inside test: the folder's sibling is not smuggled in
    assert not is_inside(normalise("C:\\notes\\..\\notes2\\a.md", ntpath), "C:\\notes")
    assert not is_inside(normalise("/lib/notes/../notes2/a.md", posixpath), "/lib/notes")


@pytest.mark.parametrize(("folder", "lo", "hi"), [
    ("/x/notes", "/x/notes/", "/x/notes0"),
    ("/x/notes/", "/x/notes/", "/x/notes0"),
    ("/", "/", "0"),
    ("C:\\notes", "C:\\notes\\", "C:\\notes]"),
    ("C:\\", "C:\\", "C:]"),
])
def test_prefix_range_bounds(folder: str, lo: str, hi: str) -> None:
    assert prefix_range(folder) == (lo, hi)


@pytest.mark.parametrize("folder", ["/x/notes", "C:\\x\\notes"])
def test_prefix_range_leaves_out_the_sibling_notes2(folder: str) -> None:
    sep = separator(folder)
    lo, hi = prefix_range(folder)
    inside = [folder + sep + "a.md", folder + sep + "sub" + sep + "b.md"]
    outside = [folder, folder + "2" + sep + "a.md", folder + "-old" + sep + "a.md", folder + "2", folder + " x",
               folder[:-1]]
    assert all(lo <= p < hi for p in inside)
    assert not any(lo <= p < hi for p in outside)


_names = st.text(alphabet="ab2-. /\\é", max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["/x/notes", "/x/notes/", "/", "C:\\n", "C:\\"]), _names)
def test_prefix_range_is_is_inside_below_the_folder(folder: str, tail: str) -> None:
    """The store's range scan and the Python rule agree on every path (the folder itself aside)."""
    path = folder + tail
    lo, hi = prefix_range(folder)
    assume(path not in (folder, lo, lo[:-1]))  # the folder itself: the store reads it by equality
    assert (lo <= path < hi) == is_inside(path, folder)
