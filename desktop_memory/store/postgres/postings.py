"""The keyword lanes' postings on a PostgreSQL library: one row per word (or bigram) per write, not per passage.

A row of ``term_postings`` is a *segment*: the passages one write added that hold the term, as one ``bigint[]``
whose every value packs (chunk id, term frequency, the chunk's length in the lane) so BM25 reads the segment alone.
A row per (term, passage) — ~65 rows a passage, a btree entry each — was what made writes slow and the library
big (7.1 GB of 13.5 at a million passages); a segment of a thousand passages' postings is one row of 8 KB.

Packing: ``id << 25 | tf << 16 | dl``. A tsvector keeps at most 256 positions of a word, so tf fits 9 bits; dl is
held at 65,535 (a passage of more words than that scores as if it had 65,535); ids go to 2^38.

``first_id``/``last_id`` bound a segment's ids (a removal leaves them as they were: still a bound), ``n`` counts its
postings, so a document frequency is a sum over segments with no array read. Removing a passage rewrites the
segments of its words without it.

Small writes (a watched file saved) leave small segments: a word written in 10,000 such writes would have 10,000
rows. So once the chunk ids pass the end of a bucket of ``2**MERGE_SPAN_BITS`` ids, the write that passed it merges
that bucket's small segments (fewer than ``SMALL`` postings) into one per word (``merge_behind``): a bucket is
merged once, ~0.1 s per 4,096 passages. A bulk load skips it (its slices' segments are large) and marks its
buckets done. ``compact`` merges everything (``merge``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .meta import PgMeta
from .schema import Conn

ID_SHIFT, TF_SHIFT, TF_MASK, DL_MASK = 25, 16, 511, 65535
MERGE_SPAN_BITS = 12  # buckets of 4,096 chunk ids: merged, a common word at 1M passages is ~250 rows
SMALL = 64  # segments of fewer postings are merged with their bucket (the partial index term_postings_small)
MERGED_KEY = "postings_merged_bucket"  # meta: the last bucket merged behind the writes
MAX_BUCKETS_A_WRITE = 4  # a write merges at most this many buckets behind it (older ones left: compact)

CHUNK = f"(p >> {ID_SHIFT})"
TF = f"((p >> {TF_SHIFT}) & {TF_MASK})"
DL = f"(p & {DL_MASK})"


def pack_sql(cid: str, tf: str, dl: str) -> str:
    """The SQL expression of one posting from SQL expressions of its chunk id, tf and dl."""
    return f"(({cid})::bigint << {ID_SHIFT}) | (least({tf}, {TF_MASK})::bigint << {TF_SHIFT}) | least({dl}, {DL_MASK})"


def pack(cid: int, tf: int, dl: int) -> int:
    return (cid << ID_SHIFT) | (min(tf, TF_MASK) << TF_SHIFT) | min(dl, DL_MASK)


def unpack(p: int) -> tuple[int, int, int]:
    return p >> ID_SHIFT, (p >> TF_SHIFT) & TF_MASK, p & DL_MASK


INSERT = "insert into term_postings(lane, term, first_id, last_id, n, postings) "


def words_from(source: str) -> str:
    """INSERT of the word segments of the chunks a SELECT ``source`` yields as (id, tsv, n_words): one per word."""
    return (INSERT + f"select 0, x.lexeme, min(s.id), max(s.id), count(*), "
            f"array_agg({pack_sql('s.id', 'coalesce(array_length(x.positions, 1), 1)', 's.n_words')}) "
            f"from {source} s cross join unnest(s.tsv) x group by x.lexeme")


def add_segments(conn: Conn, lane: int, postings: dict[str, list[tuple[int, int, int]]]) -> None:
    """Segments of a lane from {term: [(chunk id, tf, dl)]} worked out in Python (the bigram lane), by COPY."""
    if not postings:
        return
    with conn.cursor() as cur, cur.copy("copy term_postings(lane, term, first_id, last_id, n, postings) "
                                        "from stdin") as copy:
        for term, items in postings.items():
            ids = [cid for cid, _, _ in items]
            copy.write_row((lane, term, min(ids), max(ids), len(items), [pack(*i) for i in items]))


_UPDATE = ("update term_postings t set (postings, n) = (select coalesce(array_agg(s.p), '{{}}'), count(*) "
           "from unnest(t.postings) s(p) left join unnest(d.ids) g(id) on g.id = s.p >> {shift} where g.id is null) "
           "from d where t.lane = {lane} and t.term = d.term and t.first_id <= d.hi and t.last_id >= d.lo")


def remove_words(conn: Conn, ids: Sequence[int]) -> None:
    """Take canonical chunks (their tsvectors still stored) out of the segments of their words."""
    if not ids:
        return
    conn.execute("with d as (select x.lexeme as term, array_agg(c.id) as ids, min(c.id) as lo, max(c.id) as hi "
                 "from chunks c cross join unnest(c.tsv) x where c.id = any(%s) group by x.lexeme) "
                 + _UPDATE.format(shift=ID_SHIFT, lane=0), (list(ids),))
    conn.execute("delete from term_postings where lane = 0 and n = 0 and term in (select x.lexeme from chunks c "
                 "cross join unnest(c.tsv) x where c.id = any(%s))", (list(ids),))


def remove(conn: Conn, lane: int, pairs: Iterable[tuple[str, int]]) -> None:
    """Take the chunks out of the segments of the given (term, chunk id) pairs; segments left empty go."""
    by_term: dict[str, list[int]] = {}
    for term, cid in pairs:
        by_term.setdefault(term, []).append(int(cid))
    if not by_term:
        return
    terms = list(by_term)
    conn.execute("with d as (select u.term, u.ids, (select min(i) from unnest(u.ids) i) as lo, "
                 "(select max(i) from unnest(u.ids) i) as hi from "
                 "(select term, ids::bigint[] as ids from unnest(%s::text[], %s::text[]) v(term, ids)) u) "
                 + _UPDATE.format(shift=ID_SHIFT, lane=int(lane)),
                 # one array literal per term (a ragged list is not a PostgreSQL array), parsed back in SQL
                 (terms, ["{" + ",".join(map(str, by_term[t])) + "}" for t in terms]))
    conn.execute("delete from term_postings where lane = %s and term = any(%s) and n = 0", (lane, terms))


def doc_freqs(conn: Conn, lane: int, terms: Sequence[str]) -> dict[str, int]:
    return {str(t): int(str(n)) for t, n in conn.execute(
        "select term, sum(n) from term_postings where lane = %s and term = any(%s) group by term",
        (lane, list(terms)))}


def count_in(conn: Conn, term: str, first: int, last: int) -> int:
    """Passages with ids in [first, last] holding ``term`` (words lane), exactly: segments inside the range are
    counted by ``n``, only those crossing its ends are read."""
    row = conn.execute(
        f"select coalesce(sum(case when first_id >= %s and last_id <= %s then n else (select count(*) from "
        f"unnest(postings) p where {CHUNK} between %s and %s) end), 0) from term_postings "
        "where lane = 0 and term = %s and first_id <= %s and last_id >= %s",
        (first, last, first, last, term, last, first)).fetchone()
    return int(str(row[0])) if row else 0


def merge(conn: Conn) -> None:
    """Regroup every lane's postings into one segment per term and ``MERGE_SPAN_BITS`` range of ids (inside the
    caller's write transaction): what ``compact`` does after many small writes."""
    conn.execute(
        "create temp table dm_merged on commit drop as select t.lane, t.term, "
        f"min({CHUNK}) as first_id, max({CHUNK}) as last_id, count(*)::int as n, array_agg(p order by p) as postings "
        f"from term_postings t cross join unnest(t.postings) p group by t.lane, t.term, {CHUNK} >> {MERGE_SPAN_BITS}")
    conn.execute("truncate term_postings")
    conn.execute("insert into term_postings select lane, term, first_id, last_id, n, postings from dm_merged")


