"""Daily-driver polish in the window: shortcuts, focus, progress, counts, context paths, weak matches,
highlights, Library, Settings, About (issue 12). Fake service where speed matters, the real one where the
point is the real data path. The tests that need only results take ``inline_tasks`` (the window's task runners run
inline); the Ollama tester's focus and the job queue are about timing and keep the threaded runners."""

from __future__ import annotations

import dataclasses
import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop_memory.config import EmbedderSettings
from desktop_memory.model_servers import ModelServers, ServerAnswer
from desktop_memory.models import FileOutcome, IndexProgress, IndexSummary, Stats

from .fake_service import FakeService
from .helpers import WeakFake, drop, search, wait_job


def test_no_ambiguous_shortcuts_and_quit_help_work(qtbot, make_window, inline_tasks):
    from .key_checks import shortcut_clashes

    w = make_window(FakeService)
    assert shortcut_clashes(w) == {}
    qtbot.keyClick(w, Qt.Key.Key_F1)
    assert any("Keyboard" in t for t in w.banners.texts())  # F1 is not ambiguous any more
    qtbot.keyClick(w, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=5000)


def test_ctrl_k_down_down_space_toggles_a_result_not_the_query(qtbot, make_window, inline_tasks, docs_dir):
    w = make_window(FakeService)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    qtbot.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    search(qtbot, w, "python")
    assert w.results_model.rowCount() >= 3
    qtbot.keyClick(w.search_bar.box, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)  # no emacs kill-line
    assert w.search_bar.box.text() == "python"
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Down)
    assert QApplication.focusWidget() is w.results_view
    row = w.results_view.currentIndex().row()
    assert row == 2
    with qtbot.waitSignal(w.context_ready, timeout=5000):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
    assert w.search_bar.box.text() == "python" and w.results_model.rowCount() >= 3
    assert not w.results_model.is_included(row)
    assert w.results_model.result(row).chunk_id not in {i.chunk_id for i in w.context_panel.report.items}
    qtbot.keyClick(w.results_view, Qt.Key.Key_Escape)  # Esc: back to the search box
    assert QApplication.focusWidget() is w.search_bar.box
    # Ctrl+E → ↓ → Space toggles in the context list, from the search box too
    qtbot.keyClick(w.search_bar.box, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is w.context_panel.items
    qtbot.keyClick(w.context_panel.items, Qt.Key.Key_Down)
    assert w.context_panel.items.currentIndex().row() == 1
    with qtbot.waitSignal(w.context_ready, timeout=5000):
        qtbot.keyClick(w.context_panel.items, Qt.Key.Key_Space)
    assert not w.results_model.is_included(1)


def test_progress_detail_line_on_every_job_and_bar_never_drops():
    from desktop_memory.gui.progress_panel import BAR_MAX, ProgressPanel

    p = ProgressPanel()
    p.show()
    p.set_vectors(0, 40, paused=False)  # the library's count (Stats): the one vector count on screen
    for job in range(2):
        p.start(1)
        assert not p.detail.isHidden(), f"job {job + 1} has no detail line"
        p.update_progress(IndexProgress("extract", 4, 4, "/x/a.md", chunks_written=40))
        after_read = p.bar.value()
        p.update_progress(IndexProgress("embed", 4, 4, "", chunks_written=40, chunks_to_embed=40, chunks_embedded=0))
        assert p.bar.value() >= after_read > 0, "the bar fell back when embedding started"
        assert "semantic: 0/40 chunks embedded" in p.detail.text()
        p.update_progress(IndexProgress("embed", 4, 4, "", chunks_written=40, chunks_to_embed=40, chunks_embedded=10))
        p.finish(IndexSummary(indexed=4, chunks_added=40, cancelled=job == 1))
    # the cancelled job: the bar stays where it stopped, and the panel says what is missing and how to resume
    assert p.bar.value() < BAR_MAX
    assert p.title.text().startswith("Cancelled")
    assert "Embedding paused: 40 passages without vectors" in p.detail.text() and p.resume_btn.isVisible()
    p.set_vectors(9, 40, paused=True)  # the library's real count, as the status bar shows it
    assert "Embedding paused: 31 passages without vectors" in p.detail.text()
    resumed = []
    p.resume_requested.connect(lambda: resumed.append(1))
    p.resume_btn.click()
    assert resumed and not p.resume_btn.isVisible()


def test_done_summary_lists_failures_first_case_insensitive():
    from desktop_memory.gui.progress_panel import ProgressPanel

    p = ProgressPanel()
    outs = [FileOutcome("/d/b.pdf", "skipped", "no text"), FileOutcome("/d/Z.pdf", "failed", "corrupt"),
            FileOutcome("/d/a.PDF", "skipped", "no text"), FileOutcome("/d/C.pdf", "skipped", "no text")]
    p.finish(IndexSummary(skipped=3, failed=1, outcomes=outs))
    names = [p.problems.topLevelItem(i).text(0) for i in range(p.problems.topLevelItemCount())]
    assert names == ["Z.pdf", "a.PDF", "b.pdf", "C.pdf"]
    assert p.problems_btn.isChecked()  # a failure opens the list


def test_results_header_and_status_bar_tell_the_same_count(qtbot, make_window, inline_tasks, docs_dir):
    w = make_window(FakeService)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    search(qtbot, w, "python")
    w._stats_arrived(Stats({"indexed": 6}, 4572, 4510, 62, "x.db", 1, "m", 8))
    assert "4,510/4,572" in w.notes.text() and "4,510/4,572" in w.status.semantic.text()
    assert "join as vectors arrive" not in w.notes.text()  # no job runs: it says how to add them instead
    w._stats_arrived(Stats({"indexed": 6}, 4572, 4572, 0, "x.db", 1, "m", 8))
    assert "4,510" not in w.notes.text() and "all chunks embedded" in w.status.semantic.text()


def test_weak_matches_say_so_and_stay_out_of_the_context(qtbot, make_window, inline_tasks, docs_dir):
    w = make_window(WeakFake)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "zzpython")
    n = w.results_model.rowCount()
    assert n > 0
    assert w.results_info.text().startswith("No strong matches")
    assert w.results_model.included_results() == []
    assert w.context_panel.text() == "" and w.context_panel.weak_btn.isVisible()
    with qtbot.waitSignal(w.context_ready, timeout=5000):
        w.context_panel.weak_btn.click()  # the way to include them
    assert len(w.context_panel.report.items) + len(w.context_panel.report.dropped) == n
    assert w.context_panel.text().startswith("[Source: ")
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "python")  # a strong query: everything included as before
    assert not w.results_info.text().startswith("No strong") and not w.context_panel.weak_btn.isVisible()
    assert len(w.results_model.included_results()) == w.results_model.rowCount()


