"""The dense lane's plan: a Hamming scan over sign bits, a 2-bit-code ranking of its shortlist, then exact
re-scoring of a few hundred vectors in SQLite.

Why not vec0's own KNN: sqlite-vec 0.1.9 is brute force with a per-chunk selection whose cost grows with k, so
over-fetching candidates from a vec0 table is slow (bit[384], 100k rows: k=10 ~4 ms but k=200 ~130 ms), and the
exact float scan is ~63 ms at 100k and ~175 ms at 300k on a 2-core machine.

Every stored vector has a 2-bit code (``chunk_vector_bits``, ``store/vectors.py``): its sign plane and its
magnitude plane, 48 bytes each for 384 dims. Both are held in memory as column-major uint64 matrices (99 MiB at a
million vectors, ids included). A query then runs three stages (``bit_scores.py`` holds the kernels):

1. **Hamming**: the sign plane's distance to the query's sign bits, over every vector (~10 ms at 1M); the
   ``candidate_budget`` nearest are kept (a counting threshold, no sort);
2. **2-bit codes**: those candidates are ranked by the query's floats against their sign and magnitude bits
   (lookup tables, 96 gathers per vector), and the ``rescore_budget`` best are kept: a few hundred instead of
   the 20,000 a million vectors needed when Hamming alone chose what to re-score;
3. **exact**: their float32 vectors are fetched by primary key from ``chunk_vectors`` and scored with sqlite-vec's
   ``vec_distance_l2`` in one SQL statement, best first (ties by id).

A library (or filtered subset) of at most ``EXACT_BELOW`` vectors skips stages 1 and 2: exact search. Filters are
applied before stage 1 (the candidates are drawn from the allowed ids only), so a filtered search never loses its
top-k to post-filtering.

The in-memory codes are owned by whoever searches (:class:`DenseCodes`: one per service, inside its
``retrieve.search_state.SearchState``), one copy per database and model; closing the owner frees them, and two
services on two libraries never share or evict each other's. They are refreshed from the store's change counters
(``LibraryStore.vector_state``): appended vectors are read incrementally; a reset or an out-of-order insert reloads
everything; deleted vectors stay in memory as harmless ghosts (their float rows are gone, so re-scoring drops them)
until they pass 10 % of the matrix. A search given no owner's codes reads them for that query only (tests and
one-off tools).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from ..models import SearchFilters
from ..store.protocol import LibraryStore
from ..store.vectors import BIG_WEIGHT, float_blob, sign_bits
from .bit_scores import best_by_score, code_scores, hamming, nearest_by_hamming, words_of

__all__ = ["BitMatrix", "DenseCodes", "candidate_budget", "dense_exact", "dense_search", "hamming",
           "nearest_by_hamming", "rescore_budget", "warm"]

Ranked = list[tuple[int, float]]

EXACT_BELOW = 1000  # a library or filtered subset this small is scored exactly (~2 ms)
MIN_CANDIDATES = 2000  # Hamming shortlist per query at least (recall@10 vs exact: see docs/BENCHMARKS.md)
OVERSAMPLE = 20  # ... or limit × this, whichever is larger
CANDIDATE_SHARE = 0.03  # ... or this share of the vectors searched (3,000 at 100k, 9,000 at 300k)
MAX_CANDIDATES = 20000  # (reached at 667k vectors)
MIN_RESCORED = 400  # re-scored exactly per query at least
RESCORE_OVERSAMPLE = 4  # ... or the Hamming shortlist's limit × this
GHOST_SHARE = 0.10  # reload the code matrices when deleted vectors exceed this share of them
LOAD_PAGE = 65536  # codes read per query when loading the matrices

_EMPTY = np.zeros((0, 0), dtype=np.uint64)


class BitMatrix:
    """The in-memory copy of one database's 2-bit codes. Thread-safe; searches read an immutable snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state: tuple[int, int, int] | None = None  # (epoch, seq, deleted) at the last refresh
        self.deleted_at_load = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.signs = _EMPTY  # (nwords, n) uint64: sign planes, one column per vector
        self.mags = _EMPTY  # (nwords, n) uint64: magnitude planes

    def snapshot(self, store: LibraryStore) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        state = store.vector_state()
        with self._lock:
            if self.state != state:
                self._refresh(store, state)
            return self.ids, self.signs, self.mags

    def nbytes(self) -> int:
        """Bytes held (ids and both planes)."""
        return int(self.ids.nbytes + self.signs.nbytes + self.mags.nbytes)

    def _refresh(self, store: LibraryStore, state: tuple[int, int, int]) -> None:
        epoch, seq, deleted = state
        ghosts = deleted - self.deleted_at_load
        full = (self.state is None or self.state[0] != epoch or ghosts > GHOST_SHARE * max(1000, len(self.ids)))
        if full:
            self.ids, self.signs, self.mags = _load(store, 0)
            self.deleted_at_load = deleted
        elif self.state is None or self.state[1] != seq:
            after = int(self.ids[-1]) if len(self.ids) else 0
            ids, signs, mags = _load(store, after)
            if len(ids):
                if len(self.ids) and signs.shape[0] == self.signs.shape[0]:
                    self.signs = np.ascontiguousarray(np.concatenate([self.signs, signs], axis=1))
                    self.mags = np.ascontiguousarray(np.concatenate([self.mags, mags], axis=1))
                    self.ids = np.concatenate([self.ids, ids])
                else:  # first vectors (or a dimension change): start over
                    self.ids, self.signs, self.mags = ids, signs, mags
        self.state = state


