"""`watch FOLDER` on a folder inside a library folder (issue 22: such a folder is part of the library, never a
second, nested library folder): it is watched as named, and the library keeps one folder."""

from __future__ import annotations

from desktop_memory.watch import STATE_WATCHING

from .conftest import keyword_hits, make_tree, wait_for


def test_a_named_folder_inside_a_library_folder_is_watched(tmp_path, svc, start_watcher):
    root = make_tree(tmp_path / "docs", {"a.md": "# A\n\napricot\n", "sub/b.md": "# B\n\nbanana\n"})
    svc.index_paths([root])
    sub = root / "sub"
    watcher, rec = start_watcher(folders=[str(sub)])
    assert watcher.folder_states() == {str(sub): STATE_WATCHING}
    (sub / "c.md").write_text("# C\n\nzanzibar clove\n")
    wait_for(lambda: keyword_hits(svc, "zanzibar") == [str(sub / "c.md")], what="a new file in the named folder")
    assert svc.roots() == [str(root)], "no nested library folder"
    assert not rec.of("error")
