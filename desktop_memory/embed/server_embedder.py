"""What every server-backed embedder (Ollama, OpenAI-compatible) does the same way, written once.

The dimension is learnt from one probe on first use; documents get the document prefix and go out in batches; the
query gets the query prefix; token counts are estimated (neither API reports them per text). A subclass supplies
the request (``_embed_batch``), how to close its client, and may override how one batch is sent (``_send_batch``,
e.g. to split a batch the server refused as too large) and its size (``_batch_size``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from ..config import EmbedderSettings

PROBE_TEXT = "dimension probe"
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
    _dim: int | None

    def _embed_batch(self, texts: list[str], *, remember: bool = True) -> np.ndarray:
        """(len(texts), dim) unit rows from one request; ``remember`` records the dimension seen."""
        raise NotImplementedError

    def _send_batch(self, texts: list[str]) -> np.ndarray:
        return self._embed_batch(texts)

    def _batch_size(self) -> int:
        return max(1, int(self.settings.batch_size or 1))

    def close(self) -> None:
        raise NotImplementedError

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
