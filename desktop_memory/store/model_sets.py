"""Vectors of more than one model in one library (``Store.models``), so a model switch loses nothing.

The set that search uses, the **active** set, is where it always was: ``chunk_vectors`` / ``chunk_vector_bits``
with ``chunks.embedded`` as its flag and ``meta.model_id`` / ``meta.dim`` as its model (everything that reads
vectors is unchanged). Every other model's set lives in its own pair of tables of the same shape,
``model_vectors_<slot>`` / ``model_vector_bits_<slot>``, recorded in ``vector_models`` (model id, dimension, slot,
and the embedder settings that made it, without any key, so a library can embed its queries with its own model).

Why tables per model rather than one table keyed by (model, chunk): switching is then a rename of two table
pairs (``activate``), whatever the library's size, and the dense lane's reads (by primary key) stay as fast as
before. A side set is built in the background (``ingest/model_build.py``) while search answers from the active
one; it becomes active only when complete. Its rows obey the active set's rules: a vector is the embedding of
exactly its own chunk's text (``text_hash``), only for live canonical chunks. Triggers on ``chunks`` delete a side
row when its chunk is deleted or becomes a duplicate, so no write path has to know side sets exist, and removed
text leaves every set in the same transaction (docs/PRIVACY.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from ..errors import EmbedderError, StoreError
from ..models import chunk_text_hash
from .meta import MetaTable
from .sql_values import as_int, as_str, scalar_int
from .vectors import bit_codes, code_bytes

TARGET = "vector_target"  # meta key: the model whose set is being built to replace the active one
ROW_OVERHEAD = 40  # bytes per stored vector beyond its float and code blobs (ids, text hash, b-tree cells; about)


@dataclass(frozen=True)
class ModelSet:
    """One model's vectors in this library."""

    model_id: str
    dim: int
    vectors: int  # rows stored
    active: bool  # the set search uses
    settings_json: str | None  # the embedder settings that made them (None: not recorded, e.g. an older library)

    @property
    def bytes(self) -> int:
        """About how much of the file they take (float32 vector + 2-bit code + row overhead each)."""
        return self.vectors * (4 * self.dim + code_bytes(self.dim) + ROW_OVERHEAD)


def _tables(slot: int) -> tuple[str, str]:
    return f"model_vectors_{int(slot)}", f"model_vector_bits_{int(slot)}"


