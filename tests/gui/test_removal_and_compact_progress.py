"""Issue 26 item 2 in the window: a big removal shows its progress in the status bar and counts as done (Library,
results) once its documents are gone, while their text is erased after; Compact and erase shows its percentage
and cancels when pressed again (real MemoryService, real SQLite, real widgets)."""

from __future__ import annotations

from desktop_memory import library_writes as service_mod
from desktop_memory.config import Settings
from desktop_memory.store import erase
from tests.support.paced import write_folder

from .helpers import drop, wait_job


def test_a_big_removal_shows_progress_and_is_done_before_its_erasing_ends(qtbot, make_window, hash_factory,
                                                                         tmp_path, monkeypatch):
    monkeypatch.setattr(service_mod, "REMOVE_SLICE", 4)
    monkeypatch.setattr(erase, "MERGE_PAGES", 1)
    keep = write_folder(tmp_path / "keep", files=5)
    gone = write_folder(tmp_path / "gone", files=40, word="zebra")
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "db" / "g.db")))
    drop(w, [keep, gone])
    wait_job(qtbot, w)
    lines: list[str] = []
    removed: list[int] = []
    w.index_jobs.removing.connect(lines.append)
    w.index_jobs.removed.connect(lambda n, _paths: removed.append(n))
    w.tabs.setCurrentIndex(1)
    w.library.remove_requested.emit([str(gone)])
    qtbot.waitUntil(lambda: removed == [40], timeout=20000)
    assert any(t.startswith("Removing ") and " of 40 documents" in t for t in lines), lines
    qtbot.waitUntil(lambda: any("erased" in t for t in lines), timeout=20000)
    assert removed == [40], "one 'removed' per removal, when its documents were gone"
    assert not w.svc.search_outcome("zebra", backend="keyword").results and w.svc.check() == []


def test_compact_and_erase_shows_its_percentage(qtbot, make_window, hash_factory, tmp_path, monkeypatch):
    monkeypatch.setattr(erase, "COMPACT_HANDLER_STEPS", 50)
    monkeypatch.setattr(erase, "PROGRESS_EVERY_S", 0.0)
    keep = write_folder(tmp_path / "keep", files=30)
    w = make_window(hash_factory, Settings(db_path=str(tmp_path / "db" / "g.db")))
    drop(w, [keep])
    wait_job(qtbot, w)
    texts: list[str] = []
    w.library._compact_progress.connect(lambda _pc: texts.append(w.library.compact_btn.text()))
    with qtbot.waitSignal(w.library.compact_finished, timeout=30000) as sig:
        w.library.compact_btn.click()
    assert sig.args[1] == "info" and "Compacted the library" in sig.args[0]
    assert any(t.startswith("Compacting… ") and " % (press to cancel)" in t for t in texts), texts
    assert w.library.compact_btn.text() == "Compact and erase" and w.library.compact_btn.isEnabled()
