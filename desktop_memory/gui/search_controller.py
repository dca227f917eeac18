"""Runs searches for one view: debounce, the stale-result rule and the notes that explain a result list.

Why a controller of its own: the main window and the quick-search popup both turn typed text into results. This
class knows nothing about either: it takes the service (the typed :class:`MemoryApi` boundary) and a
:class:`TaskRunner`, and emits a :class:`SearchResponse` for each query that is still the newest one.

Stale-result rule: every request bumps ``generation``; a response is delivered only if its generation is still
the newest when it arrives, so a slow, older query can never overwrite a newer one (clearing the query counts as
a request). The runner's channel also keeps a queued, already-stale search from starting at all.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from ..config import SEMANTIC_BACKENDS
from ..models import WEAK, SearchFilters, SearchResult
from ..service_api import MemoryApi
from .tasks import TaskRunner

LOADING_NOTE = "Semantic model still loading: showing keyword results; they will refresh when it is ready."
_ids = itertools.count(1)


@dataclass(frozen=True)
class SearchRequest:
    query: str
    backend: str = "hybrid"
    top_k: int = 10
    filters: SearchFilters | None = None
    keep_chunk: int | None = None  # the result to keep selected when the same query is refreshed


@dataclass(frozen=True)
class SearchResponse:
    request: SearchRequest
    generation: int
    results: list[SearchResult]
    notes: list[str] = field(default_factory=list)  # why a lane was off, keyword fallback while loading, ...
    elapsed_ms: float = 0.0
    backend: str = ""  # the backend that really ran (keyword while the model loads)
    weak: bool = False
    marked: dict[int, str] | None = None  # {chunk id: text with the keyword lane's matches marked} (highlights)

    @property
    def query(self) -> str:
        return self.request.query


class SearchController(QObject):
    results_ready = Signal(object)  # SearchResponse, only for the newest request
    failed = Signal(object, object, str)  # (SearchRequest, exception, traceback), only for the newest request
    cleared = Signal()

    def __init__(self, service: MemoryApi | None, runner: TaskRunner, parent: QObject | None = None,
                 debounce_ms: int = 220) -> None:
        super().__init__(parent)
        self._svc = service
        self._runner = runner
        self._channel = f"search-{next(_ids)}"
        self.generation = 0
        self.semantic_loading = False  # while the model loads, hybrid searches run keyword-only (and say so)
        self.last_response: SearchResponse | None = None
        self._scheduled: SearchRequest | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._fire)
        self._typed: tuple[str, str] | None = None  # (query, backend) typed while a prepare ran: the next to embed
        self._preparing = False

    # -- inputs ------------------------------------------------------------------------------------------
    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service
        if service is None:
            self.invalidate()

    def has_service(self) -> bool:
        return self._svc is not None

    def schedule(self, request: SearchRequest) -> None:
        """Search after the debounce delay; a newer call replaces the waiting one (search-as-you-type)."""
        self._scheduled = request
        self._timer.start()

    def prepare(self, query: str, backend: str) -> None:
        """The box's text as it is typed: have its query vector made now (``MemoryApi.prepare_query``), so the
        Enter that follows finds it made or on its way. One at a time, the latest text only: a slow embedder never
        queues a vector per key, and at most one worker thread is taken."""
        if not query.strip() or self.semantic_loading or backend not in SEMANTIC_BACKENDS:
            return
        self._typed = (query, backend)
        if not self._preparing:
            self._prepare_next()

    def _prepare_next(self) -> None:
        svc, typed, self._typed = self._svc, self._typed, None
        if svc is None or typed is None:
            self._preparing = False
            return
        self._preparing = True
        query, backend = typed
        self._runner.submit(lambda: svc.prepare_query(query, backend), name="prepare-query",
                            on_error=lambda _exc, _tb: None,  # the search that follows says what failed
                            on_finished=self._prepare_next)

    def search(self, request: SearchRequest) -> int:
        """Search now (Enter, a filter change). Returns the request's generation; 0 when nothing ran."""
        self._timer.stop()
        self._scheduled = None
        if not request.query.strip():
            self.clear()
            return 0
        svc = self._svc
        if svc is None:
            return 0
        self.generation += 1
        gen = self.generation
        backend, notes = request.backend, []
        if backend == "hybrid" and self.semantic_loading:
            backend = "keyword"  # do not wait for the model: keyword results now, semantic joins when it is ready
            notes.append(LOADING_NOTE)
        started = time.perf_counter()

        def run() -> SearchResponse:  # worker thread
            # one call for all the list shows: the results and their highlights, on one reader
            out = svc.search_outcome(request.query, backend=backend, top_k=request.top_k, filters=request.filters,
                                     marks=True)
            weak = out.weak or (bool(out.results) and all(r.strength == WEAK for r in out.results))
            return SearchResponse(request, gen, out.results, notes + list(out.notes),
                                  (time.perf_counter() - started) * 1000, backend, weak, out.marked)

        self._runner.submit(run, name="search", channel=self._channel, on_done=self._deliver,
                            on_error=lambda exc, tb: self._failed(gen, request, exc, tb))
        return gen

    def clear(self) -> None:
        """The query was emptied: whatever is still running for an older one is dropped."""
        self._timer.stop()
        self._scheduled = None
        self.invalidate()
        self.last_response = None
        self.cleared.emit()

    def invalidate(self) -> None:
        self.generation += 1
        self._runner.invalidate(self._channel)

    # -- outputs -----------------------------------------------------------------------------------------
    def _fire(self) -> None:
        if self._scheduled is not None:
            self.search(self._scheduled)

    def _deliver(self, response: SearchResponse) -> None:
        if response.generation != self.generation:
            return  # a newer request was made meanwhile: this answer is stale
        self.last_response = response
        self.results_ready.emit(response)

    def _failed(self, gen: int, request: SearchRequest, exc: BaseException, tb: str) -> None:
        if gen == self.generation:
            self.failed.emit(request, exc, tb)
