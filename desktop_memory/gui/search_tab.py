"""The Search tab: result list (or a drop target / hint), preview and prompt context, and how a response shows.

A view only: it never calls the service. The window feeds it SearchResponses (search_controller.py) and the
library state it needs to pick the right hint.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from ..models import STATUS_INDEXED, Stats
from .context_panel import ContextPanel
from .drop_zone import EmptyState
from .formatting import query_terms
from .preview_panel import PreviewPanel
from .results_model import ResultDelegate, ResultsModel, ResultsView
from .results_wording import note_sentence, results_header, semantic_note
from .search_controller import SearchResponse

NOTE_LINES = 3  # lines of notes over the results
NOTE_LINES_SHORT = 1  # in a short window (the minimum size)
SHORT_TAB = 380  # px: the Search tab's height below which the notes take one line


@dataclass(frozen=True)
class LibraryState:
    """What the hint in an empty result area depends on."""

    open: bool = False  # a service is open
    busy: bool = False  # a job runs or waits
    stats: Stats | None = None


class SearchTab(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._backend = "hybrid"  # the backend of the results shown
        st = QVBoxLayout(self)
        st.setContentsMargins(0, 6, 0, 0)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setChildrenCollapsible(False)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.setSpacing(4)
        self.results_info = QLabel("")
        self.results_info.setObjectName("Muted")
        ll.addWidget(self.results_info)
        self.notes = QLabel("")
        self.notes.setMinimumWidth(1)  # one elided line each: its text never holds the window wide
        self.notes.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._notes_full: list[str] = []
        self.notes.setObjectName("Muted")
        self.notes.hide()
        ll.addWidget(self.notes)
        self.results_stack = QStackedWidget()
        self.empty_state = EmptyState()
        self.message = QLabel("")
        self.message.setObjectName("EmptyHint")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.results_model = ResultsModel(self)
        self.results_view = ResultsView()
        self.results_view.setModel(self.results_model)
        self.results_view.setItemDelegate(ResultDelegate(self.results_view))
        for w in (self.empty_state, self.message, self.results_view):
            self.results_stack.addWidget(w)
        ll.addWidget(self.results_stack, 1)
        self.split.addWidget(left)
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.setChildrenCollapsible(False)
        self.preview = PreviewPanel()
        self.context_panel = ContextPanel()
        self.context_panel.set_results_model(self.results_model)
        self.right_split.addWidget(self.preview)
        self.right_split.addWidget(self.context_panel)
        self.right_split.setSizes([300, 400])
        self.split.addWidget(self.right_split)
        self.split.setStretchFactor(0, 5)
        self.split.setStretchFactor(1, 4)
        st.addWidget(self.split)
        self.shown_query: str | None = None
        self._search_notes: list[str] = []
        self.results_view.selectionModel().currentRowChanged.connect(self._current_changed)

    def _current_changed(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        self.preview.show_result(self.results_model.result(cur.row()), self.results_model.terms,
                                 self.results_model.marked_text(cur.row()) or None)

    def navigate(self, key: int) -> None:
        """Up/Down/PageUp/PageDown typed in the search box move through the results *and into the list*, so the
        next Space toggles the result (instead of typing a space into the query) and Enter opens it."""
        n = self.results_model.rowCount()
        if not n:
            return
        view = self.results_view
        view.setFocus(Qt.FocusReason.OtherFocusReason)
        page = max(1, view.viewport().height() // max(1, view.sizeHintForRow(0)))
        delta = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_PageDown: page, Qt.Key.Key_PageUp: -page}.get(
            Qt.Key(key), 0)
        view.setCurrentIndex(self.results_model.index(min(n - 1, max(0, view.currentIndex().row() + delta))))

    def current_row(self) -> int:
        return self.results_view.currentIndex().row()

    def clear(self) -> None:
        self.results_model.clear()
        self.shown_query = None
        self.preview.show_result(None)
        self.results_info.setText("")
        self._search_notes = []
        self._notes_full = []
        self.notes.hide()

    def show_response(self, resp: SearchResponse, stats: Stats | None, busy: bool = False) -> None:
        q = resp.query
        self.results_model.set_results(q, query_terms(q), resp.results, resp.marked)
        self.shown_query = q
        self.results_info.setText(results_header(resp.results, resp.weak, resp.request.backend, resp.elapsed_ms))
        self._search_notes = [note_sentence(n_) for n_ in resp.notes if n_]
        self._backend = resp.request.backend
        self.render_notes(stats, busy)
        if resp.results:
            keep = resp.request.keep_chunk
            row = max(0, self.results_model.row_of_chunk(keep) if keep is not None else 0)
            self.results_view.setCurrentIndex(self.results_model.index(row))
            self.results_view.scrollTo(self.results_model.index(row))
        else:
            self.preview.show_result(None)

    def render_notes(self, stats: Stats | None, busy: bool) -> None:
        """The shown search's lane notes plus the semantic coverage, from the latest stats (so the header and
        the status bar always tell the same count)."""
        extra = semantic_note(stats, busy, self._backend) if self.shown_query else ""
        self._notes_full = [*self._search_notes, *([extra] if extra else [])]
        self._fit_notes()

    def _fit_notes(self) -> None:
        """Each note on one line, cut with "…" where it does not fit (the tooltip has them whole); a short window
        shows fewer lines, so the header never pushes the results out of sight (at the minimum size, ~7 lines of
        notes left less than one result)."""
        notes = self._notes_full
        self.notes.setToolTip("\n\n".join(notes) if notes else "")
        if not notes:
            self.notes.setText("")
            self.notes.hide()
            return
        fm = self.notes.fontMetrics()
        width = max(80, self.notes.width() if self.notes.isVisible() else self.width())
        lines = NOTE_LINES_SHORT if self.height() < SHORT_TAB else NOTE_LINES
        shown = [fm.elidedText(n, Qt.TextElideMode.ElideRight, width - 4) for n in notes[:lines]]
        if len(notes) > lines:
            shown[-1] = fm.elidedText(f"{notes[lines - 1]} (+{len(notes) - lines} more)", Qt.TextElideMode.ElideMiddle,
                                      width - 4)
        self.notes.setText("\n".join(shown))
        self.notes.show()

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        if self._notes_full:
            self._fit_notes()

    def show_failure(self, query: str, text: str) -> None:
        self.results_model.clear()
        self.shown_query = query
        self.preview.show_result(None)
        self.results_info.setText("Search failed")
        self.message.setText(text)
        self.results_stack.setCurrentWidget(self.message)

    def show_state(self, query: str, lib: LibraryState, filters_active: int) -> None:
        """Pick what the results area shows: drop target, a hint, or the list."""
        s = lib.stats
        docs = sum(s.documents.values()) if s else 0
        indexed = s.documents.get(STATUS_INDEXED, 0) if s else 0
        # a brand-new library: the drop target gets the whole width (preview/context have nothing to show), even
        # with a query left in the box from another library ("No results" would not say what to do)
        first_run = (docs == 0 and not lib.busy and lib.open and not self.results_model.rowCount()
                     and (s is not None or not query))  # with a query: once the counts say it is empty
        self.right_split.setVisible(not first_run)
        if self.results_model.rowCount():
            self.results_stack.setCurrentWidget(self.results_view)
            return
        if first_run:
            self.results_info.setText("")
            self.notes.hide()  # "Semantic lane off" and the like mean nothing before anything is indexed
            self.message.setText("")  # a "No results" shown before the counts arrived is not left behind it
            self.results_stack.setCurrentWidget(self.empty_state)
            return
        if not query:
            if not lib.open:
                text = "Opening your library…"
            elif lib.busy:
                text = "Indexing… you can search already: files are keyword-searchable as soon as they are read."
            else:
                text = (f"Type to search {indexed:,} document{'s' if indexed != 1 else ''}.\n\n"
                        "Ctrl+K focuses the search box from anywhere.")
        elif self.shown_query == query:
            text = f"No results for “{query}”."
            if filters_active:
                text += "\nTry removing some filters."
        else:
            text = "Searching…"
        self.message.setText(text)
        self.results_stack.setCurrentWidget(self.message)
