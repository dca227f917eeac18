"""Issue 30 item 4 in the window (pytest-qt, the real MemoryService, store and watcher): removing a folder row
removes the folder, whatever is expanded or selected, and nothing brings it back (an edit, the next start).

Before: a library folder whose rows were open (a library under 300 files opens expanded) removed its files but kept
the folder, so two edits brought two files back; a subfolder shown as a top row (its parent holds only
subfolders) came back on the next touch, and the next start read all of it again."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.support.folders import quick_watch_settings, word_notes

from .helpers import drop, wait_job


def _paths(w) -> set[str]:
    return {d.path for d in w.svc.documents()}


def _select_folder_and_delete(qtbot, w, folder: Path) -> str:
    """What a person does: click the folder's row, press Delete, press Enter on the question (returned)."""
    lib = w.library
    idx = next(i for i in lib.model.folder_indexes() if lib.model.node(i).path == str(folder))
    sm = lib.tree.selectionModel()
    lib.tree.setCurrentIndex(idx)
    sm.select(idx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
    lib.tree.setFocus()
    qtbot.keyClick(lib.tree, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: lib.confirm_box is not None and lib.confirm_box.isVisible(), timeout=5000)
    question = lib.confirm_box.text()
    qtbot.keyClick(lib.confirm_box, Qt.Key.Key_Return)  # the default button: Remove
    return question


def _wait_watching(qtbot, w, folders: int) -> None:
    qtbot.waitUntil(lambda: w.watch.ready and w.watch.watching_count() == folders, timeout=20000)


def test_an_expanded_library_folder_removed_by_its_row_stays_removed(qtbot, make_window, hash_factory, tmp_path):
    gone = word_notes(tmp_path / "gone", 20, "walrus")
    keep = word_notes(tmp_path / "keep", 2, "kiwi")
    w = make_window(hash_factory, quick_watch_settings(tmp_path / "db" / "lib.db"))
    drop(w, [gone, keep])
    wait_job(qtbot, w)
    _wait_watching(qtbot, w, 2)
    w.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: w.library.row_count_visible() == 22, timeout=10000)  # opened expanded: every file row
    question = _select_folder_and_delete(qtbot, w, gone)
    qtbot.waitUntil(lambda: not any(p.startswith(str(gone)) for p in _paths(w)), timeout=20000)
    assert w.svc.roots() == [str(keep)], "the library folder itself left the library"
    _wait_watching(qtbot, w, 1)

    (gone / "walrus-00.md").write_text("# walrus\n\nwalrus edited\n")
    (gone / "walrus-01.md").write_text("# walrus\n\nwalrus edited too\n")
    (keep / "kiwi-00.md").write_text("# kiwi\n\nkiwi sentinel\n")  # the control: this edit must arrive
    qtbot.waitUntil(lambda: bool(w.svc.search_outcome("sentinel", backend="keyword").results), timeout=20000)
    assert w.svc.search_outcome("walrus", backend="keyword").results == [] and _paths(w) == {str(keep / "kiwi-00.md"),
                                                                             str(keep / "kiwi-01.md")}
    assert "the folder “gone” (20 files)" in question  # it said it removes the folder, not 20 files


def test_a_subfolder_shown_as_a_top_row_is_excluded_and_stays_out_after_a_restart(qtbot, make_window, hash_factory,
                                                                                 tmp_path):
    root = tmp_path / "notes"  # holds only subfolders: the Library shows them as top rows
    big = word_notes(root / "big", 30, "walrus")
    small = word_notes(root / "small", 3, "kiwi")
    settings = quick_watch_settings(tmp_path / "db" / "lib.db")
    w = make_window(hash_factory, settings)
    drop(w, [root])
    wait_job(qtbot, w)
    _wait_watching(qtbot, w, 1)
    w.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: w.library.row_count_visible() == 33, timeout=10000)
    _select_folder_and_delete(qtbot, w, big)
    qtbot.waitUntil(lambda: not any(p.startswith(str(big)) for p in _paths(w)), timeout=20000)
    assert w.svc.roots() == [str(root)]

    (big / "walrus-00.md").write_text("# walrus\n\nwalrus touched\n")
    (small / "kiwi-00.md").write_text("# kiwi\n\nkiwi sentinel\n")  # the control: this edit must arrive
    qtbot.waitUntil(lambda: bool(w.svc.search_outcome("sentinel", backend="keyword").results), timeout=20000)
    assert w.svc.search_outcome("walrus", backend="keyword").results == []
    assert w.svc.exclusions() == [str(big)]
    with qtbot.waitSignal(w.index_jobs.finished, timeout=30000):
        w.reindex_all()  # Library → Re-index all (F5 over every folder): the removed folder is not read again
    wait_job(qtbot, w)
    assert w.svc.search_outcome("walrus", backend="keyword").results == []

    lib = w.library  # the removed folder is listed as excluded, with Include again
    qtbot.waitUntil(lambda: any(lib.model.node(i).excluded for i in lib.model.indexes()), timeout=10000)
    row = next(i for i in lib.model.indexes() if lib.model.node(i).excluded)
    assert row.siblingAtColumn(1).data() == "excluded" and lib.model.node(row).path == str(big)
    w.close()

    (big / "walrus-02.md").write_text("# walrus\n\nwalrus while closed\n")
    w2 = make_window(hash_factory, settings)  # the next start: its catch-up reads nothing of the removed folder
    _wait_watching(qtbot, w2, 1)  # ready: its catch-up at start is done
    (small / "kiwi-01.md").write_text("# kiwi\n\nkiwi second sentinel\n")
    qtbot.waitUntil(lambda: bool(w2.svc.search_outcome("second", backend="keyword").results), timeout=20000)
    assert w2.svc.search_outcome("walrus", backend="keyword").results == []
    assert not any(p.startswith(str(big)) for p in _paths(w2))

    w2.tabs.setCurrentIndex(1)
    lib = w2.library
    qtbot.waitUntil(lambda: any(lib.model.node(i).excluded for i in lib.model.indexes()), timeout=10000)
    row = next(i for i in lib.model.indexes() if lib.model.node(i).excluded)
    sm = lib.tree.selectionModel()
    sm.select(row, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
    assert lib.include_btn.isVisible() and lib.include_btn.isEnabled()
    lib.include_btn.click()  # Include again: read like a drop
    qtbot.waitUntil(lambda: len([p for p in _paths(w2) if p.startswith(str(big))]) == 30, timeout=30000)
    assert w2.svc.exclusions() == []
    qtbot.waitUntil(lambda: any(t.startswith("Included again: big") for t in w2.banners.texts()), timeout=10000)
