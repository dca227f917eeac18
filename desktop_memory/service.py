"""The one façade the GUI and the CLI call. No Qt here.

Connection ownership (the rule every caller relies on):

* The service owns ONE writer :class:`Store` and a bounded pool of at most ``readers`` reader Stores
  (default 3). Nothing else in the process opens a connection to the library; no connection is opened per call,
  per task or per thread, so a week-long GUI session holds ``1 + readers`` connections at most.
* ``with svc.writing() as store:`` takes the process-wide write lock, then hands out the writer. Any thread may
  use it, but only inside that block: the lock is what makes "one thread at a time" true. Its outermost
  transactions are BEGIN IMMEDIATE, so another process's writer waits on SQLite's busy timeout, never fails.
* ``with svc.reading() as store:`` leases one reader exclusively to the calling thread for the block and returns it
  to the pool afterwards (WAL: readers never wait for the writer). When every reader is leased, the next caller
  waits for one to come back. apsw connections may be used from any thread, never from two at once: the lease
  is that guarantee. Never keep a leased Store past the ``with`` block.
* A hybrid search holding a lease may take a second, *free* reader for the block (``ReaderPool.lease_if_idle``,
  never waiting) and hand it to exactly one helper thread that runs the keyword lane beside the semantic lane; the
  search waits for that thread before the lease ends. With no free reader it runs both lanes itself.
* :meth:`close` stops the scheduler (its running job within one slice), then closes every connection.

Background writes (a person's drops, watch batches, removals, embedding, compaction) go through ONE
:class:`~desktop_memory.jobs.Scheduler` per service (:attr:`MemoryService.scheduler`, started on first use): it runs
them on one writer thread in priority order, so a saved edit or a removal never waits behind an embedding for more
than one slice. The direct methods below are what its jobs call, and what one-shot commands (the CLI) call.

The embedder is shared (thread-safe, created once under a lock, loaded lazily). Settings are immutable from the
service's point of view: :meth:`apply_settings` swaps in a new object, a running job keeps the one it started with.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import apsw

from .config import EmbedderSettings, Settings
from .context import build_context as _pack
from .embed import make_embedder
from .embed.base import Embedder
from .embed.identity import embedder_for, settings_json
from .errors import Cancelled, EmbedderError, StoreError, UserError
from .ingest.model_build import ModelView, build_beside, model_view
from .ingest.pipeline import ProgressFn, embed_pending_shared, index_paths
from .ingest.walk import printable_path
from .jobs import Job, JobEvent, Progress, Scheduler
from .library_location import Location, parse_location, shown
from .library_open import open_library
from .machine import machine_name, this_machine
from .machines_view import name_results, other_machines, own_roots, refuse_others
from .model_servers import ModelServers
from .models import (
    ContextReport,
    DocumentInfo,
    IndexProgress,
    IndexSummary,
    LibraryListing,
    LibraryQuery,
    ModelVectors,
    PassageWithNeighbours,
    SearchFilters,
    SearchResult,
    Stats,
)
from .paths import inside_any, normalise
from .paths_guard import checked_path
from .retrieve import Searcher, SearchOutcome
from .retrieve.dense import warm as warm_dense
from .retrieve.filters import clean_filters, clean_query
from .retrieve.highlight import marked_texts
from .retrieve.strength import strong_only as _strong_only
from .service_api import MemoryApi
from .store import library_listing as listings
from .store.connection import translate_error
from .store.open import server_error
from .store.passages import read_passage
from .store.protocol import DenseOnServer, LibraryStore

EMBEDDING_PAUSED = "embedding_paused"  # meta key: "1" after the person's Cancel, until Resume
DEFAULT_READERS = 3  # the GUI's query runner has 3 threads; the CLI uses one
log = logging.getLogger(__name__)
WARM_UP_QUERY = "what the first search needs"  # any words: the search's path matters, not its hits
REMOVE_SLICE = 100  # documents removed per transaction (~1,000 passages: well under a second at 1M)


class ReaderPool:
    """At most ``size`` reader Stores, opened on first need, leased to one thread at a time, reused forever."""

    def __init__(self, open_store: Callable[[], LibraryStore], size: int) -> None:
        if size < 1:
            raise ValueError("a reader pool needs at least one connection")
        self._open = open_store
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[LibraryStore] = []
        self._all: list[LibraryStore] = []
        self._closed = False

    @contextlib.contextmanager
    def lease(self) -> Iterator[LibraryStore]:
        self._slots.acquire()
        try:
            with self._held() as store:
                yield store
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def lease_if_idle(self) -> Iterator[LibraryStore | None]:
        """A reader only if one is free right now, else None; never waits. For a thread that already holds a
        lease and wants a second connection for a helper thread (the hybrid search's keyword lane): waiting there
        could deadlock two such callers on each other, so without a free reader the caller works alone."""
        if not self._slots.acquire(blocking=False):
            yield None
            return
        try:
            with self._lock:
                closed = self._closed
            if closed:
                yield None
                return
            with self._held() as store:
                yield store
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def _held(self) -> Iterator[LibraryStore]:
        """An idle reader (or a new one, up to ``size``) for the block; the caller holds a slot."""
        with self._lock:
            if self._closed:
                raise StoreError("The library is closed.")
            store = self._idle.pop() if self._idle else None
        if store is None:
            store = self._open()
            with self._lock:
                self._all.append(store)
        try:
            yield store
        finally:
            with self._lock:
                if self._closed:
                    store.close()
                else:
                    self._idle.append(store)

    def open_count(self) -> int:
        with self._lock:
            return len(self._all)

    def close(self) -> None:
        """Close idle readers now; a reader still leased is closed when its lease ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._all = [s for s in self._all if s not in idle]
        for store in idle:
            store.close()


def strong_only(results: Sequence[SearchResult], include_weak: bool = False) -> list[SearchResult]:
    """The results that go into a prompt context by default: weak matches are left out (``include_weak`` keeps
    them). Ranks are kept as searched, so the [Source] order matches the result list."""
    return list(results) if include_weak else _strong_only(results)


class MemoryService:
    servers = ModelServers()  # model-server probes for the front ends (model_servers.py): no state, no library

    def __init__(self, settings: Settings | None = None, db_path: Path | str | None = None,
                 embedder: Embedder | None = None, *, readers: int = DEFAULT_READERS,
                 busy_timeout_ms: int | None = None) -> None:
        self.settings = settings or Settings()
        # a Path (SQLite file) or a postgresql:// URL (str): library_location.py; open_library picks the store
        self.db_path: Location = parse_location(db_path) if db_path else self.settings.resolved_db_location()
        self.machine = this_machine(self.settings)  # (id, readable name): whose library folders are whose
        self.location: Location = self.db_path
        self._embedder = embedder
        self._embedder_injected = embedder is not None
        self._busy_timeout_ms = busy_timeout_ms  # None: the store's default (store/connection.py)
        self._embedder_lock = threading.Lock()
        self._library_embedders: dict[str, Embedder | None] = {}  # this library's models, by id (see _view)
        self._write_lock = threading.RLock()
        self.searcher = Searcher(self.settings.search)
        self._notices: list[str] = []
        self._notices_lock = threading.Lock()
        # open the writer now: a bad path, newer schema or missing extension fails at start-up, clearly
        self._writer: LibraryStore | None = self._open_store()
        self._readers = ReaderPool(self._open_store, readers)
        # why the database is read-only when it cannot be written (read-only file or media, disk full): said once
        # by the front ends; search still works and writes are refused with the reason (Store.immediate_writes)
        self.read_only_note: str = self._writer.mode_note
        self._scheduler: Scheduler | None = None
        self._scheduler_lock = threading.Lock()

    # ---------- plumbing ----------
    @contextlib.contextmanager
    def _plain_errors(self) -> Iterator[None]:
        """SQLite's environment errors (disk full, read-only, busy, corrupt, I/O) become a StoreError that says
        what to do, so the CLI prints one line and the GUI a message, not a traceback. Committed work is kept:
        every write is its own transaction, rolled back whole on error."""
        try:
            yield
        except apsw.Error as exc:
            err = translate_error(exc, shown(self.db_path))
            if err is None:
                raise
            raise err from exc
        except Exception as exc:  # a PostgreSQL library's driver errors (store/open.py)
            err = server_error(exc, self.location)
            if err is None:
                raise
            raise err from exc

    def _open_store(self) -> LibraryStore:
        with self._plain_errors():
            # the library folders it adds are this machine's (recorded in a shared library: library_open.py)
            store = open_library(self.db_path, machine=self.machine)
        if self._busy_timeout_ms is not None:
            store.set_busy_timeout(self._busy_timeout_ms)
        with self._notices_lock:
            self._notices += [n for n in store.notices if n not in self._notices]
        return store

    @contextlib.contextmanager
    def writing(self) -> Iterator[LibraryStore]:
        """The writer, for this block only: one writer per process (lock); its write transactions wait for other
        processes' writers (IMMEDIATE)."""
        with self._write_lock:
            if self._writer is None:
                raise StoreError("The library is closed.")
            with self._plain_errors(), self._writer.immediate_writes() as store:
                yield store

    @contextlib.contextmanager
    def reading(self) -> Iterator[LibraryStore]:
        """A pooled reader, leased to the calling thread for this block (see the module doc)."""
        with self._readers.lease() as store, self._plain_errors():
            yield store

    @contextlib.contextmanager
    def _spare_reader(self) -> Iterator[LibraryStore | None]:
        """A second pooled reader for a search's helper thread, or None when none is free (see lease_if_idle)."""
        with self._readers.lease_if_idle() as store, self._plain_errors():
            yield store

    def open_connections(self) -> int:
        """How many SQLite connections the service holds now (the writer plus readers opened so far)."""
        return (self._writer is not None) + self._readers.open_count()

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
        self.machine = (self.machine[0], machine_name(self.settings))  # renamed: shown so from the next write
        writer = self._writer
        if writer is not None and writer.machine[0]:
            writer.machine = self.machine

    @property
    def scheduler(self) -> Scheduler:
        """The one scheduler of this library's background writes (created here; its thread starts on first job)."""
        with self._scheduler_lock:
            if self._scheduler is None:
                self._scheduler = Scheduler(self)
            return self._scheduler

    def close(self) -> None:
        """Stop the scheduler, then close every connection (idempotent). Other workers must be done first."""
        with self._scheduler_lock:
            scheduler = self._scheduler
        writer = self._writer
        if writer is not None:
            writer.stop_waiting()  # a write waiting for another process's lock does not hold up the close
        if scheduler is not None:
            scheduler.stop()
        if self.searcher.reranker is not None:  # its HTTP connections (retrieve/rerank.py)
            self.searcher.reranker.close()
        self._readers.close()
        with self._write_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    # ---------- indexing ----------
    def index_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True,
                    include_excluded: bool = False) -> IndexSummary:
        """Index files/folders the person named (CLI, drop, launch). A path inside a library folder that reaches
        outside it (a symlink, with symlinks off) is refused before anything is read (paths_guard). What the person
        removed from inside a library folder stays out (store/exclusions.py); ``include_excluded`` (they named it
        again: `index PATH`, a drop, "Include again") includes a path named exactly again."""
        with self.writing() as store:
            roots = store.roots()
            refused = refuse_others([str(p) for p in paths], store.root_machines(), self.machine[0])
            if refused:
                raise UserError(refused)
            follow = self.settings.ingest.follow_symlinks
            paths = [checked_path(p, roots, follow_symlinks=follow, may_add=True) for p in paths]
            # new passages get vectors of the set search uses (the library's own model, where it is available)
            embedder = self._view(store).search_embedder if embed else None
            summary = index_paths(store, paths, self.settings, embedder, progress=progress, cancel=cancel,
                                  force=force, embed=embed and embedder is not None,
                                  include_excluded=include_excluded)
        if embedder is not None and summary.chunks_embedded:
            self._remember_model()
        return summary

    def embed_pending(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> int:
        """Embed what is queued, holding the writer only to commit each slice (other writes take turns); then go
        on building the vectors of a model being switched to (see _embed_all)."""
        summary = IndexSummary()
        self._embed_all(progress, cancel, summary)
        return summary.chunks_embedded

    def embed_pending_summary(self, progress: ProgressFn | None = None,
                              cancel: threading.Event | None = None) -> IndexSummary:
        """Embed what is queued; a cancel returns a summary marked cancelled (vectors committed so far stay)."""
        summary = IndexSummary()
        try:
            self._embed_all(progress, cancel, summary)
        except Cancelled:
            summary.cancelled = True
        return summary

    def _embed_all(self, progress: ProgressFn | None, cancel: threading.Event | None,
                   summary: IndexSummary) -> None:
        """The set search uses first (new passages, with its own model where available), then the configured
        model's set being built beside it (issue 30): that one becomes the active set when complete."""
        with self.reading() as store:
            view = self._view(store)
            waiting = store.pending_count() if store.model_info()[0] is not None else 1
        if view.search_embedder is not None and waiting:  # (a model server is not contacted for nothing)
            embed_pending_shared(self.reading, self.writing, view.search_embedder, self.settings,
                                 progress=progress, cancel=cancel, summary=summary)
            self._remember_model()
        if view.building:
            build = IndexSummary()
            try:
                build_beside(self.reading, self.writing, self.embedder, settings_json(self.settings.embedder),
                             progress=progress, cancel=cancel, summary=build)
            finally:
                summary.chunks_embedded += build.chunks_embedded
                summary.embed_s += build.embed_s
                summary.embed_error = build.embed_error or summary.embed_error

    def remove_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                     cancel: threading.Event | None = None, exclude: bool = False) -> int:
        """Remove files, or whole folders, from the index (the files on disk are never touched); returns how many
        documents went.

        Final, and never holding the writer for long (issue 26): one short transaction records the removal in the
        library and forgets the folders (a watcher or the next start cannot bring them back); then the documents go
        in slices of ``REMOVE_SLICE``, one transaction each, and the FTS index is merged in slices
        (``Eraser.merge_step``), the writer free between slices for an edit or an embedding commit. ``cancel``
        (the scheduler stepping aside, or quitting) stops between slices: what is left stays recorded and is
        finished by the next call (the scheduler makes one at start). Removed means gone once it returns: the FTS
        index merged and the WAL truncated (docs/PRIVACY.md).

        ``exclude``: the person's removal (CLI ``remove``, the Library's Remove), not a file gone from disk: a
        library folder leaves the library, and a folder or file inside one becomes an exclusion, recorded in the
        same transaction as the intent, so no watcher, catch-up, re-read or later start brings it back
        (store/exclusions.py)."""
        asked = [printable_path(normalise(p)) for p in paths]
        with self.writing() as store:
            # a typo (no such path, nothing indexed there) is not recorded as an exclusion
            keep_out = [p for p in asked if os.path.lexists(p) or store.count_under([p])] if exclude else []
            pending = store.begin_removal(asked, exclude=keep_out) if asked else store.pending_removals()
            total = store.count_under(pending) if pending else 0
        removed, t0 = 0, time.perf_counter()

        def report(phase: str, current: str = "") -> None:
            if progress is not None:
                progress(IndexProgress(phase=phase, files_total=total, files_done=removed, current=current,
                                       elapsed_s=time.perf_counter() - t0))

        while pending:
            if cancel is not None and cancel.is_set():
                return removed
            with self.writing() as store:
                ids = store.removal_slice(pending, REMOVE_SLICE)
                if ids:
                    removed += store.remove_documents(ids)
                else:
                    store.end_removal(pending)
                    pending = []
            report("remove", pending[0] if pending else "")
            time.sleep(0.001)  # the lock is not fair: give a waiting writer (an embedding's commit) its turn
        report("erase")  # every document is gone (the Library and results catch up now), however long erasing takes
        while True:  # removed means gone: the FTS index merged slice by slice, then the WAL truncated
            if cancel is not None and cancel.is_set():
                return removed
            with self.writing() as store:
                if not store.eraser.merge_step():
                    store.checkpoint_erased()
                    break
            report("erase")
            time.sleep(0.001)
        report("done")
        return removed

    def pending_removals(self) -> list[str]:
        """Paths whose removal began and did not finish (the app quit meanwhile): the scheduler finishes them."""
        with self.reading() as store:
            return store.pending_removals()

    def finish_interrupted_removal(self, progress: ProgressFn | None = None,
                                   cancel: threading.Event | None = None) -> list[str]:
        """Finish a removal a quit or a kill interrupted (its intent is recorded in the library), before this
        process writes anything else; returns the paths it finished ([]: none was pending). Every command that
        writes calls it first (the CLI's, MCP's index_path; the window and `watch` through their scheduler)."""
        pending = self.pending_removals()
        if pending or self.erasing_unfinished():
            self.remove_paths([], progress=progress, cancel=cancel)
        return pending

    def exclusions(self) -> list[str]:
        """Paths removed from inside a library folder (store/exclusions.py): every walk and watcher leaves them out."""
        with self.reading() as store:
            return store.excluded()

    def include_paths(self, paths: Iterable[str | Path]) -> list[str]:
        """Include again: every exclusion at or below ``paths`` is lifted (nothing is read here; index them next).
        Returns the exclusions lifted."""
        asked = [normalise(p) for p in paths]
        with self.writing() as store:
            return store.lift_exclusions(asked, under=True)

    def erasing_unfinished(self) -> bool:
        """Removed documents' terms still wait for the FTS merge (a quit during a removal's last phase):
        ``remove_paths([])`` finishes it, and the scheduler makes that call when it is created."""
        with self.reading() as store:
            return bool(store.get_meta("fts_optimize_pending"))

    def load_embedder(self) -> None:
        """Load the model search embeds queries with here: the library's own when it is not the configured one
        (issue 30); the configured one is then tried too, and its failure does not turn semantic search off."""
        with self.reading() as store:
            own = self._view(store).search_embedder
        if own is None or own is self.embedder:
            self.embedder.load()
            return
        own.load()
        with contextlib.suppress(EmbedderError):
            self.embedder.load()  # (the build beside reports its own failure)

    def set_embedder_settings(self, new: EmbedderSettings) -> bool:
        """Use another embedder for this library. Nothing is deleted (issue 30): the library keeps answering from
        the vectors it has while the new model's are built beside them (embed_pending(); the switch happens when
        they are complete). Returns True when such a build is needed; False when the library needs none (the same
        model, no vectors yet, or a complete set of the new model kept from before: switched to at once)."""
        if new != self.settings.embedder or self._embedder is None:
            self.settings = dataclasses.replace(self.settings, embedder=new)
            if not self._embedder_injected:
                with self._embedder_lock:
                    self._embedder = make_embedder(new)  # (the same settings keep the loaded model)
        wanted = self.embedder.model_id
        with self.writing() as store:
            active, _ = store.model_info()
            if active is None or active == wanted:
                store.models.set_target(None)  # a build of another model stops at its next slice (kept)
                return False
            kept = {s.model_id: s for s in store.models.sets()}
            store.models.set_target(wanted)
            if wanted in kept and not store.models.side_missing(wanted):
                store.models.activate(wanted)  # its vectors are all still here: switching back is instant
                switched = True
            else:
                switched = False
        if switched:
            self._remember_model()
        return not switched

    def choose_configured_model(self) -> bool:
        """The person asked for vectors (``embed``, Embed missing vectors): when the configured model is not the
        one this library's vectors come from, its set is built beside them (set_embedder_settings). Returns
        True when such a build is needed. A library is never switched to another model behind the person's
        back: a global setting changed while another library was open only shows a note here until then."""
        return self.set_embedder_settings(self.settings.embedder)

    def reembed(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Embed the whole library again with the configured embedder: its own vectors are dropped first (when it
        is the model search uses, semantic search waits for them; otherwise the active set answers meanwhile)."""
        wanted = self.embedder.model_id
        with self.writing() as store:
            active, _ = store.model_info()
            if active is None or active == wanted:
                store.reset_vectors()
            else:
                if wanted in {s.model_id for s in store.models.sets()}:
                    store.models.drop(wanted)
                store.models.set_target(wanted)
        return self.embed_pending_summary(progress=progress, cancel=cancel)

    def drop_model_vectors(self, model_id: str) -> int:
        """Delete another model's vectors kept in this library (never the set search uses); returns how many went.
        ``compact`` gives their space back to the disk."""
        with self.writing() as store:
            return store.models.drop(model_id)

    def _view(self, store: LibraryStore) -> ModelView:
        """This library's models against the configured one: which embeds the queries, what to say about it."""
        return model_view(store, self.embedder, self._library_embedder)

    def _library_embedder(self, model_id: str, dim: int, recorded: str | None) -> Embedder | None:
        """The embedder of one of this library's models (made once; None when not available on this computer)."""
        with self._embedder_lock:
            if model_id not in self._library_embedders:
                self._library_embedders[model_id] = embedder_for(model_id, dim, recorded)
            return self._library_embedders[model_id]

    def _remember_model(self) -> None:
        """Record the configured embedder's settings with the library's active set when they made it, so the
        library can embed its queries with it again under another configured model."""
        wanted = self.embedder.model_id
        recorded = settings_json(self.settings.embedder)
        with self.reading() as store:
            if store.model_info()[0] != wanted or store.models.settings_of(wanted) == recorded:
                return
        with self.writing() as store:
            if store.model_info()[0] == wanted:
                store.models.record_active(recorded)

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
            view = self._view(store) if semantic else None
            embedder = None if view is None else (view.search_embedder or self.embedder)
            out = searcher.search(store, embedder, query, backend=backend, top_k=top_k, filters=filters,
                                  spare_reader=self._spare_reader)
            if out.results:  # whose each result is (a shared library's other machines: machines_view.py)
                name_results([*out.results, *out.files], store.root_machines(), self._shown_machine(store))
            if marks and out.results:
                out.marked = self._marks(store, query, backend, out.results)
        if view is not None and view.note:
            off = [n.removeprefix("semantic lane off: ") for n in out.notes if n.startswith("semantic lane off: ")]
            out.notes = [n for n in out.notes if not n.startswith("semantic lane off: ")]
            out.notes.insert(0, view.search_note(None if view.search_embedder is None or not off else off[0]))
        return out

    @staticmethod
    def _marks(store: LibraryStore, query: str, backend: str, results: Sequence[SearchResult]) -> dict[int, str] | None:
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
                own = self._view(store).search_embedder if backend == "hybrid" else None
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
    def embedding_paused(self) -> bool:
        """Whether the person paused this library's embedding (Cancel) and has not resumed it: kept in the library
        file, so a restart, a second window or `desktop-memory watch` does not start it behind their back."""
        with self.reading() as store:
            return store.get_meta(EMBEDDING_PAUSED) == "1"

    def set_embedding_paused(self, paused: bool) -> None:
        with self.writing() as store:
            store.set_meta(EMBEDDING_PAUSED, "1" if paused else "0")

    def stats(self) -> Stats:
        with self.reading() as store:
            counts = store.counts()
            model_id, dim = store.model_info()
            pending = store.pending_count()
            db_bytes = store.db_bytes()
            excluded = store.excluded()
            view = self._view(store)
            models = [ModelVectors(s.model_id, s.dim, s.vectors, s.bytes, s.active,
                                   pending if s.active else store.models.side_missing(s.model_id))
                      for s in store.models.sets(active_count=counts["vectors"])]
            removing = store.pending_removals()
            left = store.count_under(removing) if removing else 0
        return Stats(documents=counts["by_status"], chunks=counts["chunks"], vectors=counts["vectors"],
                     pending_vectors=pending, db_path=shown(self.db_path), db_bytes=db_bytes,
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
        return [d for d in docs if not inside_any(d.path, pending)] if pending else docs

    def library_listing(self, query: LibraryQuery, pages: Mapping[str, int],
                        eager_limit: int = 1000) -> LibraryListing:
        """The Library's first screen: every folder's summary, and the first ``pages[key]`` files of the folders
        asked for (all files when at most ``eager_limit`` match). See store/doc_listing.py."""
        with self.reading() as store:
            found = listings.listing(store, query, pages, eager_limit)
            found.excluded = store.excluded()
            found.machines = other_machines(store.root_machines(), self.machine[0])
            return found

    def library_page(self, query: LibraryQuery, folder_key: str, offset: int, limit: int) -> list[DocumentInfo]:
        """More of one folder's files, in the query's order (the Library asks as its rows are scrolled into view)."""
        with self.reading() as store:
            return listings.page(store, query, folder_key, offset, limit)

    def indexed_under(self, folder: str) -> dict[str, tuple[int, float]]:
        """{path: (size, mtime)} of the indexed files below ``folder`` (a range of the path index, not a scan)."""
        with self.reading() as store:
            return {d.path: (d.size, d.mtime) for d in store.documents_under(folder)}

    def roots(self) -> list[str]:
        """This machine's library folders: the ones it reads, catches up and watches (machines_view.py)."""
        with self.reading() as store:
            return own_roots(store.root_machines(), self.machine[0])

    def library_folders(self) -> list[str]:
        """Every library folder, this machine's and the others' (paths are named relative to them)."""
        with self.reading() as store:
            return store.roots()

    def _shown_machine(self, store: LibraryStore) -> tuple[str, str]:
        """This machine as its own results name it: by name in a shared library (its store records machines);
        unnamed ('') in a file of its own, so one machine's results never carry its host name to a chat app."""
        return self.machine if store.machine[0] else (self.machine[0], "")

    def other_machines(self) -> dict[str, str]:
        """{library folder: machine name} of the folders other machines share in this library."""
        with self.reading() as store:
            return other_machines(store.root_machines(), self.machine[0])

    def take_notices(self) -> list[str]:
        """One-line notices from opening the library (e.g. a folder or file made owner-only), each given once:
        the CLI prints them on stderr, the window shows them in a banner."""
        with self._notices_lock:
            notices, self._notices = self._notices, []
        return notices

    def compact(self, progress: ProgressFn | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        """"Compact and erase": rebuild the database from live data only (VACUUM), so nothing removed before
        secure delete existed (or before this version) survives in free pages. Returns (bytes before, bytes after).

        In the background with progress (``IndexProgress`` phase "compact", ``files_done`` / ``files_total`` in
        per mille) and cancellable (raises :class:`Cancelled`; SQLite rolls the VACUUM back, the library is as it
        was). The FTS index is merged first in slices, the writer free between them; the VACUUM itself holds the
        writer (readers go on: search never waits). While the scheduler runs, it is a job of it (run in priority
        order; the embedding's commits wait for it)."""
        scheduler = self._scheduler
        if scheduler is not None and scheduler.alive and not scheduler.on_worker():
            result: tuple[int, int] = self._as_job(scheduler.compact(), progress, cancel)
            return result
        t0 = time.perf_counter()

        def report(fraction: float, phase: str = "compact") -> None:
            if progress is not None:
                progress(IndexProgress(phase=phase, files_total=1000, files_done=int(fraction * 1000),
                                       elapsed_s=time.perf_counter() - t0))

        while True:  # the FTS index merged in slices (what the VACUUM would otherwise do holding the writer)
            if cancel is not None and cancel.is_set():
                raise Cancelled("compaction cancelled: the library is as it was")
            with self.writing() as store:
                if not store.eraser.merge_step(always=True):
                    break
            report(0.0, "merge")
        with self.writing() as store:
            return store.compact(report, cancel)

    def _as_job(self, job: Job, progress: ProgressFn | None, cancel: threading.Event | None) -> Any:
        """Wait for a scheduler job, passing its progress on and a cancel to it."""
        def pass_on(event: JobEvent) -> None:
            match event:
                case Progress(job=j, progress=p) if j is job and progress is not None:
                    progress(p)

        unsubscribe = self.scheduler.subscribe(pass_on)
        try:
            while not job.finished:
                if cancel is not None and cancel.is_set():
                    job.cancel.set()
                job.wait(0.1)
        finally:
            unsubscribe()
        if job.dropped:
            raise Cancelled(f"compaction did not run: {job.dropped}")
        return job.wait()

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
            if found is not None and inside_any(found.passage.source, store.pending_removals()):
                return None  # being removed (an interrupted removal the next writer finishes): as good as gone
            return found


def _removal_problems(store: LibraryStore) -> list[str]:
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