class ModelSets:
    """The registry of model sets and the side sets' rows, on one connection."""

    def __init__(self, conn: apsw.Connection, meta: MetaTable) -> None:
        self.conn = conn
        self.meta = meta

    # ---------- registry ----------
    def active(self) -> tuple[str | None, int | None]:
        model, dim = self.meta.get("model_id"), self.meta.get("dim")
        return model, int(dim) if dim else None

    def sets(self, active_count: int | None = None) -> list[ModelSet]:
        """Every model with vectors here, the active one first. ``active_count``: the active set's size when the
        caller knows it (Store.counts, from indexes: counting a table of vectors reads all of it)."""
        active, _ = self.active()
        out = []
        for model_id, dim, slot, settings in self.conn.execute(
                "select model_id, dim, slot, settings from vector_models order by added_at, model_id"):
            mid = as_str(model_id)
            if mid == active:
                count = active_count if active_count is not None else scalar_int(
                    self.conn, "select count(*) from chunk_vector_bits")
            elif slot is None:
                continue  # a stale row (the active model changed by hand): not a set
            else:
                count = scalar_int(self.conn, f"select count(*) from {_tables(as_int(slot))[1]}")  # small rows
            out.append(ModelSet(mid, as_int(dim), count, mid == active, None if settings is None else as_str(settings)))
        return sorted(out, key=lambda s: not s.active)

    def settings_of(self, model_id: str) -> str | None:
        row = self.conn.execute("select settings from vector_models where model_id = ?", (model_id,)).fetchone()
        return None if row is None or row[0] is None else as_str(row[0])

    def record_active(self, settings_json: str | None) -> None:
        """Register the active model (after ``ensure_model``), with the settings that make its vectors."""
        model, dim = self.active()
        if model is None or dim is None:
            return
        with self.conn:
            self.conn.execute(
                "insert into vector_models(model_id, dim, slot, settings, added_at) values(?, ?, null, ?, ?) "
                "on conflict(model_id) do update set slot = null, dim = excluded.dim, "
                "settings = coalesce(excluded.settings, vector_models.settings)",
                (model, dim, settings_json, time.time()))

    def target(self) -> str | None:
        return self.meta.get(TARGET) or None

    def set_target(self, model_id: str | None) -> None:
        with self.conn:
            if model_id:
                self.meta.set(TARGET, model_id)
            else:
                self.conn.execute("delete from meta where key = ?", (TARGET,))

    def _slot(self, model_id: str) -> tuple[int, int] | None:
        """(slot, dim) of a side set, or None."""
        row = self.conn.execute("select slot, dim from vector_models where model_id = ? and slot is not null",
                                (model_id,)).fetchone()
        return None if row is None else (as_int(row[0]), as_int(row[1]))

    def ensure_side(self, model_id: str, dim: int, settings_json: str | None) -> None:
        """A side set for ``model_id`` (created empty if new); a recorded dimension must match."""
        if model_id == self.active()[0]:
            raise StoreError(f"{model_id} is this library's active model, not a side set.")
        found = self._slot(model_id)
        if found is not None:
            if found[1] != dim:
                raise EmbedderError(f"This library holds {found[1]}-d vectors of {model_id}, but the model now "
                                    f"gives {dim}-d: drop them first (`desktop-memory embedder --drop {model_id}`).")
            if settings_json:
                with self.conn:
                    self.conn.execute("update vector_models set settings = ? where model_id = ?",
                                      (settings_json, model_id))
            return
        with self.conn:
            slot = 1 + scalar_int(self.conn, "select coalesce(max(slot), 0) from vector_models")
            self._create(slot)
            self.conn.execute(
                "insert into vector_models(model_id, dim, slot, settings, added_at) values(?, ?, ?, ?, ?) "
                "on conflict(model_id) do update set dim = excluded.dim, slot = excluded.slot, "
                "settings = coalesce(excluded.settings, vector_models.settings)",
                (model_id, int(dim), slot, settings_json, time.time()))

    def _create(self, slot: int) -> None:
        vec, bits = _tables(slot)
        self.conn.execute(f"create table if not exists {vec} (id INTEGER PRIMARY KEY, embedding BLOB NOT NULL, "
                          "text_hash BLOB)")
        self.conn.execute(f"create table if not exists {bits} (id INTEGER PRIMARY KEY, bits BLOB NOT NULL)")
        self._triggers(slot)

    def _triggers(self, slot: int) -> None:
        vec, bits = _tables(slot)
        self.conn.execute(f"create trigger if not exists {vec}_gone after delete on chunks begin "
                          f"delete from {vec} where id = old.id; delete from {bits} where id = old.id; end")
        self.conn.execute(f"create trigger if not exists {vec}_dup after update of dup_of on chunks "
                          f"when new.dup_of is not null begin "
                          f"delete from {vec} where id = new.id; delete from {bits} where id = new.id; end")

    def _drop_triggers(self, slot: int) -> None:
        vec, _ = _tables(slot)
        self.conn.execute(f"drop trigger if exists {vec}_gone")
        self.conn.execute(f"drop trigger if exists {vec}_dup")

    # ---------- a side set's rows ----------
    def side_missing(self, model_id: str) -> int:
        """Live canonical chunks without a vector of ``model_id`` (0: the set is complete). Counted from indexes
        and the code rows: a side row exists only for a live canonical chunk (store_side, and the triggers)."""
        canonical = (scalar_int(self.conn, "select count(*) from chunks")
                     - scalar_int(self.conn, "select count(*) from chunks where dup_of is not null"))
        found = self._slot(model_id)
        if found is None:
            return canonical
        _, bits = _tables(found[0])
        return max(0, canonical - scalar_int(self.conn, f"select count(*) from {bits}"))

    def side_pending(self, model_id: str, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        found = self._slot(model_id)
        if found is None:
            return []
        vec, _ = _tables(found[0])
        return [(as_int(cid), as_str(text)) for cid, text in self.conn.execute(
            f"select c.id, c.text from chunks c where c.dup_of is null and c.id > ? "
            f"and not exists (select 1 from {vec} v where v.id = c.id) order by c.id limit ?",
            (int(after_id), int(limit)))]

    def store_side(self, model_id: str, ids: Sequence[int], vectors: np.ndarray, texts: Sequence[str]) -> int:
        """Write ``model_id``'s vectors for chunks still alive, canonical and holding exactly ``texts``; one
        transaction. Returns how many were stored (0 when the set was dropped or made active meanwhile)."""
        found = self._slot(model_id)
        if found is None or not len(ids):
            return 0
        slot, dim = found
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        if vectors.ndim != 2 or vectors.shape[1] != dim or len(vectors) != len(ids):
            raise EmbedderError(f"Vectors have {vectors.shape[-1]} dimensions but {model_id}'s set holds {dim}.")
        vec, bits = _tables(slot)
        codes = bit_codes(vectors)
        with self.conn:
            live = {as_int(r[0]): bytes(r[1]) for r in self.conn.execute(
                f"select id, text_hash from chunks where dup_of is null and id in ({','.join('?' * len(ids))})",
                [int(i) for i in ids])}
            keep = [i for i, cid in enumerate(ids) if live.get(int(cid)) == chunk_text_hash(texts[i])]
            self.conn.executemany(f"insert or replace into {vec}(id, embedding, text_hash) values(?, ?, ?)",
                                  [(int(ids[i]), vectors[i].tobytes(), live[int(ids[i])]) for i in keep])
            self.conn.executemany(f"insert or replace into {bits}(id, bits) values(?, ?)",
                                  [(int(ids[i]), codes[i].tobytes()) for i in keep])
        return len(keep)

    # ---------- switching and dropping ----------
    def activate(self, model_id: str) -> None:
        """Make ``model_id``'s side set the one search uses and keep the active one beside it, in one transaction.

        Two table renames, whatever the size; then ``chunks.embedded`` follows the new set (only the chunks
        whose state differs are written). A chunk the new set lacks is queued for embedding with it."""
        found = self._slot(model_id)
        if found is None:
            raise StoreError(f"This library holds no vectors of {model_id}.")
        slot, dim = found
        old_model, old_dim = self.active()
        vec, bits = _tables(slot)
        with self.conn:
            self._drop_triggers(slot)
            # never trust a row whose text no longer matches its chunk (the triggers keep this empty)
            self.conn.execute(f"delete from {vec} where not exists (select 1 from chunks c where c.id = {vec}.id "
                              f"and c.dup_of is null and c.text_hash = {vec}.text_hash)")
            self.conn.execute(f"delete from {bits} where id not in (select id from {vec})")
            self.conn.execute("alter table chunk_vectors rename to dm_swap_vectors")
            self.conn.execute("alter table chunk_vector_bits rename to dm_swap_bits")
            self.conn.execute(f"alter table {vec} rename to chunk_vectors")
            self.conn.execute(f"alter table {bits} rename to chunk_vector_bits")
            self.conn.execute(f"alter table dm_swap_vectors rename to {vec}")
            self.conn.execute(f"alter table dm_swap_bits rename to {bits}")
            self.conn.execute("update chunks set embedded = 0 where embedded = 1 "
                              "and id not in (select id from chunk_vectors)")
            self.conn.execute("update chunks set embedded = 1 where embedded = 0 and dup_of is null "
                              "and id in (select id from chunk_vectors)")
            self.meta.set("model_id", model_id)
            self.meta.set("dim", str(dim))
            self.conn.execute("update vector_models set slot = null where model_id = ?", (model_id,))
            if old_model is not None and old_dim is not None:
                self.conn.execute(
                    "insert into vector_models(model_id, dim, slot, settings, added_at) values(?, ?, ?, null, ?) "
                    "on conflict(model_id) do update set slot = excluded.slot, dim = excluded.dim",
                    (old_model, old_dim, slot, time.time()))
                self._triggers(slot)
            else:
                self.conn.execute(f"drop table {vec}")
                self.conn.execute(f"drop table {bits}")
            if self.target() == model_id:
                self.conn.execute("delete from meta where key = ?", (TARGET,))
            self.meta.bump("vec_epoch")
            self.meta.bump_content_version()

    def drop(self, model_id: str) -> int:
        """Delete another model's vectors (never the active set's); returns how many went. ``compact`` gives the
        space back to the disk."""
        if model_id == self.active()[0]:
            raise StoreError(f"{model_id} is the model search uses here; switch to another before dropping it.")
        found = self._slot(model_id)
        if found is None:
            raise StoreError(f"This library holds no vectors of {model_id}.")
        vec, bits = _tables(found[0])
        with self.conn:
            count = scalar_int(self.conn, f"select count(*) from {vec}")
            self._drop_triggers(found[0])
            self.conn.execute(f"drop table {vec}")
            self.conn.execute(f"drop table {bits}")
            self.conn.execute("delete from vector_models where model_id = ?", (model_id,))
            if self.target() == model_id:
                self.conn.execute("delete from meta where key = ?", (TARGET,))
        return count


def side_problems(conn: apsw.Connection) -> list[str]:
    """``check`` for the side sets: each row the embedding of exactly its own live canonical chunk's text, at the
    set's dimension, with its code (one join per set; no model needed)."""
    problems = []
    for model_id, dim, slot in conn.execute(
            "select model_id, dim, slot from vector_models where slot is not null").fetchall():
        vec, bits = _tables(as_int(slot))
        name, width = as_str(model_id), 4 * as_int(dim)
        bad = scalar_int(conn, f"select count(*) from {vec} v left join chunks c on c.id = v.id where c.id is null "
                               "or c.dup_of is not null or c.text_hash is not v.text_hash or length(v.embedding) != ?",
                         (width,))
        if bad:
            problems.append(f"{bad} vectors of {name} do not belong to their passage's text (run `desktop-memory "
                            f"embedder --drop {name}`)")
        unpaired = scalar_int(conn, f"select (select count(*) from {vec}) - (select count(*) from {bits} b "
                                    f"join {vec} v on v.id = b.id)")
        if unpaired:
            problems.append(f"{unpaired} vectors of {name} lack their code")
    return problems


def migrate_model_sets(conn: apsw.Connection) -> None:
    """The schema step (store/migrations.py): the ``vector_models`` registry, holding the library's recorded model
    as its active set (its vectors stay where they are, under the model that made them)."""
    conn.execute("""
        CREATE TABLE IF NOT EXISTS vector_models (
            model_id TEXT PRIMARY KEY,
            dim      INTEGER NOT NULL,
            slot     INTEGER UNIQUE,   -- NULL: the active set (chunk_vectors); else model_vectors_<slot>
            settings TEXT,             -- JSON of the embedder settings that made them (never a key)
            added_at REAL NOT NULL
        )""")
    row = conn.execute("select (select value from meta where key = 'model_id'), "
                       "(select value from meta where key = 'dim')").fetchone()
    if row is not None and row[0] is not None and row[1] is not None:
        conn.execute("insert or ignore into vector_models(model_id, dim, slot, settings, added_at) "
                     "values(?, ?, null, null, ?)", (as_str(row[0]), int(as_str(row[1])), time.time()))


__all__ = ["TARGET", "ModelSet", "ModelSets", "migrate_model_sets", "side_problems"]
