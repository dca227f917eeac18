"""The window on a library that is still embedding (issue 20): the real window, the real service and store, the real
watcher on real folders; the embedder takes real time per slice (tests/support/paced.py) so the embedding is long
enough to do things beside it. Each test is one finding of the walk-through, and failed before the scheduler."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from desktop_memory.config import Settings, WatchSettings
from desktop_memory.jobs import EMBED
from desktop_memory.service import MemoryService
from tests.support.paced import PacedEmbedder, write_folder

from .helpers import wait_job

SETTINGS = Settings(watch=WatchSettings(quiet_ms=100, max_wait_ms=1000))


def _library(factory, *folders: Path) -> None:
    """The folders are in the library, read without vectors (``index --no-embed``): the window embeds them."""
    pre = factory(SETTINGS)
    for folder in folders:
        pre.index_paths([folder], embed=False)
    pre.close()


def _embedding_window(make_window, factory, qtbot):
    w = make_window(factory, SETTINGS)
    qtbot.waitUntil(lambda: w.watch.ready, timeout=30000)
    qtbot.waitUntil(lambda: w.index_jobs.current is not None and w.index_jobs.current.kind == EMBED,
                    timeout=20000)  # the interrupted embedding resumed by itself (once)
    qtbot.waitUntil(lambda: w.svc.stats().vectors > 0, timeout=20000)
    return w


def _keyword(w, word: str) -> list[str]:
    return [r.source for r in w.svc.search_outcome(word, backend="keyword").results]


def _status(w) -> str:
    return " | ".join(lbl.text() for lbl in w.statusBar().findChildren(QLabel))


def test_a_saved_edit_is_searchable_while_the_embedding_runs(make_window, paced_factory, qtbot, tmp_path):
    notes = write_folder(tmp_path / "notes", files=120)
    _library(paced_factory, notes)
    w = _embedding_window(make_window, paced_factory, qtbot)
    edited = notes / "note007.md"
    t0 = time.monotonic()
    edited.write_text(edited.read_text() + "\n\nkumquatvelvet appears here\n", encoding="utf-8")
    qtbot.waitUntil(lambda: _keyword(w, "kumquatvelvet") == [str(edited)], timeout=30000)
    took = time.monotonic() - t0
    assert w.svc.stats().pending_vectors > 0, "the embedding was still running"
    assert took < 3.0, f"the edit took {took:.1f} s to become searchable while embedding"
    vectors = w.svc.stats().vectors
    qtbot.waitUntil(lambda: w.svc.stats().vectors > vectors + 16, timeout=20000)  # the embedding goes on by itself
    w.cancel_job()
    wait_job(qtbot, w)


def test_cancel_stops_the_embedding_and_nothing_restarts_it(make_window, paced_factory, qtbot, tmp_path):
    notes = write_folder(tmp_path / "notes", files=120)
    _library(paced_factory, notes)
    w = _embedding_window(make_window, paced_factory, qtbot)
    assert w.progress.isVisible() and "dropped" not in w.progress.current.full_text()  # item 6: not "0 items"
    w.progress.cancel_btn.click()
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=3000)  # within one slice (0.2 s) and its delivery
    vectors = w.svc.stats().vectors
    # a watch batch after the Cancel is indexed, but does not restart the embedding
    (notes / "fresh.md").write_text("# Fresh\n\nlongan orchard\n", encoding="utf-8")
    qtbot.waitUntil(lambda: bool(_keyword(w, "longan")), timeout=20000)
    qtbot.wait(2500)  # deliberate: time for a (wrong) restart of the embedding; the count must not move
    st = w.svc.stats()
    assert st.vectors == vectors and st.pending_vectors > 0, "the vector count moved after Cancel"
    assert w.last_summary is not None and w.last_summary.cancelled
    qtbot.waitUntil(lambda: "Embedding paused:" in w.progress.detail.text(), timeout=10000)
    assert f"{st.pending_vectors:,} passages without vectors" in w.progress.detail.text() or \
        f"{st.chunks - st.vectors:,} passages without vectors" in w.progress.detail.text()
    assert w.progress.resume_btn.isVisible()
    w.progress.resume_btn.click()  # Resume: the person asks, so it runs again
    qtbot.waitUntil(lambda: w.svc.stats().vectors > vectors + 16, timeout=20000)
    w.cancel_job()
    wait_job(qtbot, w)


def test_removal_is_quick_and_final(make_window, paced_factory, qtbot, tmp_path):
    keep = write_folder(tmp_path / "keep", files=100)
    office = write_folder(tmp_path / "office", files=30, word="quokka")
    _library(paced_factory, keep, office)
    w = _embedding_window(make_window, paced_factory, qtbot)
    qtbot.waitUntil(lambda: "watching 2 folders" in _status(w), timeout=10000)
    t0 = time.monotonic()
    w.remove_paths([str(office)])
    qtbot.waitUntil(lambda: not _keyword(w, "quokka"), timeout=10000)
    took = time.monotonic() - t0
    assert took < 3.0, f"the removal took {took:.1f} s while embedding"
    assert w.svc.stats().pending_vectors > 0, "the embedding was still running"
    qtbot.waitUntil(lambda: "watching 1 folder" in _status(w), timeout=5000)
    # a change in the removed folder, a pause and resume of the watch: nothing brings it back
    (office / "late.md").write_text("# Late\n\nquokka again\n", encoding="utf-8")
    w.act_pause_watching.trigger()
    w.act_pause_watching.trigger()
    qtbot.waitUntil(lambda: "watching 1 folder" in _status(w), timeout=10000)
    qtbot.wait(2000)  # deliberate: time for the watch to (wrongly) pick the change up; nothing must come back
    assert not _keyword(w, "quokka") and str(office) not in w.svc.roots()
    # removed by another process (the CLI beside the window): no longer watched either
    other = MemoryService(SETTINGS, embedder=PacedEmbedder(0))
    other.remove_paths([str(keep)])
    other.close()
    qtbot.waitUntil(lambda: w.watch.folder_states() == {} and "watching 1 folder" not in _status(w), timeout=10000)
    (keep / "after.md").write_text("# After\n\nwombat burrow\n", encoding="utf-8")
    qtbot.wait(2000)  # deliberate: time for the watch to (wrongly) read the new file; it must not
    assert not _keyword(w, "wombat")
    w.cancel_job()


def test_counts_and_words_are_true(make_window, paced_factory, qtbot, tmp_path):
    notes = write_folder(tmp_path / "notes", files=12)
    w = make_window(paced_factory, SETTINGS)
    t0 = time.monotonic()
    w.add_paths([str(notes)])
    summary = wait_job(qtbot, w)
    wall = time.monotonic() - t0
    assert summary.indexed == 12 and not summary.cancelled
    assert 0.7 * wall <= summary.elapsed_s <= wall, (summary.elapsed_s, wall)  # the burst's real time
    # one vector count on screen: the panel's and the status bar's come from the same Stats
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.pending_vectors == 0, timeout=10000)
    # F5 on an unchanged folder reads nothing again; re-reading every file is its own action
    w.add_paths([str(notes)])
    again = wait_job(qtbot, w)
    assert (again.indexed, again.unchanged) == (0, 12)
    w.reindex_all(force=True)  # Library → Re-read every file
    qtbot.waitUntil(lambda: w.last_summary is not again and w.last_summary.indexed == 12, timeout=60000)
    wait_job(qtbot, w)


def test_switching_the_database_stops_the_old_work_and_says_so(make_window, paced_factory, qtbot, tmp_path):
    import dataclasses

    notes = write_folder(tmp_path / "notes", files=60)
    _library(paced_factory, notes)
    w = _embedding_window(make_window, paced_factory, qtbot)
    old = w.svc
    before = w.last_summary
    w.apply_settings(dataclasses.replace(w.settings, db_path=str(tmp_path / "other" / "new.db")))
    qtbot.waitUntil(lambda: w.svc is not None and w.svc is not old, timeout=20000)
    assert "stopped embedding" in " ".join(w.banners.texts()), w.banners.texts()
    qtbot.wait(1000)  # deliberate: time for the old job's report to (wrongly) arrive; it must not
    assert w.last_summary is before, "the old library's job was reported on the new one"
    assert not w.progress.isVisible()


@pytest.mark.parametrize("tray", [False, True])
def test_cold_quick_start_shows_the_popup(qtbot, hash_factory, tray):
    """`desktop-memory-gui --quick` with no app running: the popup shows and stays, with or without a tray."""
    from PySide6.QtWidgets import QApplication

    from desktop_memory.config import settings_path
    from desktop_memory.gui.app import present
    from desktop_memory.gui.desktop_integration import DesktopShell
    from desktop_memory.gui.main_window import MainWindow

    w = MainWindow(Settings(), service_factory=hash_factory, settings_path=settings_path())
    qtbot.addWidget(w)
    shell = DesktopShell(QApplication.instance(), w, None, tray=False)
    if tray:
        shell.tray = object()  # type: ignore[assignment]  # a desktop with a tray: the window stays in it
    present(w, shell, quick=True)
    qtbot.waitUntil(lambda: shell.popup is not None and shell.popup.isVisible(), timeout=5000)
    qtbot.wait(500)  # deliberate: the window being placed must not take the popup away
    assert shell.popup.isVisible()
    assert w.isMinimized() if not tray else not w.isVisible()
    shell.tray = None
    shell.close()
    w.close()


def test_a_burst_that_only_embedded_says_what_it_embedded(qtbot, make_window, hash_factory):
    """The Done/Cancelled line of an embedding-only burst counts passages embedded, not zeros about reading."""
    from desktop_memory.models import IndexSummary

    w = make_window(hash_factory)
    w.progress.finish(IndexSummary(chunks_embedded=288, cancelled=True, elapsed_s=21.0))
    text = w.progress.current.full_text()
    assert text == "288 passages embedded" and "0 indexed" not in text
    w.progress.finish(IndexSummary(indexed=2, chunks_added=5, chunks_embedded=5, elapsed_s=1.0))
    assert w.progress.current.full_text().startswith("2 indexed · 0 unchanged")
