"""QA walk (issue 30 item 4 beside issue 33's window): since the removal work, "excluded" is the Library's word for
a path removed from the library ("excluded" rows, Include again). A weak result not ticked for the prompt context
was also labelled "excluded" in the result list ("excluded · 0.0161") and in the context rows, so a person read
their file as removed. It now says it is not in the context."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem

from .helpers import WeakFake, drop, search, wait_job


class _Recorder(QPainter):
    """A painter that remembers every text drawn (the delegate's row, as a person reads it)."""

    def __init__(self, image: QImage) -> None:
        super().__init__(image)
        self.texts: list[str] = []

    def drawText(self, *args):  # Qt's name
        self.texts += [a for a in args if isinstance(a, str)]
        return super().drawText(*args)


def test_a_result_left_out_of_the_context_is_not_called_excluded(qtbot, make_window, inline_tasks, docs_dir):
    w = make_window(WeakFake)
    drop(w, [docs_dir])
    wait_job(qtbot, w)
    with qtbot.waitSignal(w.context_ready, timeout=10000):
        search(qtbot, w, "zzpython")  # weak results: they start left out of the context
    assert w.results_model.rowCount() > 0 and w.results_model.included_results() == []

    rows = w.context_panel.rows
    texts = [str(rows.index(i, 0).data()) for i in range(rows.rowCount())]
    assert texts and all("left out" in t and "excluded" not in t for t in texts), texts

    image = QImage(800, 200, QImage.Format.Format_ARGB32)
    painter = _Recorder(image)
    try:
        option = QStyleOptionViewItem()
        option.rect = QRect(0, 0, 800, 120)
        option.font = w.results_view.font()
        w.results_view.itemDelegate().paint(painter, option, w.results_model.index(0, 0))
    finally:
        painter.end()
    drawn = " | ".join(painter.texts)
    assert "not in context · " in drawn and "excluded" not in drawn, drawn
