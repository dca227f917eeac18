"""Embedders: text -> unit vectors. Cheap to import; the heavy libraries load in ``load()``."""

from __future__ import annotations

from ..config import EmbedderSettings
from ..errors import EmbedderError, OllamaModelMissing, OpenAIModelMissing
from .base import Embedder
from .hashing import HashEmbedder
from .local_onnx import DEFAULT_MODEL_ID, LocalOnnxEmbedder
from .ollama import OllamaEmbedder
from .openai_compat import OpenAICompatEmbedder
from .prefixes import known_prefixes

__all__ = [
    "DEFAULT_MODEL_ID",
    "Embedder",
    "HashEmbedder",
    "LocalOnnxEmbedder",
    "OllamaEmbedder",
    "OllamaModelMissing",
    "OpenAICompatEmbedder",
    "OpenAIModelMissing",
    "known_prefixes",
    "make_embedder",
]


def make_embedder(settings: EmbedderSettings, *, expected_dim: int | None = None) -> Embedder:
    """The embedder the settings ask for; nothing is loaded or contacted yet.

    ``expected_dim`` (the index's dimension) makes a server's model of another size fail loudly.
    ``kind = "hash"`` is a test-only fake (no model, no meaning).
    """
    kind = (settings.kind or "local").strip().lower()
    if kind == "local":
        return LocalOnnxEmbedder(settings)
    if kind == "ollama":
        return OllamaEmbedder(settings, expected_dim=expected_dim)
    if kind == "openai":
        return OpenAICompatEmbedder(settings, expected_dim=expected_dim)
    if kind == "hash":
        return HashEmbedder(
            expected_dim or 64, query_prefix=settings.query_prefix, document_prefix=settings.document_prefix
        )
    raise EmbedderError(f'Unknown embedder "{settings.kind}": use "local", "ollama" or "openai" in Settings.')
