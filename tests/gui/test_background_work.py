"""Issue 30 item 5: work the app does by itself is visible (the real window, the real service and store, the real
watcher on real folders; the embedder takes real time per slice, tests/support/paced.py). Each test is one finding
of "What we saw" 5 and failed on main 36f197c."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from desktop_memory.jobs import EMBED
from desktop_memory.service import MemoryService
from tests.support.folders import quick_watch_settings
from tests.support.paced import PacedEmbedder, write_folder

from .helpers import wait_job

PAUSE_KEY = "embedding-paused"  # the pause banner (gui/pause_banner.py)


def _pause_banner(w):
    return next((b for b in w.banners.banners() if b.key == PAUSE_KEY), None)


def _cancel_action(w):
    return next(a for a in w.menuBar().actions()[3].menu().actions() if a.text() == "&Cancel indexing")


def _library(db: Path, *folders: Path, embed: bool, paused: bool = False) -> None:
    pre = MemoryService(quick_watch_settings(db), embedder=PacedEmbedder(0.0))
    for folder in folders:
        pre.index_paths([folder], embed=embed)
    if paused:
        pre.set_embedding_paused(True)  # the person's Cancel in an earlier session, kept in the library
    pre.close()


def test_the_catch_up_after_a_restart_shows_the_panel_with_cancel(make_window, paced_factory, qtbot, tmp_path):
    """Files added while the app was closed: the start's catch-up reads and embeds them; that embedding is shown
    (the panel, Cancel enabled, Library ▸ Cancel indexing enabled) and Cancel stops it."""
    db = tmp_path / "db" / "lib.db"
    notes = write_folder(tmp_path / "notes", files=5)
    _library(db, notes, embed=True)
    write_folder(tmp_path / "notes" / "new", files=40, word="catchup")  # written while the app was closed
    w = make_window(paced_factory, quick_watch_settings(db))
    qtbot.waitUntil(lambda: w.svc.stats().pending_vectors > 0, timeout=30000)  # the catch-up read them
    qtbot.waitUntil(lambda: w.progress.isVisible() and w.progress.cancel_btn.isVisible(), timeout=10000)
    assert w.svc.stats().pending_vectors > 0, "shown while the embedding runs, not after"
    assert w.progress.cancel_btn.isEnabled() and _cancel_action(w).isEnabled() and w.is_indexing()
    w.progress.cancel_btn.click()
    qtbot.waitUntil(lambda: not w.is_busy(), timeout=5000)
    assert w.index_jobs.paused and w.last_summary is not None and w.last_summary.cancelled
    # the panel says the pause (with its Resume); once it is closed, the banner says it instead
    qtbot.waitUntil(w.progress.resume_btn.isVisible, timeout=10000)
    qtbot.waitUntil(lambda: _pause_banner(w) is None, timeout=5000)  # (one banner for one pause: the panel's)
    w.progress.close_btn.click()
    qtbot.waitUntil(lambda: _pause_banner(w) is not None, timeout=10000)
    assert "Embedding is paused" in _pause_banner(w).text


def test_a_stored_pause_shows_its_banner_after_a_restart_and_f5_keeps_it(make_window, paced_factory, qtbot,
                                                                         tmp_path):
    db = tmp_path / "db" / "lib.db"
    notes = write_folder(tmp_path / "notes", files=20)
    _library(db, notes, embed=False, paused=True)
    w = make_window(paced_factory, quick_watch_settings(db))
    qtbot.waitUntil(lambda: _pause_banner(w) is not None, timeout=10000)
    banner = _pause_banner(w)
    pending = w.svc.stats().pending_vectors
    assert f"Embedding is paused (you pressed Cancel): {pending} passages without vectors" in banner.text
    w.tabs.setCurrentIndex(1)  # the Library shows it too (the banners sit below the tabs)
    assert banner.isVisible()
    assert w.svc.stats().vectors == 0, "nothing resumed behind the person's back"
    # F5 in the Library reads what changed; it does not end the pause
    (notes / "note003.md").write_text("# Edited\n\nrambutan harvest\n", encoding="utf-8")
    w.library.reindex_requested.emit([str(notes)])
    qtbot.waitUntil(lambda: bool(w.svc.search_outcome("rambutan", backend="keyword").results), timeout=20000)
    wait_job(qtbot, w)
    qtbot.wait(1000)  # deliberate: time for a (wrong) embedding to start after the read
    assert w.index_jobs.paused and w.svc.embedding_paused() and w.svc.stats().vectors == 0
    qtbot.waitUntil(lambda: _pause_banner(w) is not None, timeout=10000)
    # Resume (the banner's button) ends the pause: the vectors are made, the banner goes
    button = next(b for b in _pause_banner(w).buttons if b.text() == "Resume")
    button.click()
    qtbot.waitUntil(lambda: w.svc.stats().vectors > 0, timeout=20000)
    assert not w.index_jobs.paused
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: _pause_banner(w) is None, timeout=10000)


def test_a_database_round_trip_offers_resume_and_a_switch_shows_a_pause(make_window, paced_factory, qtbot,
                                                                        tmp_path):
    """Library A embeds (resumed at start); a switch to B stops it; back on A, its passages without vectors are
    offered Resume. B holds a stored pause: switching to it shows the pause banner."""
    a_db, b_db = tmp_path / "a" / "a.db", tmp_path / "b" / "b.db"
    _library(a_db, write_folder(tmp_path / "notes-a", files=60), embed=False)
    _library(b_db, write_folder(tmp_path / "notes-b", files=3, word="berry"), embed=False, paused=True)
    w = make_window(paced_factory, quick_watch_settings(a_db))
    qtbot.waitUntil(lambda: w.index_jobs.current is not None and w.index_jobs.current.kind == EMBED,
                    timeout=20000)  # the interrupted embedding resumed by itself (once)
    old = w.svc
    w.apply_settings(dataclasses.replace(w.settings, db_path=str(b_db)))
    qtbot.waitUntil(lambda: w.svc is not None and w.svc is not old and w.stats is not None
                    and w.stats.db_path == str(b_db), timeout=20000)
    qtbot.waitUntil(lambda: _pause_banner(w) is not None and "paused" in _pause_banner(w).text, timeout=10000)
    old = w.svc
    w.apply_settings(dataclasses.replace(w.settings, db_path=str(a_db)))
    qtbot.waitUntil(lambda: w.svc is not None and w.svc is not old, timeout=20000)
    qtbot.waitUntil(lambda: _pause_banner(w) is not None and "still without vectors" in _pause_banner(w).text,
                    timeout=10000)
    missing = w.svc.stats().pending_vectors
    assert missing > 0 and f"{missing:,} passages still without vectors" in _pause_banner(w).text
    next(b for b in _pause_banner(w).buttons if b.text() == "Resume").click()
    qtbot.waitUntil(lambda: w.svc.stats().pending_vectors < missing, timeout=20000)
    assert w.progress.isVisible() and w.progress.cancel_btn.isEnabled()
    w.cancel_job()
    wait_job(qtbot, w)


def test_a_drop_waits_its_turn_while_another_process_writes_and_says_so(make_window, paced_factory, qtbot,
                                                                         tmp_path):
    """Issue 30 item 6 in the window: another desktop-memory process holds the write lock (longer than the notice
    delay): the status bar says the drop is waiting for it, and the drop is indexed once the lock is free."""
    import threading

    import apsw

    db = tmp_path / "db" / "lib.db"
    _library(db, write_folder(tmp_path / "notes", files=2), embed=True)
    w = make_window(paced_factory, quick_watch_settings(db))
    said: list[str] = []
    w.status.messageChanged.connect(said.append)
    holder = apsw.Connection(str(db))
    holder.execute("begin immediate")
    threading.Timer(4.5, lambda: holder.execute("commit")).start()
    try:
        from .helpers import drop

        drop(w, [write_folder(tmp_path / "more", files=2, word="feijoa")])
        qtbot.waitUntil(lambda: any(t.startswith("Waiting for another desktop-memory process to finish writing to")
                                    for t in said), timeout=10000)
        qtbot.waitUntil(lambda: bool(w.svc.search_outcome("feijoa", backend="keyword").results), timeout=20000)
        wait_job(qtbot, w)
    finally:
        qtbot.waitUntil(lambda: not holder.in_transaction, timeout=10000)
        holder.close()
    assert not [t for t in w.banners.texts() if "busy" in t], w.banners.texts()
