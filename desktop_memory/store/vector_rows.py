"""The Store's vector rows (``Store.vectors``): the recorded model, the embedding queue, and the float32 rows and
their 2-bit codes (``store/vectors.py``) that the dense lane reads. Kept apart from document writes so each file
stays readable; the invariants are the ones listed in ``repository.py``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import apsw
import numpy as np

from ..errors import EmbedderError
from ..models import chunk_text_hash
from .meta import MetaTable
from .sql_values import as_bytes, as_int, as_str, scalar_int
from .vectors import bit_codes, code_bytes


class VectorRows:
    """Model, queue and vector rows on one connection; counters in the meta table."""

    def __init__(self, conn: apsw.Connection, meta: MetaTable) -> None:
        self.conn = conn
        self.meta = meta

    # ---------- model / vector table ----------
    def model_info(self) -> tuple[str | None, int | None]:
        model = self.meta.get("model_id")
        dim = self.meta.get("dim")
        return model, int(dim) if dim else None

    def has_vector_table(self) -> bool:
        """True once a model is recorded: vectors can be stored and searched (the tables always exist)."""
        return self.meta.get("model_id") is not None

    def ensure_model(self, model_id: str, dim: int) -> None:
        """Record the model on first use; refuse a different model (never mix two models in one set: another
        model's vectors are built beside these, in a side set of store/model_sets.py)."""
        stored_model, stored_dim = self.model_info()
        if stored_model is None:
            with self.conn:
                self._create_vec_table(dim)
                self.meta.set("model_id", model_id)
                self.meta.set("dim", str(dim))
                self._register(model_id, dim)
            return
        if stored_model != model_id or stored_dim != dim:
            raise EmbedderError(
                f"This index holds vectors from {stored_model} ({stored_dim}-d); the embedder is now {model_id} "
                f"({dim}-d). Re-embed the library (Settings → Re-embed, or `desktop-memory reembed`) or switch back."
            )
        if not self.has_vector_table():
            with self.conn:
                self._create_vec_table(dim)

    def _register(self, model_id: str, dim: int) -> None:
        """The active model in the registry of model sets (store/model_sets.py)."""
        self.conn.execute("insert into vector_models(model_id, dim, slot, settings, added_at) "
                          "values(?, ?, null, null, strftime('%s', 'now')) "
                          "on conflict(model_id) do update set slot = null, dim = excluded.dim", (model_id, dim))

    def _create_vec_table(self, dim: int) -> None:
        # The tables come from migration 2 and hold any dimension; this only guards against a hand-edited file.
        self.conn.execute("create table if not exists chunk_vectors (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        self.conn.execute("create table if not exists chunk_vector_bits (id INTEGER PRIMARY KEY, bits BLOB NOT NULL)")

    def reset_vectors(self, model_id: str | None = None, dim: int | None = None) -> None:
        """Forget the active set's vectors (``reembed``): keyword search keeps working; everything is queued for
        embedding. Other models' sets (store/model_sets.py) are kept."""
        with self.conn:
            self.conn.execute("delete from chunk_vectors")
            self.conn.execute("delete from chunk_vector_bits")
            self.conn.execute("update chunks set embedded = 0 where embedded = 1")
            self.conn.execute("delete from meta where key in ('model_id', 'dim')")
            if model_id and dim:
                self._create_vec_table(dim)
                self.meta.set("model_id", model_id)
                self.meta.set("dim", str(dim))
                self._register(model_id, dim)
            self.meta.bump("vec_epoch")
            self.meta.bump_content_version()

    def vector_state(self) -> tuple[int, int, int]:
        """(vec_epoch, vec_seq, vec_deleted): change counters for caches built from the stored vectors."""
        values = {as_str(key): as_int(value) for key, value in self.conn.execute(
            "select key, value from meta where key in ('vec_epoch', 'vec_seq', 'vec_deleted')"
        )}
        return values.get("vec_epoch", 0), values.get("vec_seq", 0), values.get("vec_deleted", 0)

    def code_count(self, after_id: int = 0) -> int:
        """Stored codes with id > after_id (how much room a reader of them needs before it reads)."""
        return scalar_int(self.conn, "select count(*) from chunk_vector_bits where id > ?", (int(after_id),))

    def load_bits(self, after_id: int = 0, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64, codes uint8 (n, 2·ceil(dim/8))) of the stored vectors with id > after_id, in id order (the
        first ``limit`` of them: a caller reading a million pages through them, so Python never holds them all).

        A code of the sign plane alone (written before migration 7; only a hand-edited file still has one) gets an
        empty magnitude plane: the vector is still found, ranked by its signs."""
        rows = self.conn.execute(
            "select id, bits from chunk_vector_bits where id > ? order by id limit ?",
            (int(after_id), -1 if limit is None else int(limit)),
        ).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.uint8)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blobs = [as_bytes(r[1]) for r in rows]
        _, dim = self.model_info()
        width = code_bytes(dim) if dim else len(blobs[0])
        if any(len(b) != width for b in blobs):
            blobs = [_full_code(b, width) for b in blobs]
        codes = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(rows), width)
        return ids, codes

    def iter_vectors(self, block: int = 4096, ids: Sequence[int] | None = None
                     ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (ids int64, vectors float32 (n, dim)) blocks of stored vectors in id order (all, or ``ids``)."""
        if ids is not None:
            wanted = sorted(int(i) for i in ids)
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                rows = self.conn.execute(
                    f"select id, embedding from chunk_vectors where id in ({','.join('?' * len(part))}) order by id",
                    part,
                ).fetchall()
                if rows:
                    yield _vector_block(rows)
            return
        after = 0
        while True:
            rows = self.conn.execute(
                "select id, embedding from chunk_vectors where id > ? order by id limit ?", (after, int(block))
            ).fetchall()
            if not rows:
                return
            after = as_int(rows[-1][0])
            yield _vector_block(rows)

    # ---------- embedding queue ----------
    def pending_count(self) -> int:
        return scalar_int(self.conn, "select count(*) from chunks where embedded=0 and dup_of is null")

    def pending_chunks(self, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        return [(as_int(cid), as_str(text)) for cid, text in self.conn.execute(
            "select id, text from chunks where embedded=0 and dup_of is null and id > ? order by id limit ?",
            (after_id, limit),
        )]

    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str] | None = None) -> int:
        """Write vectors for chunks still alive and pending, in one transaction. Returns how many were stored.

        ``texts`` are the texts the vectors were computed from: a vector is stored only when its text hashes to
        the chunk's (without ``texts``, the chunk's own hash is recorded)."""
        if len(ids) != len(vectors):
            raise ValueError("ids and vectors differ in length")
        if not len(ids):
            return 0
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        _, dim = self.model_info()
        if dim is None:
            raise EmbedderError("No embedding model is recorded for this index; call ensure_model first.")
        if vectors.ndim != 2 or vectors.shape[1] != dim:
            raise EmbedderError(f"Vectors have {vectors.shape[-1]} dimensions but the index holds {dim}.")
        codes = bit_codes(vectors)
        stored = 0
        with self.conn:
            live = {
                r[0]: r[1]
                for r in self.conn.execute(
                    f"select id, text_hash from chunks where embedded=0 and dup_of is null "
                    f"and id in ({','.join('?' * len(ids))})",
                    list(ids),
                )
            }
            keep = [i for i, cid in enumerate(ids) if cid in live
                    and (texts is None or live[cid] == chunk_text_hash(texts[i]))]
            if keep:
                newest = scalar_int(self.conn, "select max(id) from chunk_vectors")
                self.conn.executemany("insert into chunk_vectors(id, embedding, text_hash) values(?, ?, ?)",
                                      [(ids[i], vectors[i].tobytes(), live[ids[i]]) for i in keep])
                self.conn.executemany("insert into chunk_vector_bits(id, bits) values(?, ?)",
                                      [(ids[i], codes[i].tobytes()) for i in keep])
                self.conn.executemany("update chunks set embedded=1 where id=?", [(ids[i],) for i in keep])
                self.meta.bump("vec_seq" if min(ids[i] for i in keep) > newest else "vec_epoch")
            stored = len(keep)
        return stored


def _full_code(blob: bytes, width: int) -> bytes:
    """A stored code at its full width: a sign plane alone gets an empty magnitude plane; a damaged row (which
    ``check`` reports) is cut or zero-padded so one bad row cannot stop the whole dense lane."""
    return (blob + bytes(width))[:width]


def _vector_block(rows: list[apsw.SQLiteValues]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.fromiter((as_int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    mat = np.frombuffer(b"".join(as_bytes(r[1]) for r in rows), dtype="<f4").reshape(len(rows), -1)
    return ids, mat.astype(np.float32, copy=False)
