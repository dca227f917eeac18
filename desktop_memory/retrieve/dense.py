"""The dense lane's plan: a coarse Hamming scan over sign bits, then exact re-scoring in SQLite.

Why not vec0's own KNN: sqlite-vec 0.1.9 is brute force with a per-chunk selection whose cost grows with k, so
over-fetching candidates from a vec0 table is slow (bit[384], 100k rows: k=10 ~4 ms but k=200 ~130 ms), and the
exact float scan is ~63 ms at 100k and ~175 ms at 300k on a 2-core machine.

The plan here:

1. **coarse**: every stored vector's sign bits (48 bytes for 384 dims, kept in ``chunk_vector_bits``) are held in
   memory as a column-major uint64 matrix (17 MB at 300k chunks, ids included); Hamming distances to the query's
   bits take ~2 ms at 300k; the ``candidates`` nearest are picked with a counting threshold (no full sort);
2. **exact**: those candidates' float32 vectors are fetched by primary key from ``chunk_vectors`` and scored with
   sqlite-vec's ``vec_distance_l2`` in one SQL statement (~2 ms for 1,000), best first.

When the index (or the filtered subset) holds no more vectors than the candidate budget, step 1 is skipped and
step 2 scores all of them: exact search for small libraries. Filters are applied before step 1 (the candidate
set is drawn from the allowed ids only), so a filtered search never loses its top-k to post-filtering.

The in-memory bits are refreshed from the store's change counters (``Store.vector_state``): appended vectors are
read incrementally; a reset or an out-of-order insert reloads everything; deleted vectors stay in memory as
harmless ghosts (their float rows are gone, so re-scoring drops them) until they pass 10 % of the matrix.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from ..models import SearchFilters
from ..store import Store
from ..store.vectors import float_blob, sign_bits

Ranked = list[tuple[int, float]]

MIN_CANDIDATES = 1000  # re-scored per query at least (recall@10 vs exact: see docs/BENCHMARKS.md)
OVERSAMPLE = 5  # ... or limit × this, whichever is larger
CANDIDATE_SHARE = 0.025  # ... or this share of the vectors searched (2,500 at 100k, 7,500 at 300k)
MAX_CANDIDATES = 20000
GHOST_SHARE = 0.10  # reload the bit matrix when deleted vectors exceed this share of it

if hasattr(np, "bitwise_count"):  # numpy >= 2.0

    def _bitcount(x: np.ndarray) -> np.ndarray:
        counts: np.ndarray = np.bitwise_count(x)
        return counts

else:  # pragma: no cover - older numpy
    _POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _bitcount(x: np.ndarray) -> np.ndarray:
        counts: np.ndarray = _POP8[x.view(np.uint8)].reshape(x.shape + (8,)).sum(axis=-1, dtype=np.uint8)
        return counts


def _words(bits: np.ndarray) -> np.ndarray:
    """(n, nbytes) uint8 -> (nwords, n) uint64, column-major so each word is one contiguous row."""
    n, nbytes = bits.shape
    pad = (-nbytes) % 8
    if pad:
        bits = np.concatenate([bits, np.zeros((n, pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(np.ascontiguousarray(bits).view(np.uint64).T)


class BitMatrix:
    """The in-memory copy of one database's sign bits. Thread-safe; searches read an immutable snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.state: tuple[int, int, int] | None = None  # (epoch, seq, deleted) at the last refresh
        self.deleted_at_load = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.words = np.zeros((0, 0), dtype=np.uint64)

    def snapshot(self, store: Store) -> tuple[np.ndarray, np.ndarray]:
        state = store.vector_state()
        with self._lock:
            if self.state != state:
                self._refresh(store, state)
            return self.ids, self.words

    def _refresh(self, store: Store, state: tuple[int, int, int]) -> None:
        epoch, seq, deleted = state
        ghosts = deleted - self.deleted_at_load
        full = (self.state is None or self.state[0] != epoch or ghosts > GHOST_SHARE * max(1000, len(self.ids)))
        if full:
            ids, bits = store.load_bits(0)
            self.ids = ids
            self.words = _words(bits) if len(ids) else np.zeros((0, 0), dtype=np.uint64)
            self.deleted_at_load = deleted
        elif self.state is None or self.state[1] != seq:
            after = int(self.ids[-1]) if len(self.ids) else 0
            ids, bits = store.load_bits(after)
            if len(ids):
                new_words = _words(bits)
                if len(self.ids) and new_words.shape[0] == self.words.shape[0]:
                    self.words = np.ascontiguousarray(np.concatenate([self.words, new_words], axis=1))
                    self.ids = np.concatenate([self.ids, ids])
                else:  # first vectors (or a dimension change): start over
                    self.ids, self.words = ids, new_words
        self.state = state


