"""The reads retrieve/ runs on a PostgreSQL library (``PgStore.reads``): the same methods and answers as the SQLite
store's ``SearchReads`` (store/search_reads.py), over the word statistics (``term_postings``), the chunks' tsvectors
and the per-model vector tables. Keyword scoring is in keyword.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...models import SearchFilters
from ..row_types import ChunkRow
from ..search_reads import PASSAGE_COLUMNS, FtsTable
from . import postings
from .filters import allowed_ids_sql, filter_sql
from .keyword import bm25_match, lexemes, match_ids_sql, phrases, weighted
from .schema import Conn
from .terms import GRAMS, WORDS
from .vectors import PgVectors, vector_text

TOKENIZER = "dm_text"  # the text search configuration of the words index (schema.py)


def _int(value: object) -> int:
    return int(str(value))


class PgSearchReads:
    """Read-only queries for retrieve/ over one connection (one thread at a time, like its store)."""

    def __init__(self, conn: Conn, vectors: PgVectors) -> None:
        self.conn = conn
        self.vectors = vectors

    # ---------- lane candidates ----------
    def fts_match(self, table: FtsTable, expr: str, limit: int,
                  filters: SearchFilters | None) -> list[tuple[int, float]]:
        if table not in ("chunks_fts", "chunks_cjk"):
            raise ValueError(f"not a full-text table: {table!r}")
        return bm25_match(self.conn, expr, WORDS if table == "chunks_fts" else GRAMS, limit, filters)

    def allowed_canonical_ids(self, filters: SearchFilters | None) -> np.ndarray | None:
        sql, params = allowed_ids_sql(filters)
        if not sql:
            return None
        return np.fromiter((_int(r[0]) for r in self.conn.execute(sql, params)), dtype=np.int64)

    def allowed_embedded_ids(self, filters: SearchFilters | None) -> np.ndarray | None:
        sql, params = allowed_ids_sql(filters)
        if not sql:
            return None
        rows = self.conn.execute(f"select distinct a.id from ({sql}) a join chunks k on k.id = a.id "
                                 "where k.embedded", params).fetchall()
        return np.fromiter((_int(r[0]) for r in rows), dtype=np.int64, count=len(rows))

    def vector_distances(self, query_blob: bytes, ids: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """(chunk id, L2 distance) of the given ids' vectors to the query, nearest first."""
        table = self.vectors.table()
        if table is None:
            return []
        query = vector_text(np.frombuffer(query_blob, dtype="<f4"))
        rows = self.conn.execute(
            f"select id, embedding <-> %s::vector as d from {table} where id = any(%s) order by d, id limit %s",
            (query, [int(i) for i in ids], int(limit))).fetchall()
        return [(_int(cid), float(str(d))) for cid, d in rows]

    def nearest_vectors_exact(self, query_blob: bytes, limit: int,
                              filters: SearchFilters | None) -> list[tuple[int, float]]:
        """(chunk id, L2 distance) of the ``limit`` nearest vectors by a scan of every one (reference)."""
        table = self.vectors.table()
        if table is None:
            return []
        query = vector_text(np.frombuffer(query_blob, dtype="<f4"))
        where, params = allowed_ids_sql(filters)
        cond = f" where v.id in ({where})" if where else ""
        with self.conn.transaction():
            self.conn.execute("set local enable_indexscan = off")
            rows = self.conn.execute(
                f"select v.id, v.embedding <-> %s::vector as d from {table} v{cond} order by d, v.id limit %s",
                (query, *params, int(limit))).fetchall()
        return [(_int(cid), float(str(d))) for cid, d in rows]

    # ---------- rows by id ----------
    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        out: dict[int, ChunkRow] = {}
        for r in self.conn.execute(
                "select c.id, c.doc_id, d.path, d.kind, c.text, c.heading_path, c.page, c.line_start, c.line_end, "
                "c.char_start, c.char_end, d.mtime from chunks c join documents d on d.id = c.doc_id "
                "where c.id = any(%s)", ([int(i) for i in ids],)):
            cid, doc_id, path, kind, text, heading, page, ls, le, cs, ce, mtime = r
            out[_int(cid)] = ChunkRow(
                _int(cid), _int(doc_id), str(path), str(kind), str(text), None if heading is None else str(heading),
                None if page is None else _int(page), None if ls is None else _int(ls),
                None if le is None else _int(le), _int(cs), _int(ce), float(str(mtime)))
        return out

    def passage_rows(self, chunk_id: int, neighbours: int
                     ) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], int] | None:
        conn = self.conn
        row = conn.execute(f"select {PASSAGE_COLUMNS} from chunks c join documents d on d.id = c.doc_id "
                           "where c.id = %s", (chunk_id,)).fetchone()
        if row is None:
            return None
        doc_id, ord_ = _int(row[1]), _int(row[2])
        around = [] if neighbours == 0 else conn.execute(
            f"select {PASSAGE_COLUMNS} from chunks c join documents d on d.id = c.doc_id "
            "where c.doc_id = %s and c.ord between %s and %s and c.id <> %s order by c.ord",
            (doc_id, ord_ - neighbours, ord_ + neighbours, chunk_id)).fetchall()
        count = conn.execute("select count(*) from chunks where doc_id = %s", (doc_id,)).fetchone()
        return row, around, _int(count[0]) if count else 0

    def holder_rows(self, ids: Sequence[int],
                    filters: SearchFilters | None) -> list[tuple[int, int, int, str, bool]]:
        where, params = filter_sql(filters)
        passes = f"({where})" if where else "true"
        wanted = [int(i) for i in ids]
        rows = self.conn.execute(
            f"select c.id, c.id, c.doc_id, d.path, {passes} from chunks c join documents d on d.id = c.doc_id "
            f"where c.id = any(%s) union all select c.dup_of, c.id, c.doc_id, d.path, {passes} from chunks c "
            f"join documents d on d.id = c.doc_id where c.dup_of = any(%s)",
            [*params, wanted, *params, wanted]).fetchall()
        return [(_int(a), _int(b), _int(c), str(p), bool(ok)) for a, b, c, p, ok in rows]

    def highlighted(self, expr: str, ids: Sequence[int], start: str, end: str) -> dict[int, str]:
        """{chunk id: its text with ``start``/``end`` around every word of ``expr`` it holds} (PostgreSQL's
        ``ts_headline`` over the whole text), for the given rows that match ``expr``."""
        texts = [t for t in phrases(expr) if t.strip()]
        if not ids or not texts:
            return {}
        query = " || ".join("phraseto_tsquery('dm_text', %s)" for _ in texts)
        options = f"StartSel={_option(start)}, StopSel={_option(end)}, HighlightAll=true"
        rows = self.conn.execute(
            f"with q as (select {query} as q) select c.id, ts_headline('dm_text', c.text, q.q, %s) from chunks c, q "
            "where c.id = any(%s) and to_tsvector('dm_text', c.text) @@ q.q",
            [*texts, options, [int(i) for i in ids]]).fetchall()
        return {_int(cid): str(text) for cid, text in rows}

    def without_vectors(self, chunk_ids: Iterable[int]) -> set[int]:
        ids = sorted({int(i) for i in chunk_ids})
        if not ids:
            return set()
        return {_int(r[0]) for r in self.conn.execute(
            "select id from chunks where not embedded and id = any(%s)", (ids,))}

    # ---------- which passages and files hold a query word ----------
    def held_elsewhere(self, match: str, doc_id: int) -> bool:
        found = match_ids_sql(self.conn, match)
        if found is None:
            return False
        sql, params = found
        row = self.conn.execute(f"select 1 from ({sql}) m join chunks c on c.id = m.chunk_id where c.doc_id <> %s "
                                "limit 1", [*params, int(doc_id)]).fetchone()
        return row is not None

    # ---------- document frequencies and the index's tokens ----------
    def window_doc_freq(self, match: str, first: int, last: int, cap: int) -> tuple[int, int]:
        one = _one_term_window(self.conn, match, first, last, cap)
        if one is not None:
            return one
        found = match_ids_sql(self.conn, match)
        if found is None:
            return 0, int(first) - 1
        sql, params = found
        row = self.conn.execute(
            f"select count(*), max(chunk_id) from (select chunk_id from ({sql}) m where chunk_id >= %s and "
            "chunk_id <= %s order by chunk_id limit %s) w", [*params, int(first), int(last), int(cap)]).fetchone()
        if not row or not row[0]:
            return 0, int(first) - 1
        return _int(row[0]), _int(row[1])

    def chunk_id_span(self) -> tuple[int, int]:
        row = self.conn.execute("select min(id), max(id) from chunks").fetchone()
        if not row or row[0] is None:
            return 1, 0
        return _int(row[0]), _int(row[1])

    def canonical_count(self) -> int:
        row = self.conn.execute("select count(*) from chunks where dup_of is null").fetchone()
        return _int(row[0]) if row else 0

    def doc_freqs(self, stems: list[str]) -> dict[str, int]:
        if not stems:
            return {}
        return postings.doc_freqs(self.conn, WORDS, stems)

    def index_tokenizer(self) -> str:
        return TOKENIZER

    def index_tokens(self, texts: list[str]) -> list[list[str]]:
        return lexemes(self.conn, texts)

    def tokens_held(self, texts: list[str], stems: list[str]) -> list[set[str]]:
        if not texts or not stems:
            return [set() for _ in texts]
        rows = self.conn.execute(
            "select q.n, array(select t.lexeme from unnest(to_tsvector('dm_text', q.s)) t where t.lexeme = any(%s)) "
            "from unnest(%s::text[]) with ordinality as q(s, n) order by q.n", (stems, texts)).fetchall()
        return [set(r[1]) for r in rows]

    def chunk_tokens(self) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for cid, term, tf in self.conn.execute(f"select {postings.CHUNK}, t.term, {postings.TF} from term_postings t "
                                               "cross join unnest(t.postings) p where t.lane = 0"):
            out.setdefault(_int(cid), []).extend([str(term)] * _int(tf))
        return out


