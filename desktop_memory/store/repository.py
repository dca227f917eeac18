"""All reads and writes of the index. One transaction per document; vectors follow in their own transactions.

Invariants kept by every write (and checked by tests after kill -9):
- every canonical chunk (``dup_of IS NULL``) has exactly one FTS row; collapsed duplicates have none;
- a vector exists for a chunk iff ``embedded = 1``, and only for live canonical chunks; it is written in the same
  transaction as that flag, as a float32 BLOB (``chunk_vectors``) plus its sign bits (``chunk_vector_bits``);
- the vectors' dimension and the model id are recorded in ``meta``; vectors of two models are never mixed;
- ``meta.content_version`` / ``catalog_version`` count document changes (see :meth:`Store.change_stamp`);
- ``meta.vec_epoch`` / ``vec_seq`` / ``vec_deleted`` count vector changes so in-memory search structures built
  from the stored bits (``retrieve/dense.py``) know when to refresh: ``vec_seq`` grows when vectors are appended
  with ids above every stored id, ``vec_epoch`` when any other id gains a vector or everything is reset.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ..errors import StoreError
from ..models import STATUS_INDEXED, ChunkDraft, DocumentInfo, path_separator
from . import erase
from . import migrations as _migrations
from .cjk import grams_text
from .connection import open_connection, secure_store_files, translate_error
from .dup_holder import holders, take_over
from .erase import Erasing
from .integrity import IntegrityChecks
from .migrations import chunk_text_hash, current_version, migrate
from .readonly import DISK_FULL, mode_of
from .records import DocRow, WriteResult
from .rows import as_int, as_str, scalar, scalar_int
from .vector_rows import VectorRows

HEADING_SEP = " › "


class Store(VectorRows, IntegrityChecks, Erasing):
    """A connection to one index file, used by one thread at a time (the service leases it: service.py)."""

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = open_connection(self.path, readonly=readonly)
        # (READ_ONLY | DISK_FULL, note) when the file cannot be written here: reads work, writes are refused
        found = mode_of(self.conn)
        self.mode: str | None = found[0] if found else None
        self.mode_note: str = found[1] if found else ""
        if self.mode and current_version(self.conn) < _migrations.SCHEMA_VERSION:
            self.conn.close()
            raise StoreError(f"The database {self.path} was written by an older desktop-memory and must be upgraded, "
                             "which needs write access: open it once where it can be written (and with free space).")
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
        self._erased = False  # rows were deleted since the last checkpoint: their old pages may sit in the WAL
        self._erased_docs = 0  # documents replaced or removed by the current operation (see BULK_ERASE)
        self._vec_dim: int | None = None

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

    @contextmanager
    def immediate_writes(self) -> Iterator[Store]:
        """Inside this block, this connection's outermost transactions start with BEGIN IMMEDIATE.

        A deferred transaction that reads first and writes second cannot wait for another process's writer: if
        that writer commits in between, SQLite fails at once with SQLITE_BUSY_SNAPSHOT ("database is locked"),
        whatever the busy timeout. Taking the write lock up front makes a second indexer (another app instance, a
        CLI run) wait its turn instead. Only for writers: readers stay deferred so they never wait in WAL mode.
        """
        if self.mode == DISK_FULL:
            raise StoreError(f"The disk holding {self.path} is full; free some space and index again. "
                             "Nothing committed was lost.")
        if self.mode:
            raise StoreError(f"The database {self.path} is read-only; pick a writable location in Settings.")
        conn = self.conn
        previous = conn.transaction_mode
        conn.transaction_mode = "IMMEDIATE"
        try:
            yield self
        finally:
            conn.transaction_mode = previous

    # ---------- meta ----------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("select value from meta where key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "insert into meta(key, value) values(?, ?) on conflict(key) do update set value=excluded.value",
            (key, value),
        )

    def content_version(self) -> int:
        return int(self.get_meta("content_version") or 0)

    def change_stamp(self) -> tuple[int, ...]:
        """Every change counter in one read: content_version (chunks written or removed), catalog_version (a file
        recorded as skipped/failed or touched), vec_epoch / vec_seq / vec_deleted (vectors). Equal stamps: nothing
        committed in between, by any process; the GUI's "library changed" signal is built on this."""
        keys = ("content_version", "catalog_version", "vec_epoch", "vec_seq", "vec_deleted")
        rows = self.conn.execute(f"select key, value from meta where key in ({', '.join('?' * len(keys))})", keys)
        values = {str(k): int(str(v)) for k, v in rows}
        return tuple(values.get(k, 0) for k in keys)

    def _bump_version(self) -> None:
        self.conn.execute(
            "insert into meta(key, value) values('content_version', '1') "
            "on conflict(key) do update set value = cast(value as integer) + 1"
        )

    # ---------- documents ----------
    def get_document(self, path: str) -> DocRow | None:
        row = self.conn.execute(
            "select id, path, kind, size, mtime, content_hash, status, error, n_chunks from documents where path=?",
            (path,),
        ).fetchone()
        return DocRow(*row) if row else None

    def documents_under(self, folder: str) -> list[DocRow]:
        prefix = folder.rstrip("/\\") + path_separator(folder)
        # a range on the path index (prefix <= path < prefix with its separator + 1), not a scan of every
        # document: the watcher asks this once per deleted file, so a branch switch deleting 1,000 files in a
        # 5,000-file library took 1.6 s in substr() scans alone
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        rows = self.conn.execute(
            "select id, path, kind, size, mtime, content_hash, status, error, n_chunks from documents "
            "where path >= ? and path < ? order by path",
            (prefix, upper),
        )
        return [DocRow(*r) for r in rows]

    def add_root(self, path: str) -> None:
        now = time.time()
        self.conn.execute(
            "insert into roots(path, added_at, indexed_at) values(?, ?, ?) "
            "on conflict(path) do update set indexed_at=excluded.indexed_at",
            (path, now, now),
        )

    def roots(self) -> list[str]:
        return [r[0] for r in self.conn.execute("select path from roots order by path")]

    def remove_root(self, path: str) -> None:
        self.conn.execute("delete from roots where path=?", (path,))

    def list_documents(self) -> list[DocumentInfo]:
        rows = self.conn.execute(
            """select d.id, d.path, d.kind, d.status, d.error, d.size, d.mtime, d.indexed_at, d.n_chunks,
                      (select count(*) from chunks c where c.doc_id = d.id and c.embedded = 1)
               from documents d order by d.path"""
        )
        return [DocumentInfo(*r) for r in rows]

    def write_document(
        self,
        *,
        path: str,
        kind: str,
        language: str | None,
        title: str | None,
        size: int,
        mtime: float,
        content_hash: str,
        chunks: Sequence[ChunkDraft],
        dedupe_keys: Sequence[str],
        warning: str = "",
    ) -> WriteResult:
        """Replace a document and its chunks atomically; FTS rows commit with them (keyword-searchable at once).

        When a document is replaced (an edited file), every new chunk whose text is exactly the text of one of its
        old embedded chunks takes that chunk's vector over in the same transaction: editing one section of a long
        file re-embeds only the chunks that changed."""
        reused = 0
        with self.conn:
            existing = self.conn.execute("select id from documents where path=?", (path,)).fetchone()
            kept: dict[int, int] = {}
            if existing:
                doc_id = existing[0]
                kept = self._stash_reusable_vectors(doc_id, chunks)
                bulk = self._erasing_in_bulk()
                if bulk:
                    self._fts_secure_delete(False)
                self._delete_chunks(doc_id)
                if bulk:
                    self._fts_secure_delete(True)
                self.conn.execute(
                    "update documents set kind=?, language=?, title=?, size=?, mtime=?, content_hash=?, status=?, "
                    "error=?, indexed_at=? where id=?",
                    (kind, language, title, size, mtime, content_hash, STATUS_INDEXED, warning, time.time(), doc_id),
                )
            else:
                self.conn.execute(
                    "insert into documents(path, kind, language, title, size, mtime, content_hash, status, error, "
                    "indexed_at) values(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (path, kind, language, title, size, mtime, content_hash, STATUS_INDEXED, warning, time.time()),
                )
                doc_id = self.conn.last_insert_rowid()
            dups = self._insert_chunks(doc_id, chunks, dedupe_keys)
            if kept:
                reused = self._reuse_stashed_vectors(doc_id, kept)
            self.conn.execute("update documents set n_chunks=?, n_dups=? where id=?", (len(chunks), dups, doc_id))
            self._bump_version()
        return WriteResult(doc_id, len(chunks), dups, reused)

    # Vector reuse for an edited document. The embedder sees exactly the chunk text, and the vector tables only
    # ever hold the current model's vectors, so an old chunk with the same text has the very vector the new chunk
    # would get. Python holds only 16-byte text digests; the vectors to keep are copied into a TEMP table (in
    # SQLite's memory: temp_store=memory) while the old chunks are replaced, so the cost is at most the document's
    # own vectors, ~1.6 KB a chunk, for the length of its transaction.
    @staticmethod
    def _text_digest(text: str) -> bytes:
        return chunk_text_hash(text)

    def _stash_reusable_vectors(self, doc_id: int, chunks: Sequence[ChunkDraft]) -> dict[int, int]:
        """{new chunk position: old chunk id} for new chunks whose text an old embedded chunk of the document had;
        those old vectors are copied to temp.dm_reuse before the old chunks are deleted."""
        if not chunks or not self.has_vector_table():
            return {}
        positions: dict[bytes, list[int]] = {}
        for ord_, chunk in enumerate(chunks):
            positions.setdefault(self._text_digest(chunk.text), []).append(ord_)
        kept: dict[int, int] = {}
        # keyed by the hash of the text each VECTOR was computed from: a vector is only reused for that exact text
        for cid, vec_hash in self.conn.execute(
            "select c.id, v.text_hash from chunks c join chunk_vectors v on v.id = c.id "
            "where c.doc_id = ? and c.embedded = 1 and c.dup_of is null order by c.id", (doc_id,)
        ):
            for ord_ in positions.pop(vec_hash, ()) if vec_hash is not None else ():
                kept[ord_] = cid
        if kept:
            self.conn.execute("create temp table if not exists dm_reuse("
                              "id integer primary key, embedding blob not null, bits blob not null, text_hash blob)")
            self.conn.execute("delete from temp.dm_reuse")
            self.conn.executemany(
                "insert or ignore into temp.dm_reuse(id, embedding, bits, text_hash) "
                "select v.id, v.embedding, b.bits, v.text_hash "
                "from chunk_vectors v join chunk_vector_bits b on b.id = v.id where v.id = ?",
                [(cid,) for cid in set(kept.values())],
            )
            # a chunk flagged embedded whose vector row is missing (check() reports it) is simply embedded again
            stashed = {r[0] for r in self.conn.execute("select id from temp.dm_reuse")}
            kept = {ord_: cid for ord_, cid in kept.items() if cid in stashed}
        return kept

    def _reuse_stashed_vectors(self, doc_id: int, kept: dict[int, int]) -> int:
        """Give the document's new canonical chunks (by position) the stashed vectors of their old twins."""
        pairs = [(cid, kept[ord_]) for cid, ord_ in self.conn.execute(
            "select id, ord from chunks where doc_id = ? and dup_of is null and embedded = 0 order by id", (doc_id,)
        ) if ord_ in kept]
        if pairs:
            newest = scalar_int(self.conn, "select max(id) from chunk_vectors")
            self.conn.executemany(
                "insert into chunk_vectors(id, embedding, text_hash) select ?, embedding, text_hash "
                "from temp.dm_reuse where id = ?", pairs)
            self.conn.executemany(
                "insert into chunk_vector_bits(id, bits) select ?, bits from temp.dm_reuse where id = ?", pairs)
            self.conn.executemany("update chunks set embedded = 1 where id = ?", [(new,) for new, _ in pairs])
            self._bump_meta("vec_seq" if pairs[0][0] > newest else "vec_epoch")
        self.conn.execute("delete from temp.dm_reuse")
        return len(pairs)

    def _insert_chunks(self, doc_id: int, chunks: Sequence[ChunkDraft], keys: Sequence[str]) -> int:
        held = holders(self.conn, keys, doc_id) if keys else {}
        own_path = as_str(scalar(self.conn, "select path from documents where id = ?", (doc_id,)))
        # a passage another file holds stays there when that file's path sorts first, else it moves here
        canonical = {key: cid for key, (cid, path) in held.items() if path < own_path}
        takeovers: list[tuple[int, int]] = []
        rows = []
        fts_rows = []
        dups = 0
        seq = self.conn.execute("select seq from sqlite_sequence where name='chunks'").fetchone()
        next_id = (seq[0] if seq else 0) + 1  # AUTOINCREMENT high-water mark: ids are never reused
        for ord_, (chunk, key) in enumerate(zip(chunks, keys)):
            loc = chunk.location
            dup_of = canonical.get(key)
            if dup_of is not None:
                dups += 1
            cid = next_id + ord_
            if dup_of is None and key in held and key not in canonical:
                takeovers.append((cid, held[key][0]))
            rows.append(
                (cid, doc_id, ord_, chunk.text, HEADING_SEP.join(loc.heading_path), loc.stored_page, loc.line_start,
                 loc.line_end, loc.char_start, loc.char_end, key, dup_of, chunk_text_hash(chunk.text))
            )
            if dup_of is None:
                fts_rows.append((cid, chunk.text))
        self.conn.executemany(
            "insert into chunks(id, doc_id, ord, text, heading_path, page, line_start, line_end, char_start, "
            "char_end, dedupe_key, dup_of, text_hash) values(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self.conn.executemany("insert into chunks_fts(rowid, text) values(?, ?)", fts_rows)
        self._index_cjk(fts_rows)
        if takeovers:
            moved, deleted = take_over(self.conn, takeovers, self.has_vector_table())
            if moved:
                self._bump_meta("vec_epoch")  # a vector appeared under an id that is not the newest
            if deleted:
                self._bump_meta("vec_deleted", deleted)
        return dups

    def _index_cjk(self, rows: Sequence[tuple[int, str]]) -> None:
        """Bigram rows (chunks_cjk) for canonical chunks holding text written without spaces (store/cjk.py)."""
        grams = [(cid, grams_text(text)) for cid, text in rows]
        self.conn.executemany("insert into chunks_cjk(rowid, grams) values(?, ?)", [g for g in grams if g[1]])

    def _delete_chunks(self, doc_id: int) -> None:
        """Delete a document's chunks with their FTS rows and vectors; promote duplicates that pointed at them."""
        self._erased = True
        has_vec = self.has_vector_table()
        self._promote_duplicates(doc_id, has_vec)
        self.conn.execute(
            "insert into chunks_fts(chunks_fts, rowid, text) "
            "select 'delete', id, text from chunks where doc_id=? and dup_of is null",
            (doc_id,),
        )
        self.conn.execute(
            "delete from chunks_cjk where rowid in (select id from chunks where doc_id=? and dup_of is null)", (doc_id,)
        )
        if has_vec:
            self.conn.execute(
                "delete from chunk_vector_bits where id in (select id from chunks where doc_id=? and embedded=1)",
                (doc_id,),
            )
            self.conn.execute(
                "delete from chunk_vectors where id in (select id from chunks where doc_id=? and embedded=1)", (doc_id,)
            )
            gone = self.conn.changes()
            if gone:
                self._bump_meta("vec_deleted", gone)
        self.conn.execute("delete from chunks where doc_id=?", (doc_id,))

    def _promote_duplicates(self, doc_id: int, has_vec: bool) -> None:
        rows = self.conn.execute(
            "select d.id, d.dup_of, d.text, o.embedded, d.text_hash, o.text_hash from chunks d "
            "join chunks o on o.id = d.dup_of join documents dd on dd.id = d.doc_id "
            "where o.doc_id = ? and d.doc_id != ? order by d.dup_of, dd.path, d.id",  # smallest path holds (dup_holder)
            (doc_id, doc_id),
        ).fetchall()
        promoted: dict[int, int] = {}
        for dup_value, old_value, text, old_embedded, dup_hash, old_hash in rows:
            dup_id, old_id = as_int(dup_value), as_int(old_value)
            if old_id not in promoted:
                promoted[old_id] = dup_id
                embedded = 0
                # A duplicate shares the canonical's normalised body, not always its exact text (another heading
                # breadcrumb, other case or spacing): the vector moves over only for the very same text; otherwise
                # the promoted chunk is queued and embedded from its own text.
                if has_vec and old_embedded and dup_hash is not None and dup_hash == old_hash:
                    self.conn.execute(
                        "insert into chunk_vectors(id, embedding, text_hash) "
                        "select ?, embedding, text_hash from chunk_vectors where id=?",
                        (dup_id, old_id),
                    )
                    self.conn.execute(
                        "insert into chunk_vector_bits(id, bits) select ?, bits from chunk_vector_bits where id=?",
                        (dup_id, old_id),
                    )
                    self._bump_meta("vec_epoch")  # a vector appeared under an id that is not the newest
                    embedded = 1
                self.conn.execute("update chunks set dup_of=null, embedded=? where id=?", (embedded, dup_id))
                self.conn.execute("insert into chunks_fts(rowid, text) values(?, ?)", (dup_id, text))
                self._index_cjk([(dup_id, as_str(text))])
            else:
                self.conn.execute("update chunks set dup_of=? where id=?", (promoted[old_id], dup_id))

    def record_outcome(
        self, *, path: str, status: str, error: str, kind: str = "", size: int = 0, mtime: float = 0.0
    ) -> None:
        """Record a skipped/failed file. A previously indexed version stays searchable (nothing is lost)."""
        with self.conn:
            self.conn.execute(
                "insert into documents(path, kind, size, mtime, status, error, indexed_at) values(?, ?, ?, ?, ?, ?, ?) "
                "on conflict(path) do update set size=excluded.size, mtime=excluded.mtime, "
                "status=case when documents.n_chunks > 0 then documents.status else excluded.status end, "
                "error=excluded.error, kind=case when excluded.kind != '' then excluded.kind else documents.kind end",
                (path, kind, size, mtime, status, error, time.time()),
            )
            self._bump_meta("catalog_version")

    def touch_document(self, doc_id: int, size: int, mtime: float) -> None:
        """Same content, new mtime: remember it so the next run takes the stat fast path."""
        with self.conn:
            self.conn.execute("update documents set size=?, mtime=? where id=?", (size, mtime, doc_id))
            self._bump_meta("catalog_version")

    def remove_documents(self, doc_ids: Iterable[int]) -> int:
        """Remove documents, each in its own transaction; many at once (BULK_ERASE or more) in one transaction that
        deletes with FTS tombstones, the operation's 'optimize' (checkpoint_erased) then erasing their terms."""
        doc_ids = list(doc_ids)
        if len(doc_ids) > erase.BULK_ERASE:
            with self.conn:
                self._erased_docs += len(doc_ids)
                self._set_meta("fts_optimize_pending", "1")  # in the transaction: a crash leaves it for next time
                self._fts_secure_delete(False)
                for doc_id in doc_ids:
                    self._delete_chunks(doc_id)
                    self.conn.execute("delete from documents where id=?", (doc_id,))
                self._fts_secure_delete(True)
                self._bump_version()
            return len(doc_ids)
        count = 0
        for doc_id in doc_ids:
            with self.conn:
                bulk = self._erasing_in_bulk()
                if bulk:
                    self._fts_secure_delete(False)
                self._delete_chunks(doc_id)
                self.conn.execute("delete from documents where id=?", (doc_id,))
                if bulk:
                    self._fts_secure_delete(True)
                self._bump_version()
            count += 1
        return count

    # ---------- reads ----------
    def counts(self) -> dict[str, Any]:  # by_status is a dict, the rest are ints
        by_status = {as_str(status): as_int(n) for status, n in self.conn.execute(
            "select status, count(*) from documents group by status"
        )}
        chunks, vectors, dups = (as_int(v) for v in self.conn.execute(
            "select count(*), coalesce(sum(embedded), 0), coalesce(sum(dup_of is not null), 0) from chunks"
        ).fetchall()[0])
        return {"by_status": by_status, "chunks": chunks, "vectors": vectors, "duplicates": dups}

    def db_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

def translate_store_errors(exc: BaseException, path: Path) -> BaseException:
    from .connection import translate_error

    return translate_error(exc, path) or exc


__all__ = ["HEADING_SEP", "DocRow", "Store", "StoreError", "WriteResult", "translate_store_errors"]
