"""The Store's document writes: a document and its chunks, FTS rows and bigram rows replaced in one transaction,
duplicates collapsed and promoted, vectors of unchanged text kept, removals (see the invariants in repository.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from ..models import HEADING_SEP, STATUS_INDEXED, ChunkDraft, chunk_text_hash
from . import erase
from .cjk import grams_text
from .dup_holder import holders, take_over
from .erase import Eraser
from .meta import MetaTable
from .row_types import WriteResult
from .sql_values import as_int, as_str, scalar_int
from .vector_rows import VectorRows


@dataclass(frozen=True)
class DocumentWrite:
    """One document to write: its row's columns, its chunks and their dedupe keys (one per chunk)."""

    path: str
    kind: str
    language: str | None
    title: str | None
    size: int
    mtime: float
    content_hash: str
    chunks: Sequence[ChunkDraft]
    dedupe_keys: Sequence[str]
    warning: str = ""
    # the active model's vector of each chunk's own text where one is known already (a copy between libraries):
    # stored with the chunks, in their transaction, so those passages are never queued for embedding
    vectors: Sequence[np.ndarray | None] | None = None


class DocumentWrites:
    """Writes of documents and their chunks on one connection."""

    def __init__(self, conn: apsw.Connection, meta: MetaTable, vectors: VectorRows, eraser: Eraser) -> None:
        self.conn = conn
        self.meta = meta
        self.vectors = vectors
        self.eraser = eraser

    def write_documents(self, docs: Sequence[DocumentWrite]) -> list[WriteResult]:
        """Replace several documents and their chunks in ONE transaction: all of them commit, or none does.

        Why batches: a commit writes every page the transaction touched to the WAL, and the pages a document
        touches (the FTS5 structure record and segment pages, the ends of the chunk table and of its indexes) are
        mostly the same for its neighbours; one commit per 10-chunk document wrote ~30 pages for ~10 KB of text, and
        FTS5 flushed one tiny segment per commit for its merges to rewrite again and again. Each document is applied
        exactly as if it were written alone, in order (a later one sees the chunks of an earlier one: duplicates,
        holders and replaced paths behave the same), and the FTS rows commit with the chunks."""
        results: list[WriteResult] = []
        if not docs:
            return results
        with self.conn:
            for doc in docs:
                results.append(self._write_one(doc))
            self.meta.bump_content_version()
        return results

    def _write_one(self, doc: DocumentWrite) -> WriteResult:
        """One document inside the caller's transaction. When a document is replaced (an edited file), every new
        chunk whose text is exactly the text of one of its old embedded chunks takes that chunk's vector over in
        the same transaction: editing one section of a long file re-embeds only the chunks that changed."""
        reused = 0
        chunks = doc.chunks
        existing = self.conn.execute("select id from documents where path=?", (doc.path,)).fetchone()
        kept: dict[int, int] = {}
        if existing:
            doc_id = existing[0]
            kept = self._stash_reusable_vectors(doc_id, chunks)
            bulk = self.eraser.erasing_in_bulk()
            if bulk:
                self.eraser.fts_secure_delete(False)
            self._delete_chunks(doc_id)
            if bulk:
                self.eraser.fts_secure_delete(True)
            self.conn.execute(
                "update documents set kind=?, language=?, title=?, size=?, mtime=?, content_hash=?, status=?, "
                "error=?, indexed_at=? where id=?",
                (doc.kind, doc.language, doc.title, doc.size, doc.mtime, doc.content_hash, STATUS_INDEXED,
                 doc.warning, time.time(), doc_id),
            )
        else:
            self.conn.execute(
                "insert into documents(path, kind, language, title, size, mtime, content_hash, status, error, "
                "indexed_at) values(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc.path, doc.kind, doc.language, doc.title, doc.size, doc.mtime, doc.content_hash, STATUS_INDEXED,
                 doc.warning, time.time()),
            )
            doc_id = self.conn.last_insert_rowid()
        dups = self._insert_chunks(doc_id, doc.path, chunks, doc.dedupe_keys)
        if kept:
            reused = self._reuse_stashed_vectors(doc_id, kept)
        given = self._store_given_vectors(doc_id, doc) if doc.vectors else 0
        self.conn.execute("update documents set n_chunks=?, n_dups=? where id=?", (len(chunks), dups, doc_id))
        return WriteResult(doc_id, len(chunks), dups, reused, given)

    def _store_given_vectors(self, doc_id: int, doc: DocumentWrite) -> int:
        """The vectors the write carries, for its canonical chunks still without one (``DocumentWrite.vectors``)."""
        assert doc.vectors is not None
        todo = [(cid, vector, doc.chunks[int(ord_)].text) for cid, ord_ in self.conn.execute(
            "select id, ord from chunks where doc_id = ? and dup_of is null and embedded = 0 order by id", (doc_id,))
            if (vector := doc.vectors[int(ord_)]) is not None]
        if not todo:
            return 0
        return self.vectors.store_vectors([t[0] for t in todo], np.stack([t[1] for t in todo]),
                                          [t[2] for t in todo])

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
        if not chunks or not self.vectors.has_vector_table():
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
            self.meta.bump("vec_seq" if pairs[0][0] > newest else "vec_epoch")
        self.conn.execute("delete from temp.dm_reuse")
        return len(pairs)

    def _insert_chunks(self, doc_id: int, own_path: str, chunks: Sequence[ChunkDraft], keys: Sequence[str]) -> int:
        held = holders(self.conn, keys, doc_id) if keys else {}
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
            moved, deleted = take_over(self.conn, takeovers, self.vectors.has_vector_table())
            if moved:
                self.meta.bump("vec_epoch")  # a vector appeared under an id that is not the newest
            if deleted:
                self.meta.bump("vec_deleted", deleted)
        return dups

    def _index_cjk(self, rows: Sequence[tuple[int, str]]) -> None:
        """Bigram rows (chunks_cjk) for canonical chunks holding text written without spaces (store/cjk.py)."""
        grams = [(cid, grams_text(text)) for cid, text in rows]
        self.conn.executemany("insert into chunks_cjk(rowid, grams) values(?, ?)", [g for g in grams if g[1]])

    def _delete_chunks(self, doc_id: int) -> None:
        """Delete a document's chunks with their FTS rows and vectors; promote duplicates that pointed at them."""
        self.eraser.erased = True
        has_vec = self.vectors.has_vector_table()
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
                self.meta.bump("vec_deleted", gone)
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
                    self.meta.bump("vec_epoch")  # a vector appeared under an id that is not the newest
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
            self.meta.bump("catalog_version")

    def touch_document(self, doc_id: int, size: int, mtime: float) -> None:
        """Same content, new mtime: remember it so the next run takes the stat fast path."""
        with self.conn:
            self.conn.execute("update documents set size=?, mtime=? where id=?", (size, mtime, doc_id))
            self.meta.bump("catalog_version")

    def remove_documents(self, doc_ids: Iterable[int]) -> int:
        """Remove documents, each in its own transaction; many at once (BULK_ERASE or more) in one transaction that
        deletes with FTS tombstones, the operation's 'optimize' (checkpoint_erased) then erasing their terms."""
        doc_ids = list(doc_ids)
        if len(doc_ids) > erase.BULK_ERASE:
            with self.conn:
                self.eraser.erased_docs += len(doc_ids)
                self.meta.set("fts_optimize_pending", "1")  # in the transaction: a crash leaves it for next time
                self.eraser.fts_secure_delete(False)
                for doc_id in doc_ids:
                    self._delete_chunks(doc_id)
                    self.conn.execute("delete from documents where id=?", (doc_id,))
                self.eraser.fts_secure_delete(True)
                self.meta.bump_content_version()
            return len(doc_ids)
        count = 0
        for doc_id in doc_ids:
            with self.conn:
                bulk = self.eraser.erasing_in_bulk()
                if bulk:
                    self.eraser.fts_secure_delete(False)
                self._delete_chunks(doc_id)
                self.conn.execute("delete from documents where id=?", (doc_id,))
                if bulk:
                    self.eraser.fts_secure_delete(True)
                self.meta.bump_content_version()
            count += 1
        return count
