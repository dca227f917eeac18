"""A QA walk of the merged product (issue 30 items 4 and 5), in the real window with the real service and store:
the "Included again" banner leaves with what it names; a removal the app finishes by itself is shown; the
embedding panel shows one count of vectors, not two that contradict."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.gui.status_bar import StatusBar
from desktop_memory.jobs import EMBED
from tests.support.folders import quick_watch_settings, word_notes

from .helpers import drop, wait_job


def _included_banner(w) -> bool:
    return any(t.startswith("Included again") for t in w.banners.texts())


def test_the_included_again_banner_leaves_when_the_library_it_names_is_removed(qtbot, make_window, hash_factory,
                                                                            tmp_path):
    root = tmp_path / "notes"
    big = word_notes(root / "big", 4, "walrus")
    word_notes(root / "small", 2, "kiwi")
    w = make_window(hash_factory, quick_watch_settings(tmp_path / "db" / "lib.db"))
    drop(w, [root])
    wait_job(qtbot, w)
    w.remove_paths([str(big)])  # a folder inside the library: excluded
    qtbot.waitUntil(lambda: w.svc.exclusions() == [str(big)], timeout=20000)
    wait_job(qtbot, w)
    drop(w, [big])  # named again by the person: included again, and the banner says so
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: _included_banner(w), timeout=10000)

    w.remove_paths([str(root)])  # the whole library leaves: the banner naming part of it goes too
    qtbot.waitUntil(lambda: w.svc.roots() == [], timeout=20000)
    qtbot.waitUntil(lambda: not _included_banner(w), timeout=10000)


def _killed_removal(svc, folder: Path) -> None:
    """What a `desktop-memory remove FOLDER` killed at once leaves: the intent recorded, every document still there."""
    import threading

    stopped = threading.Event()
    stopped.set()
    assert svc.remove_paths([str(folder)], cancel=stopped, exclude=True) == 0
    assert svc.pending_removals() == [str(folder)]


def _status_lines(w) -> list[str]:
    said: list[str] = []
    w.status.messageChanged.connect(lambda text: said.append(text) if text else None)
    return said


def test_a_removal_finished_at_start_is_shown_with_its_folder_and_count_then_done(qtbot, make_window, hash_factory,
                                                                                tmp_path, monkeypatch):
    gone = word_notes(tmp_path / "gone", 20, "walrus")
    keep = word_notes(tmp_path / "keep", 2, "kiwi")
    settings = quick_watch_settings(tmp_path / "db" / "lib.db")
    svc = hash_factory(settings)
    svc.index_paths([gone, keep])
    _killed_removal(svc, gone)
    svc.close()

    said: list[str] = []  # every status-bar line from the window's first moment (it opens the library at once)
    show = StatusBar.showMessage
    monkeypatch.setattr(StatusBar, "showMessage", lambda self, text, *a: (said.append(text), show(self, text, *a)))
    w = make_window(hash_factory, settings)
    qtbot.waitUntil(lambda: any(t.startswith("Finished the removal of “gone”") for t in said), timeout=20000)
    assert any(t.startswith("Finishing the removal of “gone”") for t in said), said
    assert "20 documents removed" in next(t for t in said if t.startswith("Finished the removal")), said
    assert w.svc.pending_removals() == [] and w.svc.search_outcome("walrus", backend="keyword").results == []


def test_a_removal_another_process_left_unfinished_is_shown_when_the_window_finishes_it(qtbot, make_window,
                                                                                        hash_factory, tmp_path):
    gone = word_notes(tmp_path / "gone", 20, "walrus")
    keep = word_notes(tmp_path / "keep", 2, "kiwi")
    settings = quick_watch_settings(tmp_path / "db" / "lib.db")
    w = make_window(hash_factory, settings)
    drop(w, [gone, keep])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: w.watch.ready and w.watch.watching_count() == 2, timeout=20000)
    said = _status_lines(w)
    other = hash_factory(settings)  # `desktop-memory remove gone`, killed: another process, the same library
    _killed_removal(other, gone)
    other.close()
    qtbot.waitUntil(lambda: any(t.startswith("Finished the removal of “gone”") for t in said), timeout=40000)
    assert any(t.startswith("Finishing the removal of “gone” (20 files)") for t in said), said
    assert w.svc.pending_removals() == []


def test_the_embedding_panel_shows_one_count_of_vectors(qtbot, make_window, tmp_path):
    """Before: the panel's line said "48 of 464" and its detail "semantic: 12/40 chunks embedded" (the library's
    Stats, read at another moment): two counts that contradict, at once."""
    from desktop_memory.models import IndexProgress
    from desktop_memory.service import MemoryService
    from tests.support.paced import PacedEmbedder, write_folder

    office = write_folder(tmp_path / "office", files=40, word="quokka")
    w = make_window(lambda settings: MemoryService(settings, embedder=PacedEmbedder(0.3)))
    drop(w, [office])
    qtbot.waitUntil(lambda: w.index_jobs.current is not None and w.index_jobs.current.kind == EMBED, timeout=30000)
    qtbot.waitUntil(lambda: w.progress.vectors is not None, timeout=20000)
    w.index_jobs.progress.emit(IndexProgress(phase="embed", chunks_to_embed=464, chunks_embedded=48))
    line, detail = w.progress.current.text(), w.progress.detail.text()
    assert "48 of 464 this run" in line, line
    assert "semantic: 48/464 chunks embedded" in detail, detail  # the same count, at the same moment
    w.cancel_job()
    wait_job(qtbot, w)
