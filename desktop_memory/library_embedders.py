"""The embedders a library's service uses: the configured one, and this library's own models' (issue 30).

Why apart: queries are embedded with the model of the vectors the library has (its own, where this computer can
make it), while new vectors are built with the configured one; both are made once under one lock and shared by
every thread (loaded lazily, thread-safe).
"""

from __future__ import annotations

import threading

from .config import EmbedderSettings
from .embed import make_embedder
from .embed.base import Embedder
from .embed.identity import embedder_for
from .ingest.model_build import ModelView, model_view
from .store.protocol import LibraryStore


class LibraryEmbedders:
    """The configured embedder (``injected`` one in tests and benchmarks, never replaced) and the library's own."""

    def __init__(self, injected: Embedder | None = None) -> None:
        self._configured = injected
        self._injected = injected is not None
        self._lock = threading.Lock()
        self._own: dict[str, Embedder | None] = {}  # this library's models, by id

    @property
    def made(self) -> bool:
        return self._configured is not None

    def configured(self, settings: EmbedderSettings) -> Embedder:
        with self._lock:
            if self._configured is None:
                self._configured = make_embedder(settings)
            return self._configured

    def replace(self, settings: EmbedderSettings) -> None:
        """Another configured model (an injected embedder stays)."""
        if not self._injected:
            with self._lock:
                self._configured = make_embedder(settings)

    def view(self, store: LibraryStore, configured: Embedder) -> ModelView:
        """This library's models against the configured one: which embeds the queries, what to say about it."""
        return model_view(store, configured, self._library_embedder)

    def _library_embedder(self, model_id: str, dim: int, recorded: str | None) -> Embedder | None:
        """The embedder of one of this library's models (made once; None when not available on this computer)."""
        with self._lock:
            if model_id not in self._own:
                self._own[model_id] = embedder_for(model_id, dim, recorded)
            return self._own[model_id]


__all__ = ["LibraryEmbedders"]
