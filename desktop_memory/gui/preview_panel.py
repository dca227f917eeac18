"""Preview: the selected passage in full, with its source, location and why it ranked where it did."""

from __future__ import annotations

import html
import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..models import SearchResult
from .formatting import highlight_html, human_date
from .progress_panel import ElidedLabel
from .style import colors


class PreviewPanel(QWidget):
    open_requested = Signal(str)
    reveal_requested = Signal(str)
    copy_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        head = QHBoxLayout()
        self.title = QLabel("Preview")
        self.title.setObjectName("PanelTitle")
        head.addWidget(self.title, 1)
        self.open_btn = QPushButton("Open")
        self.open_btn.setToolTip("Open the file in its default app (Enter)")
        self.reveal_btn = QPushButton("Reveal")
        self.reveal_btn.setToolTip("Show the file in the file manager")
        self.copy_btn = QPushButton("Copy passage")
        for b in (self.open_btn, self.reveal_btn, self.copy_btn):
            b.setAutoDefault(False)
            head.addWidget(b)
        lay.addLayout(head)
        self.source = ElidedLabel("")
        self.source.setObjectName("Muted")
        lay.addWidget(self.source)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.setAccessibleName("Passage preview")
        lay.addWidget(self.browser, 1)
        self.open_btn.clicked.connect(lambda: self._result and self.open_requested.emit(self._result.source))
        self.reveal_btn.clicked.connect(lambda: self._result and self.reveal_requested.emit(self._result.source))
        self.copy_btn.clicked.connect(self.copy_requested)
        self._result: SearchResult | None = None
        self.show_result(None)

    @property
    def result(self) -> SearchResult | None:
        return self._result

    def show_result(self, r: SearchResult | None, terms: list[str] | None = None) -> None:
        self._result = r
        for b in (self.open_btn, self.reveal_btn, self.copy_btn):
            b.setEnabled(r is not None)
        if r is None:
            self.title.setText("Preview")
            self.source.setText("")
            self.browser.setHtml(
                '<p style="color:%s">Select a result to read the whole passage.</p>' % colors()["muted"].name()
            )
            return
        self.title.setText(f"{os.path.basename(r.source)}")
        loc = r.location.describe()
        self.source.setText(" · ".join(x for x in (r.source, loc) if x))
        cols = colors()
        hl = f"background-color:{cols['term_bg'].name()}; font-weight:600;"
        meta = " · ".join(
            x for x in (f"#{r.rank}", r.kind, f"score {r.score:.4f}", r.explain(), f"modified {human_date(r.mtime)}" if r.mtime else "") if x
        )
        body = highlight_html(r.text, terms or [], hl).replace("\n", "<br>")
        mono = "font-family: monospace;" if r.kind == "code" else ""
        self.browser.setHtml(
            f'<p style="color:{cols["muted"].name()}; margin-bottom:8px">{html.escape(meta)}</p>'
            f'<div style="{mono} white-space: pre-wrap">{body}</div>'
        )

    def plain_text(self) -> str:
        return self.browser.toPlainText()

    def keyPressEvent(self, e) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._result:
            self.open_requested.emit(self._result.source)
            return
        super().keyPressEvent(e)
