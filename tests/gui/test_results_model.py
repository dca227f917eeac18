"""The result cards' delegate keeps its fonts per view font: a font change still reaches every card."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QListView

from desktop_memory.gui.results_model import ResultDelegate, ResultsModel
from desktop_memory.models import LaneHit, Location, SearchResult


def _results(n: int) -> list[SearchResult]:
    return [SearchResult(rank=i + 1, score=1.0 - i / 10, chunk_id=i + 1, doc_id=i + 1, source=f"/notes/n{i}.md",
                         kind="markdown", text=f"compost and tomatoes, note {i} " * 8, location=Location(),
                         lanes={"fts": LaneHit(rank=i + 1, score=3.0 - i / 10)}, mtime=1_700_000_000.0)
            for i in range(n)]


def test_cards_follow_the_view_font_after_it_changes(qtbot):
    view = QListView()
    qtbot.addWidget(view)
    model = ResultsModel()
    delegate = ResultDelegate(view)
    view.setModel(model)
    view.setItemDelegate(delegate)
    model.set_results("compost", ["compost"], _results(3), None)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # painted once with the first font: the delegate now holds that font's metrics
    small = view.sizeHintForRow(0)
    big = QFont(view.font())
    big.setPointSizeF(view.font().pointSizeF() * 2)
    view.setFont(big)
    assert view.sizeHintForRow(0) > small * 1.5  # measured with the new font, not the one kept from the paint
    assert not view.grab().isNull()  # and painted with it
    view.grab()
    view.setFont(QFont(big.family(), max(1, round(big.pointSizeF() / 2))))
    assert view.sizeHintForRow(0) <= small * 1.2  # and back
