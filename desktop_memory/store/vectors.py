"""Vector encodings stored beside each embedding: float32 BLOBs and their 2-bit codes.

A vector's code (``chunk_vector_bits.bits``) is two bit planes of ``ceil(dim/8)`` bytes each, least significant
bit first (the layout of sqlite-vec's ``vec_quantize_binary``):

* the **sign** plane: bit i set iff component i > 0 (the dense lane's Hamming scan reads only this plane);
* the **magnitude** plane: bit i set iff |component i| is above the median |component| of that same vector (so
  about half the bits are set, whatever the model's scale).

Together they are a 2-bit scalar quantisation, ``sign · (1 + 3·big)``, that ranks the Hamming shortlist far
better than the signs alone (see ``retrieve/bit_scores.py``). Both planes are computed from the vector alone.
"""

from __future__ import annotations

import numpy as np

BIG_WEIGHT = 4.0  # reconstruction |level| of a "big" component relative to a small one (half-normal: ~4)


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, ceil(dim/8)) uint8: bit i set iff component i > 0."""
    vectors = np.asarray(vectors)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    return np.packbits(vectors > 0, axis=1, bitorder="little")


def magnitude_bits(vectors: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, ceil(dim/8)) uint8: bit i set iff |component i| > the median |component| of its row."""
    vectors = np.abs(np.asarray(vectors, dtype=np.float32))
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    if not vectors.shape[1]:
        return np.zeros((len(vectors), 0), dtype=np.uint8)
    median = np.median(vectors, axis=1, keepdims=True)
    return np.packbits(vectors > median, axis=1, bitorder="little")


def bit_codes(vectors: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, 2·ceil(dim/8)) uint8: the sign plane, then the magnitude plane."""
    return np.concatenate([sign_bits(vectors), magnitude_bits(vectors)], axis=1)


def code_bytes(dim: int) -> int:
    """Length of one stored code for ``dim`` dimensions."""
    return 2 * ((dim + 7) // 8)


def float_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()
