"""Status bar: documents, chunks, database size, semantic coverage and the embedder's state.

Each part has a long and shorter wordings; it shows the longest that fits its room and elides only the shortest
("25 not indexe" at 1024×600 was a cut, not a shortening). The tooltip always has the whole.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from ..models import STATUS_FAILED, STATUS_INDEXED, STATUS_SKIPPED, Stats
from .formatting import counted, human_bytes

EMBEDDER_STATES = ("loading", "ready", "error", "idle")


class FitLabel(QLabel):
    """A one-line label given wordings from longest to shortest: it shows the longest that fits its width."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._texts: list[str] = [text]
        super().setText(text)

    def setText(self, text: str) -> None:
        self.set_texts(text)

    def set_texts(self, *texts: str) -> None:
        """The longest wording at once; the layout then gives the label its room (a resize follows) and the
        fit runs after that, so a label growing from a short text is not shortened for its old width."""
        self._texts = [t for t in texts if t] or [""]
        super().setText(self._texts[0])
        self.updateGeometry()
        QTimer.singleShot(0, self, self._fit)  # with the label as context: never after it is gone

    def full_text(self) -> str:
        return self._texts[0]

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(self._texts[0]) + m.left() + m.right() + 6, hint.height())

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        self._fit()

    def _fit(self) -> None:
        fm = self.fontMetrics()
        room = self.contentsRect().width() - 2
        shown = next((t for t in self._texts if fm.horizontalAdvance(t) <= room), None)
        if shown is None:
            shown = fm.elidedText(self._texts[-1], Qt.TextElideMode.ElideRight, max(room, 0))
        if shown != self.text():
            super().setText(shown)


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(True)
        self.counts = FitLabel("Opening library…")
        self.semantic = FitLabel("")
        self.semantic.setObjectName("Muted")
        self.embedder = FitLabel("Embedder: loading…")
        self.embedder.setObjectName("StatusPill")
        self.embedder.setProperty("state", "loading")
        self.addPermanentWidget(self.counts)
        self.addPermanentWidget(self.semantic)
        self.addPermanentWidget(self.embedder)
        self.stats: Stats | None = None
        self.embedder_state = "loading"

    def set_stats(self, s: Stats) -> None:
        self.stats = s
        docs = sum(s.documents.values())
        indexed = s.documents.get(STATUS_INDEXED, 0)
        problems = s.documents.get(STATUS_FAILED, 0) + s.documents.get(STATUS_SKIPPED, 0)
        lost = f" · {problems:,} not indexed" if problems else ""
        self.counts.set_texts(
            f"{counted(indexed, 'document')} · {counted(s.chunks, 'chunk')} · {human_bytes(s.db_bytes)}{lost}",
            f"{counted(indexed, 'doc')} · {counted(s.chunks, 'chunk')}{lost}",
            f"{counted(indexed, 'doc')}{lost}",
            f"{indexed:,} docs" + (f" · {problems:,} ✗" if problems else ""))
        self.counts.setToolTip(f"{counted(indexed, 'document')} · {counted(s.chunks, 'chunk')} · "
                               f"{human_bytes(s.db_bytes)}{lost}\nDatabase: {s.db_path}\n{counted(docs, 'file')} known")
        if s.chunks and s.pending_vectors:
            pct = 100 * s.vectors // max(1, s.chunks)
            self.semantic.set_texts(f"semantic: {s.vectors:,}/{s.chunks:,} chunks embedded",
                                    f"semantic: {s.vectors:,}/{s.chunks:,}", f"semantic {pct}%", f"{pct}%")
        elif s.chunks:
            self.semantic.set_texts("semantic: all chunks embedded", "semantic: all", "✓")
        else:
            self.semantic.set_texts("")
        model = f"model {s.model_id} ({s.dim}-d)" if s.model_id else "no vectors yet"
        self.semantic.setToolTip(f"{self.semantic.full_text()}\n{model}" if self.semantic.full_text() else model)

    def set_embedder(self, state: str, text: str, tooltip: str = "") -> None:
        self.embedder_state = state
        self.embedder.setText(text)
        self.embedder.setToolTip(tooltip or text)
        self.embedder.setProperty("state", state)
        self.embedder.style().unpolish(self.embedder)
        self.embedder.style().polish(self.embedder)
