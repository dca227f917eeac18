"""Issue 30 item 6: a model server's answer is capped, in size and in count, with a clear error naming the server.

A real loopback HTTP server (tests/support/stub_http.py's LoopbackStub and JsonHandler, as the Ollama and OpenAI
stubs) answers every route with what a broken or hostile server might send: a 300 MiB body streamed without a
length (the client must stop reading at 64 MiB, and its memory must not follow the body), a Content-Length of
600 MiB (refused before reading), 10,001 models, more embeddings or rerank results than asked, 70,000-dimensional
vectors. The 600 MB body of the issue took the CLI to 1.9 GB."""

from __future__ import annotations

import gc
import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from desktop_memory.config import EmbedderSettings
from desktop_memory.embed import OllamaEmbedder, OpenAICompatEmbedder
from desktop_memory.errors import EmbedderError
from desktop_memory.retrieve.rerank import HttpReranker
from tests.support.stub_http import JsonHandler, LoopbackStub, QuietServer

MIB = 1024 * 1024
CAP_MIB = 64  # embed/http_retry.MAX_BODY_BYTES


class FloodStub(LoopbackStub):
    """Answers every request as ``mode`` says:

    - "stream": 200, chunked, no length: ``{"data": [[0.1, 0.1, …`` for ``stream_mib`` MiB (never closed);
    - "declared": 200 with Content-Length ``declared_mib`` MiB, then a trickle of the body;
    - "trickle": 200 with a length, then one byte every 0.2 s (for at most 15 s, then the connection closes);
    - "json": ``status`` (200) with ``payload(path, body)`` as JSON.
    """

    thread_name = "FloodStub"

    def __init__(self) -> None:
        self.mode = "json"
        self.stream_mib = 300
        self.declared_mib = 600
        self.payload: Any = lambda path, body: {}
        self.status = 200
        self.sent_bytes = 0
        self._stopping = threading.Event()
        self._server: QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(JsonHandler):
            def _serve(self, method: str) -> None:
                _, body, path = self._read_request()
                if stub.mode == "json":
                    self._json(stub.status, stub.payload(path, body))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if stub.mode == "declared":
                    self.send_header("Content-Length", str(stub.declared_mib * MIB))
                    self.end_headers()
                    self.wfile.write(b'{"data": [[' + b"0.1, " * 1000)
                    return
                if stub.mode == "trickle":
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(75):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        if stub._stopping.wait(0.2):
                            return
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                piece = b'{"embeddings": [[' + b"0.123456789, " * (MIB // 13)
                for _ in range(stub.stream_mib):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))  # stops when the client hangs up
                    stub.sent_bytes += len(piece)
                    piece = b"0.123456789, " * (MIB // 13)

        return Handler


@pytest.fixture(scope="module")
def server() -> Iterator[FloodStub]:
    with FloodStub() as s:
        yield s


@pytest.fixture()
def flood(server: FloodStub) -> FloodStub:
    server.mode, server.sent_bytes, server.status = "json", 0, 200
    return server


def _openai(flood: FloodStub) -> OpenAICompatEmbedder:
    return OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=flood.url + "/v1", openai_model="m"),
                                retries=0)


def _ollama(flood: FloodStub) -> OllamaEmbedder:
    return OllamaEmbedder(EmbedderSettings(kind="ollama", ollama_url=flood.url, ollama_model="m"), retries=0)


