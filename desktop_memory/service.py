"""The one façade the GUI and the CLI call. No Qt here.

Thread model: every thread gets its own SQLite connection (WAL lets searches read while an index job writes);
writes from this process are serialised by one lock, and other processes wait on SQLite's busy timeout.
The embedder is shared (thread-safe, lazily loaded).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import apsw

from .config import EmbedderSettings, Settings
from .context import build_context as _pack
from .embed import make_embedder
from .embed.base import Embedder
from .errors import Cancelled, StoreError
from .ingest.encoding import valid_text
from .ingest.pipeline import ProgressFn, embed_pending, index_paths
from .ingest.walk import printable_path
from .models import ContextReport, DocumentInfo, IndexSummary, SearchFilters, SearchResult, Stats
from .retrieve import Searcher, SearchOutcome
from .retrieve.highlight import marked_texts
from .store import Store
from .store.connection import translate_error
from .store.passages import PassageWithNeighbours, read_passage


def strong_only(results: Sequence[SearchResult], include_weak: bool = False) -> list[SearchResult]:
    """The results that go into a prompt context by default: weak matches are left out (``include_weak`` keeps
    them). Ranks are kept as searched, so the [Source] order matches the result list."""
    return [r for r in results if include_weak or r.strength != "weak"]


class MemoryService:
    def __init__(self, settings: Settings | None = None, db_path: Path | str | None = None,
                 embedder: Embedder | None = None) -> None:
        self.settings = settings or Settings()
        self.db_path = Path(db_path) if db_path else self.settings.resolved_db_path()
        self._embedder = embedder
        self._embedder_injected = embedder is not None
        self._local = threading.local()
        self._stores: list[Store] = []
        self._stores_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.searcher = Searcher(self.settings.search)
        self.last_search_notes: list[str] = []
        self._notices: list[str] = []
        self.store  # open now: a bad path, newer schema or missing extension fails at start-up, clearly

    # ---------- plumbing ----------
    @contextlib.contextmanager
    def _plain_errors(self) -> Iterator[None]:
        """SQLite's environment errors (disk full, read-only, busy, corrupt, I/O) become a StoreError that says
        what to do, so the CLI prints one line and the GUI a message, not a traceback. Committed work is kept:
        every write is its own transaction, rolled back whole on error."""
        try:
            yield
        except apsw.Error as exc:
            err = translate_error(exc, self.db_path)
            if err is None:
                raise
            raise err from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Store]:
        """One writer per process (lock), write transactions that wait for other processes' writers (IMMEDIATE)."""
        with self._write_lock, self._plain_errors(), self.store.immediate_writes() as store:
            yield store

    @property
    def store(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            with self._plain_errors():
                store = Store(self.db_path)
            self._local.store = store
            with self._stores_lock:
                self._stores.append(store)
                self._notices += store.notices
        return store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = make_embedder(self.settings.embedder)
        return self._embedder

    def close(self) -> None:
        with self._stores_lock:
            for store in self._stores:
                try:
                    store.close()
                except Exception:  # closing on another thread's connection at exit is best effort
                    pass
            self._stores.clear()
        self._local = threading.local()

    # ---------- indexing ----------
    def index_paths(self, paths: Iterable[str | Path], progress: ProgressFn | None = None,
                    cancel: threading.Event | None = None, force: bool = False, embed: bool = True) -> IndexSummary:
        with self._writing() as store:
            return index_paths(store, list(paths), self.settings, self.embedder if embed else None,
                               progress=progress, cancel=cancel, force=force, embed=embed)

    def embed_pending(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> int:
        with self._writing() as store:
            return embed_pending(store, self.embedder, self.settings, progress=progress, cancel=cancel)

    def embed_pending_summary(self, progress: ProgressFn | None = None,
                              cancel: threading.Event | None = None) -> IndexSummary:
        """Embed what is queued; a cancel returns a summary marked cancelled (vectors committed so far stay)."""
        summary = IndexSummary()
        with self._writing() as store:
            try:
                embed_pending(store, self.embedder, self.settings, progress=progress, cancel=cancel,
                              summary=summary)
            except Cancelled:
                summary.cancelled = True
        return summary

    def remove_paths(self, paths: Iterable[str | Path]) -> int:
        """Remove files, or whole folders, from the index (the files on disk are never touched)."""
        removed = 0
        with self._writing() as store:
            for p in paths:
                path = printable_path(os.path.abspath(os.path.expanduser(str(p))))
                doc = store.get_document(path)
                ids = [doc.id] if doc else []
                ids += [d.id for d in store.documents_under(path)]
                removed += store.remove_documents(ids)
                with store.conn:
                    store.remove_root(path)
            store.checkpoint_erased()  # removed means gone: the WAL's old pages too (docs/PRIVACY.md)
        return removed

    def load_embedder(self) -> None:
        self.embedder.load()

    def set_embedder_settings(self, new: EmbedderSettings) -> bool:
        """Switch embedder. Returns True if the model changed: vectors were cleared; run embed_pending()."""
        self.settings.embedder = new
        if not self._embedder_injected:
            self._embedder = make_embedder(new)
        with self._plain_errors():
            stored_model, _ = self.store.model_info()
        if stored_model is None or stored_model == self.embedder.model_id:
            return False
        with self._writing() as store:
            store.reset_vectors()
        return True

    def reembed(self, progress: ProgressFn | None = None, cancel: threading.Event | None = None) -> IndexSummary:
        """Drop every vector and embed the whole library again with the current embedder."""
        with self._writing() as store:
            store.reset_vectors()
        return self.embed_pending_summary(progress=progress, cancel=cancel)

    # ---------- search ----------
    def search_outcome(self, query: str, backend: str | None = None, top_k: int | None = None,
                       filters: SearchFilters | None = None) -> SearchOutcome:
        query = valid_text(query or "")
        embedder = self.embedder if (backend or self.settings.search.backend) in ("hybrid", "dense") else None
        with self._plain_errors():
            outcome = self.searcher.search(self.store, embedder, query, backend=backend, top_k=top_k,
                                           filters=filters)
        self.last_search_notes = outcome.notes
        return outcome

    def search(self, query: str, backend: str | None = None, top_k: int | None = None,
               filters: SearchFilters | None = None) -> list[SearchResult]:
        return self.search_outcome(query, backend=backend, top_k=top_k, filters=filters).results

    def highlights(self, query: str, chunk_ids: Sequence[int]) -> dict[int, str]:
        """{chunk id: text with the keyword lane's matched tokens marked} for the shown results
        (retrieve/highlight.py); a semantic-only hit is absent."""
        with self._plain_errors():
            return marked_texts(self.store, valid_text(query or ""), chunk_ids)

    def build_context(self, results: Sequence[SearchResult], budget: int | None = None,
                      extra_roots: Sequence[str] = ()) -> ContextReport:
        """Pack ``results`` (the caller chose which); sources named by ``[context] path_style``. ``extra_roots``:
        folders being indexed right now (a folder becomes a root only once it has been read)."""
        with self._plain_errors():
            roots = [*self.store.roots(), *extra_roots]
        return _pack(results, self.settings.context.budget_tokens if budget is None else budget,
                     roots=roots, path_style=self.settings.context.path_style)

    def context(self, query: str, budget: int | None = None, backend: str | None = None, top_k: int | None = None,
                filters: SearchFilters | None = None, include_weak: bool = False) -> ContextReport:
        """Search and pack; weak matches stay out unless ``include_weak`` (a nonsense query packs nothing)."""
        results = self.search(query, backend=backend, top_k=top_k, filters=filters)
        return self.build_context(strong_only(results, include_weak), budget)

    # ---------- library ----------
    def stats(self) -> Stats:
        with self._plain_errors():
            store = self.store
            counts = store.counts()
            model_id, dim = store.model_info()
            pending = store.pending_count()
        return Stats(documents=counts["by_status"], chunks=counts["chunks"], vectors=counts["vectors"],
                     pending_vectors=pending, db_path=str(self.db_path), db_bytes=store.db_bytes(),
                     model_id=model_id, dim=dim)

    def documents(self) -> list[DocumentInfo]:
        with self._plain_errors():
            return self.store.list_documents()

    def roots(self) -> list[str]:
        with self._plain_errors():
            return self.store.roots()

    def take_notices(self) -> list[str]:
        """One-line notices from opening the library (e.g. a folder or file made owner-only), each given once:
        the CLI prints them on stderr, the window shows them in a banner."""
        with self._stores_lock:
            notices, self._notices = self._notices, []
        return notices

    def compact(self) -> tuple[int, int]:
        """"Compact and erase": rebuild the database from live data only (VACUUM), so nothing removed before
        secure delete existed (or before this version) survives in free pages. Waits for a running index job.
        Returns (bytes before, bytes after)."""
        with self._writing() as store:
            return store.compact()

    def check(self) -> list[str]:
        with self._plain_errors():
            return self.store.check_integrity()

    def passage(self, chunk_id: int, neighbours: int = 1) -> PassageWithNeighbours | None:
        """One stored passage by id with the passages around it in its file (None: no such id, e.g. removed)."""
        with self._plain_errors():
            return read_passage(self.store, chunk_id, neighbours)


__all__ = ["MemoryService", "StoreError", "strong_only"]
