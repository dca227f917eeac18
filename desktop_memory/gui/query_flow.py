"""The window's search from end to end: the search bar's query goes to the :class:`~.search_controller
.SearchController` as a request, and its answer, error or clearing comes back to the Search tab.

Why apart from the window: it is the one path a typed query takes, and it needs only the bar, the controller, the
tab, the configured top-k and what the empty-result hint says about the library (open, busy, counts). The stale-
result rule stays in the controller: only the newest request's answer reaches :meth:`_done`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from .messages import search_error_text
from .search_controller import SearchController, SearchRequest, SearchResponse
from .search_tab import LibraryState, SearchTab
from .search_view import SearchBar


class QueryFlow(QObject):
    finished = Signal(str)  # the query whose results (or error) are now shown

    def __init__(self, bar: SearchBar, searcher: SearchController, tab: SearchTab, *, top_k: Callable[[], int],
                 library: Callable[[], LibraryState], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bar, self._searcher, self._tab = bar, searcher, tab
        self._top_k, self._library = top_k, library
        searcher.results_ready.connect(self._done)
        searcher.failed.connect(self._failed)
        searcher.cleared.connect(self._cleared)

    def request(self, keep_chunk: int | None = None) -> SearchRequest:
        """The bar's query, backend and filters with the configured count, as a request."""
        return SearchRequest(self._bar.query(), self._bar.current_backend(), self._top_k(), self._bar.filters(),
                             keep_chunk)

    def typed(self) -> None:
        """The bar's text changed by typing: searched ahead, for the Enter that follows (SearchController.ahead)."""
        self._searcher.ahead(self.request())

    def run(self, keep_selection: bool = False) -> None:
        """Search for the bar's query now (``keep_selection``: the same passage stays selected if it is found)."""
        q = self._bar.query()
        if not q:
            self._searcher.clear()
            return
        if not self._searcher.has_service():
            self._tab.results_info.setText("Opening the library…")
            return
        model = self._tab.results_model
        cur = model.result(self._tab.current_row()) if keep_selection else None
        if model.rowCount() == 0:
            self._tab.results_info.setText("Searching…")
        self._searcher.search(self.request(cur.chunk_id if cur else None))

    def show_state(self) -> None:
        """The results area for the library as it is now: the list, a hint, or the drop target."""
        self._tab.show_state(self._bar.query(), self._library(), self._bar.active_filter_count())

    def _cleared(self) -> None:
        self._tab.clear()
        self.show_state()

    def _done(self, resp: SearchResponse) -> None:
        lib = self._library()
        self._tab.show_response(resp, lib.stats, lib.busy)
        self.show_state()
        self.finished.emit(resp.query)

    def _failed(self, req: SearchRequest, exc: BaseException, tb: str) -> None:
        self._tab.show_failure(req.query, search_error_text(exc, tb))
        self.finished.emit(req.query)


__all__ = ["QueryFlow"]
