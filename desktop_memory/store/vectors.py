"""Vector encodings stored beside each embedding: float32 BLOBs and their packed sign bits."""

from __future__ import annotations

import numpy as np


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, ceil(dim/8)) uint8: bit i set iff component i > 0, least significant bit first
    (the layout of sqlite-vec's ``vec_quantize_binary``)."""
    vectors = np.asarray(vectors)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    return np.packbits(vectors > 0, axis=1, bitorder="little")


def float_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()
