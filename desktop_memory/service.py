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
import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, cast

from .config import SEMANTIC_BACKENDS, EmbedderSettings, Settings
from .connections import Connections
from .context import build_context as _pack
from .embed.base import Embedder
from .errors import Cancelled, EmbedderError, StoreError
from .ingest.model_build import ModelView
from .ingest.pipeline import ProgressFn
from .jobs import AUTO, COMPACT, EMBED, READ, REMOVE, SETTINGS, Job, Scheduler
from .jobs import operations as ops  # what each write job does
from .library_embedders import LibraryEmbedders
from .library_location import parse_location
from .library_reads import LibraryReads
from .library_writes import LibraryWrites
from .machine import machine_name, this_machine
from .machines_view import name_results
from .model_servers import ModelServers
from .models import ContextReport, IndexSummary, SearchFilters, SearchResult
from .reader_pool import ReaderPool
from .retrieve import Searcher, SearchOutcome, SearchState
from .retrieve.dense import warm as warm_dense
from .retrieve.filters import clean_filters, clean_query
from .retrieve.highlight import marked_texts, result_marks
from .retrieve.strength import strong_only as _strong_only
from .service_api import MemoryApi
from .store.protocol import DenseOnServer, LibraryStore

DEFAULT_READERS = 3  # the GUI's query runner has 3 threads; the CLI uses one
WARM_UP_QUERY = "what the first search needs"  # any words: the search's path matters, not its hits


def strong_only(results: Sequence[SearchResult], include_weak: bool = False) -> list[SearchResult]:
    """A prompt context's results by default: weak ones left out (``include_weak`` keeps them), ranks as searched."""
    return list(results) if include_weak else _strong_only(results)


