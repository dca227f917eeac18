"""JSON over HTTP to an OpenAI-compatible model server (embeddings, rerank), with retries and plain-words errors.

Shared by the OpenAI-compatible embedder and the reranker. Like the Ollama embedder: only the configured URL is
contacted (``trust_env=False``: a system-wide ``HTTP_PROXY`` cannot route the person's text elsewhere); connection
errors, timeouts, dropped connections, HTTP 429 and 5xx are retried with exponential backoff; other 4xx are final.
An API key goes in the ``Authorization: Bearer`` header and nowhere else: it is masked in every message built from
a server's answer (``api_keys.redact``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..api_keys import KeyName, generation, get_key, key_problem, redact
from ..config import url_problem
from ..errors import ApiKeyError, ServerError
from .http_retry import MAX_BODY_BYTES, BodyTooLarge, RequestFailed, Transient, send_with_retries

if TYPE_CHECKING:  # httpx costs ~0.1 s to import; only pay it when a server is actually used
    import httpx

CONNECT_TIMEOUT_S = 5.0
_TOO_LARGE = ("too large", "too long", "batch size", "maximum context length", "exceeds", "payload")
_MODEL_MISSING = ("model_not_found", "does not exist", "not found", "no model", "unknown model", "not loaded")
# words of a server error that is really about a missing key (LiteLLM's proxy answers 500 "Authentication Error,
# No api key passed in.")
_KEY_WORDS = ("api key", "api_key", "apikey", "authenticat", "unauthori", "credential")


def normalise_base(url: str) -> str:
    """``http://host:port`` → ``http://host:port/v1`` (every server here serves the OpenAI routes under /v1); a
    URL with a path is kept as given (``…/v1``, or a proxy's own prefix). Trailing slashes go."""
    url = (url or "").strip().rstrip("/")
    try:
        parts = urlsplit(url)
    except ValueError:  # "http://[::1": left as it is, refused with its reason on first use (JsonServer.client)
        return url
    if parts.scheme in ("http", "https") and parts.netloc and parts.path in ("", "/"):
        return url + "/v1"
    return url


def error_text(resp: httpx.Response) -> str:
    """The server's own words: OpenAI's ``{"error": {"message"}}``, ``{"error": "…"}``, vLLM's ``{"message"}``,
    FastAPI's ``{"detail"}``, or the plain body."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        for key in ("error", "message", "detail"):
            if body.get(key):
                return str(body[key])[:300]
    return (resp.text or resp.reason_phrase or "no details").strip()[:300]


class JsonServer:
    """One server: a lazily created ``httpx.Client`` (thread-safe) and ``request()``.

    Args:
        base_url: what requests' paths are joined to (already normalised by the caller).
        what: how messages name the server, e.g. "The embedding server".
        timeout_s: read timeout of one attempt (connect: at most ``CONNECT_TIMEOUT_S``).
        key_name: which stored API key to send (read once, on first use); ``api_key`` overrides it (tests).
        retries / backoff_s: extra attempts after a transient failure, first wait (doubling).
    """

    def __init__(self, base_url: str, *, what: str, timeout_s: float, key_name: KeyName,
                 api_key: str | None = None, retries: int = 3, backoff_s: float = 0.5,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url
        self.what = what
        self.timeout_s = float(timeout_s)
        self.key_name: KeyName = key_name
        self._api_key = api_key
        self._fixed_key = api_key is not None  # given by the caller: never re-read from the store
        self._key_generation = -1
        self.retries = max(0, int(retries))
        self.backoff_s = float(backoff_s)
        self._transport = transport
        self._sleep = sleep
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:  # never the key
        return f"JsonServer({self.base_url!r})"

    def _key(self) -> str:
        if not self._fixed_key and self._key_generation != generation():
            current = generation()
            self._api_key = get_key(self.key_name)  # ApiKeyError: asked again next time, never sent without it
            self._key_generation = current
        return self._api_key or ""

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def client(self) -> httpx.Client:
        import httpx

        if self._client is not None and not self._fixed_key and self._key_generation != generation():
            with self._lock:  # a key was saved or forgotten since: a new client sends the new one (the old one is
                self._client = None  # left to a request another thread may still be making, then collected)
        if self._client is None:
            with self._lock:
                if self._client is None:
                    why = url_problem(self.base_url)
                    if why is not None:
                        raise ServerError(f"{self.what}'s URL {self.base_url!r} is not an http:// address ({why}): "
                                          "fix it in Settings.", "no_route")
                    key = self._key()  # a stored key no HTTP header can carry: ApiKeyError (an EmbedderError)
                    problem = key_problem(key) if key else None
                    if problem is not None:  # a key given by the caller (tests, a script) is held to the same rule
                        raise ApiKeyError(f"The API key for {self.what.lower()} cannot be used: {problem}.")
                    headers = {"Authorization": f"Bearer {key}"} if key else {}
                    timeout = httpx.Timeout(self.timeout_s, connect=min(CONNECT_TIMEOUT_S, self.timeout_s))
                    self._client = httpx.Client(timeout=timeout, trust_env=False, transport=self._transport,
                                                headers=headers)
        return self._client

    def url(self, path: str) -> str:
        return self.base_url + path

    def request(self, method: str, path: str, payload: Any = None, *, retries: int | None = None,
                max_bytes: int = MAX_BODY_BYTES) -> Any:
        """The decoded JSON answer, or ServerError. ``path`` is appended to the base URL ("/embeddings", or "");
        an answer larger than ``max_bytes`` is not read past that (ServerError "too_big")."""
        client = self.client()
        url = self.url(path)
        attempts = 1 + (self.retries if retries is None else max(0, retries))
        try:
            resp = send_with_retries(client, method, url, payload, attempts=attempts, backoff_s=self.backoff_s,
                                     sleep=self._sleep, final_status=lambda r: self._client_error(r, url, payload),
                                     max_bytes=max_bytes)
        except BodyTooLarge as exc:
            raise ServerError(f"{self.what} at {url} sent {exc.words()}: is the URL right, and is it a model "
                              "server?", "too_big") from None
        except RequestFailed as exc:
            raise ServerError(f"The request to {self.what.lower()} at {url} failed: {exc.cause}",
                              "rejected") from exc.cause
        if isinstance(resp, Transient):
            raise self._final_error(resp, url)
        try:
            return resp.json()
        except ValueError as exc:
            raise ServerError(f"{self.what} at {url} answered with something that is not JSON: is the URL "
                              "right (it usually ends in /v1)?", "bad_reply", resp.status_code) from exc

    def _final_error(self, failure: Transient, url: str) -> ServerError:
        kind, detail, tries = failure.kind, failure.detail, failure.tries
        if kind == "connect":
            return ServerError(f"Cannot reach {self.what.lower()} at {url}: is it running, and is the URL right? "
                               f"({tries})", "connect")
        if kind == "timeout":
            return ServerError(f"{self.what} at {url} did not answer within {self.timeout_s:g} s ({tries}): the "
                               "model may still be loading or the machine is busy; raise the timeout in Settings "
                               "or try again.", "timeout")
        if kind == "dropped":
            return ServerError(f"{self.what} at {url} closed the connection mid-answer ({tries}): it may have "
                               "crashed or restarted; check its log and try again.", "dropped")
        resp: httpx.Response = detail
        hint = "" if self._key() or resp.status_code < 500 else (
            f" If it needs an API key (some servers answer {resp.status_code} without one), set it in Settings or "
            f"with `desktop-memory api-key set {self.key_name}`.")
        return ServerError(f"{self.what} at {url} failed with HTTP {resp.status_code} after {tries}: "
                           f"{redact(error_text(resp), self._key())}. Check the server's log and try again.{hint}",
                           "status", resp.status_code)

    def _client_error(self, resp: httpx.Response, url: str, payload: Any) -> ServerError | None:
        """The final error for a 4xx/5xx answer, or None when it is worth retrying (429, a plain 5xx). "No such
        model" needs the server to name the model asked for (or say ``model_not_found``), so that a missing route
        ("/v1/models not found") is not taken for one."""
        status = resp.status_code
        message = redact(error_text(resp), self._key())
        low = message.lower()
        where = f"{self.what} at {url}"
        if status == 413 or (status in (400, 422, 500, 507) and any(w in low for w in _TOO_LARGE)):
            return ServerError(f"{where} refused a request as too large (HTTP {status}): {message}", "too_large",
                               status)
        if status in (401, 403):
            if not self._key():
                return ServerError(f"{where} needs an API key (HTTP {status}): set one in Settings, or with "
                                   f"`desktop-memory api-key set {self.key_name}`.", "auth", status)
            return ServerError(f"{where} refused the API key (HTTP {status}): {message}. Set the right key in "
                               f"Settings, or with `desktop-memory api-key set {self.key_name}`.", "auth", status)
        model = str(payload.get("model") or "") if isinstance(payload, dict) else ""
        named = (model and model.lower() in low) or "model_not_found" in low
        if status in (400, 404, 422) and named and any(w in low for w in _MODEL_MISSING):
            return ServerError(f"{where} does not have that model (HTTP {status}): {message}", "model", status)
        if status in (404, 405):
            return ServerError(f"{where} has no such route (HTTP {status}): is the URL right? The OpenAI routes "
                               "usually live under /v1 (e.g. http://localhost:8080/v1).", "no_route", status)
        if status >= 500 and not self._key() and any(w in low for w in _KEY_WORDS):  # LiteLLM's proxy: 500
            return ServerError(f"{where} failed (HTTP {status}: {message}): it looks like it needs an API key; set "
                               f"one in Settings, or with `desktop-memory api-key set {self.key_name}`.", "auth",
                               status)
        if status == 429 or status >= 500:
            return None
        return ServerError(f"{where} rejected the request (HTTP {status}): {message}", "rejected", status)
