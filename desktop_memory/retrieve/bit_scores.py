"""Scoring kernels over packed sign bits, for the dense lane's shortlists (see ``dense.py``).

Two estimates of a stored vector's closeness to the query, both read from the same in-memory sign bits:

* **Hamming** (symmetric): bits that differ from the query's own sign bits. Cheapest (6 XOR + popcount words per
  vector for 384 dims), so it runs over every vector, but coarse: every dimension counts the same.
* **2-bit code** (asymmetric): the query's floats against each stored vector's sign and magnitude planes
  (``store/vectors.py``), through one 256-entry lookup table per 4 dimensions (96 gathers per vector). Far
  sharper than Hamming (query dimensions near zero hardly count, big components count 4×), so it runs over
  Hamming's shortlist only, to pick the few hundred vectors re-scored exactly.
"""

from __future__ import annotations

import numpy as np

if hasattr(np, "bitwise_count"):  # numpy >= 2.0

    def _bitcount(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        counts: np.ndarray = np.bitwise_count(x, out=out) if out is not None else np.bitwise_count(x)
        return counts

else:  # pragma: no cover - older numpy
    _POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

    def _bitcount(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        counts: np.ndarray = _POP8[x.view(np.uint8)].reshape(x.shape + (8,)).sum(axis=-1, dtype=np.uint8)
        if out is not None:
            out[...] = counts
            return out
        return counts


SCAN_BLOCK = 32768  # vectors per step of the Hamming scan: its temporaries stay in the CPU cache

# _BITS[b, k] = 1.0 if bit k of byte b is set (bits least significant first, as ``store/vectors.py`` packs them)
_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32)


def words_of(bits: np.ndarray) -> np.ndarray:
    """(n, nbytes) uint8 -> (nwords, n) uint64, column-major so each word is one contiguous row."""
    n, nbytes = bits.shape
    pad = (-nbytes) % 8
    if pad:
        bits = np.concatenate([bits, np.zeros((n, pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(np.ascontiguousarray(bits).view(np.uint64).T)


def hamming(words: np.ndarray, query_words: np.ndarray) -> np.ndarray:
    """Hamming distance of every column of ``words`` to the query, as uint16 (scanned in cache-sized blocks)."""
    nwords, n = words.shape
    dist = np.zeros(n, dtype=np.uint16)
    step = min(n, SCAN_BLOCK) or 1
    tmp = np.empty((nwords, step), dtype=np.uint64)
    cnt = np.empty((nwords, step), dtype=np.uint8)
    q = query_words.reshape(-1, 1)
    for start in range(0, n, step):
        stop = min(n, start + step)
        m = stop - start
        np.bitwise_xor(words[:, start:stop], q, out=tmp[:, :m])
        _bitcount(tmp[:, :m], out=cnt[:, :m])
        np.add.reduce(cnt[:, :m], axis=0, dtype=np.uint16, out=dist[start:stop])
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


def _nibble_tables(query_vec: np.ndarray, nbytes: int, big_weight: float) -> np.ndarray:
    """(2·nbytes, 256) float32. Nibble t covers dimensions 4t..4t+3; its index byte holds their 4 sign bits (low
    half) and 4 magnitude bits (high half); ``table[t, idx]`` = Σₖ qₖ·sₖ·(1 + (big_weight − 1)·mₖ)."""
    q = np.zeros(nbytes * 8, dtype=np.float32)
    q[: len(query_vec)] = query_vec  # padding dimensions (zero bits) weigh nothing
    levels = (_BITS[:, :4] * 2 - 1) * (1 + (big_weight - 1) * _BITS[:, 4:])  # (256, 4): the 4 dims' levels
    tables: np.ndarray = q.reshape(2 * nbytes, 4) @ levels.T
    return np.ascontiguousarray(tables, dtype=np.float32)


def _bytes_of(words: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(nwords, n) uint64, chosen columns -> (nbytes, len(cols)) uint8, one contiguous row per byte position."""
    return np.ascontiguousarray(np.ascontiguousarray(words[:, cols].T).view(np.uint8).T)


def code_scores(signs: np.ndarray, mags: np.ndarray, cols: np.ndarray, query_vec: np.ndarray,
                big_weight: float) -> np.ndarray:
    """Estimated inner product of the query with the chosen columns' 2-bit codes: Σᵢ qᵢ·sᵢ·(1 + (w − 1)·mᵢ),
    sᵢ = ±1 the sign and mᵢ the magnitude bit, summed per 4 dimensions through one 256-entry table each."""
    s = _bytes_of(signs, cols)
    m = _bytes_of(mags, cols)
    low = (s & 0x0F) | (m << 4)  # dims 8j..8j+3: signs | magnitudes
    high = (s >> 4) | (m & 0xF0)  # dims 8j+4..8j+7
    tables = _nibble_tables(np.asarray(query_vec, dtype=np.float32).reshape(-1), s.shape[0], big_weight)
    scores = np.zeros(len(cols), dtype=np.float32)
    for j in range(s.shape[0]):
        scores += tables[2 * j].take(low[j])
        scores += tables[2 * j + 1].take(high[j])
    return scores


def best_by_score(scores: np.ndarray, ids: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` ids with the highest scores; ties at the cut-off go to the smaller id (deterministic)."""
    if count >= len(ids):
        return ids
    cut = np.partition(scores, len(scores) - count)[len(scores) - count]  # the count-th highest score
    above = ids[scores > cut]
    at_cut = np.sort(ids[scores == cut])[: count - len(above)]
    return np.concatenate([above, at_cut])
