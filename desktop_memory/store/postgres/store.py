"""``PgStore``: a library on a PostgreSQL server with pgvector, behind the store surface the SQLite ``Store`` has
(store/protocol.py), so the service, ingest and retrieve/ use either unchanged.

One connection per store (the service leases one per thread, as with SQLite). Every write method runs in its own
transaction under the library's writer lock (connection.py); ``immediate_writes`` only checks the store may be
written. Search uses the server's engines: ``dense_candidates`` (pgvector, dense.py) and BM25 in SQL for the
keyword lane (``reads.fts_match``, keyword.py); retrieve/lanes.py asks for ``dense_candidates`` when a store has it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from ...errors import Cancelled, StoreError, StoreReadOnly
from ...models import DocumentInfo, SearchFilters
from ...paths import prefix_range
from ..doc_writes import DocumentWrite
from ..facade import LibraryFacade, closed_on_failure
from ..folders import Folders
from ..location import redacted
from ..row_types import DocRow, WriteResult
from . import maintenance
from .bulk import index_after_load
from .connection import connect, translate, write_tx
from .dense import dense_candidates
from .export import PgExportReads
from .folders import PgFolderRows
from .meta import PgMeta
from .models import PgModelSets
from .reads import PgSearchReads
from .schema import SCHEMA_VERSION, check_vector_extension, check_version, current_version, migrate
from .terms import recount_totals
from .tokens_ahead import TokensAhead
from .vectors import PgVectors
from .writes import PgWrites

_DOC_COLUMNS = "id, path, kind, size, mtime, content_hash, status, error, n_chunks"


def _texts(docs: Sequence[DocumentWrite]) -> list[str]:
    return [c.text for d in docs for c in d.chunks]


def _doc(row: Sequence[object]) -> DocRow:
    i, path, kind, size, mtime, content_hash, status, error, n = row
    return DocRow(int(str(i)), str(path), str(kind), int(str(size)), float(str(mtime)), str(content_hash),
                  str(status), str(error), int(str(n)))


class PgStore(LibraryFacade):
    """A connection to one PostgreSQL library, used by one thread at a time (the shared forwarding and folder
    rules: store/facade.py)."""

    meta: PgMeta
    writes: PgWrites
    vectors: PgVectors
    reads: PgSearchReads

    def __init__(self, url: str, *, readonly: bool = False, password: str | None = None) -> None:
        self.url = url
        self.location = redacted(url)  # what messages show: never the password
        self.path = Path(self.location)  # what caches key on (the SQLite store's file path)
        self.conn = connect(url, password=password, readonly=readonly)
        self.mode: str | None = "read_only" if readonly else None
        self.mode_note = ""
        self.notices: list[str] = []
        # (id, readable name) of the machine using this connection: the library folders it adds are its own
        # (machine.py; library_open.py sets it on a shared library). ('', '') records none.
        self.machine: tuple[str, str] = ("", "")
        with closed_on_failure(self.conn.close, psycopg.Error, lambda exc: translate(exc, url)):
            check_version(self.conn, url)
            check_vector_extension(self.conn, url, create=not readonly)
            if not readonly and current_version(self.conn) < SCHEMA_VERSION:
                migrate(self.conn, url)  # (a current library needs no write: a read-only role opens it too)
                check_version(self.conn, url)
            elif current_version(self.conn) == 0:
                raise StoreError(f"There is no desktop-memory library at {redacted(url)} yet; index something into "
                                 "it with the writer role first.")
            elif current_version(self.conn) < SCHEMA_VERSION:  # read-only: it cannot be brought up to date here
                raise StoreError(f"The library at {redacted(url)} was made by an older desktop-memory; open it once "
                                 "with the writer role to bring it up to date, then read-only works again.")
        self._password, self._readonly = password, readonly  # kept in memory only, to reconnect
        self._ahead: TokensAhead | None = None  # made by the first prepare_writes (a bulk load)
        self._parts()

    def _parts(self) -> None:
        self.meta = PgMeta(self.conn)
        self.vectors = PgVectors(self.conn, self.meta)
        self.reads = PgSearchReads(self.conn, self.vectors)
        self.folders = Folders(PgFolderRows(self.conn), self.meta)  # store/folders.py: the rules of both stores
        self.writes = PgWrites(self.conn, self.meta, self.vectors)
        self.models = PgModelSets(self.conn, self.meta, self.vectors, self._change)
        self.export = PgExportReads(self.conn, self.vectors)  # what `copy` reads (library_copy.py)

    def _reconnect_if_lost(self) -> None:
        """A connection the server or the network dropped is replaced at the next write or search, so the
        library works again once the server is back (the lost step itself said so and wrote nothing)."""
        if self.conn.broken or self.conn.closed:
            self.conn.close()
            self.conn = connect(self.url, password=self._password, readonly=self._readonly)
            self._parts()

    def _change(self) -> AbstractContextManager[None]:
        """Every write: the library's writer lock and one transaction (connection.py), on a live connection."""
        self._writable()
        return write_tx(self.conn, self.url)

    def _writable(self) -> None:
        self._reconnect_if_lost()
        if self.mode:
            raise StoreReadOnly(f"The library at {self.location} is open read-only; indexing and changes need the "
                                "writer role.")

    _part_change = _change  # the parts' writes too: one transaction each, under the writer lock

    # ---------- connection ----------
    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None
        self.conn.close()

    def prepare_writes(self, docs: Sequence[DocumentWrite]) -> None:
        """The documents ``write_documents`` is given next: their passages are tokenized meanwhile on a second
        connection (tokens_ahead.py), so that write's statement does not."""
        if self.mode:
            return
        if self._ahead is None:
            self._ahead = TokensAhead(self.url, self._password)
        self._ahead.submit(_texts(docs))

    def write_documents(self, docs: Sequence[DocumentWrite]) -> list[WriteResult]:
        """Replace several documents in ONE transaction: all of them commit, or none does."""
        staged = self._ahead.take(_texts(docs)) if self._ahead is not None else None
        with self._part_change():
            return self.writes.write_documents(docs, staged)

    def stop_waiting(self) -> None:
        """Closing: a statement waiting for another machine's writer lock is cancelled."""
        try:
            self.conn.cancel_safe(timeout=2.0)
        except psycopg.Error:
            pass

    def set_busy_timeout(self, ms: int) -> None:
        """How long a write waits for another machine's writer before failing (PostgreSQL's lock_timeout)."""
        self.conn.execute("select set_config('lock_timeout', %s, false)", (f"{int(ms)}ms",))

    def sqlite_vec_version(self) -> str:
        row = self.conn.execute("select extversion from pg_extension where extname = 'vector'").fetchone()
        return f"pgvector {row[0]}" if row else "pgvector (missing)"

    @contextmanager
    def immediate_writes(self) -> Iterator[PgStore]:
        """Only a check that the library may be written: every write takes the writer lock itself (``_change``)."""
        self._writable()
        yield self

    @contextmanager
    def read_snapshot(self) -> Iterator[PgStore]:
        """One REPEATABLE READ transaction: every read in it sees the same committed state."""
        self._reconnect_if_lost()
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            yield self
            return
        with self.conn.transaction():
            self.conn.execute("set transaction isolation level repeatable read")
            yield self

    def bulk_load(self, incoming: int = 0) -> AbstractContextManager[None]:
        """Vectors without the HNSW index, built once at the end (bulk.py): a copy into the server is several
        times faster."""
        return index_after_load(self, incoming)

    @contextmanager
    def cancellable(self, cancel: threading.Event | None) -> Iterator[PgStore]:
        """A set ``cancel`` cancels the running statement on the server; the block ends in Cancelled."""
        if cancel is None:
            yield self
            return
        done = threading.Event()

        def watch() -> None:
            while not done.wait(0.05):
                if cancel.is_set():
                    self.conn.cancel_safe(timeout=2.0)
                    return

        watcher = threading.Thread(target=watch, name="dm-pg-cancel", daemon=True)
        watcher.start()
        try:
            yield self
        except psycopg.errors.QueryCanceled as exc:
            raise Cancelled("cancelled") from exc
        finally:
            done.set()
            watcher.join()

    # ---------- documents ----------
    def get_document(self, path: str) -> DocRow | None:
        row = self.conn.execute(f"select {_DOC_COLUMNS} from documents where path = %s", (path,)).fetchone()
        return _doc(row) if row else None

    def documents_under(self, folder: str) -> list[DocRow]:
        lo, hi = prefix_range(folder)
        return [_doc(r) for r in self.conn.execute(
            f"select {_DOC_COLUMNS} from documents where path >= %s and path < %s order by path", (lo, hi))]

    def list_documents(self) -> list[DocumentInfo]:
        rows = self.conn.execute(
            "select d.id, d.path, d.kind, d.status, d.error, d.size, d.mtime, d.indexed_at, d.n_chunks, "
            "(select count(*) from chunks c left join chunks h on h.id = c.dup_of where c.doc_id = d.id "
            "and (c.embedded or coalesce(h.embedded, false))) from documents d order by d.path").fetchall()
        return [DocumentInfo(int(str(i)), str(p), str(k), str(s), str(e), int(str(sz)), float(str(mt)),
                             float(str(ia)), int(str(n)), int(str(v))) for i, p, k, s, e, sz, mt, ia, n, v in rows]

    # ---------- search on the server's engines (retrieve/lanes.py asks for these when a store has them) ----------
    def dense_candidates(self, query_vec: np.ndarray, limit: int,
                         filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the nearest passages by pgvector (HNSW, or exact for a small library)."""
        return dense_candidates(self.conn, self.vectors, query_vec, limit, filters)

    def dense_exact_candidates(self, query_vec: np.ndarray, limit: int,
                               filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """The same by a scan of every vector (the reference HNSW's recall is measured against)."""
        return dense_candidates(self.conn, self.vectors, query_vec, limit, filters, exact=True)

    # ---------- erasing, checks, counts ----------
    def checkpoint(self) -> bool:
        return True  # the server's WAL is the server's (maintenance.py)

    def checkpoint_erased(self) -> bool:
        return True

    def merge_step(self, pages: int = 0, always: bool = False) -> bool:
        """Nothing to merge between a removal's slices: a removal rewrites its words' segments (postings.py)."""
        return False

    def compact(self, progress: Callable[[float], None] | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        with self._change():
            recount_totals(self.conn)
        return maintenance.compact(self.conn, self.url, self.vectors, progress, cancel)

    def check_integrity(self, progress: maintenance.CheckProgress | None = None,
                        cancel: threading.Event | None = None, full: bool = True) -> list[str]:
        return maintenance.check(self.conn, self.vectors, progress, cancel)

    def counts(self) -> dict[str, Any]:
        by_status = {str(s): int(str(n)) for s, n in self.conn.execute(
            "select status, count(*) from documents group by status")}
        row = self.conn.execute(
            "select count(*), count(*) filter (where dup_of is not null), "
            "count(*) filter (where dup_of is not null and not embedded), "
            "count(*) filter (where dup_of is null and not embedded) from chunks").fetchone()
        chunks, dups, dups_unembedded, pending = (int(str(v)) for v in row) if row else (0, 0, 0, 0)
        return {"by_status": by_status, "chunks": chunks, "vectors": chunks - pending - dups_unembedded,
                "duplicates": dups}

    def db_bytes(self) -> int:
        return maintenance.db_bytes(self.conn)


__all__ = ["PgStore"]