class MemoryService(LibraryReads):
    """The façade: reads (here and LibraryReads), and a job of the scheduler for every write (see the module doc)."""

    servers = ModelServers()  # model-server probes for the front ends (model_servers.py): no state, no library

    def __init__(self, settings: Settings | None = None, db_path: Path | str | None = None,
                 embedder: Embedder | None = None, *, readers: int = DEFAULT_READERS,
                 busy_timeout_ms: int | None = None) -> None:
        self.settings = settings or Settings()
        # a Path (SQLite file) or a postgresql:// URL (str): library_location.py; open_library picks the store
        self.db_path = parse_location(db_path) if db_path else self.settings.resolved_db_location()
        self.machine = this_machine(self.settings)  # (id, readable name): whose library folders are whose
        self._embedders = LibraryEmbedders(embedder)
        self.search_state = SearchState()  # what searches keep between queries: this library's, freed at close
        self.searcher = Searcher(self.settings.search, self.search_state)
        # a bad path, a newer schema or a missing extension fails here, clearly
        self._db = Connections(self.db_path, readers, busy_timeout_ms, self.machine)
        # why the database cannot be written (read-only file or media, disk full): said once by the front ends
        self.read_only_note: str = self._db.read_only_note
        self.writes = LibraryWrites(self)  # every write; run only by the scheduler's jobs
        self._scheduler: Scheduler | None = None
        self._scheduler_lock = threading.Lock()

    # ---------- connections (connections.py) ----------
    def writing(self) -> AbstractContextManager[LibraryStore]:
        """The writer, for this block only (one writer per process; IMMEDIATE transactions)."""
        return self._db.writing()

    def reading(self) -> AbstractContextManager[LibraryStore]:
        """A pooled reader, leased to the calling thread for this block."""
        return self._db.reading()

    def _spare_reader(self) -> AbstractContextManager[LibraryStore | None]:
        """A second pooled reader for a search's helper thread, or None when none is free."""
        return self._db.spare_reader()

    def open_connections(self) -> int:
        """How many SQLite connections the service holds now (the writer plus readers opened so far)."""
        return self._db.open_count()

    @property
    def embedder(self) -> Embedder:
        return self._embedders.configured(self.settings.embedder)

    def embedder_model_id(self) -> str:  # (making the embedder object does not load the model)
        return self.embedder.model_id

    def apply_settings(self, settings: Settings) -> None:
        """Take a new settings object (never mutated afterwards). Search settings apply to the next query, chunking
        and ingest ones to the next job; the database path and the embedder are NOT switched here (reopen the
        service, or call :meth:`set_embedder_settings`). Cheap: it only swaps references."""
        self.settings = dataclasses.replace(settings, embedder=self.settings.embedder)
        self.searcher = Searcher(self.settings.search, self.search_state)
        self.machine = (self.machine[0], machine_name(self.settings))  # renamed: shown so from the next write
        self._db.rename_machine(self.machine)

    @property
    def scheduler(self) -> Scheduler:
        """The one scheduler of this library's writes (created here; its threads start on the first job)."""
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
        self.search_state.close()  # the code matrices (~99 MiB at a million vectors) go with the library

    # ---------- writes: each a job of the scheduler ----------
    def _perform(self, job: Job, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> Any:
        """Submit a write and wait for it (library_writes.py does it, on the scheduler's lane)."""
        self._db.ensure_open()  # (a closed library says so, as every call does, rather than "did not run")
        return self.scheduler.perform(job, progress, cancel)

    def index_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        """Index files/folders the person named (CLI, MCP, a benchmark), embedding them in the same run unless
        ``embed`` is off; ``include_excluded``: a path they removed and name exactly again comes back."""
        op = ops.ReadPaths(embed=embed, include_excluded=include_excluded, embed_later=False)
        return cast(IndexSummary, self._perform(Job(READ, [str(p) for p in paths], force=force, operation=op),
                                                progress, cancel))

    def embed_pending(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Embed what is queued, then go on building the vectors of a model being switched to; a cancel returns a
        summary marked cancelled (vectors committed so far stay)."""
        job = Job(EMBED, source=AUTO, operation=ops.EmbedPending())
        return cast(IndexSummary, self._perform(job, progress, cancel))

    def reembed(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Embed the whole library again with the configured embedder (its own vectors dropped first)."""
        return cast(IndexSummary, self._perform(Job(EMBED, source=AUTO, operation=ops.Reembed()), progress, cancel))

    def remove_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int:
        """Remove files or folders from the index (never from disk), final; returns how many documents went.
        ``exclude``: the person's removal (what lies inside a library folder becomes an exclusion)."""
        job = Job(REMOVE, [str(p) for p in paths], operation=ops.RemovePaths(exclude=exclude))
        return cast(int, self._perform(job, progress, cancel))

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
            job = self.scheduler.submit(Job(REMOVE, source=AUTO, operation=ops.RemovePaths()))
        self.scheduler.wait_for(job, progress, cancel)
        return pending

    def include_paths(self, paths: Iterable[str | Path]) -> list[str]:
        """Lift every exclusion at or below ``paths`` (nothing is read: index them next); returns those lifted."""
        return cast(list[str], self._perform(Job(READ, [str(p) for p in paths], operation=ops.IncludeAgain())))

    def compact(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        """"Compact and erase" (VACUUM): returns (bytes before, bytes after); a cancel raises Cancelled and leaves
        the library as it was. Search never waits for it; the embedding's commits do."""
        return cast(tuple[int, int], self._perform(Job(COMPACT, operation=ops.Compact()), progress, cancel))

    def drop_model_vectors(self, model_id: str) -> int:
        """Delete another model's vectors kept here (never the set search uses); ``compact`` frees their space."""
        return cast(int, self._perform(Job(COMPACT, operation=ops.DropModelVectors(model_id))))

    def set_embedding_paused(self, paused: bool) -> None:
        """Remember the pause in the library: a settings job, run before anything else (a read steps aside)."""
        self._perform(Job(SETTINGS, source=AUTO, operation=ops.SetEmbeddingPaused(paused)))

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
        if new != self.settings.embedder or not self._embedders.made:
            self.settings = dataclasses.replace(self.settings, embedder=new)
            self._embedders.replace(new)  # (the same settings keep the loaded model)
        # a settings job: the model target is one row, written between two slices of a running read
        return cast(bool, self._perform(Job(SETTINGS, source=AUTO, operation=ops.ChooseConfiguredModel())))

    def choose_configured_model(self) -> bool:
        """The person asked for vectors (``embed``, Embed missing vectors): when the configured model is not the
        one this library's vectors come from, its set is built beside them (set_embedder_settings). Returns
        True when such a build is needed. A library is never switched to another model behind the person's
        back: a global setting changed while another library was open only shows a note here until then."""
        return self.set_embedder_settings(self.settings.embedder)

    def model_view(self, store: LibraryStore) -> ModelView:
        """This library's models against the configured one: which embeds the queries, what to say about it."""
        return self._embedders.view(store, self.embedder)

    # ---------- search ----------
    def search_outcome(self, query: str, backend: str | None = None, top_k: int | None = None,
                       filters: SearchFilters | None = None, *, marks: bool = False) -> SearchOutcome:
        """Search (every front end's one search call). ``marks``: also the results' highlights (``.marked``), read
        on the same reader, so a window asks once per search for all it shows."""
        # filters made valid for SQLite here (UserError if one cannot be used); the searcher cleans query and top_k
        filters = clean_filters(filters)
        backend = backend or self.settings.search.backend
        semantic = backend in SEMANTIC_BACKENDS
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
            if out.results:  # whose each result is (a shared library's other machines: machines_view.py)
                name_results([*out.results, *out.files], store.root_machines(), self._shown_machine(store))
            if marks and out.results:
                out.marked = result_marks(store, clean_query(query), backend, [r.chunk_id for r in out.results])
        if view is not None and view.note:
            off = [n.removeprefix("semantic lane off: ") for n in out.notes if n.startswith("semantic lane off: ")]
            out.notes = [n for n in out.notes if not n.startswith("semantic lane off: ")]
            out.notes.insert(0, view.search_note(None if view.search_embedder is None or not off else off[0]))
        return out

    def prepare_query(self, query: str, backend: str | None = None) -> bool:
        """Embed ``query`` for the search that follows (the window, as it is typed: retrieve/query_vectors.py);
        returns once made. False without a semantic lane, or when it failed (the search says why)."""
        if (backend or self.settings.search.backend) not in SEMANTIC_BACKENDS:
            return False
        with self.reading() as store:
            pending = self.searcher.prepare(store, self.model_view(store).search_embedder or self.embedder, query)
        return pending is not None and pending.exception() is None  # (exception() waits for the vector)

    def warm_up(self, cancel: threading.Event | None = None, *, semantic: bool = False) -> None:
        """Load what the first search needs, now (the window calls this on a worker once it is shown): one
        throwaway keyword search first (the keyword lane's cached counts and pages: what a search runs while the
        model still loads), then the dense lane's code matrices and, with ``semantic`` (the embedder is loaded),
        one hybrid search (the model session's first run, the query-embedding and keyword-lane threads, a second
        reader). Readers only, never the writer; no reranker is asked; ``cancel`` interrupts the matrices' load
        and stops it between steps. A failure is left for the first real search to report."""
        searcher = Searcher(dataclasses.replace(self.settings.search, rerank=False), self.search_state)

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
            if not vectors or stopped() or isinstance(store, DenseOnServer):  # a server ranks it: nothing to load
                return
            try:
                with store.cancellable(cancel):
                    warm_dense(store, self.search_state.codes)
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

    def context_outcome(self, query: str, budget: int | None = None, backend: str | None = None,
                        top_k: int | None = None,
                        filters: SearchFilters | None = None,
                        include_weak: bool = False) -> tuple[ContextReport, SearchOutcome]:
        """Search and pack: the packed context and the search outcome it came from (its notes: why a lane was
        off, ...). Weak matches stay out unless ``include_weak`` (a nonsense query packs nothing)."""
        outcome = self.search_outcome(query, backend=backend, top_k=top_k, filters=filters)
        return self.build_context(strong_only(outcome.results, include_weak), budget), outcome

    def _shown_machine(self, store: LibraryStore) -> tuple[str, str]:
        """This machine as its own results name it: by name in a shared library (its store records machines);
        unnamed ('') in a file of its own, so one machine's results never carry its host name to a chat app."""
        return self.machine if store.machine[0] else (self.machine[0], "")

    def take_notices(self) -> list[str]:
        """One-line notices from opening the library (e.g. a folder or file made owner-only), each given once:
        the CLI prints them on stderr, the window shows them in a banner."""
        return self._db.take_notices()

__all__ = ["DEFAULT_READERS", "MemoryService", "ReaderPool", "StoreError", "strong_only"]


def _implements_api(svc: MemoryService) -> MemoryApi:
    """Never called: mypy checks here that MemoryService offers every call of the GUI's boundary, typed alike."""
    return svc
