"""Model sets on a PostgreSQL library (the API of store/model_sets.py): every model's vectors live in their own
table (``vectors_<slot>``, vectors.py), so switching the model search uses changes which table ``meta`` names and
which chunks count as embedded; nothing is moved. Writes run in the caller-provided write transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import numpy as np

from ...errors import EmbedderError, StoreError
from ...models import chunk_text_hash
from ..model_sets import TARGET, ModelSet
from .meta import PgMeta
from .schema import Conn
from .vectors import PgVectors, vector_text


class PgModelSets:
    def __init__(self, conn: Conn, meta: PgMeta, vectors: PgVectors,
                 write: Callable[[], AbstractContextManager[None]]) -> None:
        self.conn = conn
        self.meta = meta
        self.vectors = vectors
        self._write = write

    def active(self) -> tuple[str | None, int | None]:
        return self.vectors.model_info()

    def _count(self, table: str) -> int:
        row = self.conn.execute(f"select count(*) from {table}").fetchone()
        return int(str(row[0])) if row else 0

    def sets(self, active_count: int | None = None) -> list[ModelSet]:
        active, _ = self.active()
        out = []
        for model_id, dim, slot, settings in self.conn.execute(
                "select model_id, dim, slot, settings from vector_models order by added_at, model_id"):
            mid = str(model_id)
            count = active_count if mid == active and active_count is not None else self._count(
                f"vectors_{int(str(slot))}")
            out.append(ModelSet(mid, int(str(dim)), count, mid == active, None if settings is None else str(settings)))
        return sorted(out, key=lambda s: not s.active)

    def settings_of(self, model_id: str) -> str | None:
        row = self.conn.execute("select settings from vector_models where model_id = %s", (model_id,)).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def record_active(self, settings_json: str | None) -> None:
        model, _ = self.active()
        if model is not None and settings_json is not None:
            with self._write():
                self.conn.execute("update vector_models set settings = %s where model_id = %s",
                                  (settings_json, model))

    def target(self) -> str | None:
        return self.meta.get(TARGET) or None

    def set_target(self, model_id: str | None) -> None:
        with self._write():
            if model_id:
                self.meta.set(TARGET, model_id)
            else:
                self.meta.delete(TARGET)

    def ensure_side(self, model_id: str, dim: int, settings_json: str | None) -> None:
        if model_id == self.active()[0]:
            raise StoreError(f"{model_id} is this library's active model, not a side set.")
        with self._write():
            row = self.conn.execute("select dim from vector_models where model_id = %s", (model_id,)).fetchone()
            if row is not None and int(str(row[0])) != dim:
                raise EmbedderError(f"This library holds {row[0]}-d vectors of {model_id}, but the model now "
                                    f"gives {dim}-d: drop them first (`desktop-memory embedder --drop {model_id}`).")
            self.vectors.create_table(model_id, dim, settings_json)
            if settings_json:
                self.conn.execute("update vector_models set settings = %s where model_id = %s",
                                  (settings_json, model_id))

    def side_missing(self, model_id: str) -> int:
        row = self.conn.execute("select count(*) from chunks where dup_of is null").fetchone()
        canonical = int(str(row[0])) if row else 0
        table = self.vectors.table(model_id)
        return canonical if table is None else max(0, canonical - self._count(table))

    def side_pending(self, model_id: str, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        table = self.vectors.table(model_id)
        if table is None:
            return []
        return [(int(str(cid)), str(text)) for cid, text in self.conn.execute(
            f"select c.id, c.text from chunks c where c.dup_of is null and c.id > %s and not exists "
            f"(select 1 from {table} v where v.id = c.id) order by c.id limit %s", (int(after_id), int(limit)))]

    def store_side(self, model_id: str, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str]) -> int:
        table = self.vectors.table(model_id)
        if table is None or not len(ids) or model_id == self.active()[0]:
            return 0
        with self._write():
            live = {int(str(cid)): bytes(h) for cid, h in self.conn.execute(
                "select id, text_hash from chunks where dup_of is null and id = any(%s)", ([int(i) for i in ids],))}
            keep = [i for i, cid in enumerate(ids) if live.get(int(cid)) == chunk_text_hash(texts[i])]
            if keep:
                self.conn.execute(f"delete from {table} where id = any(%s)", ([int(ids[i]) for i in keep],))
                with self.conn.cursor() as cur, cur.copy(f"copy {table}(id, embedding, text_hash) from stdin") as cp:
                    for i in keep:
                        cp.write_row((int(ids[i]), vector_text(np.asarray(vectors[i])), live[int(ids[i])]))
        return len(keep)

    def activate(self, model_id: str) -> None:
        with self._write():
            row = self.conn.execute("select dim, slot from vector_models where model_id = %s",
                                    (model_id,)).fetchone()
            if row is None:
                raise StoreError(f"This library holds no vectors of {model_id}.")
            table = f"vectors_{int(str(row[1]))}"
            self.vectors.ensure_index(table)
            self.meta.set("model_id", model_id)
            self.meta.set("dim", str(int(str(row[0]))))
            self.conn.execute(f"update chunks c set embedded = exists (select 1 from {table} v where v.id = c.id) "
                              "where c.dup_of is null")
            if self.target() == model_id:
                self.meta.delete(TARGET)
            self.meta.bump("vec_epoch")
            self.meta.bump("content_version")

    def drop(self, model_id: str) -> int:
        if model_id == self.active()[0]:
            raise StoreError(f"{model_id} is the model search uses here; switch to another before dropping it.")
        with self._write():
            table = self.vectors.table(model_id)
            if table is None:
                raise StoreError(f"This library holds no vectors of {model_id}.")
            count = self._count(table)
            self.conn.execute(f"drop table {table}")
            self.conn.execute("delete from vector_models where model_id = %s", (model_id,))
            if self.target() == model_id:
                self.meta.delete(TARGET)
        return count
