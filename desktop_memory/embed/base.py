"""The embedder protocol every backend implements."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    ``model_id`` and ``dim`` are recorded in the index; two models are never mixed in one index.
    Implementations load lazily: constructing one is cheap; the first embed (or ``load()``) does the work.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def load(self) -> None:
        """Load the model / check the server now (the GUI calls this in the background at start-up)."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised. Batches internally."""

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32 unit vector, with the model's query prefix applied."""

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Model tokens per text (after truncation), for throughput reporting."""
