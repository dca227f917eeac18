"""All reads and writes of the index. One transaction per document; vectors follow in their own transactions.

Invariants kept by every write (and checked by tests after kill -9):
- every canonical chunk (``dup_of IS NULL``) has exactly one FTS row; collapsed duplicates have none;
- a vector exists for a chunk iff ``embedded = 1``, and only for live canonical chunks; it is written in the same
  transaction as that flag, as a float32 BLOB (``chunk_vectors``) plus its sign bits (``chunk_vector_bits``);
- the vectors' dimension and the model id are recorded in ``meta``; vectors of two models are never mixed: another
  model's vectors live in their own tables beside them (``store/model_sets.py``) until they become the active set;
- ``meta.content_version`` / ``catalog_version`` count document changes (see :meth:`Store.change_stamp`);
- ``meta.vec_epoch`` / ``vec_seq`` / ``vec_deleted`` count vector changes so in-memory search structures built
  from the stored bits (``retrieve/dense.py``) know when to refresh: ``vec_seq`` grows when vectors are appended
  with ids above every stored id, ``vec_epoch`` when any other id gains a vector or everything is reset.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import apsw

from ..errors import Cancelled, NotOurDatabase, StoreError, StoreFull, StoreReadOnly
from ..models import HEADING_SEP, DocumentInfo, LibraryListing, LibraryQuery
from ..paths import prefix_range
from . import doc_listing
from . import migrations as _migrations
from .connection import open_connection, secure_store_files, stop_waiting, translate_error
from .doc_writes import DocumentWrite, DocumentWrites
from .erase import MERGE_PAGES, Eraser
from .export_reads import ExportReads
from .facade import LibraryFacade, closed_on_failure
from .folder_rows import SqliteFolderRows
from .folders import Folders
from .integrity import CheckProgress, IntegrityChecks
from .meta import MetaTable
from .migrations import current_version, migrate
from .model_sets import ModelSets, side_problems
from .readonly import DISK_FULL, mode_of
from .row_types import DocRow, WriteResult
from .search_reads import SearchReads
from .sql_values import as_int, as_str, scalar, scalar_int
from .vector_rows import VectorRows


class Store(LibraryFacade):
    """A connection to one index file, used by one thread at a time (the service leases it: service.py).

    The facade over its parts (store/facade.py forwards to them, the same as for PostgreSQL): ``meta`` (counters),
    ``folders`` (library folders, exclusions, removals), ``writes`` (documents and chunks), ``vectors`` (model, queue,
    vector rows), ``eraser`` (removed means gone), ``reads`` (what retrieve/ asks); checks run on demand."""

    meta: MetaTable
    writes: DocumentWrites
    vectors: VectorRows
    reads: SearchReads

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        # (id, readable name) of the machine using this connection: the library folders it adds are its own
        # (machine.py; the service sets it). ('', '') records none, as before machines were recorded.
        self.machine: tuple[str, str] = ("", "")
        self.conn = open_connection(self.path, readonly=readonly)
        self.reads = SearchReads(self.conn)  # what retrieve/ asks of the index (it never sees the schema)
        # (READ_ONLY | DISK_FULL, note) when the file cannot be written here: reads work, writes are refused
        found = mode_of(self.conn)
        self.mode: str | None = found[0] if found else None
        self.mode_note: str = found[1] if found else ""
        if self.mode and current_version(self.conn) < _migrations.SCHEMA_VERSION:
            self.conn.close()
            raise StoreReadOnly(f"The database {self.path} was written by an older desktop-memory and must be "
                                "upgraded, which needs write access: open it once where it can be written (and with "
                                "free space).")
        if readonly and current_version(self.conn) < _migrations.SCHEMA_VERSION:  # a reader never migrates
            empty = not _migrations.has_tables(self.conn)
            self.conn.close()
            if empty:
                raise NotOurDatabase(f"{self.path} holds no library (it is empty): nothing to read.")
            raise StoreReadOnly(f"The database {self.path} was written by an older desktop-memory and is opened "
                                "read-only here: open it once with this version to upgrade it (for example "
                                f"`desktop-memory --db {self.path} stats`; a backup is kept), then try again.")
        if not readonly and not self.mode:
            with closed_on_failure(self.conn.close, apsw.Error, lambda exc: translate_error(exc, self.path)):
                self._migrate()
        # owner-only files, checked once the file is known to be ours (a foreign file was refused above)
        self.notices: list[str] = [] if readonly or self.mode else secure_store_files(self.path)
        # the Store's parts, each given exactly what it uses
        self.meta = MetaTable(self.conn)
        self.vectors = VectorRows(self.conn, self.meta)
        self.models = ModelSets(self.conn, self.meta)  # other models' vectors kept beside the active set
        self.eraser = Eraser(self.conn, self.meta, self.db_bytes)
        self.writes = DocumentWrites(self.conn, self.meta, self.vectors, self.eraser)
        self.folders = Folders(SqliteFolderRows(self.conn), self.meta)  # store/folders.py: the rules of both stores
        self.export = ExportReads(self.conn, self.models)  # what `copy` reads (library_copy.py)

    def _migrate(self) -> None:
        """Bring the schema up to date without racing another process that opens the same file.

        A brand-new file gets its whole schema in ONE transaction taken with the write lock (BEGIN IMMEDIATE): a
        second process opening it at the same moment waits (busy timeout), then finds the schema in place, instead
        of failing with "table meta already exists". An older database is migrated as before (backup first: the
        backup API cannot read a connection that holds a write transaction); if another process finished the same
        migration first, that is fine too.
        """
        conn = self.conn
        version = current_version(conn)
        if version == 0 and not conn.execute("select 1 from sqlite_master limit 1").fetchone():
            conn.execute("begin immediate")
            try:
                migrate(conn, self.path)  # re-reads the version under the lock: a no-op if someone else was first
            except BaseException:
                if conn.in_transaction:
                    conn.execute("rollback")
                raise
            conn.execute("commit")
            return
        try:
            migrate(conn, self.path)
        except apsw.Error:
            if current_version(conn) != _migrations.SCHEMA_VERSION:
                raise

    def close(self) -> None:
        self.conn.close()

    def stop_waiting(self) -> None:
        """Closing: a write waiting for another process's lock gives up now (store/connection.py)."""
        stop_waiting(self.conn)

    def set_busy_timeout(self, ms: int) -> None:
        """How long a statement waits for another process's lock before failing with "busy"."""
        self.conn.setbusytimeout(int(ms))

    def sqlite_vec_version(self) -> str:
        """The loaded sqlite-vec's version (the smoke check prints it)."""
        return as_str(scalar(self.conn, "select vec_version()"))

    @contextmanager
    def immediate_writes(self) -> Iterator[Store]:
        """Inside this block, this connection's outermost transactions start with BEGIN IMMEDIATE.

        A deferred transaction that reads first and writes second cannot wait for another process's writer: if
        that writer commits in between, SQLite fails at once with SQLITE_BUSY_SNAPSHOT ("database is locked"),
        whatever the busy timeout. Taking the write lock up front makes a second indexer (another app instance, a
        CLI run) wait its turn instead. Only for writers: readers stay deferred so they never wait in WAL mode.
        """
        if self.mode == DISK_FULL:
            raise StoreFull(f"The disk holding {self.path} is full; free some space and index again. "
                             "Nothing committed was lost.")
        if self.mode:
            raise StoreReadOnly(f"The database {self.path} is read-only; pick a writable location in Settings.")
        conn = self.conn
        previous = conn.transaction_mode
        conn.transaction_mode = "IMMEDIATE"
        try:
            yield self
        finally:
            conn.transaction_mode = previous

    @contextmanager
    def read_snapshot(self) -> Iterator[Store]:
        """One read transaction for the block: every read in it sees the same committed state. A search reads the
        model record, the codes and the float vectors in turn; a model switch (``ModelSets.activate``) committed
        between two of those reads would otherwise pair one model's query with another model's vectors."""
        with self.conn:
            yield self

    def _change(self) -> AbstractContextManager[object]:
        return self.conn  # one transaction (a savepoint inside another)

    def _part_change(self) -> AbstractContextManager[object]:
        return nullcontext()  # DocumentWrites and VectorRows open their own transactions

    # ---------- documents ----------
    def get_document(self, path: str) -> DocRow | None:
        row = self.conn.execute(
            "select id, path, kind, size, mtime, content_hash, status, error, n_chunks from documents where path=?",
            (path,),
        ).fetchone()
        return DocRow(*row) if row else None

    def documents_under(self, folder: str) -> list[DocRow]:
        # a range on the path index, not a scan of every document (paths.prefix_range says why)
        rows = self.conn.execute(
            "select id, path, kind, size, mtime, content_hash, status, error, n_chunks from documents "
            "where path >= ? and path < ? order by path",
            prefix_range(folder),
        )
        return [DocRow(*r) for r in rows]

    def list_documents(self) -> list[DocumentInfo]:
        rows = self.conn.execute(
            """select d.id, d.path, d.kind, d.status, d.error, d.size, d.mtime, d.indexed_at, d.n_chunks,
                      (select count(*) from chunks c where c.doc_id = d.id and (c.embedded = 1 or
                       (c.dup_of is not null and (select h.embedded from chunks h where h.id = c.dup_of) = 1)))
               from documents d order by d.path"""  # a duplicate shares its holder's vector: doc_listing.py
        )
        return [DocumentInfo(*r) for r in rows]

    def listing(self, query: LibraryQuery, pages: Mapping[str, int], eager_limit: int) -> LibraryListing:
        """The Library's listing as indexed SQL (store/doc_listing.py), not grouped in memory."""
        return doc_listing.listing(self.conn, query, pages, eager_limit)

    def listing_page(self, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
        return doc_listing.page(self.conn, query, key, offset, limit)

    # ---------- erasing and checks (store/erase.py, store/integrity.py) ----------
    def checkpoint(self) -> bool:
        return self.eraser.checkpoint()

    def checkpoint_erased(self) -> bool:
        return self.eraser.checkpoint_erased()

    def merge_step(self, pages: int = MERGE_PAGES, always: bool = False) -> bool:
        """One bounded step of FTS5's segment merging between a removal's slices (``Eraser.merge_step``)."""
        return self.eraser.merge_step(pages, always)

    def compact(self, progress: Callable[[float], None] | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        return self.eraser.compact(progress, cancel)

    def check_integrity(self, progress: CheckProgress | None = None, cancel: threading.Event | None = None,
                        full: bool = True) -> list[str]:
        problems = IntegrityChecks(self.conn, self.mode, self.vectors, progress, cancel).check_integrity(full)
        return problems + side_problems(self.conn)  # other models' vectors kept beside (store/model_sets.py)

    def prepare_writes(self, docs: Sequence[DocumentWrite]) -> None:
        """A hint that ``docs`` are written next: the server store tokenizes them meanwhile on a second connection
        (store/postgres/tokens_ahead.py); SQLite's FTS5 tokenizes inside the write, one core either way."""
        del docs

    @contextmanager
    def bulk_load(self, incoming: int = 0) -> Iterator[None]:
        """A bulk load (``copy`` into this library) needs nothing special: sqlite-vec keeps no graph to rebuild."""
        yield

    @contextmanager
    def cancellable(self, cancel: threading.Event | None) -> Iterator[Store]:
        """While the block runs, a set ``cancel`` interrupts this connection's running statement and the block ends in
        Cancelled: a long read (a million vectors' codes for the dense lane) stops within one page of rows."""
        if cancel is None:
            yield self
            return
        self.conn.set_progress_handler(cancel.is_set, 20000)
        try:
            yield self
        except apsw.InterruptError as exc:
            raise Cancelled("cancelled") from exc
        finally:
            self.conn.set_progress_handler(None)

    # ---------- reads ----------
    def counts(self) -> dict[str, Any]:  # by_status is a dict, the rest are ints
        by_status = {as_str(status): as_int(n) for status, n in self.conn.execute(
            "select status, count(*) from documents group by status"
        )}
        # each count from an index, never a scan of the chunk rows (their text): at a million passages that one
        # scan costs 3-4 s. vectors = chunks - those without one (pending, and duplicates not embedded), exact
        chunks = scalar_int(self.conn, "select count(*) from chunks")  # the smallest index (chunks_doc)
        dups = scalar_int(self.conn, "select count(*) from chunks where dup_of is not null")  # chunks_dup_of
        dups_unembedded = scalar_int(
            self.conn, "select count(*) from chunks where dup_of is not null and embedded = 0")
        vectors = chunks - self.pending_count() - dups_unembedded
        return {"by_status": by_status, "chunks": chunks, "vectors": vectors, "duplicates": dups}

    def db_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total


__all__ = ["HEADING_SEP", "DocRow", "DocumentWrite", "Store", "StoreError", "WriteResult"]
