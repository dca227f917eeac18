"""What ``desktop-memory copy`` reads from a PostgreSQL library (``PgStore.export``): the same answers as the SQLite
store's ``ExportReads`` (store/export_reads.py), so a library moves between the two stores either way without
re-reading a file or re-embedding a passage. Reads only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..export_reads import ExportChunk, ExportDocument
from ..row_types import stored_location
from .schema import Conn
from .vectors import PgVectors, parse_vectors


def _opt_int(value: object) -> int | None:
    return None if value is None else int(str(value))


class PgExportReads:
    def __init__(self, conn: Conn, vectors: PgVectors) -> None:
        self.conn = conn
        self.tables = vectors  # the per-model vector tables

    def documents(self, after_id: int, limit: int) -> list[ExportDocument]:
        """Documents with ids above ``after_id``, in id order (the order they were first written)."""
        return [ExportDocument(int(str(i)), str(p), str(k), None if lang is None else str(lang),
                               None if t is None else str(t), int(str(s)), float(str(m)), str(h), str(st), str(e))
                for i, p, k, lang, t, s, m, h, st, e in self.conn.execute(
                    "select id, path, kind, language, title, size, mtime, content_hash, status, error "
                    "from documents where id > %s order by id limit %s", (int(after_id), int(limit)))]

    def chunks(self, doc_ids: Sequence[int]) -> dict[int, list[ExportChunk]]:
        """{document id: its chunks in order} (documents without chunks are absent)."""
        out: dict[int, list[ExportChunk]] = {}
        if not doc_ids:
            return out
        for cid, doc_id, ord_, text, heading, page, ls, le, cs, ce, dup, emb, kind, key in self.conn.execute(
                "select c.id, c.doc_id, c.ord, c.text, c.heading_path, c.page, c.line_start, c.line_end, "
                "c.char_start, c.char_end, c.dup_of, c.embedded, d.kind, c.dedupe_key from chunks c "
                "join documents d on d.id = c.doc_id where c.doc_id = any(%s) order by c.doc_id, c.ord",
                ([int(i) for i in doc_ids],)):
            location = stored_location(str(kind), None if heading is None else str(heading), _opt_int(page),
                                       _opt_int(ls), _opt_int(le), int(str(cs)), int(str(ce)))
            out.setdefault(int(str(doc_id)), []).append(ExportChunk(
                int(str(cid)), int(str(ord_)), str(text), location, _opt_int(dup), bool(emb), str(key)))
        return out

    def vectors(self, model_id: str, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """{chunk id: float32 vector} of ``model_id``'s set (the active one or a side set) for those of ``ids``
        that have one."""
        table = self.tables.table(model_id)
        if table is None or not ids:
            return {}
        row = self.conn.execute("select dim from vector_models where model_id = %s", (model_id,)).fetchone()
        if row is None:
            return {}
        dim = int(str(row[0]))
        with self.conn.cursor(binary=True) as cur:
            cur.execute(f"select id, embedding from {table} where id = any(%s)", ([int(i) for i in ids],))
            rows = cur.fetchall()
        matrix = parse_vectors([bytes(r[1]) for r in rows], dim)
        return {int(str(r[0])): matrix[n] for n, r in enumerate(rows)}


__all__ = ["PgExportReads"]
