"""Status bar: documents, chunks, database size, semantic coverage and the embedder's state."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from ..models import STATUS_FAILED, STATUS_INDEXED, STATUS_SKIPPED, Stats
from .formatting import counted, human_bytes

EMBEDDER_STATES = ("loading", "ready", "error", "idle")


class StatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(True)
        self.counts = QLabel("Opening library…")
        self.semantic = QLabel("")
        self.semantic.setObjectName("Muted")
        self.embedder = QLabel("Embedder: loading…")
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
        text = f"{counted(indexed, 'document')} · {counted(s.chunks, 'chunk')} · {human_bytes(s.db_bytes)}"
        if problems:
            text += f" · {problems:,} not indexed"
        self.counts.setText(text)
        self.counts.setToolTip(f"Database: {s.db_path}\n{counted(docs, 'file')} known")
        if s.chunks and s.pending_vectors:
            self.semantic.setText(f"semantic: {s.vectors:,}/{s.chunks:,} chunks embedded")
        elif s.chunks:
            self.semantic.setText("semantic: all chunks embedded")
        else:
            self.semantic.setText("")
        self.semantic.setToolTip(f"model {s.model_id} ({s.dim}-d)" if s.model_id else "no vectors yet")

    def set_embedder(self, state: str, text: str, tooltip: str = "") -> None:
        self.embedder_state = state
        self.embedder.setText(text)
        self.embedder.setToolTip(tooltip or text)
        self.embedder.setProperty("state", state)
        self.embedder.style().unpolish(self.embedder)
        self.embedder.style().polish(self.embedder)
