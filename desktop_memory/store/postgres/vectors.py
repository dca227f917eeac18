"""Vectors on a PostgreSQL library: one table per embedding model (``vectors_<slot>``, pgvector ``vector(dim)``
with an HNSW cosine index), the active model named in ``meta`` as in the SQLite store, and the embedding queue
(``chunks.embedded`` marks a chunk that has a vector of the active model).

Vectors travel in pgvector's binary form both ways (a big-endian 2-byte dimension, 2 unused bytes, then float4s):
written by a binary COPY whose whole stream numpy lays out at once (``binary_copy``; the text form cost ~0.25 ms a
vector in Python), read by binary results, so no adapter package is needed.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator, Sequence

import numpy as np

from ...errors import EmbedderError
from ...models import chunk_text_hash
from ..vectors import bit_codes
from .meta import PgMeta
from .schema import Conn

INDEX_FROM = 20_000  # vectors in a table before it gets its HNSW index (dense.py searches smaller ones exactly)


def vector_text(row: np.ndarray) -> str:
    """pgvector's text form of one vector."""
    return "[" + ",".join(map(repr, row.astype(np.float32).tolist())) + "]"


_COPY_HEAD = b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0)  # signature, flags, header extension
_COPY_TAIL = struct.pack(">h", -1)


def binary_copy(ids: Sequence[int], vectors: np.ndarray, hashes: Sequence[bytes]) -> bytes:
    """A whole ``COPY … (id, embedding, text_hash) FROM STDIN (FORMAT binary)`` stream. Each row: 3 fields, then
    each field as its length and bytes (int8; vector = dim, 0, float4s; bytea). Rows whose hashes share one length
    (always: blake2b-128) are laid out by numpy in one go."""
    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vecs.shape
    width = len(hashes[0]) if n else 0
    if n and all(len(h) == width for h in hashes):
        row = np.dtype([("fields", ">i2"), ("id_len", ">i4"), ("id", ">i8"), ("vec_len", ">i4"), ("dim", ">u2"),
                        ("unused", ">u2"), ("vec", ">f4", (dim,)), ("hash_len", ">i4"), ("hash", "u1", (width,))])
        out = np.zeros(n, dtype=row)
        out["fields"], out["id_len"], out["vec_len"], out["dim"], out["hash_len"] = 3, 8, 4 + 4 * dim, dim, width
        out["id"] = np.asarray(ids, dtype=np.int64)
        out["vec"] = vecs
        if width:
            out["hash"] = np.frombuffer(b"".join(hashes), dtype=np.uint8).reshape(n, width)
        return _COPY_HEAD + out.tobytes() + _COPY_TAIL
    parts = [_COPY_HEAD]
    for cid, vec, digest in zip(ids, vecs, hashes):
        parts += [struct.pack(">hiqiHH", 3, 8, int(cid), 4 + 4 * dim, dim, 0), vec.astype(">f4").tobytes(),
                  struct.pack(">i", len(digest)), digest]
    return b"".join([*parts, _COPY_TAIL])


