"""Embeddings from any OpenAI-compatible server (``POST /v1/embeddings``): LM Studio, llama.cpp's llama-server,
vLLM, Hugging Face TEI, Infinity, Ollama's ``/v1``.

Behaves like the Ollama embedder (embed/ollama.py): lazy, thread-safe, retries transient failures, validates every
reply (count, order, equal lengths, the index's dimension, finite, non-zero) and L2-normalises it, and says in plain
words what to fix. Servers differ in how much they take at once (TEI: 32 inputs by default; llama-server: its
physical batch in tokens; proxies: a body size), answering 413 or "too large": the batch is then halved and the
smaller size kept for the rest of the session, so a long embedding run adapts instead of failing.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from ..config import EmbedderSettings
from ..errors import EmbedderError, OpenAIModelMissing, ServerError
from .base import recipe_suffix
from .http_retry import body_cap
from .openai_http import JsonServer, normalise_base
from .server_embedder import MAX_MODEL_NAME, MAX_MODELS, PROBE_TEXT, ServerEmbedder

if TYPE_CHECKING:
    import httpx

_DECLARED_LIMIT = re.compile(r"max(?:imum)?[ _a-z]*batch[ _a-z]*?(?:size)?\D{0,12}(\d+)", re.IGNORECASE)


def _netloc(url: str) -> str:
    try:
        return urlsplit(url).netloc
    except ValueError:
        return url


class OpenAICompatEmbedder(ServerEmbedder):
    """An :class:`~desktop_memory.embed.base.Embedder` backed by an OpenAI-compatible ``/v1/embeddings``.

    Args:
        settings: ``openai_url``, ``openai_model``, ``openai_timeout_s``, ``batch_size`` and the prefixes.
        expected_dim: the dimension the index holds; a model answering another size fails loudly.
        api_key: overrides the stored key (api_keys.py), for tests.
        retries, backoff_s, transport, sleep: as for the Ollama embedder.
    """

    def __init__(self, settings: EmbedderSettings | None = None, *, expected_dim: int | None = None,
                 api_key: str | None = None, retries: int = 3, backoff_s: float = 0.5,
                 transport: httpx.BaseTransport | None = None, sleep: Any = None) -> None:
        self.settings = settings or EmbedderSettings(kind="openai")
        self.base_url = normalise_base(self.settings.openai_url)
        self.model = (self.settings.openai_model or "").strip()
        self.expected_dim = expected_dim
        extra = {"sleep": sleep} if sleep is not None else {}
        self.server = JsonServer(self.base_url, what="The embedding server", timeout_s=self.settings.openai_timeout_s,
                                 key_name="embedder", api_key=api_key, retries=retries, backoff_s=backoff_s,
                                 transport=transport, **extra)
        self._lock = threading.Lock()
        self._dim: int | None = None
        self._batch_limit = max(1, int(self.settings.batch_size or 1))  # lowered when the server says "too large"

    def __repr__(self) -> str:
        return f"OpenAICompatEmbedder({self.base_url!r}, {self.model!r})"

    # -- identity -------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        """``openai:<model>`` (plus the document prefix): the server's address is not part of it, so moving the same
        model to another port or program keeps the vectors."""
        return f"openai:{self.model}" + recipe_suffix(self.settings.document_prefix or "")

    def _batch_size(self) -> int:
        return self._batch_limit

    def _send_batch(self, texts: list[str]) -> np.ndarray:
        return self._embed_fitting(texts)

    @property
    def batch_limit(self) -> int:
        """Inputs per request now (settings.batch_size, or less once the server refused a batch as too large)."""
        return self._batch_limit

    def close(self) -> None:
        self.server.close()

    # -- public API -----------------------------------------------------------------------------

    def list_models(self) -> list[str]:
        """Model ids from ``GET /v1/models`` (OpenAI's ``{"data": [{"id"}]}``; TEI-style lists too)."""
        data = self.server.request("GET", "/models", retries=0)
        rows = data.get("data", data.get("models")) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise EmbedderError(f"The embedding server at {self.base_url} sent an unexpected model list.")
        if len(rows) > MAX_MODELS:
            raise EmbedderError(f"The embedding server at {self.base_url} listed {len(rows):,} models, more than "
                                f"the {MAX_MODELS:,} accepted: is the URL right?")
        names = [str(r.get("id") or r.get("name") or r.get("model"))[:MAX_MODEL_NAME] if isinstance(r, dict)
                 else str(r)[:MAX_MODEL_NAME] for r in rows]
        return [n for n in names if n and n != "None"]

    def check_connection(self) -> str:
        """One line for "Test connection": the models the server lists, then one real embedding of the configured
        model. Raises EmbedderError with the fix (listing the server's models when ours is not among them)."""
        if not self.model:
            raise EmbedderError("No model is set for the OpenAI-compatible server: choose one in Settings.")
        try:
            models: list[str] | None = self.list_models()
        except ServerError as exc:
            if exc.kind not in ("no_route", "rejected", "bad_reply"):  # down, key refused, ...: say so now
                raise
            models = None  # TEI and some proxies have no /v1/models: the probe below still tells
        try:  # probe afresh without touching the cached dim an indexing thread may rely on
            dim = int(self._embed_batch([PROBE_TEXT], remember=False).shape[1])
        except OpenAIModelMissing as exc:
            listed = ", ".join(models) if models else "none listed"
            raise OpenAIModelMissing(f"{exc} Models on this server: {listed}.") from exc
        listed = f"; the server lists {len(models)} model{'s' if len(models) != 1 else ''}: " \
                 f"{', '.join(models[:8])}{' …' if len(models) > 8 else ''}" if models else ""
        return f"Connected: {_netloc(self.base_url)}, model {self.model} ({dim}-d){listed}"

    # -- batches --------------------------------------------------------------------------------

    def _embed_fitting(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``, halving on "too large" (and remembering the size that worked)."""
        try:
            return self._embed_batch(texts)
        except ServerError as exc:
            if exc.kind != "too_large":
                raise
            if len(texts) == 1:
                raise EmbedderError(
                    f"The embedding server at {self.base_url} refused even a single passage as too large: start it "
                    "with a larger context or input truncation (llama-server: a larger --ubatch-size; TEI: "
                    f"--auto-truncate), or choose another model. ({exc})") from exc
            declared = _DECLARED_LIMIT.search(str(exc))
            half = max(1, len(texts) // 2)
            limit = int(declared.group(1)) if declared and 0 < int(declared.group(1)) < len(texts) else half
            with self._lock:
                self._batch_limit = max(1, min(self._batch_limit, limit))
            size = self._batch_limit
            return np.vstack([self._embed_fitting(texts[i : i + size]) for i in range(0, len(texts), size)])

    def _embed_batch(self, texts: list[str], *, remember: bool = True) -> np.ndarray:
        if not self.model:
            raise EmbedderError("No model is set for the OpenAI-compatible server: choose one in Settings.")
        try:
            data = self.server.request("POST", "/embeddings", {"model": self.model, "input": texts},
                                       max_bytes=body_cap(len(texts)))
        except ServerError as exc:
            if exc.kind == "model":
                raise OpenAIModelMissing(
                    f'The embedding server at {self.base_url} has no model "{self.model}": load it there (LM Studio: '
                    "load the model; Ollama: `ollama pull`; vLLM/TEI: the model the server was started with) or "
                    f"choose another in Settings. ({exc})") from exc
            raise
        return self._check_rows(data, len(texts), remember=remember)

    def _check_rows(self, data: Any, n: int, *, remember: bool = True) -> np.ndarray:
        """Validate an OpenAI ``{"data": [{"index", "embedding"}]}`` reply and L2-normalise it, in input order."""
        where = f"Model {self.model} at {self.base_url}"
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise EmbedderError(f"{where} sent a reply without embeddings: is it an embedding model, and is the URL "
                                "an OpenAI-compatible /v1?")
        if len(items) != n:
            raise EmbedderError(f"{where} returned {len(items)} embeddings for {n} texts; try again or update it.")
        try:
            order = sorted(range(n), key=lambda i: int(items[i].get("index", i)))
            rows = [items[i].get("embedding") for i in order]
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbedderError(f"{where} sent embeddings in a shape this app does not read.") from exc
        if [int(items[i].get("index", i)) for i in order] != list(range(n)):
            raise EmbedderError(f"{where} numbered its embeddings wrongly (indexes are not 0..{n - 1}).")
        if any(isinstance(r, str) for r in rows):
            raise EmbedderError(f"{where} sent base64 embeddings; this app asks for plain numbers.")
        dims = {len(r) if isinstance(r, list) else -1 for r in rows}
        if len(dims) != 1:
            raise EmbedderError(f"{where} returned vectors of different lengths ({sorted(dims)}) in one batch.")
        d = dims.pop()
        if d <= 0:
            raise EmbedderError(f"{where} returned empty vectors: is it an embedding model?")
        return self._unit_rows(rows, d, where, remember=remember)
