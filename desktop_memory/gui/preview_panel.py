"""Preview: the selected passage in full, with its source, location and why it ranked where it did.

Markdown passages are rendered (headings, emphasis, code blocks, lists) instead of showing raw markup; text,
code and PDF passages show as plain text. Highlights are the keyword lane's own matches (marks from
retrieve/highlight.py), applied after rendering. What gets *copied* is never this rendering: the context
block and "Copy passage" keep the stored text exactly.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QColor, QFont, QKeyEvent, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..models import WEAK, SearchResult
from .formatting import MARK_END, MARK_START, human_date, mark_terms
from .machine_labels import result_name
from .progress_panel import ElidedLabel
from .style import colors, monospace_font

_INCLUDE = re.compile(r"\{\*\s*(.*?)\s*\*\}", re.DOTALL)  # mkdocs "{* ../docs_src/app.py hl[3] *}"
_ADMONITION_OPEN = re.compile(r"^\s*///\s*(\w+)(?:\s*\|\s*(.*))?\s*$", re.MULTILINE)
_ADMONITION_CLOSE = re.compile(r"^\s*///\s*$", re.MULTILINE)
_ATTRS = re.compile(r"\s*\{\s*[#.][^{}\n]*\}")


def markdown_for_display(text: str) -> str:
    """The Markdown dialect bits Qt does not know (mkdocs includes, ``///`` admonitions, ``{ #anchor }``) turned
    into plain Markdown, so the rendering shows words, not syntax."""
    t = _INCLUDE.sub(lambda m: f"*(code from {m.group(1).split()[0]})*" if m.group(1) else "", text)
    t = _ADMONITION_OPEN.sub(
        lambda m: f"**{m.group(1).capitalize()}{': ' + m.group(2).strip() if m.group(2) else ''}**", t)
    t = _ADMONITION_CLOSE.sub("", t)
    return _ATTRS.sub("", t)


def apply_marks(doc: QTextDocument, fmt: QTextCharFormat) -> int:
    """Turn MARK_START…MARK_END pairs in ``doc`` into ``fmt``-styled text (marks removed). Returns the count.

    All edits are one edit block: the shown document is laid out once, not after every removed mark (a SciFact
    abstract with 26 marks took 260 ms in the window's preview, 6 ms as one block: docs/BENCHMARKS.md)."""
    batch = QTextCursor(doc)
    batch.beginEditBlock()
    try:
        return _apply_marks(doc, fmt)
    finally:
        batch.endEditBlock()


def _apply_marks(doc: QTextDocument, fmt: QTextCharFormat) -> int:
    n = 0
    cur = QTextCursor(doc)
    while True:
        cur = doc.find(MARK_START, cur)
        if cur.isNull():
            break
        start = cur.selectionStart()
        cur.removeSelectedText()
        end_cur = doc.find(MARK_END, cur)
        if end_cur.isNull():
            break
        end = end_cur.selectionStart()
        end_cur.removeSelectedText()
        span = QTextCursor(doc)
        span.setPosition(start)
        span.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        span.mergeCharFormat(fmt)
        cur = QTextCursor(doc)
        cur.setPosition(end)
        n += 1
    return n


def tame_headings(doc: QTextDocument) -> None:
    """Headings one step above the text instead of Qt's xx-large: a passage is a fragment, not a page."""
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            cur = QTextCursor(block)
            cur.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setProperty(QTextFormat.Property.FontSizeAdjustment, 1 if level <= 2 else 0)
            fmt.setFontWeight(QFont.Weight.Bold)
            cur.mergeCharFormat(fmt)
        block = block.next()


class PreviewPanel(QWidget):
    open_requested = Signal(str)
    reveal_requested = Signal(str)
    copy_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        head = QHBoxLayout()
        self.title = ElidedLabel("Preview")
        self.title.setObjectName("PanelTitle")
        head.addWidget(self.title, 1)
        self.open_btn = QPushButton("Open")
        self.open_btn.setToolTip("Open the file at this passage (its line or page where the app supports it)")
        self.reveal_btn = QPushButton("Reveal")
        self.reveal_btn.setToolTip("Show the file in the file manager")
        self.copy_btn = QPushButton("Copy passage")
        self.copy_btn.setToolTip("Copy this passage's text exactly as stored (Ctrl+Alt+C)")
        for b in (self.open_btn, self.reveal_btn, self.copy_btn):
            b.setAutoDefault(False)
            head.addWidget(b)
        lay.addLayout(head)
        # where first (heading › sub · lines), then the folder: eliding cuts the folder, never the heading
        self.source = ElidedLabel("")
        self.source.setObjectName("Muted")
        self.source.elide_mode = Qt.TextElideMode.ElideRight
        lay.addWidget(self.source)
        self.meta = ElidedLabel("")
        self.meta.setObjectName("Muted")
        self.meta.elide_mode = Qt.TextElideMode.ElideRight
        lay.addWidget(self.meta)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.setAccessibleName("Passage preview")
        lay.addWidget(self.browser, 1)
        self.open_btn.clicked.connect(lambda: self._emit_source(self.open_requested))
        self.reveal_btn.clicked.connect(lambda: self._emit_source(self.reveal_requested))
        self.copy_btn.clicked.connect(self.copy_requested)
        self._result: SearchResult | None = None
        self.highlights = 0  # marks applied to the shown passage (tests)
        self.show_result(None)

    @property
    def result(self) -> SearchResult | None:
        return self._result

    def show_result(self, r: SearchResult | None, terms: list[str] | None = None, marked: str | None = None) -> None:
        """Show ``r``; ``marked`` is its text with the keyword lane's matches marked (else ``terms`` are)."""
        self._result = r
        for b in (self.open_btn, self.reveal_btn, self.copy_btn):
            b.setEnabled(r is not None)
        cols = colors()
        if r is None:
            self.title.setText("Preview")
            self.source.setText("")
            self.meta.setText("")
            muted = cols["muted"].name()
            self.browser.setHtml(f'<p style="color:{muted}">Select a result to read the whole passage.</p>')
            self.highlights = 0
            return
        self.title.setText(result_name(r))  # another machine's file is named with it ("desktop: plan.md")
        loc = r.location.describe()
        self.source.setText(" · ".join(x for x in (loc, r.source) if x))
        self.source.setToolTip(f"{r.source}\n{loc}" if loc else r.source)
        self.meta.setText(" · ".join(
            x for x in (f"#{r.rank}", r.kind, "weak match" if r.strength == WEAK else "", r.explain(),
                        f"modified {human_date(r.mtime)}" if r.mtime else "") if x))
        text = marked if marked is not None else mark_terms(r.text, terms or [])
        # setPlainText types with the cursor's current format: after a passage that began with a match the
        # cursor stood in a highlight, and the next passage came out highlighted from end to end
        self.browser.setCurrentCharFormat(QTextCharFormat())
        doc = self.browser.document()
        doc.setDefaultFont(monospace_font() if r.kind == "code" else self.browser.font())
        if r.kind == "markdown":
            self.browser.setMarkdown(markdown_for_display(text))
            tame_headings(doc)
        else:
            self.browser.setPlainText(text)
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(cols["term_bg"]))
        fmt.setFontWeight(QFont.Weight.DemiBold)
        self.highlights = apply_marks(doc, fmt)
        self.browser.moveCursor(QTextCursor.MoveOperation.Start)

    def _emit_source(self, sig: SignalInstance) -> None:
        if self._result is not None:
            sig.emit(self._result.source)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._result:
            self.open_requested.emit(self._result.source)
            return
        super().keyPressEvent(e)
