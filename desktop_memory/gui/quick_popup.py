"""The quick-search popup (`desktop-memory-gui --quick`, the tray's Quick search): type, pick, copy, gone.

A small frameless window on top of everything, in the upper third of the screen under the mouse:

- typing searches as you type (debounced, latest query wins);
- ↑/↓ pick a result (the list takes the focus; typing a letter goes back to the query);
- Space (on the list) includes/excludes the picked result in the context block;
- Enter copies the context block of the included results and hides the popup;
- Shift+Enter copies the picked passage and hides the popup;
- Esc hides it (so does clicking elsewhere).

The popup never calls the service itself: a ``QuickEngine`` (gui/shell.py) runs searches and context packing on
the window's worker threads and calls back on the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QLabel, QLineEdit, QListView, QVBoxLayout, QWidget

from ..models import SearchResult
from . import desktop
from .formatting import query_terms
from .results_model import ResultDelegate, ResultsModel

DEBOUNCE_MS = 120  # shorter than the window's: the popup is for quick, short queries
HINT = "Enter copy context · Shift+Enter copy passage · ↓ then Space include/exclude · Esc close"


class QuickEngine(Protocol):
    def search(self, query: str, done: Callable[[list[SearchResult], list[str]], None],
               failed: Callable[[str], None]) -> None: ...

    def context(self, results: list[SearchResult], done: Callable[[str, int, int], None],
                failed: Callable[[str], None]) -> None: ...


class QuickPopup(QFrame):
    results_shown = Signal(str)  # the query whose results are now listed
    copied = Signal(str)  # "context" or "passage"

    def __init__(self, engine: QuickEngine, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
                         | Qt.WindowType.WindowStaysOnTopHint)
        self.setObjectName("QuickPopup")
        self.setWindowTitle("Desktop Memory quick search")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # frameless: its own edge, so it stands out from the window behind it in both themes
        self.setStyleSheet("#QuickPopup { border: 1px solid palette(highlight); background: palette(window); }")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.engine = engine
        self._shown_query: str | None = None
        self._copying = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 8)
        layout.setSpacing(6)
        self.box = QLineEdit()
        self.box.setObjectName("QuickBox")
        self.box.setPlaceholderText("Search your memory…")
        self.box.setClearButtonEnabled(True)
        f = self.box.font()
        f.setPointSizeF(f.pointSizeF() * 1.3)
        self.box.setFont(f)
        layout.addWidget(self.box)
        self.model = ResultsModel(self)
        self.view = QListView()
        self.view.setObjectName("QuickResults")
        self.view.setModel(self.model)
        self.view.setItemDelegate(ResultDelegate(self.view))
        self.view.setUniformItemSizes(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setAccessibleName("Quick search results")
        layout.addWidget(self.view, 1)
        self.status = QLabel("")
        self.status.setObjectName("Muted")
        layout.addWidget(self.status)
        self.hint = QLabel(HINT)
        self.hint.setObjectName("Muted")
        layout.addWidget(self.hint)
        self.resize(680, 460)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_search)
        self.box.textEdited.connect(lambda _t: self._timer.start())
        self.box.installEventFilter(self)
        self.view.installEventFilter(self)
        self.view.doubleClicked.connect(lambda idx: self.toggle(idx.row()))

    # ------------------------------------------------------------------ showing
    def summon(self) -> None:
        """Show on the screen under the mouse, upper third, focused, with the last query selected."""
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if screen is not None:
            geo = screen.availableGeometry()
            self.move(QPoint(geo.x() + (geo.width() - self.width()) // 2, geo.y() + geo.height() // 5))
        self.show()
        self.raise_()
        self.activateWindow()
        self.box.setFocus()
        self.box.selectAll()

    def showEvent(self, e: QShowEvent) -> None:
        super().showEvent(e)
        self.box.setFocus()

    def changeEvent(self, e: QEvent) -> None:
        super().changeEvent(e)
        # clicking elsewhere hides it, like a menu (not while it copies: the clipboard may steal focus briefly)
        if e.type() == QEvent.Type.ActivationChange and self.isVisible() and not self.isActiveWindow() \
                and not self._copying:
            self.hide()

    # ------------------------------------------------------------------ searching
    def run_search(self) -> None:
        self._timer.stop()
        q = self.box.text().strip()
        if not q:
            self.model.clear()
            self._shown_query = None
            self.status.setText("")
            return
        self.status.setText("Searching…")
        self.engine.search(q, lambda results, notes: self._show(q, results, notes), self._failed)

    def _show(self, query: str, results: list[SearchResult], notes: list[str]) -> None:
        if query != self.box.text().strip():
            return  # typed on meanwhile: the newer search will answer
        self.model.set_results(query, query_terms(query), results)
        self._shown_query = query
        if results:
            self.view.setCurrentIndex(self.model.index(0))
        self._update_status(notes)
        self.results_shown.emit(query)

    def _failed(self, message: str) -> None:
        self.status.setText(message)

    def _update_status(self, notes: list[str] | None = None) -> None:
        n = self.model.rowCount()
        if not n:
            text = "No matches." if self._shown_query else ""
        else:
            inc = len(self.model.included_results())
            text = f"{n} result{'s' if n != 1 else ''} · {inc} in the context block"
        if notes:
            text += " · " + "; ".join(notes)
        self.status.setText(text)

    # ------------------------------------------------------------------ actions
    def current_row(self) -> int:
        return self.view.currentIndex().row()

    def toggle(self, row: int) -> None:
        if self.model.result(row) is not None:
            self.model.set_included(row, not self.model.is_included(row))
            self._update_status()

    def step(self, delta: int) -> None:
        n = self.model.rowCount()
        if not n:
            return
        row = min(max(self.current_row() + delta, 0), n - 1)
        self.view.setCurrentIndex(self.model.index(row))
        self.view.setFocus()

    def copy_context(self) -> None:
        if self._timer.isActive() or self._shown_query != (self.box.text().strip() or None):
            self.run_search()  # Enter right after typing: search now, copy when it answers
            self.results_shown.connect(self._copy_after_search, Qt.ConnectionType.SingleShotConnection)
            return
        included = self.model.included_results()
        if not included:
            self.status.setText("Nothing to copy: no result is included.")
            return
        self._copying = True
        self.engine.context(included, self._context_ready, self._copy_failed)

    def _copy_after_search(self, _query: str) -> None:
        self.copy_context()

    def _context_ready(self, text: str, passages: int, tokens: int) -> None:
        self._copying = False
        if not text:
            self.status.setText("Nothing fits the token budget.")
            return
        desktop.copy_text(text)
        self.copied.emit("context")
        self.hide()

    def _copy_failed(self, message: str) -> None:
        self._copying = False
        self.status.setText(message)

    def copy_passage(self) -> None:
        r = self.model.result(self.current_row())
        if r is None:
            return
        desktop.copy_text(r.text)
        self.copied.emit("passage")
        self.hide()

    # ------------------------------------------------------------------ keys
    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if e.type() != QEvent.Type.KeyPress or not isinstance(e, QKeyEvent):
            return super().eventFilter(obj, e)
        key, mods = e.key(), e.modifiers()
        if key == Qt.Key.Key_Escape:
            self.hide()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.copy_passage()
            else:
                self.copy_context()
            return True
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            if obj is self.view and key == Qt.Key.Key_Up and self.current_row() <= 0:
                self.box.setFocus()
                return True
            self.step(1 if key == Qt.Key.Key_Down else -1)
            return True
        if obj is self.view:
            if key == Qt.Key.Key_Space:
                self.toggle(self.current_row())
                return True
            if (e.text() and e.text().isprintable()) or key == Qt.Key.Key_Backspace:
                self.box.setFocus()  # typing goes back to the query
                QGuiApplication.sendEvent(self.box, QKeyEvent(e.type(), key, mods, e.text()))
                return True
        return super().eventFilter(obj, e)
