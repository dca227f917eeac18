"""The embedder protocol every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..config import EmbedderSettings

DEFAULT_MAX_TOKENS: int = EmbedderSettings.max_tokens  # the default truncation leaves a model id unchanged


def recipe_suffix(document_prefix: str, max_tokens: int | None = None) -> str:
    """What besides the model shapes a stored vector, as a suffix of the model id the index records.

    A document prefix or a different truncation gives different vectors for the same text, so an index made
    one way must not silently take vectors made another way (nor keep them when a file is edited): a change
    reads as a model change (clear the vectors, offer to re-embed). The defaults add nothing, so existing
    indexes keep their id."""
    parts = []
    if max_tokens is not None and int(max_tokens) != DEFAULT_MAX_TOKENS:
        parts.append(f"input cut at {int(max_tokens)} tokens")
    if document_prefix:
        parts.append(f"document prefix {document_prefix!r}")
    return f" ({'; '.join(parts)})" if parts else ""


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
