"""A real HTTP server on 127.0.0.1 speaking the OpenAI embeddings API and the Cohere/Jina rerank API, backed by a
real model: the bundled MiniLM embeds, and reranking scores each document by its cosine to the query.

Usage::

    with OpenAIStub() as stub:                      # or share one per session: loading MiniLM takes ~1 s
        settings = EmbedderSettings(kind="openai", openai_url=stub.url + "/v1", openai_model=stub.model)
        stub.max_batch = 4                          # quirks, settable at any time (see the class doc)
        ...

Routes: ``GET /v1/models``, ``POST /v1/embeddings``, ``POST /v1/rerank`` (and ``/rerank``, answering in TEI's
shape when ``tei_rerank`` is on). Vectors come back scaled to length 2 (not unit: clients must normalise) and, with
``shuffle``, out of order (clients must use ``index``).
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from desktop_memory.embed.local_onnx import LocalOnnxEmbedder
from tests.support.stub_http import JsonHandler, LoopbackStub, QuietServer

MODEL = "all-minilm-l6-v2"


class OpenAIStub(LoopbackStub):
    """Threaded server with run-time quirk switches and a request log.

    Switches (plain attributes, read on every request):
        models: model names served (all backed by the same MiniLM).
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get OpenAI's 401.
        max_batch: more inputs than this in one /v1/embeddings → 413 "batch size N > maximum allowed batch size M"
            (TEI's answer; its default is 32).
        max_body_bytes: a larger request body → 413 "Payload Too Large" in plain text (a proxy's answer).
        max_input_chars: a longer single input → 400 "…maximum context length…" (vLLM's answer).
        delay_s / rerank_delay_s: sleep before answering embeddings (and models) / rerank requests.
        fail_next_n / fail_status: the next n requests answer ``fail_status`` (default 500).
        shuffle: send embeddings in reverse order (each with its right ``index``).
        tei_rerank: as Hugging Face TEI: only /rerank (``/v1/rerank`` is a 404), taking ``{"query", "texts"}`` (422
            otherwise) and answering a bare list.
        no_models_route: GET /v1/models is a 404 (as on some servers).
        unlisted_models: names embedded like the served ones but not in GET /v1/models (a proxy's wildcard route).
    """

    thread_name = "OpenAIStub"

    def __init__(self, embedder: LocalOnnxEmbedder | None = None, models: list[str] | None = None) -> None:
        self.embedder = embedder or LocalOnnxEmbedder()
        self.models = list(models or [MODEL])
        self.api_key: str | None = None
        self.max_batch: int | None = None
        self.max_body_bytes: int | None = None
        self.max_input_chars: int | None = None
        self.delay_s = 0.0
        self.rerank_delay_s = 0.0
        self.fail_next_n = 0
        self.fail_status = 500
        self.shuffle = False
        self.tei_rerank = False
        self.no_models_route = False
        self.no_key_status = 401  # the answer to a request without a key when api_key is set (LiteLLM: 500)
        self.unlisted_models: list[str] = []
        self.requests: list[tuple[str, str, Any, dict[str, str]]] = []
        self._lock = threading.Lock()
        # one model call at a time, as a real server's queue does: requests a client gave up on cannot pile up
        # into dozens of concurrent MiniLM runs that slow every later answer (seen in a benchmark on a busy machine)
        self.model_lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def model(self) -> str:
        return self.models[0]

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("OpenAIStub is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    def _before_start(self) -> None:
        self.embedder.load()

    def reset(self) -> None:
        """Every quirk off and the log cleared (between tests sharing one server)."""
        self.models = [MODEL]
        self.api_key = self.max_batch = self.max_body_bytes = self.max_input_chars = None
        self.delay_s = self.rerank_delay_s = 0.0
        self.fail_next_n, self.fail_status = 0, 500
        self.shuffle = self.tei_rerank = self.no_models_route = False
        self.no_key_status = 401
        self.unlisted_models = []
        with self._lock:
            self.requests.clear()

    def embed_inputs(self) -> list[list[str]]:
        """The ``input`` lists of every POST /v1/embeddings that was answered 200 or refused, in order."""
        with self._lock:
            return [list(b["input"]) for m, p, b, _ in self.requests
                    if m == "POST" and p.endswith("/embeddings") and isinstance(b, dict)]

    def headers_seen(self) -> list[dict[str, str]]:
        with self._lock:
            return [h for *_, h in self.requests]

    def _take_failure(self) -> bool:
        with self._lock:
            if self.fail_next_n > 0:
                self.fail_next_n -= 1
                return True
            return False

    def _log(self, method: str, path: str, body: Any, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append((method, path, body, headers))


def _make_handler(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        # TCP_NODELAY, as uvicorn (vLLM, Infinity) and TEI set it: without it the body, written after the headers,
        # waits for the client's delayed ACK (~40 ms a request on Linux; measured: rerank protocol p50 44 ms → below)
        disable_nagle_algorithm = True

        def _serve(self, method: str) -> None:
            raw, body, path = self._read_request()
            stub._log(method, path, body, {k.lower(): v for k, v in self.headers.items()})
            rerank = path.endswith("/rerank")
            delay = stub.rerank_delay_s if rerank else stub.delay_s
            if delay and stub._stopping.wait(delay):
                return
            if stub.max_body_bytes is not None and len(raw) > stub.max_body_bytes:
                self._send(413, b"<html><body><h1>413 Request Entity Too Large</h1></body></html>", "text/html")
                return
            if stub.api_key and stub.no_key_status != 401 and "Authorization" not in self.headers:
                self._json(stub.no_key_status, {"error": {  # LiteLLM's proxy without a key
                    "message": "Authentication Error, No api key passed in.", "type": "auth_error",
                    "param": "None", "code": str(stub.no_key_status)}})
                return
            if stub.api_key and self.headers.get("Authorization") != f"Bearer {stub.api_key}":
                self._json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                           "code": "invalid_api_key"}})
                return
            if stub._take_failure():
                self._json(stub.fail_status, {"error": {"message": f"stub failure {stub.fail_status}"}})
                return
            if (method, path) == ("GET", "/v1/models") and not stub.no_models_route:
                self._json(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "stub"}
                                                            for m in stub.models]})
            elif (method, path) == ("POST", "/v1/embeddings"):
                self._embeddings(body)
            elif method == "POST" and path in (("/rerank",) if stub.tei_rerank else ("/v1/rerank", "/rerank")):
                self._rerank(body)
            else:
                self._json(404, {"error": {"message": f"Route {method} {path} not found", "type": "not_found"}})

        def _model_ok(self, body: dict[str, Any], required: bool = True) -> bool:
            model = body.get("model")
            if model is None and not required:
                return True
            if model not in stub.models and model not in stub.unlisted_models:
                self._json(404, {"error": {"message": f"The model `{model}` does not exist.",
                                           "type": "invalid_request_error", "code": "model_not_found"}})
                return False
            return True

        def _embeddings(self, body: Any) -> None:
            if not isinstance(body, dict) or not self._model_ok(body):
                return
            inputs = body.get("input")
            inputs = [inputs] if isinstance(inputs, str) else inputs
            if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
                self._json(400, {"error": {"message": "'input' must be a string or a list of strings"}})
                return
            if stub.max_batch is not None and len(inputs) > stub.max_batch:
                self._json(413, {"error": f"batch size {len(inputs)} > maximum allowed batch size {stub.max_batch}",
                                 "error_type": "Validation"})
                return
            too_long = [t for t in inputs if stub.max_input_chars is not None and len(t) > stub.max_input_chars]
            if too_long:
                self._json(400, {"object": "error", "message": "This model's maximum context length is 256 tokens. "
                                 f"However, you requested {len(too_long[0]) // 4} tokens.", "code": 400})
                return
            with stub.model_lock:
                t0 = time.perf_counter()
                vectors = 2.0 * stub.embedder.embed_documents(inputs)
                self.compute_ms = (time.perf_counter() - t0) * 1000
            data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            if stub.shuffle:
                data.reverse()
            tokens = sum(stub.embedder.count_tokens(inputs))
            self._json(200, {"object": "list", "data": data, "model": body["model"],
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

        def _rerank(self, body: Any) -> None:
            if not isinstance(body, dict):
                self._json(400, {"error": "expected a JSON object"})
                return
            key = "texts" if stub.tei_rerank else "documents"
            docs = body.get(key)
            if not isinstance(docs, list) or not isinstance(body.get("query"), str):
                self._json(422, {"error": f"Failed to deserialize the JSON body: missing field `{key}`",
                                 "error_type": "Validation"})
                return
            if not stub.tei_rerank and not self._model_ok(body, required=False):
                return
            with stub.model_lock:
                t0 = time.perf_counter()
                q = stub.embedder.embed_query(body["query"])
                scores = (stub.embedder.embed_documents([str(d) for d in docs]) @ q).tolist() if docs else []
                self.compute_ms = (time.perf_counter() - t0) * 1000
            order = sorted(range(len(docs)), key=lambda i: -scores[i])
            if stub.tei_rerank:
                self._json(200, [{"index": i, "score": scores[i]} for i in order])
                return
            top_n = int(body.get("top_n") or len(docs))
            self._json(200, {"model": body.get("model", stub.model), "usage": {"total_tokens": 0},
                             "results": [{"index": i, "relevance_score": scores[i]} for i in order[:top_n]]})

        compute_ms: float | None = None  # the model's own time for this request (X-Compute-Ms: the benchmark
        # subtracts it from the round trip to get the protocol's cost)

        def _extra_headers(self) -> dict[str, str]:
            ms, self.compute_ms = self.compute_ms, None
            return {} if ms is None else {"X-Compute-Ms": f"{ms:.3f}"}

    return Handler


def cosine_order(embedder: LocalOnnxEmbedder, query: str, docs: list[str]) -> list[int]:
    """The order the stub's reranker gives ``docs`` (for tests' expectations)."""
    scores = embedder.embed_documents(docs) @ embedder.embed_query(query)
    return sorted(range(len(docs)), key=lambda i: (-float(scores[i]), i))


__all__ = ["MODEL", "OpenAIStub", "cosine_order"]


def main() -> None:
    """``python -m tests.support.openai_server [--port N]``: serve the bundled MiniLM on loopback until Ctrl+C
    (the benchmark's loopback figures in docs/BENCHMARKS.md come from this)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    stub = OpenAIStub().start(args.port)
    print(f"serving {stub.model} at {stub.url}/v1 (embeddings, models, rerank)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()


if __name__ == "__main__":
    main()
