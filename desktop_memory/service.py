"""The one façade the GUI and the CLI call. No Qt here.

Connection ownership: see connections.py (one writer, a pool of readers, nothing else opens one).

Every write (a person's drops, watch batches, removals, embedding, compaction) is a job of ONE
:class:`~desktop_memory.jobs.Scheduler` per service (:attr:`MemoryService.scheduler`, started on first use): it runs
them on one writer thread in priority order, so a saved edit or a removal never waits behind an embedding for more
than one slice. The write methods below submit a job and wait for it (one-shot callers: the CLI, MCP, benchmarks);
the loops themselves are in library_writes.py, run by the jobs. Everything else here reads.

The embedder is shared (thread-safe, created once under a lock, loaded lazily). Settings are immutable from the
service's point of view: :meth:`apply_settings` swaps in a new object, a running job keeps the one it started with.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .config import EmbedderSettings, Settings
from .connections import Connections
from .context import build_context as _pack
from .embed import make_embedder
from .embed.base import Embedder
from .embed.identity import embedder_for
from .errors import Cancelled, EmbedderError, StoreError
from .ingest.model_build import ModelView, model_view
from .ingest.pipeline import ProgressFn
from .jobs import AUTO, COMPACT, EMBED, READ, REMOVE, Job, Scheduler
from .jobs.operations import Compact, DropModelVectors, EmbedPending, IncludeAgain, ReadPaths, Reembed, RemovePaths
from .library_writes import LibraryWrites
from .models import (
    ContextReport,
    DocumentInfo,
    IndexSummary,
    LibraryListing,
    LibraryQuery,
    ModelVectors,
    SearchFilters,
    SearchResult,
    Stats,
    is_inside,
)
from .reader_pool import ReaderPool
from .retrieve import Searcher, SearchOutcome
from .retrieve.dense import warm as warm_dense
from .retrieve.filters import clean_filters, clean_query
from .retrieve.highlight import marked_texts
from .retrieve.strength import strong_only as _strong_only
from .service_api import MemoryApi
from .store import Store, doc_listing
from .store.passages import PassageWithNeighbours, read_passage

DEFAULT_READERS = 3  # the GUI's query runner has 3 threads; the CLI uses one
log = logging.getLogger(__name__)
WARM_UP_QUERY = "what the first search needs"  # any words: the search's path matters, not its hits


def strong_only(results: Sequence[SearchResult], include_weak: bool = False) -> list[SearchResult]:
    """The results that go into a prompt context by default: weak matches are left out (``include_weak`` keeps
    them). Ranks are kept as searched, so the [Source] order matches the result list."""
    return list(results) if include_weak else _strong_only(results)


class MemoryService:
    def __init__(self, settings: Settings | None = None, db_path: Path | str | None = None,
                 embedder: Embedder | None = None, *, readers: int = DEFAULT_READERS,
                 busy_timeout_ms: int | None = None) -> None:
        self.settings = settings or Settings()
        self.db_path = Path(db_path) if db_path else self.settings.resolved_db_path()
        self._embedder = embedder
        self._embedder_injected = embedder is not None
        self._embedder_lock = threading.Lock()
        self._library_embedders: dict[str, Embedder | None] = {}  # this library's models, by id (see _view)
        self.searcher = Searcher(self.settings.search)
        self._db = Connections(self.db_path, readers, busy_timeout_ms)  # a bad path or schema fails here, clearly
        # why the database is read-only when it cannot be written (read-only file or media, disk full): said once
        # by the front ends; search still works and writes are refused with the reason (Store.immediate_writes)
        self.read_only_note: str = self._db.read_only_note
        self.writes = LibraryWrites(self)  # every write; run only by the scheduler's jobs
        self._scheduler: Scheduler | None = None
        self._scheduler_lock = threading.Lock()

    # ---------- connections (connections.py) ----------
    def writing(self) -> AbstractContextManager[Store]:
        """The writer, for this block only (one writer per process; IMMEDIATE transactions)."""
        return self._db.writing()

    def reading(self) -> AbstractContextManager[Store]:
        """A pooled reader, leased to the calling thread for this block."""
        return self._db.reading()

    def _spare_reader(self) -> AbstractContextManager[Store | None]:
        """A second pooled reader for a search's helper thread, or None when none is free."""
        return self._db.spare_reader()

    def open_connections(self) -> int:
        """How many SQLite connections the service holds now (the writer plus readers opened so far)."""
        return self._db.open_count()

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings.embedder)
            return self._embedder

    def embedder_model_id(self) -> str:
        """The current embedder's model id (creating the embedder object does not load the model)."""
        return self.embedder.model_id

    def apply_settings(self, settings: Settings) -> None:
        """Take a new settings object (never mutated afterwards). Search settings apply to the next query, chunking
        and ingest ones to the next job; the database path and the embedder are NOT switched here (reopen the
        service, or call :meth:`set_embedder_settings`). Cheap: it only swaps references."""
        self.settings = dataclasses.replace(settings, embedder=self.settings.embedder)
        self.searcher = Searcher(self.settings.search, bm25_index=self.searcher.bm25)

    @property
    def scheduler(self) -> Scheduler:
        """The one scheduler of this library's background writes (created here; its thread starts on first job)."""
        with self._scheduler_lock:
            if self._scheduler is None:
                self._scheduler = Scheduler(self.writes)
            return self._scheduler

    def close(self) -> None:
        """Stop the scheduler, then close every connection (idempotent). Other workers must be done first."""
        with self._scheduler_lock:
            scheduler = self._scheduler
        self._db.stop_waiting()  # a write waiting for another process's lock does not hold up the close
        if scheduler is not None:
            scheduler.stop()
        if self.searcher.reranker is not None:  # its HTTP connections (retrieve/rerank.py)
            self.searcher.reranker.close()
        self._db.close()

    # ---------- writes: each a job of the scheduler ----------
    def _perform(self, job: Job, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Any:
        """Submit a write and wait for it (library_writes.py does it, on the scheduler's lane)."""
        return self.scheduler.perform(job, progress, cancel)

    def index_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        """Index files/folders the person named (CLI, MCP, a benchmark), embedding them in the same run unless
        ``embed`` is off. ``include_excluded`` (they named it again: `index PATH`, "Include again") includes a
        path they removed earlier and name exactly again. See LibraryWrites.index_paths."""
        op = ReadPaths(embed=embed, include_excluded=include_excluded, embed_later=False)
        summary: IndexSummary = self._perform(Job(READ, [str(p) for p in paths], force=force, operation=op),
                                              progress, cancel)
        return summary

    def embed_pending(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> int:
        """Embed what is queued, then go on building the vectors of a model being switched to; returns how many
        passages got vectors (raises Cancelled when ``cancel`` stopped it)."""
        summary = self.embed_pending_summary(progress, cancel)
        if summary.cancelled:
            raise Cancelled("embedding cancelled")
        return summary.chunks_embedded

    def embed_pending_summary(self, progress: ProgressFn | None = None,
                              cancel: threading.Event | None = None) -> IndexSummary:
        """Embed what is queued; a cancel returns a summary marked cancelled (vectors committed so far stay)."""
        summary: IndexSummary = self._perform(Job(EMBED, source=AUTO, operation=EmbedPending()), progress, cancel)
        return summary

    def reembed(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Embed the whole library again with the configured embedder: its own vectors are dropped first (when it
        is the model search uses, semantic search waits for them; otherwise the active set answers meanwhile)."""
        summary: IndexSummary = self._perform(Job(EMBED, source=AUTO, operation=Reembed()), progress, cancel)
        return summary

    def remove_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int:
        """Remove files, or whole folders, from the index (the files on disk are never touched); returns how many
        documents went. Final, in short slices; ``exclude``: the person's removal (what lies inside a library
        folder becomes an exclusion). See LibraryWrites.remove_paths."""
        removed: int = self._perform(Job(REMOVE, [str(p) for p in paths], operation=RemovePaths(exclude=exclude)),
                                     progress, cancel)
        return removed

    def finish_interrupted_removal(self, progress: ProgressFn | None = None,
                                   cancel: threading.Event | None = None) -> list[str]:
        """Finish a removal a quit or a kill interrupted (its intent is recorded in the library) before anything
        else is written; returns the paths it finished ([]: none was pending). The scheduler starts that removal
        when it is created (any command that writes creates it): this waits for it, showing its progress."""
        pending = self.pending_removals()
        if not pending and not self.erasing_unfinished():
            return []
        started = self.scheduler.resumed_removal
        job = started if started is not None and not started.finished else None
        if job is None:
            job = self.scheduler.submit(Job(REMOVE, source=AUTO, operation=RemovePaths()))
        self.scheduler.wait_for(job, progress, cancel)
        return pending

    def include_paths(self, paths: Iterable[str | Path]) -> list[str]:
        """Include again: every exclusion at or below ``paths`` is lifted (nothing is read here; index them next).
        Returns the exclusions lifted."""
        lifted: list[str] = self._perform(Job(READ, [str(p) for p in paths], operation=IncludeAgain()))
        return lifted

    def compact(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        """"Compact and erase": rebuild the database from live data only (VACUUM), so nothing removed before
        secure delete existed survives in free pages. Returns (bytes before, bytes after). Progress (phase
        "compact", per mille) and cancellable (raises :class:`Cancelled`; the library is as it was). A job of the
        scheduler: run in priority order, the embedding's commits wait for its VACUUM, search never does."""
        sizes: tuple[int, int] = self._perform(Job(COMPACT, operation=Compact()), progress, cancel)
        return sizes

    def drop_model_vectors(self, model_id: str) -> int:
        """Delete another model's vectors kept in this library (never the set search uses); returns how many went.
        ``compact`` gives their space back to the disk."""
        dropped: int = self._perform(Job(COMPACT, operation=DropModelVectors(model_id)))
        return dropped

    def pending_removals(self) -> list[str]:
        """Paths whose removal began and did not finish (the app quit meanwhile): the scheduler finishes them."""
        return self.writes.pending_removals()

    def erasing_unfinished(self) -> bool:
        """Removed documents' terms still wait for the FTS merge (a quit during a removal's last phase)."""
        return self.writes.erasing_unfinished()

    def exclusions(self) -> list[str]:
        """Paths removed from inside a library folder (store/exclusions.py): every walk and watcher leaves them out."""
        with self.reading() as store:
            return store.excluded()

    def embedding_paused(self) -> bool:
        """Whether the person paused this library's embedding (Cancel) and has not resumed it: kept in the library
        file, so a restart, a second window or `desktop-memory watch` does not start it behind their back."""
        return self.writes.embedding_paused()

    def set_embedding_paused(self, paused: bool) -> None:
        self.writes.set_embedding_paused(paused)

    # ---------- the embedder ----------
    def load_embedder(self) -> None:
        """Load the model search embeds queries with here: the library's own when it is not the configured one
        (issue 30); the configured one is then tried too, and its failure does not turn semantic search off."""
        with self.reading() as store:
            own = self.model_view(store).search_embedder
        if own is None or own is self.embedder:
            self.embedder.load()
            return
        own.load()
        with contextlib.suppress(EmbedderError):
            self.embedder.load()  # (the build beside reports its own failure)

    def set_embedder_settings(self, new: EmbedderSettings) -> bool:
        """Use another embedder for this library. Nothing is deleted (issue 30): the library keeps answering from
        the vectors it has while the new model's are built beside them (embed_pending(); the switch happens when
        they are complete). Returns True when such a build is needed (LibraryWrites.choose_configured_model)."""
        if new != self.settings.embedder or self._embedder is None:
            self.settings = dataclasses.replace(self.settings, embedder=new)
            if not self._embedder_injected:
                with self._embedder_lock:
                    self._embedder = make_embedder(new)  # (the same settings keep the loaded model)
        return self.writes.choose_configured_model()

    def choose_configured_model(self) -> bool:
        """The person asked for vectors (``embed``, Embed missing vectors): when the configured model is not the
        one this library's vectors come from, its set is built beside them (set_embedder_settings). Returns
        True when such a build is needed. A library is never switched to another model behind the person's
        back: a global setting changed while another library was open only shows a note here until then."""
        return self.set_embedder_settings(self.settings.embedder)

    def model_view(self, store: Store) -> ModelView:
        """This library's models against the configured one: which embeds the queries, what to say about it."""
        return model_view(store, self.embedder, self._library_embedder)

    def _library_embedder(self, model_id: str, dim: int, recorded: str | None) -> Embedder | None:
        """The embedder of one of this library's models (made once; None when not available on this computer)."""
        with self._embedder_lock:
            if model_id not in self._library_embedders:
                self._library_embedders[model_id] = embedder_for(model_id, dim, recorded)
            return self._library_embedders[model_id]

    # ---------- search ----------
    def search_outcome(self, query: str, backend: str | None = None, top_k: int | None = None,
                       filters: SearchFilters | None = None, *, marks: bool = False) -> SearchOutcome:
        """``marks``: also the results' highlights (``SearchOutcome.marked``), read on the same reader, so a window
        asks once per search for all it shows."""
        # filters made valid for SQLite here (UserError if one cannot be used); the searcher cleans query and top_k
        filters = clean_filters(filters)
        backend = backend or self.settings.search.backend
        semantic = backend in ("hybrid", "dense")
        searcher = self.searcher
        # a hybrid search may also lease a free reader for its keyword lane; one read snapshot, so a model switch
        # committed meanwhile never pairs the old model's query with the new model's vectors
        with self.reading() as store, store.read_snapshot():
            pending = store.pending_removals()
            if pending:  # a removal interrupted (killed): its text is not offered while the next writer finishes
                # it, and is left out inside the lanes, so it takes no place in the top-k and no note counts it
                filters = dataclasses.replace(filters or SearchFilters(),
                                              exclude_paths=(*(filters.exclude_paths if filters else ()), *pending))
            # queries are embedded with the model of the vectors this library has (issue 30), said in a note
            view = self.model_view(store) if semantic else None
            embedder = None if view is None else (view.search_embedder or self.embedder)
            out = searcher.search(store, embedder, query, backend=backend, top_k=top_k, filters=filters,
                                  spare_reader=self._spare_reader)
            if marks and out.results:
                out.marked = self._marks(store, query, backend, out.results)
        if view is not None and view.note:
            off = [n.removeprefix("semantic lane off: ") for n in out.notes if n.startswith("semantic lane off: ")]
            out.notes = [n for n in out.notes if not n.startswith("semantic lane off: ")]
            out.notes.insert(0, view.search_note(None if view.search_embedder is None or not off else off[0]))
        return out

    @staticmethod
    def _marks(store: Store, query: str, backend: str, results: Sequence[SearchResult]) -> dict[int, str] | None:
        """What the keyword lane matched in each result (none for a semantic-only search); None when highlighting
        failed: results without highlights beat no results."""
        if backend == "dense":
            return {}
        try:
            return marked_texts(store, clean_query(query), [r.chunk_id for r in results])
        except Exception:
            log.warning("highlighting the results failed", exc_info=True)
            return None

    def search(self, query: str, backend: str | None = None, top_k: int | None = None,
               filters: SearchFilters | None = None) -> list[SearchResult]:
        return self.search_outcome(query, backend=backend, top_k=top_k, filters=filters).results

    def warm_up(self, cancel: threading.Event | None = None, *, semantic: bool = False) -> None:
        """Load what the first search needs, now (the window calls this on a worker once it is shown): one
        throwaway keyword search first (the keyword lane's cached counts and pages: what a search runs while the
        model still loads), then the dense lane's code matrices and, with ``semantic`` (the embedder is loaded),
        one hybrid search (the model session's first run, the query-embedding and keyword-lane threads, a second
        reader). Readers only, never the writer; no reranker is asked; ``cancel`` interrupts the matrices' load
        and stops it between steps. A failure is left for the first real search to report."""
        searcher = Searcher(dataclasses.replace(self.settings.search, rerank=False), bm25_index=self.searcher.bm25)

        def stopped() -> bool:
            return cancel is not None and cancel.is_set()

        def search(backend: str) -> None:
            with self.reading() as store:
                # the model this library's queries are embedded with (issue 30: its own, where available)
                own = self.model_view(store).search_embedder if backend == "hybrid" else None
                searcher.search(store, (own or self.embedder) if backend == "hybrid" else None, WARM_UP_QUERY,
                                backend=backend, spare_reader=self._spare_reader)

        if stopped():
            return
        search("keyword")
        with self.reading() as store:
            vectors = store.model_info()[0] is not None and store.has_vector_table()
            if not vectors or stopped():
                return
            try:
                with store.cancellable(cancel):
                    warm_dense(store)
            except Cancelled:
                return
        if semantic and not stopped():
            search("hybrid")

    def highlights(self, query: str, chunk_ids: Sequence[int]) -> dict[int, str]:
        """{chunk id: text with the keyword lane's matched tokens marked} for the shown results
        (retrieve/highlight.py); a semantic-only hit is absent."""
        with self.reading() as store:
            return marked_texts(store, clean_query(query), chunk_ids)

    def build_context(self, results: Sequence[SearchResult], budget: int | None = None,
                      extra_roots: Sequence[str] = ()) -> ContextReport:
        """Pack ``results`` (the caller chose which); sources named by ``[context] path_style``. ``extra_roots``:
        folders being indexed right now (a folder becomes a root only once it has been read)."""
        with self.reading() as store:
            roots = [*store.roots(), *extra_roots]
        return _pack(results, self.settings.context.budget_tokens if budget is None else budget,
                     roots=roots, path_style=self.settings.context.path_style)

    def context(self, query: str, budget: int | None = None, backend: str | None = None, top_k: int | None = None,
                filters: SearchFilters | None = None, include_weak: bool = False) -> ContextReport:
        """Search and pack; weak matches stay out unless ``include_weak`` (a nonsense query packs nothing)."""
        results = self.search(query, backend=backend, top_k=top_k, filters=filters)
        return self.build_context(strong_only(results, include_weak), budget)

    def context_outcome(self, query: str, budget: int | None = None, backend: str | None = None,
                        top_k: int | None = None,
                        filters: SearchFilters | None = None,
                        include_weak: bool = False) -> tuple[ContextReport, SearchOutcome]:
        """The packed context and the search outcome it came from (its notes: why a lane was off, ...). Weak
        matches stay out unless ``include_weak``."""
        outcome = self.search_outcome(query, backend=backend, top_k=top_k, filters=filters)
        return self.build_context(strong_only(outcome.results, include_weak), budget), outcome

    # ---------- library ----------
    def stats(self) -> Stats:
        with self.reading() as store:
            counts = store.counts()
            model_id, dim = store.model_info()
            pending = store.pending_count()
            db_bytes = store.db_bytes()
            excluded = store.excluded()
            view = self.model_view(store)
            models = [ModelVectors(s.model_id, s.dim, s.vectors, s.bytes, s.active,
                                   pending if s.active else store.models.side_missing(s.model_id))
                      for s in store.models.sets(active_count=counts["vectors"])]
            removing = store.pending_removals()
            left = store.count_under(removing) if removing else 0
        return Stats(documents=counts["by_status"], chunks=counts["chunks"], vectors=counts["vectors"],
                     pending_vectors=pending, db_path=str(self.db_path), db_bytes=db_bytes,
                     model_id=model_id, dim=dim, duplicates=counts["duplicates"], excluded=excluded, models=models,
                     configured_model=view.configured, search_model=view.search_model, model_note=view.note,
                     removing=removing if left else [], removing_documents=left)

    def change_stamp(self) -> tuple[int, ...]:
        """The store's change counters (:meth:`Store.change_stamp`): any committed change to documents or vectors,
        by this process or another, gives a different stamp. One small read on a pooled reader."""
        with self.reading() as store:
            return store.change_stamp()

    def documents(self) -> list[DocumentInfo]:
        with self.reading() as store:
            docs = store.list_documents()
            pending = store.pending_removals()
        return [d for d in docs if not _under_any(d.path, pending)] if pending else docs

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing:
        """The Library's first screen: every folder's summary, and the first ``pages[key]`` files of the folders
        asked for (all files when at most ``eager_limit`` match). See store/doc_listing.py."""
        with self.reading() as store:
            found = doc_listing.listing(store, query, pages, eager_limit)
            found.excluded = store.excluded()
            return found

    def library_page(self, query: LibraryQuery, folder_key: str, offset: int, limit: int) -> list[DocumentInfo]:
        """More of one folder's files, in the query's order (the Library asks as its rows are scrolled into view)."""
        with self.reading() as store:
            return doc_listing.page(store, query, folder_key, offset, limit)

    def indexed_under(self, folder: str) -> dict[str, tuple[int, float]]:
        """{path: (size, mtime)} of the indexed files below ``folder`` (a range of the path index, not a scan)."""
        with self.reading() as store:
            return {d.path: (d.size, d.mtime) for d in store.documents_under(folder)}

    def roots(self) -> list[str]:
        with self.reading() as store:
            return store.roots()

    def take_notices(self) -> list[str]:
        """One-line notices from opening the library (e.g. a folder or file made owner-only), each given once:
        the CLI prints them on stderr, the window shows them in a banner."""
        return self._db.take_notices()

    def check(self, progress: Callable[[str, int, int], None] | None = None,
              cancel: threading.Event | None = None, full: bool = False) -> list[str]:
        """The library's consistency problems ([] = healthy), on a pooled reader: search and writes go on while it
        runs (it only reads). ``progress(step, done, steps)`` names each step; ``cancel`` stops it within ~0.1 s
        (raises :class:`Cancelled`). ``full``: SQLite's ``integrity_check`` and FTS5's own self-check too, on the
        writer (that self-check is a write statement: other writes wait for it, as they would for SQLite's lock)."""
        if full:
            with self.writing() as store:
                return _removal_problems(store) + store.check_integrity(progress, cancel, full=True)
        with self.reading() as store:
            return _removal_problems(store) + store.check_integrity(progress, cancel, full=False)

    def passage(self, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
        """One stored passage by id with the passages around it in its file (None: no such id, e.g. removed)."""
        with self.reading() as store:
            found = read_passage(store, chunk_id, neighbours)
            if found is not None and _under_any(found.passage.source, store.pending_removals()):
                return None  # being removed (an interrupted removal the next writer finishes): as good as gone
            return found


def _under_any(path: str, folders: Sequence[str]) -> bool:
    return any(is_inside(path, f) for f in folders)


def _removal_problems(store: Store) -> list[str]:
    """An interrupted removal is reported by `check` until a command that writes finishes it."""
    pending = store.pending_removals()
    left = store.count_under(pending) if pending else 0
    if not left:  # (its documents all gone: only its closing commit, or the erasing, is left; any writer ends it)
        return []
    return [f"removal in progress: {', '.join(pending)} ({left:,} document(s) still to remove); any command that "
            "writes (e.g. `desktop-memory compact`), the window or `watch` finishes it"]


__all__ = ["DEFAULT_READERS", "MemoryService", "ReaderPool", "StoreError", "strong_only"]


def _implements_api(svc: MemoryService) -> MemoryApi:
    """Never called: mypy checks here that MemoryService offers every call of the GUI's boundary, typed alike."""
    return svc
