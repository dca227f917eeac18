"""The retrieval lanes. Each returns [(chunk_id, raw score)] best first, ties broken by chunk id.

- ``fts``: SQLite FTS5 BM25 (raw score = -bm25(), so higher is better);
- ``dense``: sign-bit candidates re-scored exactly with sqlite-vec (dense.py), raw score = cosine = 1 - d²/2;
- ``bm25``: rank-bm25 Okapi over the canonical chunks, in memory, built lazily (small libraries only).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ..models import SearchFilters
from ..store.cjk import query_grams
from ..store.protocol import ChunkRow, DenseOnServer, FtsTable, LibraryStore
from .compounds import compound_counts
from .dense import DenseCodes, dense_exact, dense_search
from .keyword import index_tokens, indexed_chunk_tokens, plan_terms, weightiest_terms
from .query_text import STOPWORDS, or_match, weighted_terms

Ranked = list[tuple[int, float]]


def fts_lane(store: LibraryStore, query: str, limit: int, filters: SearchFilters | None = None,
             term_budget: int = 0) -> Ranked:
    """BM25 over an OR of the query's terms; with ``term_budget`` > 0 the most common terms may be left out so
    the rows FTS5 must score stay within that many postings (see keyword.py). Text written without spaces (CJK,
    Thai) is matched through its bigram index as well (store/cjk.py); a chunk found both ways sums its scores."""
    counts = compound_counts(store, query)
    if not counts:
        return []
    counts, _unknown = weightiest_terms(store, counts)
    kept = None
    if term_budget > 0 and len(counts) > 1:
        kept, _dropped = plan_terms(store, list(counts), term_budget)
    expr = or_match(weighted_terms(counts, kept))
    ranked = _match(store, "chunks_fts", expr, limit, filters) if expr else []
    grams = query_grams(query)
    if grams:
        extra = _match(store, "chunks_cjk", or_match(grams), limit, filters)
        if extra:
            scores = dict(ranked)
            for cid, score in extra:
                scores[cid] = scores.get(cid, 0.0) + score
            ranked = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:limit]
    return ranked


def _match(store: LibraryStore, table: FtsTable, expr: str, limit: int, filters: SearchFilters | None) -> Ranked:
    """(chunk id, -bm25) of the best ``limit`` rows of FTS5 ``table`` matching ``expr`` inside the filters."""
    return store.reads.fts_match(table, expr, limit, filters)


def dense_lane(
    store: LibraryStore, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None,
    codes: DenseCodes | None = None,
) -> Ranked:
    """Top ``limit`` chunks by cosine (coarse sign-bit scan + exact re-scoring; see dense.py), with the caller's
    kept code matrices (``codes``; without them they are read for this query only), or by the store's own engine
    when it has one (PostgreSQL + pgvector: store/protocol.py ``DenseOnServer``)."""
    if not store.has_vector_table():
        return []
    if isinstance(store, DenseOnServer):
        return store.dense_candidates(query_vec, limit, filters)
    return dense_search(store, query_vec, limit, filters, codes=codes)


def dense_lane_exact(
    store: LibraryStore, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None
) -> Ranked:
    """Exact brute-force reference for the dense lane (benchmarks and tests)."""
    if not store.has_vector_table():
        return []
    if isinstance(store, DenseOnServer):
        return store.dense_exact_candidates(query_vec, limit, filters)
    return dense_exact(store, query_vec, limit, filters)


class Bm25Index:
    """rank-bm25 over all canonical chunks, rebuilt when the store's content version changes.

    Tokens are the FTS5 index's own (Porter-stemmed, read back through fts5vocab), and the query is tokenized by
    the same tokenizer, so this lane and the keyword lane agree on words; stopwords are left out of both the
    chunks and the query. k1/b are FTS5 bm25()'s (1.2, 0.75)."""

    K1 = 1.2
    B = 0.75

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, int] | None = None
        self._ids: np.ndarray = np.zeros(0, dtype=np.int64)
        self._bm25 = None
        self._stop: frozenset[str] = frozenset()

    def _ensure(self, store: LibraryStore) -> None:
        key = (str(store.path), store.content_version())
        with self._lock:
            if key == self._key:
                return
            from rank_bm25 import BM25Okapi

            stop = frozenset(t for toks in index_tokens(store, sorted(STOPWORDS)) for t in toks)
            tokens = indexed_chunk_tokens(store)
            ids = sorted(tokens)
            corpus = [[t for t in tokens.pop(cid) if t not in stop] or ["\u2205"] for cid in ids]
            self._ids = np.asarray(ids, dtype=np.int64)
            self._stop = stop
            # rank_bm25 divides by the corpus size: never build it on an empty corpus.
            self._bm25 = BM25Okapi(corpus, k1=self.K1, b=self.B) if corpus else None
            self._key = key

    def clear(self) -> None:
        """Drop the index (its owner closes); the next search builds it again."""
        with self._lock:
            self._key, self._bm25 = None, None
            self._ids = np.zeros(0, dtype=np.int64)

    def search(self, store: LibraryStore, query: str, limit: int, filters: SearchFilters | None = None) -> Ranked:
        self._ensure(store)
        words = weighted_terms(compound_counts(store, query))
        if self._bm25 is None or not words:
            return []
        terms = [t for toks in index_tokens(store, words) for t in toks]
        terms = [t for t in terms if t not in self._stop] or terms  # repeats kept: they weigh more, as in fts
        if not terms:
            return []
        scores = np.asarray(self._bm25.get_scores(terms), dtype=np.float64)
        mask = scores > 0
        allowed = store.reads.allowed_canonical_ids(filters)
        if allowed is not None:
            mask &= np.isin(self._ids, allowed)
        idx = np.nonzero(mask)[0]
        # Sort by score desc, then chunk id asc (lexsort: last key is primary).
        order = idx[np.lexsort((self._ids[idx], -scores[idx]))][:limit]
        return [(int(self._ids[i]), float(scores[i])) for i in order]


def fetch_rows(store: LibraryStore, ids: Sequence[int]) -> dict[int, ChunkRow]:
    """Chunk + document columns for the final results, in one query."""
    return store.reads.chunk_rows(ids)
