"""What every server-backed embedder (Ollama, OpenAI-compatible) does the same way, written once.

The dimension is learnt from one probe on first use; documents get the document prefix and go out in batches; the
query gets the query prefix; token counts are estimated (neither API reports them per text). A subclass supplies
the request (``_embed_batch``), how to close its client, and may override how one batch is sent (``_send_batch``,
e.g. to split a batch the server refused as too large) and its size (``_batch_size``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..config import EmbedderSettings
from ..errors import EmbedderError

PROBE_TEXT = "dimension probe"
MAX_MODELS = 10_000  # a model list longer than this is not a model server's (OpenRouter lists ~300)
MAX_MODEL_NAME = 500  # characters of one listed model name kept
MAX_DIM = 65_536  # the widest embedding accepted (the largest models make 4,096-8,192)
_E = TypeVar("_E", bound="ServerEmbedder")


def embed_in_batches(texts: Sequence[str], prefix: str, batch_size: Callable[[], int],
                     embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """Prefixed texts embedded in consecutive requests, stacked in order, for the server-backed embedders.

    ``batch_size`` is asked before every request, so a server that refused a batch as too large gets smaller
    ones from then on. ``texts`` must not be empty (the caller answers that with a (0, dim) array)."""
    items = [prefix + t for t in texts]
    parts: list[np.ndarray] = []
    start = 0
    while start < len(items):
        size = max(1, batch_size())
        parts.append(embed(items[start : start + size]))
        start += size
    return np.vstack(parts)


def estimate_tokens(texts: Sequence[str], prefix: str) -> list[int]:
    """About 4 characters a token: for servers that report no per-text token counts."""
    return [max(1, math.ceil(len(prefix + t) / 4)) for t in texts]


class ServerEmbedder:
    """Base of the HTTP embedders; implements the :class:`~desktop_memory.embed.base.Embedder` protocol's
    common part."""

    settings: EmbedderSettings
    model: str
    expected_dim: int | None
    _dim: int | None
    model_label = "Model"  # how messages name the model: "Ollama model nomic-embed-text"

    def _embed_batch(self, texts: list[str], *, remember: bool = True) -> np.ndarray:
        """(len(texts), dim) unit rows from one request; ``remember`` records the dimension seen."""
        raise NotImplementedError

    def _send_batch(self, texts: list[str]) -> np.ndarray:
        return self._embed_batch(texts)

    def _batch_size(self) -> int:
        return max(1, int(self.settings.batch_size or 1))

    def close(self) -> None:
        raise NotImplementedError

    def _unit_rows(self, rows: list[Any], d: int, where: str, *, remember: bool) -> np.ndarray:
        """Rows already checked to share one length ``d`` → (n, d) float32 unit rows, refusing a dimension other than
        the index's or than this model gave before (vector spaces must never mix), and zero or invalid vectors."""
        if d > MAX_DIM:
            raise EmbedderError(f"{where} returned {d:,}-dimensional vectors, more than the {MAX_DIM:,} accepted: "
                                "is it an embedding model?")
        try:
            arr = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbedderError(f"{where} returned vectors that are not numbers.") from exc
        name = f"{self.model_label} {self.model}"
        if self.expected_dim is not None and d != self.expected_dim:
            raise EmbedderError(
                f"{name} returns {d}-dimensional vectors but this index holds {self.expected_dim}-dimensional ones: "
                "pick the model the index was built with, or rebuild the index with this model.")
        if remember and self._dim is not None and d != self._dim:
            raise EmbedderError(
                f"{name} now returns {d}-dimensional vectors instead of {self._dim}: the model behind that name "
                "changed; rebuild the index or pick the previous model.")
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise EmbedderError(f"{where} returned an empty (all-zero or invalid) vector; check the model.")
        if remember:
            self._dim = d
        out: np.ndarray = (arr / norms).astype(np.float32)
        return out

    @property
    def dim(self) -> int:
        """Discovered by embedding one short probe text on first use, then cached."""
        if self._dim is None:
            self._embed_batch([PROBE_TEXT])
        assert self._dim is not None
        return self._dim

    def load(self) -> None:
        """Check that the server answers and has the model (and learn the dimension)."""
        _ = self.dim

    def __enter__(self: _E) -> _E:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 unit rows, in requests of at most ``_batch_size()`` inputs."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return embed_in_batches(texts, self.settings.document_prefix or "", self._batch_size, self._send_batch)

    def embed_query(self, text: str) -> np.ndarray:
        row: np.ndarray = self._embed_batch([(self.settings.query_prefix or "") + text])[0]
        return row

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """An estimate (about 4 characters a token): these APIs report no per-text token counts."""
        return estimate_tokens(texts, self.settings.document_prefix or "")