def merge_behind(conn: Conn, meta: PgMeta, last_id: int, *, skip: bool = False) -> None:
    """After a write whose highest chunk id is ``last_id`` (inside its transaction): merge the small segments of
    every bucket it has passed and that was not merged yet. ``skip``: only mark them merged (a bulk load)."""
    bucket = int(last_id) >> MERGE_SPAN_BITS
    done = meta.get(MERGED_KEY)
    first = int(done) + 1 if done is not None else 0
    if bucket - 1 < first:
        return
    if not skip:
        for b in range(max(first, bucket - MAX_BUCKETS_A_WRITE), bucket):
            merge_bucket(conn, b)
    meta.set(MERGED_KEY, str(bucket - 1))


def merge_bucket(conn: Conn, bucket: int) -> None:
    """One per term of the small segments lying wholly inside one bucket of ids."""
    lo, hi = bucket << MERGE_SPAN_BITS, (bucket + 1) << MERGE_SPAN_BITS
    conn.execute(
        # (n < SMALL written out: a bound value would keep the planner from the partial index)
        "with old as (delete from term_postings where first_id >= %s and first_id < %s and last_id < %s "
        f"and n < {SMALL} returning lane, term, postings) " + INSERT +
        f"select lane, term, min({CHUNK}), max({CHUNK}), count(*), array_agg(p order by p) "
        "from old cross join unnest(old.postings) p group by lane, term", (lo, hi, hi))
