"""What ``desktop-memory copy`` reads from a library (``Store.export``): documents by id, their chunks with the
columns that rebuild them, and each model set's stored vectors, so a library moves between stores (SQLite,
PostgreSQL) without re-reading a file or re-embedding a passage. Reads only; the copy writes through the target
store's ordinary write methods (``write_documents``, ``store_vectors``, ``ModelSets.store_side``, ...), which keep
every invariant of the target themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from ..models import Location
from .model_sets import ModelSets, _tables
from .row_types import stored_location
from .sql_values import as_bytes, as_float, as_int, as_opt_int, as_str


@dataclass(frozen=True)
class ExportDocument:
    id: int
    path: str
    kind: str
    language: str | None
    title: str | None
    size: int
    mtime: float
    content_hash: str
    status: str
    error: str


@dataclass(frozen=True)
class ExportChunk:
    id: int
    ord: int
    text: str
    location: Location
    dup_of: int | None  # the canonical chunk holding this text (its vector is that chunk's)
    embedded: bool  # has a vector of the active set
    dedupe_key: str = ""  # as stored ('' in a library written before keys were kept: worked out again)


class ExportReads:
    def __init__(self, conn: apsw.Connection, models: ModelSets) -> None:
        self.conn = conn
        self.models = models

    def documents(self, after_id: int, limit: int) -> list[ExportDocument]:
        """Documents with ids above ``after_id``, in id order (the order they were first written)."""
        return [ExportDocument(as_int(i), as_str(p), as_str(k), None if lang is None else as_str(lang),
                               None if t is None else as_str(t), as_int(s), as_float(m), as_str(h), as_str(st),
                               as_str(e))
                for i, p, k, lang, t, s, m, h, st, e in self.conn.execute(
                    "select id, path, kind, language, title, size, mtime, content_hash, status, error "
                    "from documents where id > ? order by id limit ?", (int(after_id), int(limit)))]

    def chunks(self, doc_ids: Sequence[int]) -> dict[int, list[ExportChunk]]:
        """{document id: its chunks in order} (documents without chunks are absent)."""
        out: dict[int, list[ExportChunk]] = {}
        if not doc_ids:
            return out
        marks = ",".join("?" * len(doc_ids))
        for cid, doc_id, ord_, text, heading, page, ls, le, cs, ce, dup, emb, kind, key in self.conn.execute(
                "select c.id, c.doc_id, c.ord, c.text, c.heading_path, c.page, c.line_start, c.line_end, "
                "c.char_start, c.char_end, c.dup_of, c.embedded, d.kind, c.dedupe_key from chunks c "
                f"join documents d on d.id = c.doc_id where c.doc_id in ({marks}) order by c.doc_id, c.ord",
                [int(i) for i in doc_ids]):
            location = stored_location(as_str(kind), None if heading is None else as_str(heading), as_opt_int(page),
                                       as_opt_int(ls), as_opt_int(le), as_int(cs), as_int(ce))
            out.setdefault(as_int(doc_id), []).append(ExportChunk(
                as_int(cid), as_int(ord_), as_str(text), location, as_opt_int(dup), bool(as_int(emb)), as_str(key)))
        return out

    def vectors(self, model_id: str, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """{chunk id: float32 vector} of ``model_id``'s set (the active one or a side set) for those of ``ids``
        that have one."""
        if not ids:
            return {}
        active, _ = self.models.active()
        if model_id == active:
            table = "chunk_vectors"
        else:
            found = self.models._slot(model_id)
            if found is None:
                return {}
            table = _tables(found[0])[0]
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"select id, embedding from {table} where id in ({marks})",
                                 [int(i) for i in ids]).fetchall()
        if not rows:
            return {}
        blobs = [as_bytes(blob) for _, blob in rows]
        if len({len(b) for b in blobs}) == 1:  # one parse for the slice (every vector of a set has its dim)
            matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).astype(np.float32)
            return {as_int(cid): matrix[n] for n, (cid, _) in enumerate(rows)}
        return {as_int(cid): np.frombuffer(b, dtype="<f4").astype(np.float32) for (cid, _), b in zip(rows, blobs)}


__all__ = ["ExportChunk", "ExportDocument", "ExportReads"]
