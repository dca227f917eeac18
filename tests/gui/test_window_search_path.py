"""Search in the window at scale (issue 33, window item 13): the first search's loads happen in the background once
the window is shown, the window asks the service once per search, and the preview lays a passage out once however
many matches it marks.

Real parts: the real MemoryService on a real library (HashEmbedder), the real MainWindow offscreen. The dense lane's
code-matrix load is held open inside the warm-up (a gate on Store.load_bits) so a search can be typed while the
warm-up is provably still running; nothing here waits on a clock.
"""

from __future__ import annotations

import threading

from desktop_memory.config import Settings, settings_path
from desktop_memory.gui.main_window import MainWindow
from desktop_memory.store.repository import Store

QUERY = "async await concurrency"


def _library(hash_factory, docs_dir, tmp_path) -> Settings:
    settings = Settings(db_path=str(tmp_path / "library.db"))
    svc = hash_factory(settings)
    svc.index_paths([docs_dir])
    svc.close()
    return settings


def test_warm_up_runs_after_show_off_the_ui_thread_and_a_search_meanwhile_answers(
        qtbot, hash_factory, docs_dir, tmp_path, monkeypatch):
    settings = _library(hash_factory, docs_dir, tmp_path)
    entered, release = threading.Event(), threading.Event()
    loads: list[str] = []
    real_load = Store.load_bits

    def gated_load(self, after_id=0, limit=None):  # the first code-matrix load waits until the test says go
        loads.append(threading.current_thread().name)
        if len(loads) == 1:
            entered.set()
            release.wait(30)
        return real_load(self, after_id, limit)

    monkeypatch.setattr(Store, "load_bits", gated_load)
    calls: list[tuple[bool, bool, bool]] = []  # (semantic, on the UI thread, window visible when it started)
    window: list[MainWindow] = []

    def factory(s: Settings):
        svc = hash_factory(s)
        real_warm = svc.warm_up

        def warm_up(cancel=None, *, semantic=False):
            calls.append((semantic, threading.current_thread() is threading.main_thread(), window[0].isVisible()))
            real_warm(cancel, semantic=semantic)

        svc.warm_up = warm_up
        return svc

    w = MainWindow(settings, service_factory=factory, settings_path=settings_path())
    window.append(w)
    qtbot.addWidget(w)
    finished: list[bool] = []
    w.search_warm_up.finished.connect(finished.append)
    # the library opens and the model loads while the window is not shown yet: no warm-up starts
    qtbot.waitUntil(lambda: w.svc is not None and w.embedder_state == "ready", timeout=15000)
    qtbot.wait(50)  # a few turns of the event loop: a warm-up posted meanwhile would have started
    assert calls == [] and loads == []

    w.resize(1200, 800)
    w.show()
    qtbot.waitUntil(entered.is_set, timeout=10000)  # the warm-up is inside the code-matrix load now
    assert calls and all(visible and not on_ui for _semantic, on_ui, visible in calls), calls
    assert loads[0] != threading.main_thread().name

    # a search typed while the warm-up still loads: it waits for that load (not a second one) and answers
    with qtbot.waitSignal(w.search_finished, timeout=20000):
        w.search_bar.box.setText(QUERY)
        w.search_bar.request_now()
        release.set()
    shown = w.results_model.results()
    assert shown, w.results_info.text()
    assert any("dense" in r.lanes for r in shown), "the semantic lane answered too"
    assert "Semantic model still loading" not in w.notes.text()
    qtbot.waitUntil(lambda: True in finished, timeout=20000)  # the semantic warm-up ran to its end
    assert len(loads) == 1, "the matrices were loaded once, by the warm-up"

    # the same answer as a fresh service gives for the same query
    check = hash_factory(settings)
    try:
        assert [r.chunk_id for r in shown] == [r.chunk_id for r in check.search_outcome(QUERY).results]
    finally:
        check.close()