def _load(store: LibraryStore, after_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, sign words, magnitude words) of the stored codes with id > after_id.

    The matrices are allocated once at their counted size and filled page by page (LOAD_PAGE rows), so a load's
    peak memory is the matrices plus one page: at a million vectors, gathering the pages and concatenating them
    held the matrices twice (about 100 MB more, the app's peak RSS). If rows appear or vanish between the count and
    the read (a writer on another connection), the pages are gathered and joined instead (_load_pages)."""
    expected = store.code_count(after_id)
    if expected <= 0:
        return np.zeros(0, dtype=np.int64), _EMPTY, _EMPTY
    ids_out = np.empty(expected, dtype=np.int64)
    signs_out = mags_out = _EMPTY
    n, start = 0, after_id
    while True:
        ids, codes = store.load_bits(after_id, LOAD_PAGE)
        if not len(ids):
            break
        signs, mags = _planes(codes)
        if not n:
            signs_out = np.empty((signs.shape[0], expected), dtype=np.uint64)
            mags_out = np.empty((mags.shape[0], expected), dtype=np.uint64)
        if n + len(ids) > expected or signs.shape[0] != signs_out.shape[0]:
            return _load_pages(store, start)  # more rows than counted, or a dimension change mid-read
        ids_out[n : n + len(ids)] = ids
        signs_out[:, n : n + len(ids)] = signs
        mags_out[:, n : n + len(ids)] = mags
        n += len(ids)
        after_id = int(ids[-1])
        if len(ids) < LOAD_PAGE:
            break
    if n < expected:  # rows deleted since the count
        return ids_out[:n].copy(), np.ascontiguousarray(signs_out[:, :n]), np.ascontiguousarray(mags_out[:, :n])
    return ids_out, signs_out, mags_out


def _load_pages(store: LibraryStore, after_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_load's fallback: every page gathered, then joined (twice the matrices at the join)."""
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    while True:
        ids, codes = store.load_bits(after_id, LOAD_PAGE)
        if not len(ids):
            break
        signs, mags = _planes(codes)
        if parts and signs.shape[0] != parts[-1][1].shape[0]:  # a dimension change mid-read: keep the newest
            parts.clear()
        parts.append((ids, signs, mags))
        after_id = int(ids[-1])
        if len(ids) < LOAD_PAGE:
            break
    if not parts:
        return np.zeros(0, dtype=np.int64), _EMPTY, _EMPTY
    if len(parts) == 1:
        return parts[0]
    ids = np.concatenate([p[0] for p in parts])
    signs = np.concatenate([p[1] for p in parts], axis=1)
    mags = np.concatenate([p[2] for p in parts], axis=1)
    return ids, signs, mags


def _planes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2·nbytes) stored codes -> (sign words, magnitude words), each (nwords, n) uint64."""
    if not len(codes):
        return _EMPTY, _EMPTY
    half = codes.shape[1] // 2
    return words_of(codes[:, :half]), words_of(codes[:, half:])


class DenseCodes:
    """The code matrices one owner keeps between searches (a service: ``SearchState``), one per database file and
    model, at most ``MAX_KEPT`` files.

    Keyed by the model too (issue 30: a library holds several models' sets and switches between them): matrices of
    one model are never handed to a query of another, even by a reader that has not seen the switch's counters, and
    a switch drops the old model's matrices (~100 MB at 1M vectors). After :meth:`close` nothing is kept: a search
    still running gets matrices for its own query only, freed with it."""

    MAX_KEPT = 2  # a service searches one file; a caller that searches several keeps the latest two

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: OrderedDict[str, BitMatrix] = OrderedDict()
        self._closed = False

    def matrix(self, store: LibraryStore) -> BitMatrix:
        """This database's matrices for its active model (empty until the first snapshot loads them)."""
        path = str(store.path.resolve()) if str(store.path) not in ("", ":memory:") else f"mem:{id(store)}"
        key = f"{path}#{store.model_info()[0]}"
        with self._lock:
            if self._closed:
                return BitMatrix()
            m = self._held.get(key)
            if m is None:
                for stale in [k for k in self._held if k.startswith(f"{path}#")]:
                    del self._held[stale]  # the model switched: its old matrices go
                m = self._held[key] = BitMatrix()
                while len(self._held) > self.MAX_KEPT:
                    self._held.popitem(last=False)
            else:
                self._held.move_to_end(key)
            return m

    def nbytes(self) -> int:
        """Bytes held now (every kept matrix's ids and planes)."""
        with self._lock:
            return sum(m.nbytes() for m in self._held.values())

    def close(self) -> None:
        """Drop every matrix (the owner closes); later searches keep nothing."""
        with self._lock:
            self._closed = True
            self._held.clear()


def warm(store: LibraryStore, codes: DenseCodes) -> int:
    """Load this database's code matrices into ``codes`` now, so the first search does not (about a second at a
    million vectors; the window calls it on a worker once it is shown: ``MemoryService.warm_up``). Returns the
    vectors held."""
    return len(codes.matrix(store).snapshot(store)[0])


def candidate_budget(limit: int, n_vectors: int = 0) -> int:
    """Hamming shortlist: enough for ``limit``, and a share of the index, since the sign bits' ranking errors grow
    with the number of near neighbours (capped: the 2-bit stage's cost grows with it)."""
    share = math.ceil(n_vectors * CANDIDATE_SHARE)
    return int(min(MAX_CANDIDATES, max(MIN_CANDIDATES, limit * OVERSAMPLE, share)))


def rescore_budget(limit: int) -> int:
    """Vectors re-scored exactly after the 2-bit ranking."""
    return int(max(MIN_RESCORED, limit * RESCORE_OVERSAMPLE))


def _rescore(store: LibraryStore, query_vec: np.ndarray, ids: np.ndarray, limit: int) -> Ranked:
    """Exact cosine of the given chunk ids via sqlite-vec's vec_distance_l2 over the float BLOBs."""
    if not len(ids):
        return []
    rows = store.reads.vector_distances(float_blob(query_vec), np.sort(ids), limit)
    return [(cid, 1.0 - d * d / 2.0) for cid, d in rows]


def _allowed_ids(store: LibraryStore, filters: SearchFilters | None) -> np.ndarray | None:
    """Embedded canonical chunks whose own file or a collapsed copy's file passes the filters (see copies.py)."""
    return store.reads.allowed_embedded_ids(filters)


def dense_search(store: LibraryStore, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None,
                 *, codes: DenseCodes | None = None, candidates: int | None = None,
                 rescored: int | None = None) -> Ranked:
    """Top ``limit`` chunks by cosine: Hamming shortlist (``candidates``), 2-bit-code ranking, exact re-scoring of
    the best ``rescored`` (exact search when few vectors). ``codes``: the caller's kept matrices (without them
    they are read for this query only)."""
    limit = max(1, int(limit))
    query_vec = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    matrix = codes.matrix(store) if codes is not None else BitMatrix()
    ids, signs, mags = matrix.snapshot(store)
    allowed = _allowed_ids(store, filters)
    mask = None
    if allowed is not None:
        if len(allowed) <= EXACT_BELOW:
            return _rescore(store, query_vec, allowed, limit)
        mask = np.isin(ids, allowed)  # the matrices are never copied: excluded columns only lose the Hamming race
    searched = len(ids) if mask is None else int(np.count_nonzero(mask))
    if searched <= EXACT_BELOW:
        return _rescore(store, query_vec, ids if mask is None else ids[mask], limit)
    budget = int(candidates or candidate_budget(limit, searched))
    if searched <= budget:
        cols = np.arange(len(ids)) if mask is None else np.flatnonzero(mask)
    else:
        dist = hamming(signs, words_of(sign_bits(query_vec))[:, 0])
        if mask is not None:
            dist[~mask] = np.iinfo(dist.dtype).max  # beyond any real distance: chosen only if nothing else is left
        cols = nearest_by_hamming(dist, budget)
    keep = int(rescored or rescore_budget(limit))
    if len(cols) > keep:
        pool = best_by_score(code_scores(signs, mags, cols, query_vec, BIG_WEIGHT), ids[cols], keep)
    else:
        pool = ids[cols]
    return _rescore(store, query_vec, pool, limit)


def dense_exact(store: LibraryStore, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None) -> Ranked:
    """Exact cosine top-k by scanning every stored float vector with vec_distance_l2 (reference; slow at scale)."""
    blob = float_blob(np.asarray(query_vec, dtype=np.float32).reshape(-1))
    rows = store.reads.nearest_vectors_exact(blob, limit, filters)
    return [(cid, 1.0 - d * d / 2.0) for cid, d in rows]
