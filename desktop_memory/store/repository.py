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

import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from ..errors import Cancelled, StoreError, StoreFull, StoreReadOnly
from ..models import HEADING_SEP, ChunkDraft, DocumentInfo
from ..paths import is_inside, prefix_range
from . import migrations as _migrations
from .connection import open_connection, secure_store_files, stop_waiting, translate_error
from .doc_writes import DocumentWrite, DocumentWrites
from .erase import Eraser
from .exclusions import PENDING_REMOVAL, Exclusions, pending_paths
from .export_reads import ExportReads
from .integrity import CheckProgress, IntegrityChecks
from .meta import MetaTable
from .migrations import current_version, migrate
from .model_sets import ModelSets, side_problems
from .readonly import DISK_FULL, mode_of
from .row_types import DocRow, WriteResult
from .search_reads import SearchReads
from .sql_values import as_int, as_str, scalar, scalar_int
from .vector_rows import VectorRows


class Store:
    """A connection to one index file, used by one thread at a time (the service leases it: service.py).

    The facade over its parts: ``meta`` (counters), ``writes`` (documents and chunks), ``vectors`` (model, queue,
    vector rows), ``eraser`` (removed means gone), ``reads`` (what retrieve/ asks); checks run on demand."""

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
        if not readonly and not self.mode:
            try:
                self._migrate()
            except apsw.Error as exc:
                self.conn.close()
                error = translate_error(exc, self.path)
                if error is None:
                    raise
                raise error from exc
            except BaseException:
                self.conn.close()
                raise
        # owner-only files, checked once the file is known to be ours (a foreign file was refused above)
        self.notices: list[str] = [] if readonly or self.mode else secure_store_files(self.path)
        # the Store's parts, each given exactly what it uses
        self.meta = MetaTable(self.conn)
        self.vectors = VectorRows(self.conn, self.meta)
        self.models = ModelSets(self.conn, self.meta)  # other models' vectors kept beside the active set
        self.eraser = Eraser(self.conn, self.meta, self.db_bytes)
        self.writes = DocumentWrites(self.conn, self.meta, self.vectors, self.eraser)
        self.exclusions = Exclusions(self.conn)  # what the person removed from inside a library folder
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

    # ---------- meta ----------
    def get_meta(self, key: str) -> str | None:
        return self.meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        """One ``meta`` row, committed (a library's own state, e.g. that the person paused its embedding)."""
        with self.conn:
            self.meta.set(key, value)

    def content_version(self) -> int:
        return self.meta.content_version()

    def change_stamp(self) -> tuple[int, ...]:
        """Every change counter in one read (see ``MetaTable.change_stamp``); the GUI's "library changed" signal
        is built on this."""
        return self.meta.change_stamp()

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

    def add_root(self, path: str, machine: tuple[str, str] | None = None) -> None:
        """A folder (re)added: a removal of it (or of a folder inside it) that a quit interrupted is called off, so
        finishing it later cannot take what the person has just added again. ``machine``: whose folder it is
        (``copy`` keeps the source's); default :attr:`machine`."""
        pending = self.pending_removals()
        if pending:
            left = [p for p in pending if not is_inside(p, path)]
            if len(left) != len(pending):
                self.meta.set(PENDING_REMOVAL, json.dumps(left))
        now = time.time()
        machine_id, name = machine or self.machine
        # a folder keeps the machine that added it; one from before machines were recorded ('') is claimed
        self.conn.execute(
            "insert into roots(path, added_at, indexed_at, machine_id, machine_name) values(?, ?, ?, ?, ?) "
            "on conflict(path) do update set indexed_at=excluded.indexed_at, "
            "machine_id = case when roots.machine_id = '' then excluded.machine_id else roots.machine_id end, "
            "machine_name = case when roots.machine_id in ('', excluded.machine_id) then excluded.machine_name "
            "else roots.machine_name end",
            (path, now, now, machine_id, name),
        )
        if machine_id:  # this machine's readable name as it is now, on all its folders
            self.conn.execute("update roots set machine_name = ? where machine_id = ? and machine_name <> ?",
                              (name, machine_id, name))

    def roots(self) -> list[str]:
        return [r[0] for r in self.conn.execute("select path from roots order by path")]

    def root_machines(self) -> list[tuple[str, str, str]]:
        """(library folder, machine id, machine name) of every library folder, by path ('' id: not recorded)."""
        return [(as_str(p), as_str(i), as_str(n)) for p, i, n in
                self.conn.execute("select path, machine_id, machine_name from roots order by path")]

    def remove_root(self, path: str) -> None:
        """Forget an indexed folder (its own transaction)."""
        with self.conn:
            self.conn.execute("delete from roots where path=?", (path,))

    # ---------- removal, final even across a restart (service.remove_paths) ----------
    def begin_removal(self, paths: Sequence[str], exclude: Collection[str] = ()) -> list[str]:
        """One short transaction, the removal's recorded intent: the paths join the library's pending removals
        (``meta.pending_removal``), library folders at or below them stop being library folders, and a path of
        ``exclude`` (the person's removal, not a file gone from disk) inside a library folder becomes an exclusion, so
        nothing (a watcher, a catch-up, a re-read, the next start) brings it back while, or after, its documents
        are removed slice by slice. Returns every pending path."""
        with self.conn:
            pending = self.pending_removals()
            pending += [p for p in paths if p not in pending]
            self.meta.set(PENDING_REMOVAL, json.dumps(pending))
            roots = self.roots()
            for path in paths:
                inner = [r for r in roots if is_inside(r, path)]  # the path is (or holds) library folders
                self.conn.executemany("delete from roots where path=?", [(r,) for r in inner])
                for root in inner:  # its exclusions mean nothing any more (adding it again starts afresh)
                    self.exclusions.drop_under(root)
                holders = [r for r in roots if r not in inner and is_inside(path, r)]
                within = any(q != path and is_inside(path, q) for q in paths)  # goes with a folder asked for too
                if path in exclude and holders and not within:
                    self.exclusions.drop_under(path)  # one exclusion of the folder stands for those inside it
                    self.exclusions.add(path, max(holders, key=len))
            self.meta.bump("catalog_version")
        return pending

    def excluded(self) -> list[str]:
        """Paths removed from inside a library folder (store/exclusions.py): every walk leaves them out."""
        return self.exclusions.paths()

    def exclusion_rows(self) -> list[tuple[str, str]]:
        """(excluded path, the library folder it was removed from), by path (what `copy` carries over)."""
        return self.exclusions.rows()

    def add_exclusions(self, rows: Sequence[tuple[str, str]]) -> None:
        """Record exclusions as another library has them (`copy`), in one transaction."""
        with self.conn:
            for path, root in rows:
                self.exclusions.add(path, root)

    def lift_exclusions(self, paths: Sequence[str], under: bool = False) -> list[str]:
        """Include again (committed): the exclusions of exactly ``paths``, or (``under``) every one at or below
        them. Returns what was lifted."""
        with self.conn:
            if not under:
                lifted = self.exclusions.drop_exact(paths)
            else:
                lifted = [p for path in paths for p in self.exclusions.drop_under(path)]
            if lifted:
                self.meta.bump("catalog_version")  # the Library lists them: its listing changes
        return lifted

    def pending_removals(self) -> list[str]:
        """Paths whose removal began and has not finished (quit or crash meanwhile: finished at the next start)."""
        return pending_paths(self.meta.get(PENDING_REMOVAL))

    def removal_slice(self, paths: Sequence[str], limit: int) -> list[int]:
        """Up to ``limit`` document ids at or below ``paths`` (ranges of the path index, never a scan)."""
        ids: list[int] = []
        for path in paths:
            if len(ids) >= limit:
                break
            doc = self.get_document(path)
            if doc is not None:
                ids.append(doc.id)
            lo, hi = prefix_range(path)
            ids += [as_int(r[0]) for r in self.conn.execute(
                "select id from documents where path >= ? and path < ? limit ?", (lo, hi, limit - len(ids)))]
        return ids[:limit]

    def count_under(self, paths: Sequence[str]) -> int:
        """Documents at or below ``paths``: the size of a removal, for its progress."""
        docs = 0
        for path in paths:
            docs += scalar_int(self.conn, "select count(*) from documents where path = ?", (path,))
            docs += scalar_int(self.conn, "select count(*) from documents where path >= ? and path < ?",
                               prefix_range(path))
        return docs

    def end_removal(self, paths: Sequence[str]) -> None:
        """These paths' documents are gone: they leave the pending removals."""
        with self.conn:
            left = [p for p in self.pending_removals() if p not in paths]
            if left:
                self.meta.set(PENDING_REMOVAL, json.dumps(left))
            else:
                self.conn.execute("delete from meta where key = ?", (PENDING_REMOVAL,))

    def list_documents(self) -> list[DocumentInfo]:
        rows = self.conn.execute(
            """select d.id, d.path, d.kind, d.status, d.error, d.size, d.mtime, d.indexed_at, d.n_chunks,
                      (select count(*) from chunks c where c.doc_id = d.id and (c.embedded = 1 or
                       (c.dup_of is not null and (select h.embedded from chunks h where h.id = c.dup_of) = 1)))
               from documents d order by d.path"""  # a duplicate shares its holder's vector: doc_listing.py
        )
        return [DocumentInfo(*r) for r in rows]

    def write_document(self, *, path: str, kind: str, language: str | None, title: str | None, size: int,
                       mtime: float, content_hash: str, chunks: Sequence[ChunkDraft], dedupe_keys: Sequence[str],
                       warning: str = "") -> WriteResult:
        """Replace a document and its chunks atomically (see ``DocumentWrites.write_document``)."""
        return self.writes.write_document(path=path, kind=kind, language=language, title=title, size=size,
                                          mtime=mtime, content_hash=content_hash, chunks=chunks,
                                          dedupe_keys=dedupe_keys, warning=warning)

    def write_documents(self, docs: Sequence[DocumentWrite]) -> list[WriteResult]:
        """Replace several documents in one transaction (see ``DocumentWrites.write_documents``)."""
        return self.writes.write_documents(docs)

    def record_outcome(self, *, path: str, status: str, error: str, kind: str = "", size: int = 0,
                       mtime: float = 0.0) -> None:
        """Record a skipped/failed file. A previously indexed version stays searchable (nothing is lost)."""
        self.writes.record_outcome(path=path, status=status, error=error, kind=kind, size=size, mtime=mtime)

    def touch_document(self, doc_id: int, size: int, mtime: float) -> None:
        """Same content, new mtime: remember it so the next run takes the stat fast path."""
        self.writes.touch_document(doc_id, size, mtime)

    def remove_documents(self, doc_ids: Iterable[int]) -> int:
        """Remove documents (see ``DocumentWrites.remove_documents``); returns how many."""
        return self.writes.remove_documents(doc_ids)

    # ---------- vectors (store/vector_rows.py) ----------
    def model_info(self) -> tuple[str | None, int | None]:
        return self.vectors.model_info()

    def has_vector_table(self) -> bool:
        return self.vectors.has_vector_table()

    def ensure_model(self, model_id: str, dim: int) -> None:
        self.vectors.ensure_model(model_id, dim)

    def reset_vectors(self, model_id: str | None = None, dim: int | None = None) -> None:
        self.vectors.reset_vectors(model_id, dim)

    def vector_state(self) -> tuple[int, int, int]:
        return self.vectors.vector_state()

    def load_bits(self, after_id: int = 0, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.vectors.load_bits(after_id, limit)

    def code_count(self, after_id: int = 0) -> int:
        return self.vectors.code_count(after_id)

    def iter_vectors(self, block: int = 4096, ids: Sequence[int] | None = None
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return self.vectors.iter_vectors(block, ids)

    def pending_count(self) -> int:
        return self.vectors.pending_count()

    def pending_chunks(self, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        return self.vectors.pending_chunks(limit, after_id)

    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str] | None = None) -> int:
        return self.vectors.store_vectors(ids, vectors, texts)

    # ---------- erasing and checks (store/erase.py, store/integrity.py) ----------
    def checkpoint(self) -> bool:
        return self.eraser.checkpoint()

    def checkpoint_erased(self) -> bool:
        return self.eraser.checkpoint_erased()

    def compact(self, progress: Callable[[float], None] | None = None,
                cancel: threading.Event | None = None) -> tuple[int, int]:
        return self.eraser.compact(progress, cancel)

    def check_integrity(self, progress: CheckProgress | None = None, cancel: threading.Event | None = None,
                        full: bool = True) -> list[str]:
        problems = IntegrityChecks(self.conn, self.mode, self.vectors, progress, cancel).check_integrity(full)
        return problems + side_problems(self.conn)  # other models' vectors kept beside (store/model_sets.py)

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