_MATRICES: OrderedDict[str, BitMatrix] = OrderedDict()
_MATRICES_LOCK = threading.Lock()
_MAX_MATRICES = 4


def bit_matrix(store: Store) -> BitMatrix:
    """The shared bit matrix of this database file (one per path; a few paths are kept)."""
    key = str(store.path.resolve()) if str(store.path) not in ("", ":memory:") else f"mem:{id(store)}"
    with _MATRICES_LOCK:
        m = _MATRICES.get(key)
        if m is None:
            m = _MATRICES[key] = BitMatrix()
            while len(_MATRICES) > _MAX_MATRICES:
                _MATRICES.popitem(last=False)
        else:
            _MATRICES.move_to_end(key)
        return m


def hamming(words: np.ndarray, query_words: np.ndarray) -> np.ndarray:
    """Hamming distance of every column of ``words`` to the query, as uint16."""
    n = words.shape[1]
    dist = np.zeros(n, dtype=np.uint16)
    tmp = np.empty(n, dtype=np.uint64)
    for w in range(words.shape[0]):
        np.bitwise_xor(words[w], query_words[w], out=tmp)
        dist += _bitcount(tmp)
    return dist


def nearest_by_hamming(dist: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` smallest distances (ties at the cut-off resolved by position), unsorted."""
    if count >= len(dist):
        return np.arange(len(dist))
    hist = np.bincount(dist, minlength=int(dist.max()) + 1)
    cut = int(np.searchsorted(np.cumsum(hist), count))  # smallest d with #(dist <= d) >= count
    inside = np.flatnonzero(dist < cut)
    at_cut = np.flatnonzero(dist == cut)[: count - len(inside)]
    return np.concatenate([inside, at_cut])


def candidate_budget(limit: int, n_vectors: int = 0) -> int:
    """Candidates re-scored exactly: enough for ``limit``, and a fixed share of the index, since the sign-bit
    ranking's errors grow with the number of near neighbours (1,000 flat: recall@10 0.989 at 100k, 0.980 at 300k)."""
    share = math.ceil(n_vectors * CANDIDATE_SHARE)
    return int(min(MAX_CANDIDATES, max(MIN_CANDIDATES, limit * OVERSAMPLE, share)))


def _rescore(store: Store, query_vec: np.ndarray, ids: np.ndarray, limit: int) -> Ranked:
    """Exact cosine of the given chunk ids via sqlite-vec's vec_distance_l2 over the float BLOBs."""
    if not len(ids):
        return []
    rows = store.reads.vector_distances(float_blob(query_vec), ids, limit)
    return [(cid, 1.0 - d * d / 2.0) for cid, d in rows]


def _allowed_ids(store: Store, filters: SearchFilters | None) -> np.ndarray | None:
    """Embedded canonical chunks whose own file or a collapsed copy's file passes the filters (see copies.py)."""
    return store.reads.allowed_embedded_ids(filters)


def dense_search(store: Store, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None,
                 *, candidates: int | None = None) -> Ranked:
    """Top ``limit`` chunks by cosine: coarse Hamming candidates, exact re-scoring (exact when few vectors)."""
    limit = max(1, int(limit))
    query_vec = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    ids, words = bit_matrix(store).snapshot(store)
    allowed = _allowed_ids(store, filters)
    budget = int(candidates or candidate_budget(limit, len(ids) if allowed is None else len(allowed)))
    if allowed is not None:
        if len(allowed) <= budget:
            return _rescore(store, query_vec, allowed, limit)
        mask = np.isin(ids, allowed)
        ids, words = ids[mask], words[:, mask]
    if len(ids) <= budget:
        pool = ids
    else:
        qwords = _words(sign_bits(query_vec))[:, 0]
        pool = ids[nearest_by_hamming(hamming(words, qwords), budget)]
    return _rescore(store, query_vec, pool, limit)


def dense_exact(store: Store, query_vec: np.ndarray, limit: int, filters: SearchFilters | None = None) -> Ranked:
    """Exact cosine top-k by scanning every stored float vector with vec_distance_l2 (reference; slow at scale)."""
    blob = float_blob(np.asarray(query_vec, dtype=np.float32).reshape(-1))
    rows = store.reads.nearest_vectors_exact(blob, limit, filters)
    return [(cid, 1.0 - d * d / 2.0) for cid, d in rows]
