"""The reads the retrieval lanes run (``Store.reads``): retrieve/ asks for lane candidates, rows by id, document
frequencies and the holders of a duplicated passage, and never sees the schema or a connection.

Every method is a plain SELECT on the store's connection, except that the tokenizer and the fts5vocab views live in
TEMP tables of that connection (in memory: temp_store=memory); nothing is written to the main database.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import apsw
import numpy as np

from ..models import SearchFilters
from .filters import allowed_canonical_sql, allowed_sql, filter_sql
from .row_types import ChunkRow
from .sql_values import as_float, as_int, as_opt_int, as_str

FtsTable = Literal["chunks_fts", "chunks_cjk"]  # the words index, and the bigram index of no-space scripts
DEFAULT_TOKENIZER = "porter unicode61 remove_diacritics 2"
_TOKENIZE_OPTION = re.compile(r"tokenize\s*=\s*'((?:[^']|'')*)'", re.IGNORECASE)
PASSAGE_COLUMNS = ("c.id, c.doc_id, c.ord, d.path, d.kind, c.text, c.heading_path, c.page, c.line_start, "
                   "c.line_end, c.char_start, c.char_end, d.mtime")  # a stored passage (store/passages.py)
_READY: weakref.WeakKeyDictionary[apsw.Connection, bool] = weakref.WeakKeyDictionary()


class SearchReads:
    """Read-only queries for retrieve/ over one connection (used by one thread at a time, like its Store)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    # ---------- lane candidates ----------
    def fts_match(self, table: FtsTable, expr: str, limit: int,
                  filters: SearchFilters | None) -> list[tuple[int, float]]:
        """(chunk id, -bm25) of the best ``limit`` rows of FTS5 ``table`` matching ``expr`` inside the filters."""
        if table not in ("chunks_fts", "chunks_cjk"):
            raise ValueError(f"not a full-text table: {table!r}")
        where, params = allowed_sql(filters)
        if where:
            sql = (
                f"select f.rowid, -f.rank from {table} f join chunks c on c.id = f.rowid "
                f"join documents d on d.id = c.doc_id where {table} match ? and " + where +
                " order by f.rank, f.rowid limit ?"
            )
            rows = self.conn.execute(sql, (expr, *params, limit)).fetchall()
        else:
            rows = self.conn.execute(
                f"select rowid, -rank from {table} where {table} match ? order by rank, rowid limit ?", (expr, limit)
            ).fetchall()
        return [(as_int(cid), as_float(score)) for cid, score in rows]

    def allowed_canonical_ids(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Canonical chunk ids whose own file or a copy's file passes ``filters`` (ids may repeat); None when
        unfiltered."""
        allowed_ids, params = allowed_canonical_sql(filters)
        if not allowed_ids:
            return None
        return np.fromiter((r[0] for r in self.conn.execute(allowed_ids, params)), dtype=np.int64)

    def allowed_embedded_ids(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Embedded canonical chunks whose own file or a collapsed copy's file passes the filters; None when
        unfiltered."""
        sql, params = allowed_canonical_sql(filters)
        if not sql:
            return None
        rows = self.conn.execute(
            f"select distinct a.id from ({sql}) a join chunks k on k.id = a.id where k.embedded = 1", params
        ).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def vector_distances(self, query_blob: bytes, ids: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """(chunk id, L2 distance) of the given ids' stored vectors to the query (sqlite-vec), nearest first."""
        rows = self.conn.execute(
            "select v.id, vec_distance_l2(v.embedding, ?) as d from json_each(?) j "
            "join chunk_vectors v on v.id = j.value order by d, v.id limit ?",
            (query_blob, json.dumps([int(i) for i in ids]), int(limit)),
        ).fetchall()
        return [(as_int(cid), as_float(d)) for cid, d in rows]

    def nearest_vectors_exact(self, query_blob: bytes, limit: int,
                              filters: SearchFilters | None) -> list[tuple[int, float]]:
        """(chunk id, L2 distance) of the ``limit`` nearest stored vectors by a scan of every one (reference)."""
        where, params = allowed_canonical_sql(filters)
        if where:
            sql = ("select v.id, vec_distance_l2(v.embedding, ?) as d from chunk_vectors v where v.id in "
                   "(" + where + ") order by d, v.id limit ?")
            rows = self.conn.execute(sql, (query_blob, *params, int(limit))).fetchall()
        else:
            rows = self.conn.execute(
                "select id, vec_distance_l2(embedding, ?) as d from chunk_vectors order by d, id limit ?",
                (query_blob, int(limit)),
            ).fetchall()
        return [(as_int(cid), as_float(d)) for cid, d in rows]

    # ---------- rows by id ----------
    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Chunk + document columns for the final results, in one query."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            "select c.id, c.doc_id, d.path, d.kind, c.text, c.heading_path, c.page, c.line_start, c.line_end, "
            f"c.char_start, c.char_end, d.mtime from chunks c join documents d on d.id = c.doc_id "
            f"where c.id in ({marks})",
            list(ids),
        )
        out: dict[int, ChunkRow] = {}
        for cid, doc_id, path, kind, text, heading, page, ls, le, cs, ce, mtime in rows:
            out[as_int(cid)] = ChunkRow(
                as_int(cid), as_int(doc_id), as_str(path), as_str(kind), as_str(text),
                None if heading is None else as_str(heading), as_opt_int(page), as_opt_int(ls), as_opt_int(le),
                as_int(cs), as_int(ce), as_float(mtime),
            )
        return out

    def passage_rows(self, chunk_id: int, neighbours: int
                     ) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], int] | None:
        """(the chunk's row, its neighbours' rows within ``neighbours`` places in file order, the file's chunk
        count), each row ``PASSAGE_COLUMNS``; None if there is no such chunk (store/passages.py)."""
        conn = self.conn
        row = conn.execute(f"select {PASSAGE_COLUMNS} from chunks c join documents d on d.id = c.doc_id "
                           "where c.id = ?", (chunk_id,)).fetchone()
        if row is None:
            return None
        doc_id, ord_ = as_int(row[1]), as_int(row[2])
        around = [] if neighbours == 0 else [tuple(r) for r in conn.execute(
            f"select {PASSAGE_COLUMNS} from chunks c join documents d on d.id = c.doc_id "
            "where c.doc_id = ? and c.ord between ? and ? and c.id != ? order by c.ord",
            (doc_id, ord_ - neighbours, ord_ + neighbours, chunk_id))]
        count = conn.execute("select count(*) from chunks where doc_id = ?", (doc_id,)).fetchone()
        return tuple(row), around, as_int(count[0]) if count else 0

    def holder_rows(self, ids: Sequence[int],
                    filters: SearchFilters | None) -> list[tuple[int, int, int, str, bool]]:
        """(canonical id, holder chunk id, doc id, path, passes the filters) for each given canonical chunk and
        every collapsed copy of it, in one query."""
        where, params = filter_sql(filters)
        passes = f"({where})" if where else "1"
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"select c.id, c.id, c.doc_id, d.path, {passes} from chunks c join documents d on d.id = c.doc_id "
            f"where c.id in ({marks}) "
            f"union all select c.dup_of, c.id, c.doc_id, d.path, {passes} from chunks c "
            f"join documents d on d.id = c.doc_id where c.dup_of in ({marks})",
            [*params, *ids, *params, *ids],
        ).fetchall()
        return [(as_int(canon), as_int(cid), as_int(doc_id), str(path), bool(ok))
                for canon, cid, doc_id, path, ok in rows]

    def highlighted(self, expr: str, ids: Sequence[int], start: str, end: str) -> dict[int, str]:
        """{chunk id: its text with ``start``/``end`` around every token FTS5 matched for ``expr``} (rows that
        match ``expr``; FTS5's ``highlight()``).

        The given rows only go through the index's own tokenizer, in this connection's TEMP table (temp.dm_stem),
        so the cost is the shown rows', not the library's: the same MATCH on chunks_fts restricted by rowid opened
        every query term's doclist once per row, ~40 ms a search at 120k passages (docs/BENCHMARKS.md)."""
        if not ids:
            return {}
        self._ensure_stemmer()
        conn = self.conn
        marks = ", ".join("?" for _ in ids)
        with conn:  # a TEMP-only transaction: nothing is written to the main database
            conn.execute(f"insert into temp.dm_stem(rowid, t) select id, text from chunks where id in ({marks})",
                         [int(i) for i in ids])
            try:
                rows = conn.execute("select rowid, highlight(dm_stem, 0, ?, ?) from temp.dm_stem where dm_stem match ?",
                                    (start, end, expr)).fetchall()
            finally:
                conn.execute("delete from temp.dm_stem")
        return {cid: text for cid, text in rows if isinstance(cid, int) and isinstance(text, str)}

    def without_vectors(self, chunk_ids: Iterable[int]) -> set[int]:
        """The ids among ``chunk_ids`` (canonical chunks, as the lanes return them) that have no vector yet.

        The search asks while an embedding is still running: the semantic lane cannot judge a passage the embedding
        has not reached, so fusion and match strength judge it on its keyword evidence alone (retrieve/fusion.py,
        retrieve/strength.py). ``chunks.embedded`` is set in the same transaction as the vector row, so it is the
        vector's presence; one read by primary key, whatever the library's size."""
        ids = sorted({int(i) for i in chunk_ids})
        missing: set[int] = set()
        for start in range(0, len(ids), 500):  # ids per statement: well under SQLite's variable limit
            part = ids[start : start + 500]
            missing.update(as_int(cid) for (cid,) in self.conn.execute(
                f"select id from chunks where embedded = 0 and id in ({','.join('?' * len(part))})", part))
        return missing

    # ---------- which passages and files hold a query word (match strength) ----------
    def held_elsewhere(self, match: str, doc_id: int) -> bool:
        """Whether a canonical chunk of any file other than ``doc_id`` matches ``match`` (stops at the first).
        Reads the word's whole doclist at worst: callers ask only for words held by few chunks."""
        row = self.conn.execute(
            "select 1 from chunks_fts f join chunks c on c.id = f.rowid where chunks_fts match ? and c.doc_id != ? "
            "limit 1", (match, int(doc_id))).fetchone()
        return row is not None

    # ---------- document frequencies and the index's tokens ----------
    def window_doc_freq(self, match: str, first: int, last: int, cap: int) -> tuple[int, int]:
        """(rows of chunks_fts matching ``match`` with ids in [first, last], at most ``cap``; the id of the last one
        counted, or ``first - 1``): FTS5 seeks to ``first`` and stops reading the doclist after ``cap`` rows."""
        row = self.conn.execute(
            "select count(*), max(rowid) from (select rowid from chunks_fts where chunks_fts match ? "
            "and rowid >= ? and rowid <= ? order by rowid limit ?)", (match, int(first), int(last), int(cap)),
        ).fetchone()
        if not row or not row[0]:
            return 0, int(first) - 1
        return as_int(row[0]), as_int(row[1])

    def chunk_id_span(self) -> tuple[int, int]:
        """(lowest, highest) chunk id ((1, 0) when there are none): the id range the index's rows fall in."""
        row = self.conn.execute("select min(id), max(id) from chunks").fetchone()
        if not row or row[0] is None:
            return 1, 0
        return as_int(row[0]), as_int(row[1])

    def canonical_count(self) -> int:
        """Rows of chunks_fts: the canonical chunks."""
        row = self.conn.execute("select count(*) from chunks where dup_of is null").fetchone()
        return as_int(row[0]) if row else 0

    def doc_freqs(self, stems: list[str]) -> dict[str, int]:
        """{stem: number of chunks holding it} from FTS5's vocabulary (fts5vocab 'row'), in one statement."""
        if not stems:
            return {}
        conn = self.conn
        conn.execute("create virtual table if not exists temp.dm_fts_rows using fts5vocab(main, chunks_fts, 'row')")
        marks = ",".join("?" * len(stems))
        return {str(term): as_int(doc) for term, doc in
                conn.execute(f"select term, doc from temp.dm_fts_rows where term in ({marks})", stems)}

    def index_tokenizer(self) -> str:
        """The tokenizer declaration of chunks_fts (what a migration may change)."""
        row = self.conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()
        m = _TOKENIZE_OPTION.search(row[0] if row and row[0] else "")
        return m.group(1).replace("''", "'") if m else DEFAULT_TOKENIZER

    def _ensure_stemmer(self) -> None:
        conn = self.conn
        if _READY.get(conn):
            return
        tok = self.index_tokenizer().replace("'", "''")
        conn.execute(f"create virtual table if not exists temp.dm_stem using fts5(t, tokenize='{tok}')")
        conn.execute("create virtual table if not exists temp.dm_stem_i using fts5vocab(temp, dm_stem, 'instance')")
        _READY[conn] = True

    def index_tokens(self, texts: list[str]) -> list[list[str]]:
        """Each text as the index tokenizer sees it (lower-cased, diacritics folded, Porter-stemmed), in order.

        Runs the texts through a per-connection TEMP fts5 table with the index's own tokenizer."""
        if not texts:
            return []
        self._ensure_stemmer()
        conn = self.conn
        with conn:
            conn.executemany("insert into temp.dm_stem(rowid, t) values(?, ?)",
                             [(i + 1, t) for i, t in enumerate(texts)])
            rows = conn.execute("select doc, term from temp.dm_stem_i order by doc, offset").fetchall()
            conn.execute("delete from temp.dm_stem")
        out: list[list[str]] = [[] for _ in texts]
        for doc, term in rows:
            out[as_int(doc) - 1].append(as_str(term))
        return out

    def tokens_held(self, texts: list[str], stems: list[str]) -> list[set[str]]:
        """For each text, which of ``stems`` the index tokenizer finds in it (match strength's coverage: only the
        asked stems are read back, so a long passage costs its tokenizing, not a Python loop over its tokens)."""
        if not texts or not stems:
            return [set() for _ in texts]
        self._ensure_stemmer()
        conn = self.conn
        marks = ",".join("?" * len(stems))
        with conn:
            conn.executemany("insert into temp.dm_stem(rowid, t) values(?, ?)",
                             [(i + 1, t) for i, t in enumerate(texts)])
            rows = conn.execute(f"select distinct doc, term from temp.dm_stem_i where term in ({marks})",
                                stems).fetchall()
            conn.execute("delete from temp.dm_stem")
        out: list[set[str]] = [set() for _ in texts]
        for doc, term in rows:
            out[as_int(doc) - 1].add(as_str(term))
        return out

    def chunk_tokens(self) -> dict[int, list[str]]:
        """{chunk id: tokens} for every row of chunks_fts, read from the index itself (fts5vocab 'instance').

        Token order inside a chunk is not kept (BM25 only counts); each distinct token is one shared str object.
        Chunks without any token are absent."""
        conn = self.conn
        conn.execute("create virtual table if not exists temp.dm_chunk_instances "
                     "using fts5vocab(main, chunks_fts, 'instance')")
        out: dict[int, list[str]] = {}
        last_term, shared = None, ""
        for term, doc in conn.execute("select term, doc from temp.dm_chunk_instances"):
            if term != last_term:  # rows come term by term
                last_term, shared = term, str(term)
            out.setdefault(doc, []).append(shared)
        return out
