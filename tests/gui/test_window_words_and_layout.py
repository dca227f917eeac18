"""Issue 23 §6: words and layout of the window, each on the real widgets (screenshots: docs/GUI.md)."""

from __future__ import annotations

import shutil

from PySide6.QtWidgets import QApplication

from desktop_memory.gui import desktop
from desktop_memory.gui.desktop_integration import DesktopShell
from desktop_memory.gui.drop_zone import formats_sentence
from desktop_memory.gui.results_model import ResultDelegate
from desktop_memory.gui.search_view import KIND_LABELS
from desktop_memory.gui.window_size import SMALL_SCREEN, TITLE_BAR
from desktop_memory.models import Location, SearchResult

from .conftest import PDFS
from .fake_service import FakeService
from .helpers import drop, search, wait_job

OLLAMA_DOWN = ("Semantic search is off: Cannot reach Ollama at http://localhost:11434: is `ollama serve` running? "
               "([Errno 111] Connection refused; 3 attempts) Keyword search still works.")


def _problem_folder(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    for i in range(6):
        shutil.copy(PDFS / "poppler-742-0-fuzzed.pdf", d / f"fuzzed-{i}.pdf")
    for i in range(8):
        (d / f"blob-{i}.bin").write_bytes(b"\x00\x01")
        (d / f"note-{i}.md").write_text(f"# Note {i}\n\nSome words about python {i}.\n", encoding="utf-8")
    return d


def test_minimum_size_fits_a_small_screen_with_everything_showing(qtbot, make_window, docs_dir, tmp_path):
    w = make_window(FakeService)
    w.resize(SMALL_SCREEN[0], SMALL_SCREEN[1] - TITLE_BAR)
    drop(w, [docs_dir, _problem_folder(tmp_path)])
    summary = wait_job(qtbot, w)
    w.progress.finish(summary)  # the summary with its problem list stays up
    search(qtbot, w, "python")
    for i, level in enumerate(("warning", "info", "info")):
        w.banners.show_message(OLLAMA_DOWN if i == 0 else f"Notice {i}", level, key=f"k{i}")
    QApplication.processEvents()
    hint = w.minimumSizeHint()
    assert hint.width() <= SMALL_SCREEN[0] and hint.height() <= SMALL_SCREEN[1] - TITLE_BAR, hint


def test_banners_are_compact_and_say_the_ollama_fix_once(qtbot, make_window):
    w = make_window(FakeService)
    w.resize(1280, 800)
    w.host.embedder_failed.emit(OLLAMA_DOWN)  # as the service host says it when Ollama is down
    for i in range(3):
        w.banners.show_message(f"Notice {i}", "info", key=f"n{i}")
    QApplication.processEvents()
    text = next(b.text for b in w.banners.banners() if b.key == "embedder")
    assert text.count("ollama serve") == 1 and "`" not in text and "Errno" not in text
    assert len(w.banners.banners()) == 4 and len(w.banners.shown()) == 2
    assert [b.key for b in w.banners.shown()] == ["embedder", "n2"]  # the warning stays in sight, then the newest
    assert w.banners.more.isVisibleTo(w) and w.banners.more.text() == "+2 more"
    line = w.banners.fontMetrics().height()
    warning, notice = w.banners.shown()
    assert notice.label.height() < 2 * line and notice.height() <= 2 * line + 4  # one line of text: one line high
    assert warning.label.height() == warning.label.heightForWidth(warning.label.width())  # wrapped in full
    assert w.banners.height() <= warning.height() + notice.height() + 4
    w.resize(1024, 560)  # a short window shows the most severe one only
    assert [b.key for b in w.banners.shown()] == ["embedder"] and w.banners.more.text() == "+3 more"
    w.resize(1280, 800)
    w.banners.more.click()
    assert len(w.banners.shown()) == 4
    warning.buttons[1].click()  # Settings…: straight to the Embedder page
    assert w._settings_dialog.stack.currentWidget().spec.key == "embedder"
    w._settings_dialog.reject()
    w.host.embedder_failed.emit(OLLAMA_DOWN)
    w.banners.dismiss("n2")
    w.banners.dismiss("n1")
    assert [b.key for b in w.banners.shown()] == ["n0", "embedder"] and not w.banners.more.isVisibleTo(w)


def test_a_transient_message_is_not_cut_by_the_permanent_widgets(qtbot, make_window):
    w = make_window(FakeService)
    w.resize(1024, 560)
    w.show()
    counts, semantic = w.status.counts, w.status.semantic
    assert counts.isVisible()
    w.status.showMessage("Copied 6 passages (987 tokens) to the clipboard: paste it into your chat.", 5000)
    assert not counts.isVisible() and not semantic.isVisible()
    w.status.clearMessage()
    assert counts.isVisible() and semantic.isVisible()


def test_folder_status_column_shows_the_whole_status(qtbot, make_window, tmp_path):
    w = make_window(FakeService)
    drop(w, [_problem_folder(tmp_path)])
    wait_job(qtbot, w)
    w.tabs.setCurrentIndex(1)
    lib = w.library
    qtbot.waitUntil(lambda: any("failed" in r for r in lib.row_texts()), timeout=10000)
    folder = next(lib._folders())
    status = str(folder.siblingAtColumn(1).data())
    assert "6 failed" in status and "8 skipped" in status
    assert lib.tree.header().sectionSize(1) >= lib.tree.fontMetrics().horizontalAdvance(status) + 8


def test_cancel_indexing_is_enabled_only_while_a_job_runs(qtbot, make_window, docs_dir):
    w = make_window(lambda s: FakeService(s, file_delay=0.15))
    cancel = next(a for a in w.actions() if a.text() == "&Cancel indexing")
    assert not cancel.isEnabled()
    drop(w, [docs_dir])
    qtbot.waitUntil(w.is_indexing, timeout=5000)
    assert cancel.isEnabled()
    wait_job(qtbot, w)
    assert not cancel.isEnabled()


def test_empty_state_names_every_format(qtbot, make_window):
    w = make_window(FakeService)
    hint = w.empty_state.hint.text()
    assert formats_sentence() in hint
    for kind, label in KIND_LABELS:
        if kind:
            assert label.lower() in hint.lower(), label


def test_quick_search_is_in_the_menus_without_a_tray(qtbot, make_window):
    w = make_window(FakeService)
    shell = DesktopShell(QApplication.instance(), w, tray=False)
    assert shell.tray is None
    action = next(a for a in w.actions() if a.text() == "Q&uick search…")
    file_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&File")
    assert action in file_menu.actions()
    action.trigger()
    assert shell.popup is not None and shell.popup.isVisible()
    shell.close()  # the popup's worker is done before the window goes


def test_open_with_no_handler_points_to_the_open_with_setting(qtbot, make_window, docs_dir, monkeypatch):
    w = make_window(FakeService)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    search(qtbot, w, "python")
    monkeypatch.setattr(desktop, "open_at", lambda *a, **k: "")
    monkeypatch.setattr(desktop, "reveal_path", lambda p: False)
    w.actions_.open_row(0)
    banner = next(b for b in w.banners.banners() if b.key == "open")
    assert "Open text at line with" in banner.text and "Settings ▸ Opening files" in banner.text
    setup = next(b for b in banner.buttons if b.text() == "Set up opening…")
    setup.click()
    dlg = w._settings_dialog
    assert dlg.stack.currentWidget().spec.key == "desktop"
    assert dlg.editor("desktop.open_with").widget.isVisibleTo(dlg)
    dlg.reject()
    w.actions_.reveal_file(str(docs_dir / "async.md"))
    banner = next(b for b in w.banners.banners() if b.key == "open")
    assert "Open text at line with" in banner.text and [b.text() for b in banner.buttons] == ["Set up opening…"]


def test_weak_results_are_greyed_not_struck_through():
    weak = SearchResult(chunk_id=1, doc_id=1, rank=1, score=0.1, source="/a.md", kind="markdown", text="t",
                        location=Location(), lanes={}, strength="weak")
    assert ResultDelegate.greyed(weak, included=True)  # weak: greyed even when ticked
    strong = SearchResult(chunk_id=2, doc_id=1, rank=2, score=0.2, source="/b.md", kind="markdown", text="t",
                          location=Location(), lanes={})
    assert not ResultDelegate.greyed(strong, included=True) and ResultDelegate.greyed(strong, included=False)
    import inspect

    assert "setStrikeOut" not in inspect.getsource(ResultDelegate)