def _option(mark: str) -> str:
    """A ts_headline option value: double-quoted, its own double quotes doubled."""
    return '"' + mark.replace('"', '""') + '"'


def _one_term_window(conn: Conn, match: str, first: int, last: int, cap: int) -> tuple[int, int] | None:
    """(matches, last id seen) of an expression of one word or one phrase (what the term planner samples).

    One word: counted exactly from its segments' counts (postings.py), and when more than ``cap`` the count is
    returned whole with ``last`` as the last id seen — the sampler then takes it as exact instead of extrapolating.
    One phrase: its first word's segments in order of their first id, each one's postings in id order, matched on
    positions, stopping at ``cap`` (segments of one write never overlap: only a passage that became a holder again
    can be seen out of id order). None for any other expression."""
    single, multi, anchors = weighted(conn, match, WORDS)
    if len(single) + len(multi) != 1:
        return None
    if single:
        n = postings.count_in(conn, next(iter(single)), int(first), int(last))
        return (n, int(last)) if n else (0, int(first) - 1)
    phrase = next(iter(multi))
    row = conn.execute(
        f"select count(*), max(id) from (select a.first_id, c.id from term_postings a cross join unnest(a.postings) p "
        f"join chunks c on c.id = {postings.CHUNK} where a.lane = 0 and a.term = %s and a.first_id <= %s "
        f"and a.last_id >= %s and c.id between %s and %s and c.tsv @@ phraseto_tsquery('dm_text', %s) "
        "order by a.first_id, c.id limit %s) w",
        [anchors[phrase], int(last), int(first), int(first), int(last), phrase, int(cap)]).fetchone()
    if not row or not row[0]:
        return 0, int(first) - 1
    return _int(row[0]), _int(row[1])
