"""QA walk (issue 30 item 4, the removal question): removing a library folder's row says the folder leaves the
library and comes back only by adding it again; a folder inside one says Include again brings it back. Before, both
said "until you choose Include again", which a library folder never offers (it is unregistered, not excluded)."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.config import Settings, WatchSettings
from tests.support.folders import word_notes

from .helpers import drop, wait_job


def _question_for(qtbot, w, folder: Path) -> str:
    """Select the folder's row, ask to remove it, read the question's explanation, and say Cancel."""
    lib = w.library
    idx = next(i for i in lib.model.folder_indexes() if lib.model.node(i).path == str(folder))
    sm = lib.tree.selectionModel()
    lib.tree.setCurrentIndex(idx)
    sm.select(idx, sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)
    lib.ask_remove()
    qtbot.waitUntil(lambda: lib.confirm_box is not None and lib.confirm_box.isVisible(), timeout=5000)
    box = lib.confirm_box
    text = box.informativeText()
    box.reject()
    qtbot.waitUntil(lambda: lib.confirm_box is None, timeout=5000)
    return text


def test_the_removal_question_says_how_each_kind_of_folder_comes_back(qtbot, make_window, hash_factory, tmp_path):
    root = tmp_path / "notes"
    word_notes(root, 2, "kiwi")
    inner = word_notes(root / "inner", 2, "walrus")
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "db" / "lib.db"),
                                           watch=WatchSettings(quiet_ms=100, max_wait_ms=1000)))
    drop(w, [root])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: w.watch.ready and w.watch.watching_count() == 1, timeout=20000)
    w.tabs.setCurrentIndex(1)
    lib = w.library
    qtbot.waitUntil(lambda: {lib.model.node(i).path for i in lib.model.folder_indexes()} >= {str(root), str(inner)},
                    timeout=10000)

    of_root = _question_for(qtbot, w, root)
    assert "Include again" not in of_root and "adding it again" in of_root, of_root
    of_inner = _question_for(qtbot, w, inner)
    assert "Include again" in of_inner, of_inner
    assert w.svc.roots() == [str(root)] and len(w.svc.documents()) == 4  # Cancel removed nothing
