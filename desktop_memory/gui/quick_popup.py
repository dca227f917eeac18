"""The quick-search popup (`desktop-memory-gui --quick`, the tray's Quick search): type, pick, copy, gone.

A small frameless window on top of everything, in the upper third of the screen under the mouse:

- typing searches as you type (debounced, latest query wins);
- ↑/↓ pick a result (the list takes the focus; typing a letter goes back to the query);
- Space (on the list) includes/excludes the picked result in the context block;
- Enter copies the context block of the included results and hides the popup;
- Shift+Enter copies the picked passage and hides the popup;
- Esc hides it (so does clicking elsewhere).

It is built from the same parts as the window's search tab: a :class:`SearchController` (debounce, latest query
wins, keyword-only while the model loads) and a :class:`ContextController` (re-packs the included results under
the budget, copies exactly that block) over its own results model, on a worker runner of its own, with the
window's service (gui/desktop_integration.py hands it over).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..models import ContextReport
from ..service_api import MemoryApi
from . import desktop
from .context_controller import ContextController, block_summary, budget_to_fit, fits_nothing_text
from .formatting import query_terms
from .messages import error_text
from .results_model import ResultDelegate, ResultsModel
from .results_wording import join_notes
from .search_controller import SearchController, SearchRequest, SearchResponse
from .tasks import TaskRunner

DEBOUNCE_MS = 120  # shorter than the window's: the popup is for quick, short queries
HINT = "Enter copy context · Shift+Enter copy passage · ↓ then Space include/exclude · Esc close"


class QuickPopup(QFrame):
    results_shown = Signal(str)  # the query whose results are now listed
    copied = Signal(str)  # "context" or "passage"
    budget_raised = Signal(int)  # the person raised the budget here (the window keeps it too)

    def __init__(self, runner: TaskRunner, make_request: Callable[[str], SearchRequest], budget: int,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
                         | Qt.WindowType.WindowStaysOnTopHint)
        self.setObjectName("QuickPopup")
        self._notes: list[str] = []
        self.setWindowTitle("Desktop Memory quick search")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # frameless: its own edge, so it stands out from the window behind it in both themes
        self.setStyleSheet("#QuickPopup { border: 1px solid palette(highlight); background: palette(window); }")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.make_request = make_request  # the app's backend and top-k for a query (read at each search)
        self._shown_query: str | None = None
        self._copying = False
        self._copy_after_search = False
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
        self.searcher = SearchController(None, runner, self, debounce_ms=DEBOUNCE_MS)
        self.context = ContextController(self.model, runner, budget, self)
        self.searcher.results_ready.connect(self._show)
        self.searcher.failed.connect(lambda _req, exc, _tb: self._failed(error_text(exc)))
        self.searcher.cleared.connect(self._cleared)
        self.context.copied.connect(self._context_copied)
        self.context.nothing_to_copy.connect(self._nothing_to_copy)
        self.context.failed.connect(self._failed)
        self.context.report_ready.connect(lambda _r: self._update_status())
        self.view = QListView()
        self.view.setObjectName("QuickResults")
        self.view.setModel(self.model)
        self.view.setItemDelegate(ResultDelegate(self.view))
        self.view.setUniformItemSizes(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setAccessibleName("Quick search results")
        layout.addWidget(self.view, 1)
        foot = QHBoxLayout()
        self.status = QLabel("")
        self.status.setObjectName("Muted")
        self.status.setWordWrap(True)
        foot.addWidget(self.status, 1)
        self.raise_btn = QPushButton("")
        self.raise_btn.setAutoDefault(False)
        self.raise_btn.clicked.connect(self.raise_budget)
        self.raise_btn.hide()
        foot.addWidget(self.raise_btn)
        layout.addLayout(foot)
        self.hint = QLabel(HINT)
        self.hint.setObjectName("Muted")
        layout.addWidget(self.hint)
        self.resize(680, 460)

        self.box.textEdited.connect(lambda _t: self.schedule_search())
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
    def set_service(self, service: MemoryApi | None) -> None:
        self.searcher.set_service(service)
        self.context.set_service(service)

    def _request(self) -> SearchRequest | None:
        q = self.box.text().strip()
        return self.make_request(q) if q else None

    def schedule_search(self) -> None:
        """Search as you type: after the debounce, the newest text wins."""
        req = self._request()
        if req is None:
            self.searcher.clear()
        else:
            self.searcher.ahead(req)  # searched while the debounce waits: the debounce's search takes it over
            self.searcher.schedule(req)

    def run_search(self) -> None:
        """Search now (Enter before the debounce fired, the library just opened)."""
        req = self._request()
        if req is None:
            self.searcher.clear()
            return
        if not self.searcher.has_service():
            self.status.setText("Opening the library…")
            return
        self.status.setText("Searching…")
        self.searcher.search(req)

    def _show(self, response: SearchResponse) -> None:
        self.model.set_results(response.query, query_terms(response.query), response.results)  # → re-pack
        self._shown_query = response.query
        if response.results:
            self.view.setCurrentIndex(self.model.index(0))
        self._notes = list(response.notes)
        self._update_status()
        self.results_shown.emit(response.query)
        if self._copy_after_search:
            self._copy_after_search = False
            self.copy_context()

    def _cleared(self) -> None:
        self.model.clear()
        self._shown_query = None
        self._notes = []
        self.status.setText("")

    def _failed(self, message: str) -> None:
        self._copying = False
        self._copy_after_search = False
        self.status.setText(message)

    def _nothing_to_copy(self) -> None:
        rep = self.context.report
        self._failed(fits_nothing_text(rep) if rep is not None and budget_to_fit(rep) else
                     "Nothing to copy: no result is included.")

    def _update_status(self) -> None:
        """The footer says what Enter copies: it is read from the same packing (the context report) whose text
        goes to the clipboard, never counted separately."""
        n = self.model.rowCount()
        rep = self.context.report
        raise_to = None
        if not n:
            text = "No matches." if self._shown_query else ""
        elif self.context.pending or rep is None:
            text = f"{n} result{'s' if n != 1 else ''} · packing the context…"
        else:
            raise_to = budget_to_fit(rep)
            text = f"{n} result{'s' if n != 1 else ''} · " + (fits_nothing_text(rep) if raise_to else
                                                                 block_summary(rep))
        notes = self._notes
        if notes:
            text += " · " + join_notes(notes)
        self.status.setText(text)
        self.raise_btn.setVisible(raise_to is not None)
        if raise_to is not None:
            self.raise_btn.setText(f"&Raise budget to {raise_to:,}")

    def raise_budget(self) -> None:
        """Raise the budget so the best included passage fits (and tell the window, which keeps it)."""
        raise_to = budget_to_fit(self.context.report)
        if raise_to is not None:
            self.context.set_budget(raise_to)
            self.budget_raised.emit(raise_to)
            self._update_status()

    # ------------------------------------------------------------------ actions
    def current_row(self) -> int:
        return self.view.currentIndex().row()

    def toggle(self, row: int) -> None:
        if self.model.result(row) is not None:
            self.model.set_included(row, not self.model.is_included(row))  # → re-pack
            self._update_status()

    def step(self, delta: int) -> None:
        n = self.model.rowCount()
        if not n:
            return
        row = min(max(self.current_row() + delta, 0), n - 1)
        self.view.setCurrentIndex(self.model.index(row))
        self.view.setFocus()

    def copy_context(self) -> None:
        """Enter: the block of the included results (after the search of what was just typed, if any)."""
        if self._shown_query != (self.box.text().strip() or None):
            self._copy_after_search = True  # Enter right after typing: search now, copy when it answers
            self.run_search()
            return
        self._copying = True
        self.context.copy()  # waits for a re-pack in progress, then copies exactly that block

    def _context_copied(self, report: ContextReport) -> None:
        self._copying = False
        self.copied.emit("context")
        self.hide()

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