def test_copied_context_names_files_relative_to_the_folder_and_highlights_are_fts5s(
        qtbot, make_window, inline_tasks, hash_factory, docs_dir, opened):
    w = make_window(hash_factory)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    w.search_bar.set_backend("keyword")
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "how do the async functions run")
    block = w.context_panel.text()
    assert block.startswith("[Source: docs/") and str(docs_dir) not in block  # default path style: relative
    r = w.results_model.result(0)
    marked = w.results_model.marked_text(0)
    from desktop_memory.gui.formatting import MARK_END, MARK_START

    lit = {m.split(MARK_END)[0].lower() for m in marked.split(MARK_START)[1:]}
    assert lit and lit <= {"async", "functions", "function", "run", "running", "runs"}, lit
    assert w.preview.highlights >= 1 and "```" not in w.preview.browser.toPlainText()  # rendered Markdown
    # Enter in the list opens at the line (command when one is configured; no shell)
    w.apply_settings(dataclasses.replace(w.settings, desktop=dataclasses.replace(
        w.settings.desktop, open_with="myeditor +{line} {path}")))
    w.results_view.setFocus()
    qtbot.keyClick(w.results_view, Qt.Key.Key_Return)
    assert opened[-1] == ("start", ["myeditor", f"+{r.location.line_start}", r.source])


def test_library_empty_filter_message_and_status_tooltip(qtbot, make_window, inline_tasks, docs_dir, broken_pdf):
    w = make_window(FakeService)
    drop(w, [docs_dir, broken_pdf])
    wait_job(qtbot, w)
    w.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: w.library.model.document_count() == 7, timeout=10000)
    w.library.filter_box.setText("no-such-file")
    assert w.library.stack.currentWidget() is w.library.empty
    assert "No files match “no-such-file”" in w.library.empty.text()
    w.library.filter_box.setFocus()
    qtbot.keyClick(w.library.filter_box, Qt.Key.Key_Escape)
    assert w.library.filter_box.text() == "" and w.library.stack.currentWidget() is w.library.tree
    idx = next(i for i in w.library.model.indexes() if os.path.basename(i.data() or "") == broken_pdf.name)
    tip = idx.sibling(idx.row(), 1).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("failed: ")  # the status column's tooltip is the status, not the path


def test_settings_help_path_style_and_plain_ollama_errors(qtbot, make_window):
    from desktop_memory.gui.settings import plain_error

    class Refused(ModelServers):
        def test_ollama(self, es: EmbedderSettings) -> ServerAnswer:
            raise ConnectionError("Cannot reach Ollama at `http://localhost:11434`: [Errno 111] Connection refused")

    class RefusingService(FakeService):
        servers = Refused()

    w = make_window(RefusingService)
    dlg = w.show_settings()
    for name in ("search.rrf_k", "search.top_k", "search.keyword_weight", "search.dense_weight",
                 "chunking.max_chars", "embedder.query_prefix", "embedder.document_prefix", "search.backend",
                 "context.path_style"):
        assert len(dlg.editor(name).input.toolTip()) > 30, name
    backend = dlg.editor("search.backend").input
    assert "FTS5" in backend.toolTip() and "BM25" in backend.toolTip()
    assert dlg.editor("context.path_style").value() == "relative"
    dlg.editor("embedder.kind").set_value("ollama")
    dlg.show_page("embedder")
    dlg.ollama.test_btn.setFocus()
    dlg.ollama.test_connection()
    qtbot.waitUntil(lambda: dlg.ollama.test_result.text().startswith("✗"), timeout=5000)
    text = dlg.ollama.test_result.text()
    assert "`" not in text and "Errno" not in text and "ollama serve" in text
    assert QApplication.focusWidget() is dlg.ollama.test_btn  # focus did not jump to Batch size
    dlg.editor("context.path_style").set_value("name")
    dlg.accept()
    assert w.settings.context.path_style == "name"
    assert plain_error("x [Errno 2] No such file") == "x No such file"


