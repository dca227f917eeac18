"""BM25 scored in SQL over the word statistics (``term_postings``, postings.py), for the FTS5 match expressions
retrieve/ builds.

retrieve/ asks every store for keyword candidates with the same expressions (an OR of quoted terms, a term
repeated for weight, a two-word phrase for a compound: retrieve/keyword.py, compounds.py), so query handling is
shared and only the scoring is the server's. The score is FTS5's ``bm25()`` (k1 = 1.2, b = 0.75, idf =
ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6), summed over the expression's phrases, from stored term frequencies
and chunk lengths. A phrase (two words side by side, matched on the chunk's tsvector) counts once per chunk that
holds it: FTS5 counts each occurrence, a difference only for compounds ("wi fi") written several times in a chunk.
PostgreSQL's ``ts_rank`` was not used: it is not BM25 (no idf, no length normalisation of this kind).
"""

from __future__ import annotations

import re

from ...models import SearchFilters
from .filters import allowed_sql
from .postings import CHUNK, DL, ID_SHIFT, TF
from .schema import Conn
from .terms import GRAMS, WORDS, totals

K1, B = 1.2, 0.75
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def phrases(expr: str) -> list[str]:
    """The quoted strings of an FTS5 expression of OR'ed quoted phrases, in order (repeats kept)."""
    return [m.group(1).replace('""', '"') for m in _QUOTED.finditer(expr)]


def lexemes(conn: Conn, texts: list[str]) -> list[list[str]]:
    """Each text's tokens as the index sees them (``dm_text``), in order, repeats kept."""
    if not texts:
        return []
    rows = conn.execute(
        "select q.n, coalesce((select array_agg(x.lexeme order by x.p) from "
        "(select t.lexeme, unnest(t.positions) as p from unnest(to_tsvector('dm_text', q.s)) t) x), '{}') "
        "from unnest(%s::text[]) with ordinality as q(s, n) order by q.n", (texts,)).fetchall()
    return [list(r[1]) for r in rows]


Weighted = tuple[dict[str, float], dict[str, float], dict[str, str]]


def weighted(conn: Conn, expr: str, lane: int) -> Weighted:
    """({single token: weight}, {phrase text: weight}, {phrase text: its first token}) of an expression; weight =
    how often it is repeated. A phrase is looked up through its first token's rows, then matched on positions."""
    single: dict[str, float] = {}
    multi: dict[str, float] = {}
    anchors: dict[str, str] = {}
    texts = phrases(expr)
    if lane == GRAMS:
        for g in texts:
            single[g] = single.get(g, 0.0) + 1.0
        return single, multi, anchors
    for text, toks in zip(texts, lexemes(conn, texts)):
        if len(toks) == 1:
            single[toks[0]] = single.get(toks[0], 0.0) + 1.0
        elif toks:
            multi[text] = multi.get(text, 0.0) + 1.0
            anchors[text] = toks[0]
    return single, multi, anchors


def postings_sql(lane: int, terms: Weighted) -> tuple[str, list[object]]:
    """A SELECT of (chunk_id, tf, w, key): each matching chunk of each of the expression's terms and phrases."""
    single, multi, anchors = terms
    parts: list[str] = []
    params: list[object] = []
    if single:
        parts.append(f"select {CHUNK} as chunk_id, {TF} as tf, {DL} as dl, s.w, s.term as key "
                     "from unnest(%s::text[], %s::float8[]) s(term, w) "
                     "join term_postings t on t.lane = %s and t.term = s.term cross join unnest(t.postings) p")
        params += [list(single), list(single.values()), lane]
    if multi:
        parts.append("select c.id as chunk_id, 1 as tf, c.n_words as dl, p.w, p.phrase as key "
                     "from unnest(%s::text[], %s::float8[], %s::text[]) p(phrase, w, anchor) "
                     "join term_postings a on a.lane = 0 and a.term = p.anchor cross join unnest(a.postings) x "
                     f"join chunks c on c.id = x >> {ID_SHIFT} where c.tsv @@ phraseto_tsquery('dm_text', p.phrase)")
        params += [list(multi), list(multi.values()), [anchors[t] for t in multi]]
    return " union all ".join(parts), params


def bm25_match(conn: Conn, expr: str, lane: int, limit: int,
               filters: SearchFilters | None) -> list[tuple[int, float]]:
    """(chunk id, BM25 score) of the best ``limit`` canonical chunks matching ``expr``, best first, ties by id."""
    terms = weighted(conn, expr, lane)
    if not terms[0] and not terms[1]:
        return []
    n_rows, avg_len = totals(conn, lane)
    if not n_rows:
        return []
    post, params = postings_sql(lane, terms)
    where, fparams = allowed_sql(filters)
    join = " join chunks c on c.id = p.chunk_id join documents d on d.id = c.doc_id where " + where if where else ""
    # float8 throughout: integer parameters would make PostgreSQL compute in numeric, several times slower
    sql = (f"with post as ({post}), df as (select key, count(*)::float8 as n from post group by key) "
           f"select p.chunk_id, sum(p.w * greatest(ln((%s::float8 - df.n + 0.5) / (df.n + 0.5)), 1e-6) * p.tf "
           f"* %s::float8 / (p.tf + %s::float8 * (1 - %s::float8 + %s::float8 * p.dl / %s::float8))) as score "
           f"from post p join df using (key){join} "
           f"group by p.chunk_id order by score desc, p.chunk_id limit %s")
    rows = conn.execute(sql, [*params, n_rows, K1 + 1, K1, B, B, max(avg_len, 1e-9), *fparams,
                              int(limit)]).fetchall()
    return [(int(str(cid)), float(str(score))) for cid, score in rows]


def match_ids_sql(conn: Conn, expr: str) -> tuple[str, list[object]] | None:
    """A SELECT of the canonical chunk ids matching ``expr`` (words lane), or None when it has no token."""
    terms = weighted(conn, expr, WORDS)
    if not terms[0] and not terms[1]:
        return None
    post, params = postings_sql(WORDS, terms)
    return f"select distinct chunk_id from ({post}) m", params
