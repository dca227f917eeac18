"""Issue 30 item 3 in the window: a query embedder that fails (here as a header carrying a non-ASCII key failed,
with a UnicodeEncodeError, not an EmbedderError) still gives keyword results, and the window shows the note saying
why the semantic lane is off. The real window and the real service (tests/robustness/test_search_fallback.py has
the service, CLI and MCP side)."""

from __future__ import annotations

from pathlib import Path

from desktop_memory.config import Settings
from desktop_memory.service import MemoryService
from tests.support.search_fallback import NotEmbedderErrorEmbedder, tyre_notes


def test_the_window_shows_keyword_results_and_the_note(qtbot, make_window, inline_tasks, tmp_path: Path) -> None:
    from tests.gui.helpers import search

    folder = tyre_notes(tmp_path)

    def factory(settings: Settings) -> MemoryService:
        svc = MemoryService(settings, embedder=NotEmbedderErrorEmbedder(64))
        svc.index_paths([folder])
        return svc

    w = make_window(factory, Settings(db_path=str(tmp_path / "w.db")))
    search(qtbot, w, "tyre pressure")
    assert w.results_model.rowCount() >= 1 and w.results_info.text() != "Search failed"
    assert "semantic lane off" in w.notes.text().lower() and "UnicodeEncodeError" in w.notes.text()
    assert w.notes.isVisible()