def _peak_mib(fn: Any) -> tuple[Exception, float]:
    """The exception ``fn`` raised and the most memory Python allocated meanwhile, in MiB."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
    except Exception as exc:
        caught = exc
    else:
        raise AssertionError("no error raised")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return caught, peak / MIB


@pytest.mark.parametrize("make, who", [(_openai, "The embedding server at"), (_ollama, "Ollama at")])
def test_an_endless_answer_is_read_only_up_to_the_cap(flood: FloodStub, make: Any, who: str) -> None:
    flood.mode = "stream"
    embedder = make(flood)
    exc, peak = _peak_mib(lambda: embedder.embed_query("x"))
    assert isinstance(exc, EmbedderError)
    assert who in str(exc) and flood.url in str(exc) and "larger than the 64 MiB accepted" in str(exc)
    assert peak < 1.6 * CAP_MIB, f"{peak:.0f} MiB allocated for a capped read"  # not 300 MiB
    assert flood.sent_bytes < 200 * MIB  # the client hung up; the server did not get to send it all


@pytest.mark.parametrize("make, who", [(_openai, "The embedding server at"), (_ollama, "Ollama at")])
def test_a_declared_length_past_the_cap_is_refused_before_reading(flood: FloodStub, make: Any, who: str) -> None:
    flood.mode = "declared"
    exc, peak = _peak_mib(lambda: make(flood).embed_query("x"))
    assert isinstance(exc, EmbedderError) and who in str(exc) and "an answer of 600 MiB" in str(exc)
    assert peak < 16


def test_the_reranker_is_capped_too_and_search_keeps_its_order(flood: FloodStub) -> None:
    flood.mode = "stream"
    reranker = HttpReranker(flood.url + "/v1/rerank", timeout_s=30)
    with pytest.raises(EmbedderError, match=r"The reranker at .*larger than the 64 MiB accepted"):
        reranker.rerank("q", ["a", "b"])
    flood.mode = "json"
    flood.payload = lambda path, body: {"results": [{"index": i % 2, "relevance_score": 1.0 / (i + 1)}
                                                    for i in range(50_000)]}
    with pytest.raises(EmbedderError, match="sent 50,000 results for 2 passages"):
        reranker.rerank("q", ["a", "b"])


def test_model_lists_are_capped(flood: FloodStub) -> None:
    flood.payload = lambda path, body: ({"models": [{"name": f"m{i}"} for i in range(10_001)]}
                                        if path == "/api/tags" else
                                        {"data": [{"id": f"m{i}" + "x" * 1000} for i in range(10_001)]})
    with pytest.raises(EmbedderError, match=r"The embedding server at .* listed 10,001 models"):
        _openai(flood).list_models()
    with pytest.raises(EmbedderError, match=r"Ollama at .* listed 10,001 models"):
        _ollama(flood).list_models()
    flood.payload = lambda path, body: {"data": [{"id": "m" * 100_000}]}
    assert [len(n) for n in _openai(flood).list_models()] == [500]  # one name cannot fill a window


def test_the_count_and_width_of_embeddings_must_be_what_was_asked(flood: FloodStub) -> None:
    flood.payload = lambda path, body: ({"embeddings": [[0.1, 0.2]] * 3} if path == "/api/embed" else
                                        {"data": [{"index": i, "embedding": [0.1, 0.2]} for i in range(3)]})
    with pytest.raises(EmbedderError, match=r"Ollama model m at .* returned 3 embeddings for 1 texts"):
        _ollama(flood).embed_query("x")
    with pytest.raises(EmbedderError, match=r"Model m at .* returned 3 embeddings for 1 texts"):
        _openai(flood).embed_query("x")
    wide = [0.5] * 70_000
    flood.payload = lambda path, body: ({"embeddings": [wide]} if path == "/api/embed" else
                                        {"data": [{"index": 0, "embedding": wide}]})
    for make in (_ollama, _openai):
        with pytest.raises(EmbedderError, match="returned 70,000-dimensional vectors, more than the 65,536"):
            make(flood).embed_query("x")


def test_an_ordinary_answer_still_arrives_whole(flood: FloodStub) -> None:
    """The bounded read changes nothing for a normal answer (gzip included: decoded once, not twice)."""
    rows = [[float(i + 1), 2.0, 3.0] for i in range(4)]
    flood.payload = lambda path, body: {"data": [{"index": i, "embedding": r} for i, r in enumerate(rows)]}
    got = _openai(flood).embed_documents(["a", "b", "c", "d"])
    assert got.shape == (4, 3) and json.dumps(got.round(3).tolist())


def test_a_key_the_server_echoes_in_another_case_is_masked(flood: FloodStub) -> None:
    key = "sk-leak-0123456789abcdef"
    flood.status = 401
    flood.payload = lambda path, body: {"error": {"message": f"Incorrect API key provided: {key.upper()}."}}
    embedder = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=flood.url, openai_model="m"),
                                    api_key=key, retries=0)
    with pytest.raises(EmbedderError, match="refused the API key") as caught:
        embedder.embed_query("x")
    assert key not in str(caught.value).lower() and "•••" in str(caught.value)


def test_an_answer_trickling_in_is_given_up_at_twice_the_time_limit(flood: FloodStub) -> None:
    flood.mode = "trickle"
    embedder = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=flood.url, openai_model="m",
                                                     openai_timeout_s=1.0), retries=0)
    t0 = time.perf_counter()
    with pytest.raises(EmbedderError, match=r"The embedding server at .* did not answer within 1 s"):
        embedder.embed_query("x")
    assert time.perf_counter() - t0 < 5  # not the 15 s the trickle lasts (each byte came within the 1 s limit)
