"""Every row of a library in a canonical form, for the behaviour hash (``behaviour_hash.py``).

A refactor that must not change behaviour (issue 31) is checked by hashing what the library holds after indexing the
same corpus before and after. Two libraries built from the same files hold the same rows up to things that are not
behaviour, which are therefore left out or replaced:

- **where the corpus was written**: each run materialises it in a fresh temporary folder, so every path is taken
  relative to the library's one folder (``roots.path``);
- **clock readings**: ``documents.mtime`` (the materialised file's modification time), ``documents.indexed_at``,
  ``roots.added_at`` / ``roots.indexed_at``, ``exclusions.added_at``, ``vector_models.added_at`` (every column named
  ``mtime`` or ``*_at``): they differ on every run;
- **row ids**: ``documents.id`` and ``chunks.id`` are assigned in commit order (``chunks.id`` is AUTOINCREMENT and never
  reused), which a change in how writes are batched or scheduled may alter without changing a single passage. A
  document is named by its relative path, a chunk by (document path, ``ord``), and every column that points at a
  chunk (``chunks.dup_of``, the ``id`` of each vector and code table) by that same name. ``sqlite_sequence`` (the
  AUTOINCREMENT counter) is left out for the same reason;
- **change counters**: the ``meta`` keys ``content_version``, ``catalog_version``, ``vec_epoch``, ``vec_seq`` and
  ``vec_deleted`` count commits (``store/meta.py``, ``change_stamp``) so caches know when to refresh; how many
  commits an indexing run takes depends on how its writes are sliced, not on what it writes;
- **FTS5 storage**: the shadow tables (``chunks_fts_data`` …) record segment layout and merge history, not content;
  each full-text index is hashed through its ``fts5vocab`` row view instead (term, passages holding it, occurrences).

Everything else is kept as stored, vector and code BLOBs byte for byte. A table this module does not know (a newer
schema) is hashed with the same rules, so a new column or table shows up as a change in its own row of the table.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import apsw

ChunkKey = tuple[str, int]

SKIPPED_TABLES = {"sqlite_sequence", "sqlite_stat1", "sqlite_stat4"}
FTS_TABLES = ("chunks_fts", "chunks_cjk")
COUNTER_KEYS = {"content_version", "catalog_version", "vec_epoch", "vec_seq", "vec_deleted"}
PATH_COLUMNS = {("documents", "path"), ("roots", "path"), ("exclusions", "path"), ("exclusions", "root")}
CHUNK_ID_TABLES_PREFIX = ("chunk_vectors", "chunk_vector_bits", "model_vectors_", "model_vector_bits_")


def volatile(column: str) -> bool:
    """A clock reading: differs on every run whatever the code does."""
    return column == "mtime" or column.endswith("_at")


@dataclass
class TableRows:
    name: str
    lines: list[str]  # canonical rows, one JSON text each, sorted

    @property
    def sha256(self) -> str:
        h = hashlib.sha256()
        for line in self.lines:
            h.update(line.encode("utf-8"))
            h.update(b"\n")
        return h.hexdigest()


def _value(v: object) -> object:
    if isinstance(v, bytes):
        return {"hex": v.hex()}
    if isinstance(v, float):
        return repr(v)  # exact: 0.1 and 0.1000000001 differ
    return v


class Canonical:
    """Reads one library (read-only connection) and renders each table's rows in canonical form."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        roots = [str(r[0]) for r in conn.execute("select path from roots order by path")]
        self.root = roots[0] if len(roots) == 1 else ""
        self.doc_path: dict[int, str] = {}
        for did, path in conn.execute("select id, path from documents"):
            self.doc_path[int(did)] = self.relative(str(path))
        self.chunk_key: dict[int, ChunkKey] = {}
        for cid, did, ord_ in conn.execute("select id, doc_id, ord from chunks"):
            self.chunk_key[int(cid)] = (self.doc_path.get(int(did), f"?doc{did}"), int(ord_))

    def relative(self, path: str) -> str:
        """``path`` relative to the library's one folder ('/' separators); unchanged with several folders."""
        if not self.root:
            return path
        if path == self.root:
            return "."
        if path.startswith(self.root.rstrip("/\\") + os.sep) or path.startswith(self.root.rstrip("/\\") + "/"):
            return path[len(self.root.rstrip("/\\")) + 1 :].replace("\\", "/")
        return path

    def tables(self) -> list[str]:
        rows = self.conn.execute("select name, sql from sqlite_master where type = 'table' order by name")
        names = [(str(n), str(s or "")) for n, s in rows]
        virtual = {n for n, s in names if s.lower().startswith("create virtual table")}
        shadow = {n for n, _ in names for v in virtual if n.startswith(v + "_")}
        return [n for n, _ in names if n not in SKIPPED_TABLES and n not in virtual and n not in shadow]

    def columns(self, table: str) -> list[str]:
        return [str(r[1]) for r in self.conn.execute(f'pragma table_info("{table}")')]

    def _chunk(self, cid: object) -> object:
        if cid is None:
            return None
        return list(self.chunk_key.get(int(cid), ("?chunk", int(cid))))  # type: ignore[call-overload]

    def table_rows(self, table: str) -> TableRows:
        cols = self.columns(table)
        keep = [c for c in cols if not volatile(c)]
        lines: list[str] = []
        quoted = ", ".join(f'"{c}"' for c in keep)
        for row in self.conn.execute(f'select {quoted} from "{table}"'):
            if table == "meta" and dict(zip(keep, row)).get("key") in COUNTER_KEYS:
                continue
            out: dict[str, object] = {}
            for col, v in zip(keep, row):
                if (table, col) in PATH_COLUMNS and isinstance(v, str):
                    out[col] = self.relative(v)
                elif table == "documents" and col == "id":
                    continue  # the path names the document
                elif table == "chunks" and col == "id":
                    continue  # (doc_id as path, ord) names the chunk
                elif table == "chunks" and col == "doc_id":
                    out[col] = self.doc_path.get(int(v), f"?doc{v}")
                elif (table == "chunks" and col == "dup_of") or (
                        col == "id" and table.startswith(CHUNK_ID_TABLES_PREFIX)):
                    out[col] = self._chunk(v)
                else:
                    out[col] = _value(v)
            lines.append(json.dumps(out, sort_keys=True, ensure_ascii=False))
        lines.sort()
        return TableRows(table, lines)

    def vocab_rows(self, fts: str) -> TableRows | None:
        """An FTS5 index's content as (term, rows holding it, occurrences): independent of segment layout."""
        exists = self.conn.execute("select 1 from sqlite_master where name = ?", (fts,)).fetchone()
        if exists is None:
            return None
        view = f"dm_hash_{fts}_vocab"
        self.conn.execute(f"create virtual table if not exists temp.{view} using fts5vocab(main, {fts}, 'row')")
        lines = [json.dumps([str(t), int(d), int(c)], ensure_ascii=False)
                 for t, d, c in self.conn.execute(f"select term, doc, cnt from temp.{view}")]
        lines.sort()
        return TableRows(f"{fts} (fts5vocab)", lines)

    def all_rows(self) -> Iterator[TableRows]:
        for table in self.tables():
            yield self.table_rows(table)
        for fts in FTS_TABLES:
            vocab = self.vocab_rows(fts)
            if vocab is not None:
                yield vocab


def library_rows(db: Path) -> tuple[list[TableRows], dict[int, ChunkKey]]:
    """Every table of the library at ``db`` in canonical form (read-only; temp views only), and the name of each
    chunk id: (document path relative to the library's folder, ord)."""
    from desktop_memory.store.connection import open_connection

    conn = open_connection(db, readonly=True)
    try:
        canonical = Canonical(conn)
        return list(canonical.all_rows()), canonical.chunk_key
    finally:
        conn.close()


def combined_sha256(tables: list[TableRows]) -> str:
    """One digest over every table: each table's name and digest, in name order."""
    h = hashlib.sha256()
    for t in sorted(tables, key=lambda t: t.name):
        h.update(f"{t.name}\t{len(t.lines)}\t{t.sha256}\n".encode())
    return h.hexdigest()
