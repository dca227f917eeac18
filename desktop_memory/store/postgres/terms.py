"""The word and bigram statistics BM25 is scored from (``term_postings``: postings.py), written with the chunks
they count.

Words come from PostgreSQL's own tokenizer (``to_tsvector('dm_text', text)``, schema.py): the term frequency of a
word is the number of positions the tsvector keeps for it, a chunk's length the sum over its words. Bigrams of
text written without spaces are cut in Python by the same rule as the SQLite store's ``chunks_cjk`` (store/cjk.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..cjk import grams_text
from . import postings
from .schema import Conn

WORDS, GRAMS = 0, 1
_NAMES = ("id", "doc_id", "ord", "text", "heading_path", "page", "line_start", "line_end", "char_start", "char_end",
          "dedupe_key", "dup_of", "text_hash", "embedded")
_STAGED = ", ".join("s." + c for c in _NAMES)  # the chunk columns of a staging table aliased ``s``


# meta keys of BM25's collection statistics per lane: rows (chunks with a row in the lane) and their total length,
# kept with every write so a search never counts a million chunks
TOTALS = (("kw0_rows", "kw0_len"), ("kw1_rows", "kw1_len"))


def totals(conn: Conn, lane: int) -> tuple[int, float]:
    """(rows, average length) of a lane, for BM25."""
    rows_key, len_key = TOTALS[lane]
    got: dict[str, str] = dict(conn.execute("select key, value from meta where key = any(%s)",
                                            ([rows_key, len_key],)).fetchall())
    rows, length = int(str(got.get(rows_key, 0))), int(str(got.get(len_key, 0)))
    return rows, (length / rows if rows else 0.0)


def _add_totals(conn: Conn, ids: Sequence[int], sign: int) -> None:
    got = conn.execute("select count(*) filter (where n_words > 0), coalesce(sum(n_words), 0), "
                       "count(*) filter (where n_grams > 0), coalesce(sum(n_grams), 0) from chunks "
                       "where id = any(%s)", (list(ids),)).fetchone()
    assert got is not None
    for key, value in zip((k for pair in TOTALS for k in pair), got):
        conn.execute("insert into meta(key, value) values (%s, %s) on conflict (key) do update "
                     "set value = (meta.value::bigint + %s)::text", (key, str(sign * int(str(value))),
                                                                     sign * int(str(value))))


CHUNK_COLUMNS = ("id, doc_id, ord, text, heading_path, page, line_start, line_end, char_start, char_end, dedupe_key, "
                 "dup_of, text_hash, embedded")
_STAGE = ("create temp table if not exists dm_chunks_in (id bigint, doc_id bigint, ord integer, text text, "
          "heading_path text, page integer, line_start integer, line_end integer, char_start integer, "
          "char_end integer, dedupe_key text, dup_of bigint, text_hash bytea, embedded boolean) on commit drop")


_STAGE_NUMBERED = ("create temp table if not exists dm_chunks_at (id bigint, doc_id bigint, ord integer, text text, "
                   "heading_path text, page integer, line_start integer, line_end integer, char_start integer, "
                   "char_end integer, dedupe_key text, dup_of bigint, text_hash bytea, embedded boolean, i integer) "
                   "on commit drop")


def copy_chunks(conn: Conn, rows: Sequence[tuple[Any, ...]], batch: str | None = None) -> None:
    """New chunk rows (``CHUNK_COLUMNS``, inside the caller's transaction) COPYed into a staging table, then moved
    into ``chunks`` by one statement that tokenizes each canonical chunk once (its tsvector and length computed on
    the way in) and writes one word segment per word from what it inserted (no second read of ``chunks``); then
    the bigram segments and the totals.

    ``offset 0`` keeps the tokenizer's result a value of its own: without it the planner inlines the lateral
    subquery and calls ``to_tsvector`` twice per passage (for the stored tsvector and for its length), a fifth of
    the statement's time (docs/BENCHMARKS.md, "PostgreSQL bulk writes").

    ``batch``: the rows' tsvectors and lengths already in ``token_stage`` under that name, in row order and under
    the rows' own chunk ids, and their word segments in ``segment_stage`` (tokens_ahead.py): the statements read
    them there and tokenize nothing. Used only when the batch holds every row; otherwise the chunks are tokenized
    here. A copy among the rows has no postings: only the staged segments of its words are rewritten without it."""
    if not rows:
        return
    staged = batch is not None and conn.execute(  # each row's own: the same number and chunk id
        "select count(*) from token_stage where batch = %s and (i, id) in (select * from unnest(%s::int[], "
        "%s::bigint[]))", (batch, list(range(1, len(rows) + 1)), [int(r[0]) for r in rows])).fetchone() \
        == (len(rows),)
    if staged:
        _copy_tokenized(conn, rows, str(batch))
    else:
        _copy_plain(conn, rows)
    canonical = [(int(r[0]), str(r[3])) for r in rows if r[11] is None]
    _add_grams(conn, canonical)
    _add_totals(conn, [cid for cid, _ in canonical], 1)


def _copy_plain(conn: Conn, rows: Sequence[tuple[Any, ...]]) -> None:
    conn.execute(_STAGE)
    with conn.cursor() as cur, cur.copy(f"copy dm_chunks_in({CHUNK_COLUMNS}) from stdin") as copy:
        for row in rows:
            copy.write_row(row)
    if any(r[11] is not None for r in rows):  # copies: no statistics of their own
        conn.execute(f"insert into chunks({CHUNK_COLUMNS}) select {CHUNK_COLUMNS} from dm_chunks_in "
                     "where dup_of is not null")
    conn.execute(
        f"with new as (insert into chunks({CHUNK_COLUMNS}, tsv, n_words) "
        f"select {_STAGED}, t.v, "
        "coalesce((select sum(coalesce(array_length(x.positions, 1), 1)) from unnest(t.v) x), 0) "
        "from dm_chunks_in s cross join lateral (select to_tsvector('dm_text', s.text) as v offset 0) t "
        "where s.dup_of is null returning id, tsv, n_words) " + postings.words_from("new"))
    conn.execute("delete from dm_chunks_in")  # (cheaper than truncate for a temp table)


def _copy_tokenized(conn: Conn, rows: Sequence[tuple[Any, ...]], batch: str) -> None:
    conn.execute(_STAGE_NUMBERED)
    with conn.cursor() as cur, cur.copy(f"copy dm_chunks_at({CHUNK_COLUMNS}, i) from stdin") as copy:
        for i, row in enumerate(rows, 1):
            copy.write_row((*row, i))
    # a copy of another passage has no statistics of its own: no tsvector, no length, no postings
    conn.execute(f"insert into chunks({CHUNK_COLUMNS}, tsv, n_words) select "
                 f"{_STAGED}, case when s.dup_of is null then t.tsv end, "
                 "case when s.dup_of is null then t.n_words else 0 end from dm_chunks_at s "
                 "join token_stage t on t.batch = %s and t.i = s.i and t.id = s.id", (batch,))
    copies = [i for i, r in enumerate(rows, 1) if r[11] is not None]
    if not copies:  # the staged segments are the passages' own, as they are
        conn.execute(postings.INSERT + "select 0, term, first_id, last_id, n, postings from segment_stage "
                     "where batch = %s", (batch,))
    else:  # only the segments of the copies' words lose the copies' postings
        got = conn.execute("select coalesce(array_agg(distinct x.lexeme), '{}') from token_stage t "
                           "cross join unnest(t.tsv) x where t.batch = %s and t.i = any(%s)",
                           (batch, copies)).fetchone()
        words, ids = list(got[0]) if got else [], [int(rows[i - 1][0]) for i in copies]
        conn.execute(postings.INSERT + "select 0, term, first_id, last_id, n, postings from segment_stage "
                     "where batch = %s and not term = any(%s)", (batch, words))
        conn.execute(postings.INSERT + "select 0, g.term, k.first, k.last, k.n, k.kept from segment_stage g "
                     f"cross join lateral (select array_agg(p order by p) kept, min({postings.CHUNK}) first, "
                     f"max({postings.CHUNK}) last, count(*) n from unnest(g.postings) p "
                     f"where not {postings.CHUNK} = any(%s)) k "
                     "where g.batch = %s and g.term = any(%s) and k.n > 0", (ids, batch, words))
    conn.execute("delete from dm_chunks_at")


def _add_grams(conn: Conn, rows: Sequence[tuple[int, str]]) -> None:
    grams = [(cid, Counter(grams_text(text).split())) for cid, text in rows]
    grams = [(cid, counts) for cid, counts in grams if counts]
    if grams:
        by_gram: dict[str, list[tuple[int, int, int]]] = {}
        for cid, counts in grams:
            length = sum(counts.values())
            for gram, tf in counts.items():
                by_gram.setdefault(gram, []).append((cid, tf, length))
        postings.add_segments(conn, GRAMS, by_gram)
        conn.execute("update chunks c set n_grams = u.n from unnest(%s::bigint[], %s::int[]) u(id, n) "
                     "where c.id = u.id", ([cid for cid, _ in grams], [sum(c.values()) for _, c in grams]))


def index_chunks(conn: Conn, rows: Sequence[tuple[int, str]]) -> None:
    """Index canonical chunks ``(id, text)`` already in ``chunks`` (a copy that became the passage's holder):
    tsvector, word and bigram segments, lengths."""
    if not rows:
        return
    ids = [cid for cid, _ in rows]
    conn.execute("update chunks c set tsv = t.v, n_words = coalesce((select sum(coalesce(array_length(x.positions, "
                 "1), 1)) from unnest(t.v) x), 0) from (select id, to_tsvector('dm_text', text) as v from chunks "
                 "where id = any(%s) offset 0) t where c.id = t.id", (ids,))  # (offset 0: tokenized once)
    conn.execute(postings.words_from("(select id, tsv, n_words from chunks where id = any(%s))"), (ids,))
    _add_grams(conn, rows)
    _add_totals(conn, ids, 1)


def unindex_chunks(conn: Conn, ids: Sequence[int]) -> None:
    """Drop the statistics of chunks that stop being canonical (removed, or now a copy of another); every
    removal of a canonical chunk goes through here first (postings have no cascade from ``chunks``)."""
    if ids:
        _add_totals(conn, ids, -1)
        # the segments of the chunk's own words, found by (term, id range): no index by chunk to keep up on insert
        postings.remove_words(conn, ids)
        postings.remove(conn, GRAMS, [(g, int(str(cid))) for cid, text in conn.execute(
            "select id, text from chunks where id = any(%s) and n_grams > 0", (list(ids),))
            for g in set(grams_text(str(text)).split())])
        conn.execute("update chunks set tsv = null, n_words = 0, n_grams = 0 where id = any(%s)", (list(ids),))


def recount_totals(conn: Conn) -> None:
    """Set the lanes' totals from the chunks themselves (``compact`` repairs them; ``check`` compares)."""
    got = conn.execute(
        "select count(*) filter (where n_words > 0), coalesce(sum(n_words), 0), count(*) filter (where n_grams > 0), "
        "coalesce(sum(n_grams), 0) from chunks where dup_of is null").fetchone()
    assert got is not None
    for key, value in zip((k for pair in TOTALS for k in pair), got):
        conn.execute("insert into meta(key, value) values (%s, %s) on conflict (key) do update "
                     "set value = excluded.value", (key, str(int(str(value)))))
