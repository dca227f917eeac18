"""A deterministic, dependency-light fake embedder so GUI and pipeline tests need no model.

Word unigrams and bigrams are hashed (blake2b, stable across processes, unlike ``hash()``) into
signed buckets; texts that share words get a high cosine, unrelated texts a low one.
Not for real use: it knows nothing about meaning.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """Feature-hashing embedder implementing the :class:`Embedder` protocol."""

    def __init__(self, dim: int = 64, *, query_prefix: str = "", document_prefix: str = "") -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self._dim = int(dim)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.calls = 0  # embed_documents/embed_query calls, so tests can assert caching/batching

    @property
    def model_id(self) -> str:
        return f"hash-test-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def load(self) -> None:
        """Nothing to load."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._vector(self.document_prefix + text)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        return self._vector(self.query_prefix + text)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD.findall(t)) for t in texts]

    def _vector(self, text: str) -> np.ndarray:
        words = [w.lower() for w in _WORD.findall(text)]
        features = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        vec = np.zeros(self._dim, dtype=np.float64)
        for feat in features or ["\x00empty"]:
            h = int.from_bytes(hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest(), "little")
            weight = 0.5 if " " in feat else 1.0  # bigrams refine, unigrams dominate
            vec[h % self._dim] += weight if (h >> 63) & 1 else -weight
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:  # features cancelled out exactly: fall back to a fixed unit vector
            vec[0], norm = 1.0, 1.0
        out: np.ndarray = (vec / norm).astype(np.float32)
        return out
