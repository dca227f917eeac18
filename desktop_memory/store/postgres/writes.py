"""Document writes on a PostgreSQL library: a batch of documents and their chunks replaced in one transaction
(under the writer lock), duplicates collapsed onto the passage another file already holds, the vectors of unchanged
text kept when a file is re-indexed, and removals. Chunks arrive by COPY (docs/BENCHMARKS.md, "PostgreSQL").

Duplicates: a chunk whose dedupe key a canonical chunk of another file holds becomes its copy (``dup_of``). Unlike
the SQLite store, the holder is the file that was indexed first, not the file with the smallest path (a holder
is never handed over while both exist); a removed holder's passage goes to the copy whose path sorts first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...models import HEADING_SEP, STATUS_INDEXED, chunk_text_hash
from ..doc_writes import DocumentWrite
from ..row_types import WriteResult
from .meta import PgMeta
from .postings import merge_behind
from .schema import Conn
from .terms import copy_chunks, index_chunks, unindex_chunks
from .tokens_ahead import Staged
from .vectors import PgVectors


class PgWrites:
    """Writes of documents and chunks; every method runs inside the caller's write transaction."""

    def __init__(self, conn: Conn, meta: PgMeta, vectors: PgVectors) -> None:
        self.conn = conn
        self.meta = meta
        self.vectors = vectors
        self.bulk = False  # during a bulk load: no merging of small segments behind the writes (bulk.py)

    def write_documents(self, docs: Sequence[DocumentWrite], staged: Staged | None = None) -> list[WriteResult]:
        """Each document as if written alone, in order. ``staged``: every chunk tokenized ahead, in order, with
        the chunk ids taken for them (tokens_ahead.py); used when the documents are all new."""
        paths = [d.path for d in docs]
        known = self.conn.execute("select 1 from documents where path = any(%s) limit 1", (paths,)).fetchone()
        if known is None and len(set(paths)) == len(paths):
            results = self._write_new(docs, staged)  # the common case (a first index, a copy): a few statements in all
        else:
            results = [self._write_one(doc) for doc in docs]
        if staged is not None:
            for table in ("token_stage", "segment_stage"):  # taken over, or not needed
                self.conn.execute(f"delete from {table} where batch = %s", (staged.batch,))
        if docs:
            self.meta.bump("content_version")
        return results

    def _write_new(self, docs: Sequence[DocumentWrite], staged: Staged | None = None) -> list[WriteResult]:
        """Documents none of which is in the library yet, in one statement per step: their rows, the holders of
        their passages' dedupe keys, chunk ids, one COPY of every chunk, their counts. The same result as writing
        them one by one in order (a passage a document earlier in the batch holds is a copy in a later one)."""
        now = time.time()
        ids_of = {str(p): int(str(i)) for i, p in self.conn.execute(
            "insert into documents(path, kind, language, title, size, mtime, content_hash, status, error, indexed_at) "
            "select * from unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], %s::float8[], "
            "%s::text[], %s::text[], %s::text[], %s::float8[]) returning id, path",
            ([d.path for d in docs], [d.kind for d in docs], [d.language for d in docs], [d.title for d in docs],
             [d.size for d in docs], [d.mtime for d in docs], [d.content_hash for d in docs],
             [STATUS_INDEXED] * len(docs), [d.warning for d in docs], [now] * len(docs)))}
        keys = sorted({k for d in docs for k in d.dedupe_keys if k})
        held: dict[str, int] = {}
        if keys:
            held = {str(k): int(str(c)) for k, c in self.conn.execute(
                "select distinct on (c.dedupe_key) c.dedupe_key, c.id from chunks c "
                "join documents d on d.id = c.doc_id where c.dup_of is null and c.dedupe_key = any(%s) "
                "order by c.dedupe_key, d.path, c.id", (keys,))}
        total = sum(len(d.chunks) for d in docs)
        if staged is not None and len(staged.ids) != total:
            staged = None
        ids = iter(staged.ids if staged is not None else [int(str(r[0])) for r in self.conn.execute(
            "select nextval('chunks_id_seq') from generate_series(1, %s)", (total,))] if total else [])
        results: list[WriteResult] = []
        rows: list[tuple[Any, ...]] = []
        given: list[tuple[int, np.ndarray, bytes]] = []  # (chunk id, its vector, its text hash): carried along
        for doc in docs:
            doc_id, dups, mine, n_given = ids_of[doc.path], 0, dict[str, int](), len(given)
            for (ord_, chunk), key in zip(enumerate(doc.chunks), doc.dedupe_keys):
                cid, loc, digest = next(ids), chunk.location, chunk_text_hash(chunk.text)
                dup_of = held.get(key) if key else None
                if dup_of is None and key:
                    mine.setdefault(key, cid)
                dups += dup_of is not None
                vector = doc.vectors[ord_] if doc.vectors is not None and dup_of is None else None
                if vector is not None:
                    given.append((cid, vector, digest))
                rows.append((cid, doc_id, ord_, chunk.text, HEADING_SEP.join(loc.heading_path), loc.stored_page,
                             loc.line_start, loc.line_end, loc.char_start, loc.char_end, key, dup_of, digest,
                             vector is not None))
            for key, cid in mine.items():  # held for the documents after this one
                held.setdefault(key, cid)
            results.append(WriteResult(doc_id, len(doc.chunks), dups, 0, len(given) - n_given))
        copy_chunks(self.conn, rows, staged.batch if staged is not None else None)
        if given:  # after the chunks they reference; the rows already say embedded: no second write of a row
            self.vectors.store_new([g[0] for g in given], np.stack([g[1] for g in given]), [g[2] for g in given])
        if rows:
            merge_behind(self.conn, self.meta, max(int(r[0]) for r in rows), skip=self.bulk)
        self.conn.execute("update documents d set n_chunks = u.n, n_dups = u.dups from unnest(%s::bigint[], "
                          "%s::int[], %s::int[]) u(id, n, dups) where d.id = u.id",
                          ([r.doc_id for r in results], [r.chunks for r in results],
                           [r.duplicates for r in results]))
        return results

    def _write_one(self, doc: DocumentWrite) -> WriteResult:
        row = self.conn.execute("select id from documents where path = %s", (doc.path,)).fetchone()
        kept: dict[bytes, str] = {}
        now = time.time()
        if row is not None:
            doc_id = int(str(row[0]))
            kept = self.vectors.reusable(doc_id)
            self._delete_chunks([doc_id])
            self.conn.execute(
                "update documents set kind=%s, language=%s, title=%s, size=%s, mtime=%s, content_hash=%s, "
                "status=%s, error=%s, indexed_at=%s where id=%s",
                (doc.kind, doc.language, doc.title, doc.size, doc.mtime, doc.content_hash, STATUS_INDEXED,
                 doc.warning, now, doc_id))
        else:
            got = self.conn.execute(
                "insert into documents(path, kind, language, title, size, mtime, content_hash, status, error, "
                "indexed_at) values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) returning id",
                (doc.path, doc.kind, doc.language, doc.title, doc.size, doc.mtime, doc.content_hash,
                 STATUS_INDEXED, doc.warning, now)).fetchone()
            assert got is not None
            doc_id = int(str(got[0]))
        dups, canonical = self._insert_chunks(doc_id, doc)
        reused = self.vectors.reuse(kept, canonical) if kept else 0
        given = self._store_given(doc, canonical) if doc.vectors is not None else 0
        self.conn.execute("update documents set n_chunks = %s, n_dups = %s where id = %s",
                          (len(doc.chunks), dups, doc_id))
        return WriteResult(doc_id, len(doc.chunks), dups, reused, given)

    def _store_given(self, doc: DocumentWrite, canonical: Sequence[tuple[int, str, bytes]]) -> int:
        """The vectors the write carries (``DocumentWrite.vectors``, by chunk position) for its canonical chunks;
        ``store_vectors`` passes over those ``reuse`` gave one."""
        assert doc.vectors is not None
        position = {text: i for i, text in enumerate(c.text for c in doc.chunks)}
        todo = [(cid, vector, text) for cid, text, _ in canonical
                if (vector := doc.vectors[position[text]]) is not None]
        if not todo:
            return 0
        return self.vectors.store_vectors([t[0] for t in todo], np.stack([t[1] for t in todo]), [t[2] for t in todo])

    def _insert_chunks(self, doc_id: int, doc: DocumentWrite) -> tuple[int, list[tuple[int, str, bytes]]]:
        """COPY the chunks in; returns (duplicates, [(id, text, text hash) of the canonical ones])."""
        n = len(doc.chunks)
        if not n:
            return 0, []
        held: dict[str, int] = {}
        keys = sorted({k for k in doc.dedupe_keys if k})
        if keys:
            for key, cid in self.conn.execute(
                    "select distinct on (c.dedupe_key) c.dedupe_key, c.id from chunks c "
                    "join documents d on d.id = c.doc_id where c.dup_of is null and c.dedupe_key = any(%s) "
                    "and c.doc_id <> %s order by c.dedupe_key, d.path, c.id", (keys, doc_id)):
                held[str(key)] = int(str(cid))
        ids = [int(str(r[0])) for r in self.conn.execute(
            "select nextval('chunks_id_seq') from generate_series(1, %s)", (n,))]
        canonical: list[tuple[int, str, bytes]] = []
        rows: list[tuple[Any, ...]] = []
        for cid, (ord_, chunk), key in zip(ids, enumerate(doc.chunks), doc.dedupe_keys):
            loc = chunk.location
            digest = chunk_text_hash(chunk.text)
            dup_of = held.get(key) if key else None
            if dup_of is None:
                canonical.append((cid, chunk.text, digest))
            rows.append((cid, doc_id, ord_, chunk.text, HEADING_SEP.join(loc.heading_path), loc.stored_page,
                         loc.line_start, loc.line_end, loc.char_start, loc.char_end, key, dup_of, digest, False))
        copy_chunks(self.conn, rows)
        merge_behind(self.conn, self.meta, max(ids), skip=self.bulk)
        dups = len(rows) - len(canonical)
        return dups, canonical

    def _delete_chunks(self, doc_ids: Sequence[int]) -> int:
        """Delete documents' chunks (their statistics and vectors go with them, by cascade); a passage they held for
        another file goes to that file's copy, which is then embedded from its own text. Returns the vectors gone."""
        promote = self.conn.execute(
            "select distinct on (d.dup_of) d.dup_of, d.id, d.text from chunks d "
            "join chunks o on o.id = d.dup_of join documents dd on dd.id = d.doc_id "
            "where o.doc_id = any(%s) and not d.doc_id = any(%s) order by d.dup_of, dd.path, d.id",
            (list(doc_ids), list(doc_ids))).fetchall()
        gone = self.vectors.count_of_docs(doc_ids)
        unindex_chunks(self.conn, [int(str(r[0])) for r in self.conn.execute(
            "select id from chunks where doc_id = any(%s) and dup_of is null", (list(doc_ids),))])
        if promote:
            pairs = [(int(str(old)), int(str(new))) for old, new, _ in promote]
            self.conn.cursor().executemany("update chunks set dup_of = null, embedded = false where id = %s",
                                  [(new,) for _, new in pairs])
            self.conn.cursor().executemany("update chunks set dup_of = %s where dup_of = %s and id <> %s",
                                  [(new, old, new) for old, new in pairs])
            index_chunks(self.conn, [(int(str(new)), str(text)) for _, new, text in promote])
        self.conn.execute("delete from chunks where doc_id = any(%s)", (list(doc_ids),))
        if gone:
            self.meta.bump("vec_deleted", gone)
        return gone

    def record_outcome(self, *, path: str, status: str, error: str, kind: str, size: int, mtime: float) -> None:
        """A skipped or failed file: a previously indexed version stays searchable."""
        self.conn.execute(
            "insert into documents(path, kind, size, mtime, status, error, indexed_at) "
            "values (%s, %s, %s, %s, %s, %s, %s) on conflict (path) do update set size = excluded.size, "
            "mtime = excluded.mtime, status = case when documents.n_chunks > 0 then documents.status "
            "else excluded.status end, error = excluded.error, "
            "kind = case when excluded.kind <> '' then excluded.kind else documents.kind end",
            (path, kind, size, mtime, status, error, time.time()))
        self.meta.bump("catalog_version")

    def touch_document(self, doc_id: int, size: int, mtime: float) -> None:
        self.conn.execute("update documents set size = %s, mtime = %s where id = %s", (size, mtime, doc_id))
        self.meta.bump("catalog_version")

    def remove_documents(self, doc_ids: Iterable[int]) -> int:
        ids = sorted({int(i) for i in doc_ids})
        if not ids:
            return 0
        self._delete_chunks(ids)
        n = self.conn.execute("delete from documents where id = any(%s)", (ids,)).rowcount
        self.meta.bump("content_version")
        self.meta.bump("catalog_version")
        return max(n, 0)


__all__ = ["PgWrites"]
