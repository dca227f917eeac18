"""Window behaviour that needs forced conditions, on the in-memory FakeService."""

from __future__ import annotations

from .fake_service import FakeService
from .helpers import drop, search, wait_job


def test_fake_drop_and_search(qtbot, make_window, docs_dir):
    w = make_window(FakeService)
    assert w.results_stack.currentWidget() is w.empty_state
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    qtbot.waitUntil(lambda: w.library.model.document_count() == 6, timeout=5000)
    search(qtbot, w, "async")
    assert w.results_model.rowCount() > 0
    assert w.results_stack.currentWidget() is w.results_view
