"""Runs searches for one view: debounce, the stale-result rule and the notes that explain a result list.

Why a controller of its own: the main window and the quick-search popup both turn typed text into results. This
class knows nothing about either: it takes the service (the typed :class:`MemoryApi` boundary) and a
:class:`TaskRunner`, and emits a :class:`SearchResponse` for each query that is still the newest one.

Stale-result rule: every request bumps ``generation``; a response is delivered only if its generation is still
the newest when it arrives, so a slow, older query can never overwrite a newer one (clearing the query counts as
a request). The runner's channel also keeps a queued, already-stale search from starting at all.

Searching ahead (``ahead``): as the person types, the query's vector is made at once (``prepare``), and once typing
pauses for ``AHEAD_PAUSE_MS`` the text is searched, one search at a time and the latest text only, nothing of it
shown; the search that follows (Enter, the debounce) for the same text, backend, count and filters takes that
answer over — finished or still running — instead of starting again, once and only within ``AHEAD_FRESH_S``. Why:
the search a person waits for after Enter was ~1.5× the same search run back to back (its lanes read cold after the
pause typing makes); searched in the typing's pauses, Enter meets it finished or nearly (docs/BENCHMARKS.md, "Search
in the window", fourth pass). Not during a burst of keys: a search still running for an older text when Enter comes
would only compete with Enter's. Cost: one search per pause in typing, on a worker. With a reranker on, nothing is
searched ahead (it would ask the rerank server at every pause): only the vector is made.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal

from ..config import SEMANTIC_BACKENDS
from ..models import WEAK, SearchFilters, SearchResult
from ..service_api import MemoryApi
from .tasks import TaskRunner

LOADING_NOTE = "Semantic model still loading: showing keyword results; they will refresh when it is ready."
AHEAD_FRESH_S = 3.0  # an answer searched ahead is taken over only this long after it started: else searched again
AHEAD_PAUSE_MS = 80  # typing paused this long: the text is searched ahead (a fast typist's keys are ~100-150 ms apart)
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


@dataclass
class _Ahead:
    """One search run ahead of the person's Enter: its request and planned backend, and what became of it."""

    request: SearchRequest
    backend: str
    started: float
    response: SearchResponse | None = None
    failed: bool = False
    taken: tuple[int, SearchRequest] | None = None  # (generation, request) of the search that took it over

    def answers(self, request: SearchRequest, backend: str) -> bool:
        mine = self.request
        return (not self.failed and self.taken is None and backend == self.backend
                and (request.query, request.backend, request.top_k, request.filters)
                == (mine.query, mine.backend, mine.top_k, mine.filters)
                and time.perf_counter() - self.started <= AHEAD_FRESH_S)


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
        self._typed_request: SearchRequest | None = None  # typed while a search ahead ran: the next to search
        self._running_ahead = False
        self._ahead: _Ahead | None = None  # the latest search ahead (see the module doc)
        self._ahead_timer = QTimer(self)
        self._ahead_timer.setSingleShot(True)
        self._ahead_timer.setInterval(AHEAD_PAUSE_MS)
        self._ahead_timer.timeout.connect(self._ahead_due)

    # -- inputs ------------------------------------------------------------------------------------------
    def set_service(self, service: MemoryApi | None) -> None:
        self._svc = service
        self._ahead = None  # searched on another library (or none)
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

    def ahead(self, request: SearchRequest) -> None:
        """The box's text as it is typed: its vector made now, and searched unseen once typing pauses, for the
        search that follows to take over (module doc). With a reranker on, only its vector is made."""
        svc = self._svc
        if svc is None or not request.query.strip():
            return
        self.prepare(request.query, request.backend)
        if svc.settings.search.rerank:
            return
        self._typed_request = request
        self._ahead_timer.start()

    def _ahead_due(self) -> None:
        if not self._running_ahead:
            self._ahead_next()

    def _ahead_next(self) -> None:
        svc, request, self._typed_request = self._svc, self._typed_request, None
        if svc is None or request is None:
            self._running_ahead = False
            return
        self._running_ahead = True
        backend, notes = self._plan(request)
        slot = self._ahead = _Ahead(request, backend, time.perf_counter())
        self._runner.submit(self._work(svc, request, backend, notes, 0), name="search-ahead",
                            on_done=lambda resp: self._ahead_done(slot, resp),
                            on_error=lambda _exc, _tb: self._ahead_failed(slot), on_finished=self._ahead_ended)

    def _ahead_ended(self) -> None:
        self._running_ahead = False
        if self._typed_request is not None and not self._ahead_timer.isActive():
            self._ahead_next()  # typed meanwhile and already paused: the latest text next

    def _plan(self, request: SearchRequest) -> tuple[str, list[str]]:
        """(the backend that really runs, notes): keyword while the model loads, said in a note."""
        if request.backend == "hybrid" and self.semantic_loading:
            return "keyword", [LOADING_NOTE]  # do not wait for the model: keyword now, semantic when it is ready
        return request.backend, []

    @staticmethod
    def _work(svc: MemoryApi, request: SearchRequest, backend: str, notes: list[str],
              gen: int) -> Callable[[], SearchResponse]:
        started = time.perf_counter()

        def run() -> SearchResponse:  # worker thread
            # one call for all the list shows: the results and their highlights, on one reader
            out = svc.search_outcome(request.query, backend=backend, top_k=request.top_k, filters=request.filters,
                                     marks=True)
            weak = out.weak or (bool(out.results) and all(r.strength == WEAK for r in out.results))
            return SearchResponse(request, gen, out.results, notes + list(out.notes),
                                  (time.perf_counter() - started) * 1000, backend, weak, out.marked)

        return run

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
        backend, notes = self._plan(request)
        self._ahead_timer.stop()
        typed = self._typed_request
        if typed is not None and (typed.query, typed.backend) == (request.query, request.backend):
            self._typed_request = None  # not searched ahead any more: this search is it
        slot = self._ahead
        if slot is not None and slot.answers(request, backend):  # searched ahead as it was typed: take it over
            self._runner.invalidate(self._channel)  # an older search still queued here is stale
            slot.taken = (gen, request)
            if slot.response is not None:
                QTimer.singleShot(0, self, lambda: self._deliver_ahead(slot))
            return gen
        self._runner.submit(self._work(svc, request, backend, notes, gen), name="search", channel=self._channel,
                            on_done=self._deliver, on_error=lambda exc, tb: self._failed(gen, request, exc, tb))
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
        self._ahead_timer.stop()
        self._ahead, self._typed_request = None, None  # (a search ahead still running finishes unseen)

    # -- outputs -----------------------------------------------------------------------------------------
    def _fire(self) -> None:
        if self._scheduled is not None:
            self.search(self._scheduled)

    def _ahead_done(self, slot: _Ahead, response: SearchResponse) -> None:
        slot.response = response
        if slot.taken is not None:
            self._deliver_ahead(slot)

    def _ahead_failed(self, slot: _Ahead) -> None:
        slot.failed = True
        if slot.taken is not None and slot.taken[0] == self.generation:
            self.search(slot.taken[1])  # searched again, so the failure is reported as any search's

    def _deliver_ahead(self, slot: _Ahead) -> None:
        if slot.response is not None and slot.taken is not None:
            gen, request = slot.taken
            self._deliver(dataclasses.replace(slot.response, request=request, generation=gen))

    def _deliver(self, response: SearchResponse) -> None:
        if response.generation != self.generation:
            return  # a newer request was made meanwhile: this answer is stale
        self.last_response = response
        self.results_ready.emit(response)

    def _failed(self, gen: int, request: SearchRequest, exc: BaseException, tb: str) -> None:
        if gen == self.generation:
            self.failed.emit(request, exc, tb)
