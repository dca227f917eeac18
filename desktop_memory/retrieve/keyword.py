"""Keep the FTS5 keyword lane fast on large indexes by leaving out the query's most common terms.

FTS5's ``bm25()`` makes an OR query cost roughly the sum of its terms' document frequencies, twice over: every
row holding any term is scored (~1.5 µs a row), and each term's IDF is computed by walking its whole doclist.
On a 300k-chunk index a single term found in 10 % of the chunks therefore costs tens of milliseconds, while its
IDF (log((N - df + 0.5) / (df + 0.5)) ≈ 2.2 at 10 %) adds little next to the rare terms' (≈ 7-12).

``plan_terms`` orders the terms by document frequency and keeps the rarest ones while their summed frequency
stays within a *postings budget* (an absolute number of rows, so the cost ceiling does not grow with the
library). The rarest term is always kept. A query whose terms all fit is unchanged: on libraries below the budget
(tens of thousands of chunks) BM25 is exact.

Frequencies are *sampled*, never counted to the end: FTS5 keeps no per-term count, and counting a common term
means reading its doclist. A term in fewer than ``FIRST_ROWS`` chunks is counted in one capped statement. For a
commoner one the chunk ids are cut into ``WINDOWS`` equal ranges; in each, at most ``WINDOW_ROWS`` of the term's
rows are read (FTS5 seeks to a range's first id). A range holding fewer is counted exactly; a full
one is extrapolated from how far into the range its last row lies. A term held by fewer than ``FIRST_ROWS``
chunks (or evenly by fewer than about ``WINDOWS x WINDOW_ROWS``) is therefore counted exactly, a common one
estimated (a few per cent off) from at most ``FIRST_ROWS + WINDOWS x WINDOW_ROWS`` rows, from all over the
library (a topic concentrated in the first folder indexed is not taken for a library-wide word). The plan
depends only on the index, so the same index and query give the same list.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import TypeVar

from ..store.protocol import LibraryStore
from .query_text import quote_fts

WINDOWS = 4  # id ranges sampled per term
WINDOW_ROWS = 128  # rows read at most per range: a common term costs at most FIRST_ROWS + 512 rows to size
FIRST_ROWS = 256  # a term in fewer chunks is counted in one statement over the whole index


def _id_span(store: LibraryStore) -> tuple[int, int]:
    """(lowest, highest) chunk id, cached per database and content version."""
    return _per_version(_SPAN_CACHE, store, store.reads.chunk_id_span)


SAMPLES_KEPT = 4096  # sampled frequencies remembered per library and content version (a few hundred KB at most)
_SAMPLES: dict[tuple[str, int], dict[str, float]] = {}


def _samples(store: LibraryStore) -> dict[str, float]:
    """{stem: sampled frequency} for this library's current content version: a word common enough to cost
    reading is usually in the next query too, and the planner and the strength ceiling ask for the same words.
    A value depends only on the index, so the cache changes no result; a write (new content version) drops it."""
    key = (str(store.path), store.content_version())
    with _N_LOCK:
        found = _SAMPLES.get(key)
        if found is None:
            for old in [k for k in _SAMPLES if k[0] == key[0] or len(_SAMPLES) > 16]:
                del _SAMPLES[old]
            found = _SAMPLES[key] = {}
        return found


def sampled_df(store: LibraryStore, term: str, span: tuple[int, int] | None = None, stem: str | None = None) -> float:
    """The document frequency of ``term``: exact when no id range holds ``WINDOW_ROWS`` of its rows, else
    estimated from at most ``FIRST_ROWS + WINDOWS x WINDOW_ROWS`` rows (see the module doc). ``stem``: the one
    token ``term`` is indexed as, when known; the value is then remembered for that stem (``_samples``)."""
    cache = _samples(store) if stem else None
    if cache is not None and stem:
        with _N_LOCK:
            known = cache.get(stem)
        if known is not None:
            return known
    n = _sample(store, term, span)
    if cache is not None and stem:
        with _N_LOCK:
            if len(cache) >= SAMPLES_KEPT:
                cache.clear()
            cache[stem] = n
    return n


def _sample(store: LibraryStore, term: str, span: tuple[int, int] | None) -> float:
    lo, hi = span or _id_span(store)
    if hi < lo:
        return 0.0
    match = quote_fts(term)
    n, _ = store.reads.window_doc_freq(match, lo, hi, FIRST_ROWS)
    if n < FIRST_ROWS:  # a rare term (most of a query's, on a library of today's size): counted in one statement
        return float(n)
    width = (hi - lo + WINDOWS) // WINDOWS
    total = 0.0
    for i in range(WINDOWS):
        first = lo + i * width
        last = min(hi, first + width - 1)
        if first > last:
            break
        n, last_seen = store.reads.window_doc_freq(match, first, last, WINDOW_ROWS)
        if n < WINDOW_ROWS or last_seen >= last:
            total += n
        else:  # n rows within [first, last_seen]: the same density over the whole range
            total += n * (last - first + 1) / (last_seen - first + 1)
    return total


def plan_terms(store: LibraryStore, terms: list[str], budget: int) -> tuple[list[str], list[str]]:
    """(kept, dropped): the rarest terms whose summed document frequency fits ``budget`` (at least one kept).

    ``budget <= 0`` keeps everything. Kept terms keep their query order (for a stable MATCH expression).
    """
    if budget <= 0 or len(terms) <= 1:
        return list(terms), []
    span = _id_span(store)
    stems = [toks[0] if len(toks) == 1 else None for toks in index_tokens(store, terms)]
    df = {t: sampled_df(store, t, span, stem) for t, stem in zip(terms, stems)}
    order = {t: i for i, t in enumerate(terms)}
    kept: list[str] = []
    used = 0.0
    for t in sorted(terms, key=lambda t: (df[t], order[t])):
        if kept and used + df[t] > budget:
            break  # the terms after it are at least as common
        kept.append(t)
        used += df[t]
    keep = set(kept)
    return [t for t in terms if t in keep], [t for t in terms if t not in keep]


# ---------------------------------------------------------------- the index tokenizer, from Python


def index_tokens(store: LibraryStore, texts: list[str]) -> list[list[str]]:
    """Each text as the index tokenizer sees it (lower-cased, diacritics folded, Porter-stemmed), in order.

    Runs the texts through a per-connection TEMP fts5 table with the index's own tokenizer, so a Python-side
    ranker (rank-bm25) agrees with FTS5 about every token. Nothing is written to the main database.
    """
    return store.reads.index_tokens(texts)


def indexed_chunk_tokens(store: LibraryStore) -> dict[int, list[str]]:
    """{chunk id: tokens} for every row of chunks_fts, read from the index itself (fts5vocab 'instance')."""
    return store.reads.chunk_tokens()


# ---------------------------------------------------------------- document frequencies and long queries

_N_CACHE: dict[tuple[str, int], int] = {}
_SPAN_CACHE: dict[tuple[str, int], tuple[int, int]] = {}
_N_LOCK = threading.Lock()
T = TypeVar("T")
LONG_QUERY_KEEP = 64  # a query with more distinct words keeps the 64 that weigh most (qtf x idf)


def fts_rows(store: LibraryStore) -> int:
    """Rows of chunks_fts (canonical chunks), cached per database and content version."""
    return _per_version(_N_CACHE, store, store.reads.canonical_count)


def _per_version(cache: dict[tuple[str, int], T], store: LibraryStore, compute: Callable[[], T]) -> T:
    """``compute()`` once per database file and content version (any write bumps it); a few files are kept."""
    key = (str(store.path), store.content_version())
    with _N_LOCK:
        hit = cache.get(key)
    if hit is None:
        hit = compute()
        with _N_LOCK:
            if len(cache) > 16:
                cache.clear()
            cache[key] = hit
    return hit


def forget(path: str) -> None:
    """Drop every count and sample remembered for this database file (``str(store.path)``): its service closed."""
    with _N_LOCK:
        for cache in (_SAMPLES, _N_CACHE, _SPAN_CACHE):
            for key in [k for k in cache if k[0] == path]:
                del cache[key]


EXACT_DF_ROWS = 5000  # doc_freqs counts a stem exactly below this many chunks, and samples it above


def doc_freqs(store: LibraryStore, stems: list[str]) -> dict[str, int]:
    """{stem: number of chunks holding it} (absent: none), for IDFs (the strength ceiling, long queries).

    FTS5's vocabulary (fts5vocab 'row') counts a stem by reading its whole doclist: at a million passages a word
    in a third of them costs more than the search. So a stem is first sampled (``sampled_df``, at most 768
    rows) and counted exactly only when the sample puts it below ``EXACT_DF_ROWS`` chunks; a commoner one keeps
    the estimate (a few per cent off an IDF of at most log(N / 5,000)). Sampling goes through MATCH, so it is used
    only for a stem the index tokenizer maps to itself; any other is counted exactly."""
    if not stems:
        return {}
    span = _id_span(store)
    sampled = {stem: sampled_df(store, stem, span, stem)
               for stem, toks in zip(stems, index_tokens(store, stems)) if toks == [stem]}
    # below WINDOW_ROWS no range was full: the sample is already the exact count
    exact = [s for s in stems if s not in sampled or WINDOW_ROWS <= sampled[s] < EXACT_DF_ROWS]
    out = store.reads.doc_freqs(exact) if exact else {}
    for stem, n in sampled.items():
        if n >= EXACT_DF_ROWS or (n < WINDOW_ROWS and n > 0):
            out[stem] = round(n)
    return out


def weightiest_terms(store: LibraryStore, counts: dict[str, int],
                     keep: int = LONG_QUERY_KEEP) -> tuple[dict[str, int], dict[str, int]]:
    """(kept, unknown) for a long query: the ``keep`` terms with the highest qtf x idf among those the library
    holds (as Lucene's MoreLikeThis picks a document's terms), in query order, and the terms no chunk holds (they
    cannot match; the strength ceiling still counts them). FTS5's bm25() costs (matched rows) x (phrases): a
    2,000-character paragraph of ~130 distinct words would otherwise be scored phrase by phrase on nearly every
    chunk. A query of at most ``keep`` distinct terms is returned whole, with no lookups."""
    if len(counts) <= keep:
        return counts, {}
    terms = list(counts)
    stems_of = dict(zip(terms, index_tokens(store, terms)))
    dfs = doc_freqs(store, sorted({s for stems in stems_of.values() for s in stems}))
    n = fts_rows(store)
    df_of = {t: max((dfs.get(s, 0) for s in stems_of.get(t, [])), default=0) for t in terms}
    known = [t for t in terms if df_of[t] > 0]
    order = {t: i for i, t in enumerate(terms)}
    best = set(sorted(known, key=lambda t: (-counts[t] * math.log((n - df_of[t] + 0.5) / (df_of[t] + 0.5)),
                                            order[t]))[:keep])
    return ({t: c for t, c in counts.items() if t in best},
            {t: c for t, c in counts.items() if df_of[t] == 0})