def parse_vectors(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """pgvector's binary form (2-byte dim, 2 unused bytes, float4 big-endian) of several vectors as (n, dim)."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), 4 + 4 * dim)
    out: np.ndarray = raw[:, 4:].copy().view(">f4").astype(np.float32)
    return out


def missing_index(conn: Conn, table: str) -> bool:
    """Whether a vector table of ``INDEX_FROM`` vectors or more has no HNSW index (the count stops there: a large
    table is not counted at every write)."""
    if conn.execute("select 1 from pg_indexes where tablename = %s and indexname = %s",
                    (table, f"{table}_hnsw")).fetchone():
        return False
    got = conn.execute(f"select count(*) from (select 1 from {table} limit %s) s", (INDEX_FROM,)).fetchone()
    return got is not None and int(str(got[0])) >= INDEX_FROM


class PgVectors:
    """The active model's vector table, the queue, and the registry of per-model tables, on one connection."""

    def __init__(self, conn: Conn, meta: PgMeta) -> None:
        self.conn = conn
        self.meta = meta
        self.defer_index = False  # set during a bulk load (bulk.py): the HNSW index is built once at its end

    # ---------- the active model ----------
    def model_info(self) -> tuple[str | None, int | None]:
        model, dim = self.meta.get("model_id"), self.meta.get("dim")
        return model, int(dim) if dim else None

    def has_vector_table(self) -> bool:
        return self.meta.get("model_id") is not None

    def table(self, model_id: str | None = None) -> str | None:
        """The vector table of ``model_id`` (default: the active model), or None."""
        model = model_id or self.meta.get("model_id")
        if model is None:
            return None
        row = self.conn.execute("select slot from vector_models where model_id = %s", (model,)).fetchone()
        return None if row is None else f"vectors_{int(str(row[0]))}"

    def create_table(self, model_id: str, dim: int, settings: str | None = None) -> str:
        """Register ``model_id`` and create its table and HNSW index (inside the caller's write transaction)."""
        row = self.conn.execute("select slot, dim from vector_models where model_id = %s", (model_id,)).fetchone()
        if row is not None:
            if int(str(row[1])) != dim:
                raise EmbedderError(f"The library records {model_id} with {row[1]} dimensions, not {dim}.")
            return f"vectors_{int(str(row[0]))}"
        got = self.conn.execute("select coalesce(max(slot), 0) + 1 from vector_models").fetchone()
        slot = int(str(got[0])) if got else 1
        self.conn.execute("insert into vector_models(model_id, dim, slot, settings, added_at) "
                          "values (%s, %s, %s, %s, %s)", (model_id, dim, slot, settings, time.time()))
        name = f"vectors_{slot}"
        self.conn.execute(f"create table {name} (id bigint primary key references chunks(id) on delete cascade, "
                          f"embedding vector({int(dim)}) not null, text_hash bytea)")
        return name

    def ensure_index(self, table: str) -> None:
        """The HNSW index (cosine) of a vector table, built once the table reaches ``INDEX_FROM`` vectors: below
        that the dense lane scans exactly (dense.py), and building the graph in one go afterwards is far cheaper
        than inserting into it vector by vector while a library is first embedded. A bulk load (bulk.py) defers
        it to its end."""
        if not self.defer_index and missing_index(self.conn, table):
            self.conn.execute(f"create index {table}_hnsw on {table} using hnsw (embedding vector_cosine_ops)")

    def ensure_model(self, model_id: str, dim: int) -> None:
        """Record the model on first use; refuse a different one (as the SQLite store does)."""
        stored_model, stored_dim = self.model_info()
        if stored_model is None:
            self.create_table(model_id, dim)
            self.meta.set("model_id", model_id)
            self.meta.set("dim", str(dim))
            return
        if stored_model != model_id or stored_dim != dim:
            raise EmbedderError(
                f"This index holds vectors from {stored_model} ({stored_dim}-d); the embedder is now {model_id} "
                f"({dim}-d). Re-embed the library (Settings → Re-embed, or `desktop-memory reembed`) or switch back.")

    def reset_vectors(self, model_id: str | None, dim: int | None) -> None:
        """Forget the active set's vectors: everything is queued again (other models' tables are kept)."""
        table = self.table()
        if table:
            self.conn.execute(f"truncate {table}")
        self.conn.execute("update chunks set embedded = false where embedded")
        self.meta.delete("model_id")
        self.meta.delete("dim")
        if model_id and dim:
            self.ensure_model(model_id, dim)
        self.meta.bump("vec_epoch")
        self.meta.bump("content_version")

    def vector_state(self) -> tuple[int, int, int]:
        stamp = self.meta.change_stamp()
        return stamp[2], stamp[3], stamp[4]

    def count(self) -> int:
        table = self.table()
        if table is None:
            return 0
        row = self.conn.execute(f"select count(*) from {table}").fetchone()
        return int(str(row[0])) if row else 0

    # ---------- reading vectors ----------
    def iter_vectors(self, block: int = 4096, ids: Sequence[int] | None = None
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids int64, vectors float32 (n, dim)) blocks in id order (all, or ``ids``)."""
        table, (_, dim) = self.table(), self.model_info()
        if table is None or dim is None:
            return
        after = -1
        wanted = None if ids is None else sorted(int(i) for i in ids)
        while True:
            with self.conn.cursor(binary=True) as cur:
                if wanted is None:
                    cur.execute(f"select id, embedding from {table} where id > %s order by id limit %s",
                                (after, int(block)))
                else:
                    part, wanted = wanted[:block], wanted[block:]
                    if not part:
                        return
                    cur.execute(f"select id, embedding from {table} where id = any(%s) order by id", (part,))
                rows = cur.fetchall()
            if not rows and wanted is None:
                return
            if rows:
                after = int(str(rows[-1][0]))
                yield (np.fromiter((int(str(r[0])) for r in rows), dtype=np.int64, count=len(rows)),
                       parse_vectors([bytes(r[1]) for r in rows], dim))

    def code_count(self, after_id: int = 0) -> int:
        table = self.table()
        if table is None:
            return 0
        row = self.conn.execute(f"select count(*) from {table} where id > %s", (int(after_id),)).fetchone()
        return int(str(row[0])) if row else 0

    def load_bits(self, after_id: int = 0, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The 2-bit codes of store/vectors.py, computed from the stored vectors (the SQLite store keeps them in a
        table; a PostgreSQL library searches with pgvector and computes them only if the in-memory lane asks)."""
        table = self.table()
        ids_out: list[np.ndarray] = []
        codes_out: list[np.ndarray] = []
        if table is not None:
            with self.conn.cursor(binary=True) as cur:
                cur.execute(f"select id from {table} where id > %s order by id" +
                            ("" if limit is None else " limit %s"),
                            (int(after_id),) if limit is None else (int(after_id), int(limit)))
                wanted = [int(str(r[0])) for r in cur.fetchall()]
            for ids, vecs in self.iter_vectors(ids=wanted):
                ids_out.append(ids)
                codes_out.append(bit_codes(vecs))
        if not ids_out:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.uint8)
        return np.concatenate(ids_out), np.concatenate(codes_out)

    # ---------- the queue ----------
    def pending_count(self) -> int:
        row = self.conn.execute("select count(*) from chunks where not embedded and dup_of is null").fetchone()
        return int(str(row[0])) if row else 0

    def pending_chunks(self, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        return [(int(str(cid)), str(text)) for cid, text in self.conn.execute(
            "select id, text from chunks where not embedded and dup_of is null and id > %s order by id limit %s",
            (after_id, limit))]

    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str] | None) -> int:
        """COPY vectors for chunks still alive and pending whose text is the one embedded (inside the caller's
        write transaction). Returns how many were stored."""
        if len(ids) != len(vectors):
            raise ValueError("ids and vectors differ in length")
        if not len(ids):
            return 0
        table, vectors = self._checked(vectors)
        live = {int(str(cid)): bytes(h) for cid, h in self.conn.execute(
            "select id, text_hash from chunks where not embedded and dup_of is null and id = any(%s)",
            ([int(i) for i in ids],))}
        keep = [i for i, cid in enumerate(ids) if cid in live
                and (texts is None or live[cid] == chunk_text_hash(texts[i]))]
        if not keep:
            return 0
        kept = [int(ids[i]) for i in keep]
        self._copy_in(table, kept, vectors[keep], [live[cid] for cid in kept])
        self.conn.execute("update chunks set embedded = true where id = any(%s)", (kept,))
        return len(keep)

    def store_new(self, ids: Sequence[int], vectors: np.ndarray, hashes: Sequence[bytes]) -> None:
        """The vectors of canonical chunks this transaction wrote already marked embedded, each the embedding of
        its own text (``hashes``: theirs): COPYed in with no lookup and no second write of the chunk rows. (Marking
        them afterwards left a dead version of every row of a copied million passages for autovacuum.)"""
        table, vectors = self._checked(vectors)
        if len(ids) != len(vectors) or len(ids) != len(hashes):
            raise ValueError("ids, vectors and hashes differ in length")
        if len(ids):
            self._copy_in(table, [int(i) for i in ids], vectors, hashes)

    def _checked(self, vectors: np.ndarray) -> tuple[str, np.ndarray]:
        """(the active vector table, the vectors as float32) once they fit it."""
        _, dim = self.model_info()
        table = self.table()
        if dim is None or table is None:
            raise EmbedderError("No embedding model is recorded for this index; call ensure_model first.")
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != dim:
            raise EmbedderError(f"Vectors have {vectors.shape[-1]} dimensions but the index holds {dim}.")
        return table, vectors

    def _copy_in(self, table: str, ids: Sequence[int], vectors: np.ndarray, hashes: Sequence[bytes]) -> None:
        newest = self.conn.execute(f"select coalesce(max(id), 0) from {table}").fetchone()
        with self.conn.cursor() as cur, \
                cur.copy(f"copy {table}(id, embedding, text_hash) from stdin (format binary)") as copy:
            copy.write(binary_copy(ids, vectors, hashes))
        self.ensure_index(table)
        top = int(str(newest[0])) if newest else 0
        self.meta.bump("vec_seq" if min(ids) > top else "vec_epoch")

    # ---------- vectors kept across a re-index ----------
    def reusable(self, doc_id: int) -> dict[bytes, str]:
        """{text hash: vector text} of a document's embedded canonical chunks (before they are replaced)."""
        table = self.table()
        if table is None:
            return {}
        return {bytes(h): str(v) for h, v in self.conn.execute(
            f"select v.text_hash, v.embedding::text from chunks c join {table} v on v.id = c.id "
            "where c.doc_id = %s and c.embedded and c.dup_of is null and v.text_hash is not null", (doc_id,))}

    def reuse(self, kept: dict[bytes, str], canonical: Sequence[tuple[int, str, bytes]]) -> int:
        """Give new canonical chunks whose exact text had a vector that vector again."""
        table = self.table()
        pairs = [(cid, kept[digest], digest) for cid, _, digest in canonical if digest in kept]
        if table is None or not pairs:
            return 0
        with self.conn.cursor() as cur, cur.copy(f"copy {table}(id, embedding, text_hash) from stdin") as copy:
            for row in pairs:
                copy.write_row(row)
        self.conn.execute("update chunks set embedded = true where id = any(%s)", ([p[0] for p in pairs],))
        self.meta.bump("vec_epoch")
        return len(pairs)

    def count_of_docs(self, doc_ids: Sequence[int]) -> int:
        """Vectors of the active set held by these documents' chunks (about to go)."""
        row = self.conn.execute("select count(*) from chunks where doc_id = any(%s) and embedded",
                                (list(doc_ids),)).fetchone()
        return int(str(row[0])) if row else 0
