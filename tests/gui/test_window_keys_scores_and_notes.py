"""Issue 33 "The window": each finding on the real widgets (and the real service where it is about data)."""

from __future__ import annotations

import json
import re
import shutil

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from desktop_memory.gui import desktop
from desktop_memory.gui.library_model import PathRole

from .conftest import PDFS
from .helpers import drop, search, wait_job
from .key_checks import mnemonic, mnemonic_clashes

ABSTRACT = json.loads((__import__("pathlib").Path(__file__).parents[1] / "data" / "issue33"
                       / "30720103.json").read_text(encoding="utf-8"))


def _papers(tmp_path):
    """SciFact's abstract 30720103 as the issue had it: title, blank line, the abstract on one long line."""
    d = tmp_path / "papers" / "3"
    d.mkdir(parents=True)
    (d / "30720103.txt").write_text(ABSTRACT["title"] + "\n\n" + ABSTRACT["text"] + "\n", encoding="utf-8")
    shutil.copy(PDFS / "crazyones.pdf", d / "crazyones.pdf")
    return tmp_path / "papers"


def _select_library_row(qtbot, w, name: str) -> str:
    w.tabs.setCurrentWidget(w.library)
    qtbot.waitUntil(lambda: any(str(idx.data(PathRole) or "").endswith(name) for idx in w.library.model.indexes()),
                    timeout=15000)
    idx = next(i for i in w.library.model.indexes() if str(i.data(PathRole) or "").endswith(name))
    w.library.tree.setCurrentIndex(idx)
    w.library.tree.setFocus()
    return str(idx.data(PathRole))


