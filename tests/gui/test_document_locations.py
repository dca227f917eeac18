"""The window shows where a document hit is: "slide N" for slides, heading path + page for PDFs, never lines.

Real parts: the office/PDF eval files indexed by the real service (sandbox worker, real store), shown by the real
results model.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import Qt

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.gui.results_model import ResultsModel
from desktop_memory.service import MemoryService


def test_results_list_shows_slides_and_pdf_pages(qtbot, tmp_path: Path, eval_dir: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copyfile(eval_dir / "office" / "files" / "pptx_speaker_notes.pptx", folder / "deck.pptx")
    shutil.copyfile(eval_dir / "pdfs" / "chelsea_pdta.pdf", folder / "plan.pdf")
    svc = MemoryService(Settings(), db_path=tmp_path / "idx.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([folder], embed=False)
        model = ResultsModel()
        deck = svc.search_outcome("notes of the first slide", backend="keyword").results
        model.set_results("notes of the first slide", ["notes", "slide"], deck)
        shown = model.data(model.index(0), Qt.ItemDataRole.DisplayRole)
        assert shown == "#1 deck.pptx — Title of the first slide · slide 1"
        plan = svc.search_outcome("Mise en contexte", backend="keyword").results
        model.set_results("Mise en contexte", ["mise", "contexte"], plan)
        shown = model.data(model.index(0), Qt.ItemDataRole.DisplayRole)
        assert shown.startswith("#1 plan.pdf — ") and " · p. " in shown and "line" not in shown
        context = svc.build_context(plan[:1], 2000).text
        assert context.startswith("[Source: ") and "· p. " in context.splitlines()[0]
        assert "line" not in context.splitlines()[0]
    finally:
        svc.close()