def test_the_window_asks_the_service_once_per_search_for_the_list_and_its_highlights(
        qtbot, make_window, hash_factory, docs_dir, tmp_path):
    settings = _library(hash_factory, docs_dir, tmp_path)
    asked: list[str] = []

    def factory(s: Settings):
        svc = hash_factory(s)
        for name in ("search_outcome", "highlights"):
            real = getattr(svc, name)
            setattr(svc, name, lambda *a, _n=name, _f=real, **k: asked.append(_n) or _f(*a, **k))
        return svc

    w = make_window(factory, settings)
    for query in (QUERY, "environment variables settings", "editor support autocompletion"):
        asked.clear()
        with qtbot.waitSignal(w.search_finished, timeout=20000):
            w.search_bar.box.setText(query)
            w.search_bar.request_now()
        assert asked == ["search_outcome"], asked  # the results and their highlights in one call
        assert w.results_model.rowCount() > 0
        assert w.preview.highlights > 0, "the keyword lane's matches are marked in the preview"


def test_the_preview_lays_a_passage_out_once_for_all_its_marks(qtbot):
    from desktop_memory.gui.preview_panel import PreviewPanel
    from desktop_memory.models import LaneHit, Location, SearchResult
    from desktop_memory.retrieve.highlight import MARK_END, MARK_START

    panel = PreviewPanel()
    qtbot.addWidget(panel)
    panel.show()
    text = " ".join(f"cell number {i} of the sample" for i in range(26))
    marked = text.replace("cell", f"{MARK_START}cell{MARK_END}")
    r = SearchResult(1, 0.5, 7, 3, "/lib/a.txt", "text", text, Location(char_start=0, char_end=len(text)),
                     {"fts": LaneHit(1, 1.0)}, 0.0)
    changes: list[int] = []
    panel.browser.document().contentsChanged.connect(lambda: changes.append(1))
    panel.show_result(r, [], marked)
    assert panel.highlights == 26 and panel.browser.toPlainText() == text
    # the text is set once and the 26 marks applied as one edit: not one relayout per removed mark (79 on old code)
    assert len(changes) <= 2, len(changes)


def _counting_factory(embedder):
    from desktop_memory.service import MemoryService

    def factory(settings: Settings):
        return MemoryService(settings, embedder=embedder)

    return factory


def test_the_query_typed_is_embedded_before_enter_and_the_search_takes_that_vector(qtbot, make_window, docs_dir):
    from PySide6.QtCore import Qt

    from tests.unit.retrieve.test_query_vectors import CountingEmbedder

    from .helpers import drop, wait_job

    emb = CountingEmbedder()
    w = make_window(_counting_factory(emb))
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: not w.searcher.semantic_loading, timeout=15000)
    box = w.search_bar.box
    box.setFocus()
    qtbot.keyClicks(box, QUERY)  # as a person types: the box's text is embedded as it changes
    qtbot.waitUntil(lambda: QUERY in emb.asked, timeout=10000)
    with qtbot.waitSignal(w.search_finished, timeout=10000):
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert emb.asked.count(QUERY) == 1  # Enter's search took the typed vector
    assert w.results_model.rowCount() > 0
    assert "async" in w.results_model.result(0).source


def test_a_slow_embedder_is_asked_for_the_latest_text_only_not_once_per_key(qtbot, make_window, docs_dir):
    from PySide6.QtCore import Qt

    from tests.unit.retrieve.test_query_vectors import CountingEmbedder

    from .helpers import drop, wait_job

    gate = threading.Event()
    gate.set()
    emb = CountingEmbedder(gate=gate)
    w = make_window(_counting_factory(emb))
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: not w.searcher.semantic_loading, timeout=15000)
    before = len(emb.asked)
    gate.clear()  # the embedder now answers only when the test says so (a slow server)
    box = w.search_bar.box
    box.setFocus()
    qtbot.keyClicks(box, QUERY)
    qtbot.waitUntil(lambda: len(emb.asked) > before, timeout=10000)
    gate.set()
    qtbot.waitUntil(lambda: QUERY in emb.asked, timeout=10000)
    typed = emb.asked[before:]
    assert len(typed) <= 3 < len(QUERY), typed  # the first key's text, then the latest one (not 23 of them)
    with qtbot.waitSignal(w.search_finished, timeout=10000):
        qtbot.keyClick(box, Qt.Key.Key_Return)
    assert emb.asked.count(QUERY) == 1
