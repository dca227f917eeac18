"""Keep the FTS5 keyword lane fast on large indexes by leaving out the query's most common terms.

FTS5's ``bm25()`` makes an OR query cost roughly the sum of its terms' document frequencies, twice over: every
row holding any term is scored (~1.5 µs a row), and each term's IDF is computed by walking its whole doclist.
On a 300k-chunk index a single term found in 10 % of the chunks therefore costs tens of milliseconds, while its
IDF (log((N - df + 0.5) / (df + 0.5)) ≈ 2.2 at 10 %) adds little next to the rare terms' (≈ 7-12).

``plan_terms`` orders the terms by document frequency and keeps the rarest ones while their summed frequency
stays within a *postings budget* (an absolute number of rows, so the cost ceiling does not grow with the
library). The rarest term is always kept. Frequencies come from capped counts (``LIMIT``-bounded MATCH scans),
first with a small cap for every term, then, only for terms above it, with the budget that is left; so planning
itself costs at most about one budget's worth of doclist reading. A query whose terms all fit is unchanged:
on libraries below the budget (tens of thousands of chunks) BM25 is exact.
"""

from __future__ import annotations

import math
import threading

from ..store import Store
from .query_text import quote_fts

PROBE_CAP = 1000  # first pass: exact frequency for terms rarer than this
FALLBACK_FACTOR = 4  # when every term is common, frequencies are read up to this many budgets to find the rarest


def _capped_df(store: Store, term: str, cap: int) -> int:
    """min(document frequency of ``term``, cap): the count stops reading the doclist at ``cap`` rows."""
    return store.reads.capped_doc_freq(quote_fts(term), cap)


def plan_terms(store: Store, terms: list[str], budget: int) -> tuple[list[str], list[str]]:
    """(kept, dropped): the rarest terms whose summed document frequency fits ``budget`` (at least one kept).

    ``budget <= 0`` keeps everything. Kept terms keep their query order (for a stable MATCH expression).
    """
    if budget <= 0 or len(terms) <= 1:
        return list(terms), []
    probe = min(PROBE_CAP, budget + 1)
    df = {t: _capped_df(store, t, probe) for t in terms}
    known = sorted((t for t in terms if df[t] < probe), key=lambda t: (df[t], terms.index(t)))
    common = [t for t in terms if df[t] >= probe]
    kept: list[str] = []
    used = 0
    for t in known:
        if kept and used + df[t] > budget:
            break
        kept.append(t)
        used += df[t]
    if len(kept) == len(known):  # every rare term fits: spend what is left on common terms, rarest first
        left = budget - used
        if kept and left < probe:
            sized = []  # every common term holds >= probe > left rows: none can fit
        else:
            # sized to what could still fit (or, when nothing is kept yet, far enough to find the rarest)
            cap = left + 1 if kept else max(left + 1, FALLBACK_FACTOR * budget)
            sized = sorted((_capped_df(store, t, cap), terms.index(t), t) for t in common)
        for n, _, t in sized:
            if kept and used + n > budget:
                continue
            kept.append(t)
            used += n
    keep = set(kept)
    return [t for t in terms if t in keep], [t for t in terms if t not in keep]


# ---------------------------------------------------------------- the index tokenizer, from Python


def index_tokens(store: Store, texts: list[str]) -> list[list[str]]:
    """Each text as the index tokenizer sees it (lower-cased, diacritics folded, Porter-stemmed), in order.

    Runs the texts through a per-connection TEMP fts5 table with the index's own tokenizer, so a Python-side
    ranker (rank-bm25) agrees with FTS5 about every token. Nothing is written to the main database.
    """
    return store.reads.index_tokens(texts)


def indexed_chunk_tokens(store: Store) -> dict[int, list[str]]:
    """{chunk id: tokens} for every row of chunks_fts, read from the index itself (fts5vocab 'instance')."""
    return store.reads.chunk_tokens()


# ---------------------------------------------------------------- document frequencies and long queries

_N_CACHE: dict[tuple[str, int], int] = {}
_N_LOCK = threading.Lock()
LONG_QUERY_KEEP = 64  # a query with more distinct words keeps the 64 that weigh most (qtf x idf)


def fts_rows(store: Store) -> int:
    """Rows of chunks_fts (canonical chunks), cached per database and content version."""
    key = (str(store.path), store.content_version())
    with _N_LOCK:
        n = _N_CACHE.get(key)
    if n is None:
        n = store.reads.canonical_count()
        with _N_LOCK:
            if len(_N_CACHE) > 16:
                _N_CACHE.clear()
            _N_CACHE[key] = n
    return n


def doc_freqs(store: Store, stems: list[str]) -> dict[str, int]:
    """{stem: number of chunks holding it} from FTS5's vocabulary (fts5vocab 'row'), in one statement."""
    return store.reads.doc_freqs(stems)


def weightiest_terms(store: Store, counts: dict[str, int],
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