def test_about_shows_version_database_and_model(qtbot, make_window, inline_tasks):
    from desktop_memory import __version__

    w = make_window(FakeService)
    dlg = w.show_about()
    rows = dict(dlg.rows)
    assert rows["Version"] == __version__
    assert rows["Database"] == "fake.db"
    assert "fake-embedder" in rows["Embedding model"]
    dlg.close()


def test_did_not_fit_rows_are_half_ticked_and_one_click_excludes_them(qtbot, make_window, inline_tasks, docs_dir):
    w = make_window(FakeService)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    w.context_panel.budget.setValue(64)
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "python")
    rows = w.context_panel.rows
    states = [rows.index(i, 0).data(Qt.ItemDataRole.CheckStateRole) for i in range(rows.rowCount())]
    assert Qt.CheckState.PartiallyChecked in states  # included, but not in the block
    row = states.index(Qt.CheckState.PartiallyChecked)
    assert "did not fit" in rows.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    with qtbot.waitSignal(w.context_ready, timeout=5000):
        rows.setData(rows.index(row, 0), Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)  # Qt's click
    assert rows.index(row, 0).data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    assert not w.results_model.is_included(row)


def test_last_query_and_recent_searches_come_back_after_a_relaunch(qtbot, make_window, inline_tasks, docs_dir):
    from desktop_memory.settings_file import load_settings

    w = make_window(FakeService)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    search(qtbot, w, "python")
    qtbot.keyClick(w.search_bar.box, Qt.Key.Key_Return)  # committed: remembered
    search(qtbot, w, "async")
    w.close()  # saves the window state
    g = load_settings().gui
    assert g["last_query"] == "async" and g["recent_queries"][:2] == ["async", "python"]
    svc = FakeService()
    svc.index_paths([str(docs_dir)])
    w2 = make_window(lambda s: (setattr(svc, "settings", s), svc)[1], settings=load_settings())
    assert w2.search_bar.query() == "async"
    qtbot.waitUntil(lambda: w2.results_model.query == "async" and w2.results_model.rowCount() > 0, timeout=10000)
    assert w2.search_bar.recent()[:2] == ["async", "python"]
    w2.search_bar.box.clear()
    w2.search_bar.use_query("python")  # what picking it from the Recent menu does
    qtbot.waitUntil(lambda: w2.results_model.query == "python", timeout=10000)


def test_a_folder_queued_behind_another_is_read_before_the_embedding_finishes(qtbot, make_window, tmp_path):
    import shutil
    import time as _time

    from desktop_memory.embed.hashing import HashEmbedder
    from desktop_memory.service import MemoryService

    from .conftest import FASTAPI

    class SlowEmbedder(HashEmbedder):
        def embed_documents(self, texts):
            _time.sleep(0.05 * len(texts))  # deliberate: a slow worker (simulated work), not a wait for a condition
            return super().embed_documents(texts)

    first = tmp_path / "first"
    first.mkdir()
    for name in ("alternatives.md", "features.md", "python-types.md", "benchmarks.md"):
        shutil.copy(FASTAPI / name, first / name)
    second = tmp_path / "second"
    second.mkdir()
    shutil.copy(FASTAPI / "async.md", second / "async.md")
    (second / "zeppelin.md").write_text("# Zeppelins\n\nA zeppelin is a rigid airship.\n", encoding="utf-8")
    w = make_window(lambda st: MemoryService(st, embedder=SlowEmbedder(64)))
    w.search_bar.set_backend("keyword")
    drop(w, [first])
    qtbot.waitUntil(lambda: w.is_indexing() and "semantic:" in w.progress.detail.text(), timeout=30000)
    bar_before = w.progress.bar.value()
    drop(w, [second])  # the embedding of the first folder steps aside for this read
    search(qtbot, w, "zeppelin airship")
    qtbot.waitUntil(lambda: w.results_model.rowCount() > 0, timeout=20000)
    assert w.is_indexing(), "the first folder's embedding should still be running"
    assert os.path.basename(w.results_model.result(0).source) == "zeppelin.md"
    summary = wait_job(qtbot, w, timeout=120000)
    assert summary.indexed == 4 + 2 and not summary.cancelled, summary  # one summary for the burst
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.pending_vectors == 0, timeout=10000)
    assert bar_before > 0 and w.progress.bar.value() == w.progress.bar.maximum()
