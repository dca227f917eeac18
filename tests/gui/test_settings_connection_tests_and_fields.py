"""Issue 33 "The window" 6-8, 12 (Settings ▸ Library) and 14 (spin boxes): the real Settings dialog at its own
780×540, against the real loopback model server (tests.support.openai_server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget

from desktop_memory.config import EmbedderSettings, SearchSettings, Settings, default_db_path
from desktop_memory.gui.settings import SettingsDialog
from desktop_memory.gui.tasks import TaskRunner
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    with OpenAIStub() as s:
        yield s


@pytest.fixture()
def stub(server: OpenAIStub) -> OpenAIStub:
    server.reset()
    return server


@pytest.fixture()
def runner(qtbot) -> Iterator[TaskRunner]:  # type: ignore[no-untyped-def]
    r = TaskRunner(max_threads=2, inline=True)
    yield r
    r.wait(20000)


def _dialog(qtbot, settings: Settings, runner: TaskRunner) -> SettingsDialog:  # type: ignore[no-untyped-def]
    dlg = SettingsDialog(settings, runner)
    qtbot.addWidget(dlg)
    dlg.show()
    assert (dlg.width(), dlg.height()) == (780, 540)
    return dlg


def _in_view(w: QWidget) -> bool:
    """``w`` is wholly inside the visible part of the page (the scroll area) holding it."""
    area = w.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    assert area is not None
    top = w.mapTo(area.viewport(), QPoint(0, 0)).y()
    return w.isVisible() and top >= 0 and top + w.height() <= area.viewport().height()


def _answer(qtbot, label) -> str:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: label.text()[:1] in ("✓", "✗", "⚠"), timeout=20000)
    return str(label.text())


def test_openai_test_connection_with_no_model_lists_the_servers_models_in_view(qtbot, runner, stub) -> None:  # type: ignore[no-untyped-def]
    stub.models = [MODEL, "text-embedding-3-small"]
    dlg = _dialog(qtbot, Settings(embedder=EmbedderSettings(kind="openai", openai_url=stub.url, openai_model="")),
                  runner)
    dlg.show_page("embedder")
    tester = dlg.servers.embedder.tester
    tester.test_btn.click()
    text = _answer(qtbot, tester.result)
    assert "in Settings" not in text and "Model box" in text and "text-embedding-3-small" in text, text
    combo = dlg.editor("embedder.openai_model").combo
    assert {combo.itemText(i) for i in range(combo.count())} >= {MODEL, "text-embedding-3-small"}
    qtbot.waitUntil(lambda: _in_view(tester.result), timeout=5000)  # in sight in the 780×540 dialog


def test_openai_test_connection_warns_for_a_model_the_server_does_not_list(qtbot, runner, stub) -> None:  # type: ignore[no-untyped-def]
    stub.unlisted_models = ["all-minilm-l6-v3"]  # a proxy's wildcard route embeds with a misspelt name
    dlg = _dialog(qtbot, Settings(embedder=EmbedderSettings(kind="openai", openai_url=stub.url,
                                                            openai_model="all-minilm-l6-v3")), runner)
    dlg.show_page("embedder")
    tester = dlg.servers.embedder.tester
    tester.test_btn.click()
    text = _answer(qtbot, tester.result)
    assert text.startswith("⚠") and "does not list the model all-minilm-l6-v3" in text and MODEL in text, text
    dlg.editor("embedder.openai_model").set_value(MODEL)
    tester.test_btn.click()
    qtbot.waitUntil(lambda: tester.result.text().startswith("✓"), timeout=20000)


def test_rerank_test_connection_answer_is_in_view(qtbot, runner, stub) -> None:  # type: ignore[no-untyped-def]
    dlg = _dialog(qtbot, Settings(search=SearchSettings(rerank=True, rerank_url=stub.url, rerank_model=MODEL,
                                                        rerank_timeout_s=60)), runner)
    dlg.show_page("search")
    tester = dlg.servers.rerank.tester
    tester.test_btn.click()
    assert _answer(qtbot, tester.result).startswith("✓")
    qtbot.waitUntil(lambda: _in_view(tester.result), timeout=5000)


def test_field_errors_name_the_fields_by_their_labels(qtbot, runner) -> None:  # type: ignore[no-untyped-def]
    dlg = _dialog(qtbot, Settings(), runner)
    dlg.editor("chunking.target_chars").set_value(3000)
    dlg.editor("chunking.max_chars").set_value(1100)
    assert not dlg.check()
    text = dlg.editor("chunking.target_chars").problem()
    assert "target_chars" not in text and "max_chars" not in text, text
    assert "“Passage size” (3000)" in text and "“Longest passage (hard limit)” (1100)" in text, text


def test_the_library_page_shows_where_the_default_database_is(qtbot, runner) -> None:  # type: ignore[no-untyped-def]
    dlg = _dialog(qtbot, Settings(), runner)
    dlg.show_page("")
    edit = dlg.editor("db_path").edit
    assert edit.text() == "" and str(default_db_path()) in edit.placeholderText()
    assert "open now" in edit.placeholderText()


ARROWS = 16  # px: the spin box's up/down buttons at its right end


def _arrow_pixels_changed(a, b) -> float:  # type: ignore[no-untyped-def]
    """The share of the arrow buttons' pixels that differ between two grabs of one spin box."""
    w, h = min(a.width(), b.width()), min(a.height(), b.height())
    changed = sum(1 for x in range(w - ARROWS, w) for y in range(h)
                  if a.pixelColor(x, y).rgb() != b.pixelColor(x, y).rgb())
    return changed / (ARROWS * h)


def test_spin_boxes_keep_arrows_and_frame_in_the_error_state_and_after_restore_defaults(qtbot, runner) -> None:  # type: ignore[no-untyped-def]
    from desktop_memory.gui.style import apply_theme

    app = QApplication.instance()
    apply_theme(app, "light")  # the window's own style sheet, as the app runs
    try:
        dlg = _dialog(qtbot, Settings(), runner)
        dlg.show_page("chunking")
        box = dlg.editor("chunking.overlap_chars").box
        QApplication.processEvents()
        before = box.grab().toImage()
        dlg.editor("chunking.overlap_chars").set_value(700)  # more than half of the passage size
        assert not dlg.check() and dlg.editor("chunking.overlap_chars").problem()
        QApplication.processEvents()
        bad = box.grab().toImage()
        assert bad.size() == before.size()
        # the arrows are still drawn: the error state tints the field, it does not repaint the buttons
        assert _arrow_pixels_changed(before, bad) < 0.3, _arrow_pixels_changed(before, bad)
        assert bad != before  # and the error shows on the field itself, not only in the line under it
        dlg.restore_btn.click()
        assert dlg.check()
        QApplication.processEvents()
        assert box.grab().toImage() == before  # frame and all, as before the error
    finally:
        apply_theme(app, "system")
