"""Issue 30 item 1 in the window: Copy after a short question on a small notes folder puts the answer's passage on
the clipboard (the real service and the real local MiniLM model; on the old rule the passage was judged weak, left
out, and Copy gave an empty block)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from .helpers import drop, search, wait_job

pytestmark = pytest.mark.slow
NOTES = Path(__file__).resolve().parents[1] / "data" / "notes_small"


def test_copy_after_a_short_question_holds_the_answer(qtbot, make_window, tmp_path):
    from desktop_memory.gui.main_window import default_service_factory

    notes = tmp_path / "notes"
    shutil.copytree(NOTES, notes)
    w = make_window(default_service_factory)
    drop(w, [notes])
    summary = wait_job(qtbot, w, timeout=180000)
    assert not summary.embed_error, summary
    qtbot.waitUntil(lambda: w.stats is not None and w.stats.vectors > 0 and not w.stats.pending_vectors,
                    timeout=60000)
    for query, name, line in (("tyre pressure", "car.txt", "Tyre pressure: 2.3 bar"),
                              ("bread", "sourdough.md", "450 g strong white flour")):
        search(qtbot, w, query, timeout=60000)
        first = w.results_model.result(0)
        assert first is not None and Path(first.source).name == name and first.strength == "strong"
        qtbot.waitUntil(lambda: w.context_panel.report is not None and not w.context.pending
                        and any(i.source.endswith(name) for i in w.context_panel.report.items),  # noqa: B023
                        timeout=10000)
        QApplication.clipboard().clear()
        w.copy_context()
        qtbot.waitUntil(lambda: QApplication.clipboard().text() != "", timeout=5000)
        copied = QApplication.clipboard().text()
        assert name in copied.splitlines()[0] and line in copied, copied
