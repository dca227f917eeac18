"""A real HTTP server on 127.0.0.1 that speaks enough of Ollama's API to test clients against.

Usage::

    with OllamaStub(dim=32) as stub:
        settings = EmbedderSettings(kind="ollama", ollama_url=stub.url)
        stub.fail_next_n, stub.fail_status = 2, 500   # fault switches, settable at any time
        ...
        assert stub.embed_inputs() == [["a", "b"], ["c"]]

Vectors are deterministic (seeded by model + text) and deliberately *not* unit length, so
clients must normalise. Unknown models get Ollama's 404 JSON error.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from tests.support.stub_http import JsonHandler, LoopbackStub, QuietServer

_QuietServer = QuietServer  # the name tests/robustness/conftest.py imports

DEFAULT_MODELS = ["nomic-embed-text:latest", "all-minilm:latest"]


def stub_vector(model: str, text: str, dim: int) -> list[float]:
    """The vector the stub returns for (model, text): seeded normal noise, length 3 (not unit)."""
    seed = int.from_bytes(hashlib.sha256(f"{model}\x00{text}".encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return (3.0 * vec / np.linalg.norm(vec)).tolist()


class OllamaStub(LoopbackStub):
    """Threaded fake Ollama server with run-time fault switches and a request log.

    Switches (plain attributes, read on every request):
        dim: vector length returned.
        models: model names the server "has" (``x`` also matches ``x:latest``).
        fail_next_n / fail_status: the next n requests (any route) answer ``fail_status`` (default 500).
        drop_connection_next_n: the next n requests get headers and half a body, then the socket closes.
        delay_s: sleep this long before answering each request (interrupted by ``stop()``).
        ragged_next_n: the next n embed answers have one vector one element short.
        short_next_n: the next n embed answers leave out the last vector.
        legacy_only: behave like Ollama < 0.3: /api/embed is a plain-text 404.
        version: what GET /api/version reports.
    """

    thread_name = "OllamaStub"

    def __init__(self, dim: int = 32, models: list[str] | None = None, *, version: str = "0.5.1") -> None:
        self.dim = dim
        self.models = list(DEFAULT_MODELS if models is None else models)
        self.version = version
        self.fail_next_n = 0
        self.fail_status = 500
        self.drop_connection_next_n = 0
        self.delay_s = 0.0
        self.ragged_next_n = 0
        self.short_next_n = 0
        self.legacy_only = False
        self.requests: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("OllamaStub is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # -- helpers for tests ----------------------------------------------------------------------

    def has_model(self, name: str) -> bool:
        return name in self.models or f"{name}:latest" in self.models

    def embed_inputs(self) -> list[list[str]]:
        """The ``input`` lists of every POST /api/embed received, in order."""
        with self._lock:
            return [list(j["input"]) if isinstance(j["input"], list) else [j["input"]]
                    for m, p, j in self.requests if m == "POST" and p == "/api/embed" and isinstance(j, dict)]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _take(self, attr: str) -> bool:
        """Consume one unit of a ``*_next_n`` counter; True if this request is affected."""
        with self._lock:
            n = getattr(self, attr)
            if n > 0:
                setattr(self, attr, n - 1)
                return True
            return False

    def _log(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append((method, path, body))


def _make_handler(stub: OllamaStub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        json_type = "application/json; charset=utf-8"

        def do_HEAD(self) -> None:
            self._serve("HEAD")

        # -- dispatch ---------------------------------------------------------------------------

        def _serve(self, method: str) -> None:
            _, body, path = self._read_request()
            stub._log(method, path, body)
            if stub.delay_s and stub._stopping.wait(stub.delay_s):
                return
            if stub._take("drop_connection_next_n"):
                self._drop()
                return
            if stub._take("fail_next_n"):
                self._json(stub.fail_status, {"error": f"stub failure {stub.fail_status}"})
                return
            route = {
                ("GET", "/"): self._root,
                ("HEAD", "/"): self._root,
                ("GET", "/api/version"): lambda b: self._json(200, {"version": stub.version}),
                ("GET", "/api/tags"): self._tags,
                ("POST", "/api/embed"): self._embed,
                ("POST", "/api/embeddings"): self._embeddings,
            }.get((method, path))
            if route is None:
                self._text(404, "404 page not found")
            else:
                route(body)

        def _root(self, body: Any) -> None:
            self._text(200, "Ollama is running")

        def _tags(self, body: Any) -> None:
            models = [{"name": m, "model": m, "size": 1, "digest": "0" * 64,
                       "details": {"family": "bert", "format": "gguf"}} for m in stub.models]
            self._json(200, {"models": models})

        def _model_or_404(self, body: Any) -> str | None:
            model = body.get("model") if isinstance(body, dict) else None
            if not model:
                self._json(400, {"error": "model is required"})
                return None
            if not stub.has_model(model):
                self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return None
            return str(model)

        def _embed(self, body: Any) -> None:
            if stub.legacy_only:
                self._text(404, "404 page not found")
                return
            model = self._model_or_404(body)
            if model is None:
                return
            inputs = body.get("input")
            if isinstance(inputs, str):
                inputs = [inputs] if inputs else []
            if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
                self._json(400, {"error": "invalid input type"})
                return
            vectors = [stub_vector(model, t, stub.dim) for t in inputs]
            if vectors and stub._take("ragged_next_n"):
                vectors[-1] = vectors[-1][:-1]
            if vectors and stub._take("short_next_n"):
                vectors = vectors[:-1]
            self._json(200, {"model": model, "embeddings": vectors, "total_duration": 1000,
                             "load_duration": 10, "prompt_eval_count": sum(len(t.split()) + 2 for t in inputs)})

        def _embeddings(self, body: Any) -> None:
            model = self._model_or_404(body)
            if model is None:
                return
            prompt = body.get("prompt", "")
            self._json(200, {"embedding": stub_vector(model, prompt, stub.dim) if prompt else []})

        # -- writers ----------------------------------------------------------------------------

        def _text(self, status: int, text: str) -> None:
            self._send(status, text.encode("utf-8"), "text/plain; charset=utf-8")

        def _drop(self) -> None:
            """Promise a body, send half of it, then close the socket (a crash mid-response)."""
            payload = json.dumps({"embeddings": [[0.0] * 8]}).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    return Handler