def test_copy_path_in_the_library_copies_the_library_row(qtbot, make_window, hash_factory, tmp_path):
    w = make_window(hash_factory)
    drop(w, [_papers(tmp_path)])
    wait_job(qtbot, w)
    search(qtbot, w, "vitamin")
    assert w.results_model.result(0).source.endswith("30720103.txt")  # a search result is current
    pdf = _select_library_row(qtbot, w, "crazyones.pdf")
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(w.library.tree, Qt.Key.Key_P,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == pdf
    w.tabs.setCurrentIndex(0)  # on the Search tab it is the result's path again
    qtbot.keyClick(w.results_view, Qt.Key.Key_P,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert QGuiApplication.clipboard().text() == w.results_model.result(0).source


def test_reveal_without_a_file_manager_names_the_pdf_setting(qtbot, make_window, hash_factory, tmp_path,
                                                             monkeypatch):
    w = make_window(hash_factory)
    drop(w, [_papers(tmp_path)])
    wait_job(qtbot, w)
    monkeypatch.setattr(desktop, "reveal_path", lambda p: False)
    _select_library_row(qtbot, w, "crazyones.pdf")
    w.library.reveal_btn.click()
    banner = next(b for b in w.banners.banners() if b.key == "open")
    assert "Open PDFs at page with" in banner.text and "Open text at line with" not in banner.text
    _select_library_row(qtbot, w, "30720103.txt")
    w.library.reveal_btn.click()
    banner = next(b for b in w.banners.banners() if b.key == "open")
    assert "Open text at line with" in banner.text


def test_mnemonic_letters():
    assert mnemonic("Add f&older…") == "o" and mnemonic("Q&&A") == "" and mnemonic("&&x &Yes") == "y"


def test_no_mnemonic_is_used_twice_in_the_window_its_menus_or_settings(qtbot, make_window, hash_factory):
    w = make_window(hash_factory)
    assert mnemonic_clashes(w) == {}
    # the letters that must be there: the tabs and the menus each reachable by their own Alt+letter
    bar = {mnemonic(a.text()) for a in w.menuBar().actions()}
    tabs = {mnemonic(w.tabs.tabText(i)) for i in range(w.tabs.count())}
    assert not bar & tabs and len(bar) == len(w.menuBar().actions())
    dlg = w.show_settings()
    for i in range(dlg.page_list.count()):  # every page, as a person clicks through them
        dlg.page_list.setCurrentRow(i)
        assert mnemonic_clashes(dlg) == {}, dlg.pages[i].spec.title
    dlg.reject()


def test_f1_lists_the_quick_search_and_copy_path_keys(qtbot, make_window, hash_factory):
    w = make_window(hash_factory)
    qtbot.keyClick(w, Qt.Key.Key_F1)
    text = next(b.text for b in w.banners.banners() if b.key == "shortcuts")
    assert "Ctrl+Shift+Space" in text and "Ctrl+Shift+P" in text


def test_overlapping_passages_of_one_file_are_one_block_in_the_copied_context(qtbot, make_window, hash_factory,
                                                                             tmp_path):
    w = make_window(hash_factory)
    drop(w, [_papers(tmp_path)])
    wait_job(qtbot, w)
    w.search_bar.set_backend("keyword")
    search(qtbot, w, "vitamin D deficiency")
    rows = [w.results_model.result(i) for i in range(w.results_model.rowCount())]
    same = [r for r in rows if r.source.endswith("30720103.txt")]
    assert len(same) >= 2 and same[0].location.char_end > same[1].location.char_start  # they overlap
    QGuiApplication.clipboard().clear()
    with qtbot.waitSignal(w.context.copied, timeout=10000):
        qtbot.keyClick(w.results_view, Qt.Key.Key_C,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    text = QGuiApplication.clipboard().text()
    assert text.count("[Source: papers/3/30720103.txt") == 1, text
    sentences = re.split(r"(?<=\.) ", ABSTRACT["text"])
    assert all(text.count(s) <= 1 for s in sentences), text  # no sentence pasted twice
    shared = ABSTRACT["text"][same[1].location.char_start - len(ABSTRACT["title"]) - 2:
                              same[0].location.char_end - len(ABSTRACT["title"]) - 2]
    assert len(shared) > 40 and text.count(shared) == 1  # the overlap is there, once


def _shown_scores(w):
    """(result, the score text its card paints) per row."""
    from desktop_memory.gui import results_model

    m = w.results_model
    role = getattr(results_model, "ScoreRole", None)
    if role is None:  # before issue 33 the card painted the fused score with four decimals
        return [(m.result(i), f"{m.result(i).score:.4f}") for i in range(m.rowCount())]
    return [(m.result(i), m.index(i).data(role)) for i in range(m.rowCount())]


def test_the_score_shown_is_the_one_that_ordered_the_list_with_a_reranker(qtbot, make_window, hash_factory,
                                                                          docs_dir):
    from desktop_memory.config import SearchSettings, Settings
    from tests.support.openai_server import MODEL, OpenAIStub

    with OpenAIStub() as stub:
        s = Settings(search=SearchSettings(rerank=True, rerank_url=stub.url, rerank_model=MODEL,
                                           rerank_timeout_s=60))
        w = make_window(hash_factory, s)
        drop(w, [docs_dir])
        wait_job(qtbot, w)
        search(qtbot, w, "python async await")
        shown = _shown_scores(w)
        reranked = [(r, t) for r, t in shown if "rerank" in r.lanes]
        assert reranked, (w.notes.text(), [r.lanes for r, _ in shown][:3])
        assert len(reranked) >= 3
        for r, t in reranked:
            assert abs(float(t) - r.lanes["rerank"].score) < 1e-3  # the reranker's score, not the fused one
        for strength in ("strong", "weak"):  # strong before weak; within each, the shown score falls
            vals = [float(t) for r, t in reranked if r.strength == strength]
            assert vals == sorted(vals, reverse=True), vals
        w.close()


def test_a_large_rrf_k_shows_enough_digits_to_tell_rows_apart(qtbot, make_window, hash_factory, docs_dir):
    from desktop_memory.config import SearchSettings, Settings

    w = make_window(hash_factory, Settings(search=SearchSettings(rrf_k=100_000)))
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    search(qtbot, w, "python async await")
    shown = _shown_scores(w)
    assert len(shown) >= 3 and all(float(t) > 0 for _, t in shown), shown  # never "0.0000"
    for (a, ta), (b, tb) in zip(shown, shown[1:]):
        if abs(a.score - b.score) > 1e-11 and a.strength == b.strength:  # not a tie up to float noise
            assert ta != tb and (float(ta) > float(tb)) == (a.score > b.score), (ta, tb)


def _fits(label) -> bool:
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def test_status_bar_at_1024x600_shortens_instead_of_cutting(qtbot, make_window, hash_factory):
    from desktop_memory.gui.window_size import SMALL_SCREEN, TITLE_BAR
    from desktop_memory.models import Stats

    w = make_window(hash_factory)
    w.resize(SMALL_SCREEN[0], SMALL_SCREEN[1] - TITLE_BAR)
    big = Stats(documents={"indexed": 22_663, "failed": 20, "skipped": 5}, chunks=22_688, vectors=16_688,
                pending_vectors=6_000, db_path="/tmp/x.db", db_bytes=912_000_000, model_id="m", dim=384)
    w.status.set_stats(big)  # the figures of the walk
    w.status.set_embedder("error", "Embedder: Ollama not reachable (keyword search only)")
    QApplication.processEvents()
    for label in (w.status.counts, w.status.semantic, w.status.embedder):
        assert label.isVisible() and _fits(label), (label.text(), label.contentsRect().width())
    assert "not indexe" not in w.status.counts.text() or "not indexed" in w.status.counts.text()
    assert "25" in w.status.counts.text() and "16,688" in w.status.semantic.text() + w.status.semantic.toolTip()
    assert "25 not indexed" in w.status.counts.toolTip()


def test_at_the_minimum_size_the_notes_leave_room_for_results(qtbot, make_window, hash_factory, docs_dir):
    from desktop_memory.config import SearchSettings, Settings

    s = Settings(search=SearchSettings(rerank=True, rerank_url="http://127.0.0.1:9/v1/rerank"))
    w = make_window(hash_factory, s)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    w.resize(w.minimumSizeHint())
    search(qtbot, w, "python async")
    QApplication.processEvents()
    assert w.notes.isVisible() and "Rerank off" in (w.notes.toolTip() or w.notes.text())
    line = w.notes.fontMetrics().lineSpacing()
    assert w.notes.height() <= 2 * line + 4, (w.notes.text(), w.notes.height())
    row = w.results_view.sizeHintForRow(0)
    assert w.results_view.viewport().height() >= row, (w.results_view.viewport().height(), row)


def test_search_notes_are_tidy_sentences():
    from desktop_memory.gui.results_wording import join_notes, note_sentence

    note = ("rerank off, fused order kept: The reranker at http://x/v1/rerank did not answer within 2 s. Check the "
            "server or try again.")
    assert note_sentence(note).startswith("Rerank off, fused order kept. The reranker")
    joined = join_notes([note, "5 of these passages are not embedded yet: found by keyword"])
    assert ".;" not in joined and "try again. 5 of these passages are not embedded yet: found by keyword." in joined
    assert note_sentence("Semantic: 3/4 chunks embedded") == "Semantic: 3/4 chunks embedded."


def test_a_new_empty_library_with_a_query_in_the_box_shows_the_drop_target(qtbot, make_window, hash_factory):
    from desktop_memory.config import Settings

    w = make_window(hash_factory, Settings(gui={"last_query": "vitamin d deficiency"}))
    qtbot.waitUntil(lambda: w.search_bar.query() == "vitamin d deficiency", timeout=5000)
    search(qtbot, w, "vitamin d deficiency")
    # the library's counts may arrive after the search's answer (a loaded machine): once they say it is empty
    qtbot.waitUntil(lambda: w.results_stack.currentWidget() is w.empty_state, timeout=10000)
    QApplication.processEvents()
    assert not w.notes.isVisible() and "No results" not in w.message.text()


def test_library_semantic_column_does_not_count_collapsed_duplicates_as_missing(qtbot, make_window, hash_factory,
                                                                                docs_dir, tmp_path):
    from desktop_memory.gui.library_tree import C_SEM

    d = tmp_path / "twice"
    d.mkdir()
    for name in ("async.md", "benchmarks.md"):
        shutil.copy(docs_dir / name, d / name)
        shutil.copy(docs_dir / name, d / f"copy-of-{name}")  # every passage a collapsed duplicate
    w = make_window(hash_factory)
    drop(w, [d])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.chunks and not w.stats.pending_vectors, timeout=30000)
    assert w.stats.duplicates > 0 and "all chunks embedded" in w.status.semantic.text()
    w.tabs.setCurrentWidget(w.library)
    qtbot.waitUntil(lambda: sum(1 for i in w.library.model.indexes() if w.library.model.node(i).doc) == 4,
                    timeout=15000)
    cells = {str(i.data(PathRole)): i.siblingAtColumn(C_SEM).data() for i in w.library.model.indexes()}
    assert cells and all(v == "✓" for v in cells.values()), cells


def test_the_removal_question_names_what_and_how_many_under_a_whole_title(qtbot, make_window, hash_factory,
                                                                          docs_dir):
    w = make_window(hash_factory)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    w.tabs.setCurrentWidget(w.library)
    qtbot.waitUntil(lambda: any(w.library.model.node(i).doc is None for i in w.library.model.indexes()),
                    timeout=15000)
    folder = next(i for i in w.library.model.indexes() if w.library.model.node(i).doc is None)
    w.library.tree.setCurrentIndex(folder)
    w.library.tree.selectionModel().select(folder, w.library.tree.selectionModel().SelectionFlag.ClearAndSelect
                                           | w.library.tree.selectionModel().SelectionFlag.Rows)
    w.library.tree.setFocus()
    qtbot.keyClick(w.library.tree, Qt.Key.Key_Delete)
    box = w.library.confirm_box
    assert box is not None
    qtbot.waitUntil(box.isVisible, timeout=5000)
    assert "the folder “docs” (6 files)" in box.text(), box.text()
    title_w = box.fontMetrics().horizontalAdvance(f"{box.windowTitle()} — Desktop Memory")
    assert not box.windowTitle().endswith("?") and box.width() >= title_w + 100, (box.width(), title_w)
    box.reject()


def _highlighted(preview) -> list[str]:
    """The runs of the preview's text painted as a match."""
    doc, out = preview.browser.document(), []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.charFormat().background().style() != Qt.BrushStyle.NoBrush:
                out.append(frag.text())
            it += 1
        block = block.next()
    return out


def test_the_preview_highlights_only_the_matched_words_passage_after_passage(qtbot, make_window, hash_factory,
                                                                             tmp_path):
    d = tmp_path / "papers"
    d.mkdir()
    doc = json.loads((__import__("pathlib").Path(__file__).parents[1] / "data" / "issue33"
                      / "23267371.json").read_text(encoding="utf-8"))
    (d / "23267371.txt").write_text(doc["title"] + "\n\n" + doc["text"] + "\n", encoding="utf-8")
    w = make_window(hash_factory)
    drop(w, [d])
    wait_job(qtbot, w)
    w.search_bar.set_backend("keyword")
    search(qtbot, w, "sunshine vitamin worldwide")
    assert w.results_model.rowCount() >= 2
    for row in range(w.results_model.rowCount()):  # the first passage begins with a match ("Vitamin D: …")
        w.results_view.setCurrentIndex(w.results_model.index(row))
        runs = _highlighted(w.preview)
        assert runs and all(len(run) <= len("worldwide") for run in runs), (row, runs[:3])
        assert {run.lower() for run in runs} <= {"sunshine", "vitamin", "worldwide"}, runs
