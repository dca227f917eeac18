"""Embeddings from a local Ollama server (``POST /api/embed``), with retries and plain-words errors.

Only the configured URL is contacted: the HTTP client ignores proxy environment variables
(``trust_env=False``), so a system-wide ``HTTP_PROXY`` cannot route the user's text elsewhere.
A batch either comes back complete and consistent or raises :class:`EmbedderError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import EmbedderSettings, url_problem
from ..errors import EmbedderError, OllamaModelMissing
from .base import recipe_suffix
from .http_retry import MAX_BODY_BYTES, BodyTooLarge, RequestFailed, Transient, body_cap, send_with_retries
from .server_embedder import MAX_MODEL_NAME, MAX_MODELS, PROBE_TEXT, ServerEmbedder

if TYPE_CHECKING:  # httpx costs ~0.1 s to import; only pay it when Ollama is actually used
    import httpx

CONNECT_TIMEOUT_S = 5.0


class _EndpointMissing(Exception):
    """Plain 404 from a route: an Ollama older than 0.3 without /api/embed."""


def _short_model(name: str) -> str:
    """``x:latest`` and ``x`` are the same Ollama model; use one spelling in the index."""
    name = name.strip()
    return name[: -len(":latest")] if name.endswith(":latest") else name


class OllamaEmbedder(ServerEmbedder):
    """An :class:`~desktop_memory.embed.base.Embedder` backed by Ollama's HTTP API.

    Thread-safe: one ``httpx.Client`` (itself thread-safe) is created lazily under a lock.

    Args:
        settings: URL, model, timeout, batch size and prefixes.
        expected_dim: the dimension the index already holds; a server returning anything else
            raises instead of silently mixing vector spaces. Can also be set later as an attribute.
        retries: extra attempts after a connection error, timeout, dropped connection or HTTP 5xx.
        backoff_s: first wait between attempts; it doubles each time (0.5, 1, 2 s by default).
        transport: an ``httpx`` transport, for tests.
    """

    model_label = "Ollama model"

    def __init__(
        self,
        settings: EmbedderSettings | None = None,
        *,
        expected_dim: int | None = None,
        retries: int = 3,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings or EmbedderSettings(kind="ollama")
        self.base_url = (self.settings.ollama_url or "").strip().rstrip("/")
        self.model = (self.settings.ollama_model or "").strip()
        self.expected_dim = expected_dim
        self.retries = max(0, int(retries))
        self.backoff_s = float(backoff_s)
        self._transport = transport
        self._sleep = sleep
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._dim: int | None = None
        self._legacy = False  # set once the server turns out to lack /api/embed

    # -- identity -------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return f"ollama:{_short_model(self.model)}" + recipe_suffix(self.settings.document_prefix or "")

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- public API -----------------------------------------------------------------------------

    def list_models(self) -> list[str]:
        """Names of the models the server has pulled, e.g. ``nomic-embed-text:latest``."""
        data = self._request("GET", "/api/tags", retries=0)
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise EmbedderError(f"Ollama at {self.base_url} sent an unexpected model list.")
        if len(models) > MAX_MODELS:
            raise EmbedderError(f"Ollama at {self.base_url} listed {len(models):,} models, more than the "
                                f"{MAX_MODELS:,} accepted: is it Ollama?")
        return [str(m.get("name") or m.get("model"))[:MAX_MODEL_NAME] for m in models if isinstance(m, dict)]

    def check_connection(self) -> str:
        """One-line summary for the GUI's "Test connection" button; raises EmbedderError with the fix."""
        data = self._request("GET", "/api/version", retries=0)
        version = data.get("version", "unknown") if isinstance(data, dict) else "unknown"
        try:  # probe afresh without touching the cached dim an indexing thread may rely on
            dim = int(self._embed_batch([PROBE_TEXT], remember=False).shape[1])
        except OllamaModelMissing as exc:
            try:
                available = ", ".join(self.list_models()) or "none"
            except EmbedderError:
                available = "unknown"
            raise OllamaModelMissing(f"{exc} Models on this server: {available}.") from exc
        return f"Connected: Ollama {version}, model {self.model} ({dim}-d)"

    # -- batches --------------------------------------------------------------------------------

    def _embed_batch(self, texts: list[str], *, remember: bool = True) -> np.ndarray:
        if not self.model:
            raise EmbedderError("No Ollama model is set: choose one (e.g. nomic-embed-text) in Settings.")
        if not self._legacy:
            try:
                data = self._request("POST", "/api/embed", {"model": self.model, "input": texts, "truncate": True},
                                     max_bytes=body_cap(len(texts)))
                rows = data.get("embeddings") if isinstance(data, dict) else None
            except _EndpointMissing:
                self._legacy = True
        if self._legacy:
            rows = [self._embed_legacy(t) for t in texts]
        return self._check_rows(rows, len(texts), remember=remember)

    def _embed_legacy(self, text: str) -> Any:
        try:
            data = self._request("POST", "/api/embeddings", {"model": self.model, "prompt": text})
        except _EndpointMissing as exc:
            raise EmbedderError(
                f"The server at {self.base_url} has neither /api/embed nor /api/embeddings: is it Ollama?"
            ) from exc
        return data.get("embedding") if isinstance(data, dict) else None

    def _check_rows(self, rows: Any, n: int, *, remember: bool = True) -> np.ndarray:
        """Validate a reply (count, equal lengths, expected dim, finite, non-zero) and L2-normalise it."""
        where = f"Ollama model {self.model} at {self.base_url}"
        if not isinstance(rows, list):
            raise EmbedderError(f"{where} sent a reply without embeddings; is it an embedding model?")
        if len(rows) != n:
            raise EmbedderError(f"{where} returned {len(rows)} embeddings for {n} texts; try again or update Ollama.")
        dims = {len(r) if isinstance(r, list) else -1 for r in rows}
        if len(dims) != 1:
            raise EmbedderError(
                f"{where} returned vectors of different lengths ({sorted(dims)}) in one batch; "
                "restart Ollama and try again."
            )
        d = dims.pop()
        if d <= 0:
            raise EmbedderError(f"{where} returned empty vectors; is it an embedding model (e.g. nomic-embed-text)?")
        return self._unit_rows(rows, d, where, remember=remember)

    # -- HTTP -----------------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        import httpx

        if self._client is None:
            with self._lock:
                if self._client is None:
                    why = url_problem(self.base_url)
                    if why is not None:
                        raise EmbedderError(
                            f"The Ollama URL {self.base_url!r} is not an http:// address ({why}; "
                            "the default is http://localhost:11434): fix it in Settings."
                        )
                    timeout = httpx.Timeout(float(self.settings.ollama_timeout_s), connect=CONNECT_TIMEOUT_S)
                    self._client = httpx.Client(
                        base_url=self.base_url, timeout=timeout, trust_env=False, transport=self._transport
                    )
        return self._client

    def _request(self, method: str, path: str, payload: Any = None, *, retries: int | None = None,
                 max_bytes: int = MAX_BODY_BYTES) -> Any:
        """JSON request with exponential backoff on transient failures (5xx too); 4xx are final; an answer larger
        than ``max_bytes`` is not read past that (http_retry.read_bounded)."""
        attempts = 1 + (self.retries if retries is None else retries)
        try:
            resp = send_with_retries(
                self._http(), method, path, payload, attempts=attempts, backoff_s=self.backoff_s, sleep=self._sleep,
                final_status=lambda r: None if r.status_code >= 500 else self._client_error(r, path),
                max_bytes=max_bytes,
            )
        except BodyTooLarge as exc:
            raise EmbedderError(f"Ollama at {self.base_url} sent {exc.words()} for {path}: is the URL right, and "
                                "is it Ollama?") from None
        except RequestFailed as exc:
            raise EmbedderError(f"Request to Ollama at {self.base_url} failed: {exc.cause}") from exc.cause
        if isinstance(resp, Transient):
            raise self._final_error(resp)
        try:
            return resp.json()
        except ValueError as exc:
            raise EmbedderError(
                f"The server at {self.base_url} answered {path} with something that is not JSON: is it Ollama?"
            ) from exc

    def _final_error(self, failure: Transient) -> EmbedderError:
        kind, detail, tries = failure.kind, failure.detail, failure.tries
        if kind == "connect":
            return EmbedderError(
                f"Cannot reach Ollama at {self.base_url}: is `ollama serve` running? ({detail}; {tries})"
            )
        if kind == "timeout":
            return EmbedderError(
                f"Ollama at {self.base_url} did not answer within {self.settings.ollama_timeout_s:g} s ({tries}). "
                "The model may still be loading or the machine is busy: raise the Ollama timeout in Settings "
                "or try again."
            )
        if kind == "dropped":
            return EmbedderError(
                f"Ollama at {self.base_url} closed the connection mid-answer ({tries}): it may have crashed "
                f"or restarted; check `ollama serve`'s log and try again. ({detail})"
            )
        resp: httpx.Response = detail
        return EmbedderError(
            f"Ollama at {self.base_url} failed with HTTP {resp.status_code} after {tries}: "
            f"{self._error_text(resp)}. Check `ollama serve`'s log (out of memory?) and try again."
        )

    def _client_error(self, resp: httpx.Response, path: str) -> Exception:
        message = self._error_text(resp)
        if resp.status_code == 404:
            if not self._is_json_error(resp):
                if path in ("/api/embed", "/api/embeddings"):
                    return _EndpointMissing(path)
                return EmbedderError(f"The server at {self.base_url} has no {path}: is it Ollama?")
            if "not found" in message.lower():
                return OllamaModelMissing(
                    f'Ollama at {self.base_url} has no model "{self.model}": run `ollama pull {self.model}` '
                    "(or choose another model in Settings)."
                )
        if "does not support embeddings" in message.lower():
            return EmbedderError(
                f"Ollama model {self.model} cannot make embeddings: choose an embedding model "
                "such as nomic-embed-text (`ollama pull nomic-embed-text`)."
            )
        return EmbedderError(f"Ollama at {self.base_url} rejected the request (HTTP {resp.status_code}): {message}")

    @staticmethod
    def _is_json_error(resp: httpx.Response) -> bool:
        try:
            body = resp.json()
        except ValueError:
            return False
        return isinstance(body, dict) and "error" in body

    @staticmethod
    def _error_text(resp: httpx.Response) -> str:
        try:
            body = resp.json()
            if isinstance(body, dict) and body.get("error"):
                return str(body["error"])
        except ValueError:
            pass
        return (resp.text or resp.reason_phrase or "no details").strip()[:300]
