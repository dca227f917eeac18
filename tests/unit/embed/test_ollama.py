"""OllamaEmbedder against a real local HTTP server (tests.support.ollama_server.OllamaStub)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.config import EmbedderSettings
from desktop_memory.embed import Embedder, OllamaEmbedder, OllamaModelMissing, make_embedder
from desktop_memory.errors import EmbedderError
from tests.support.ollama_server import OllamaStub, stub_vector

MODEL = "nomic-embed-text"


@pytest.fixture()
def stub() -> Iterator[OllamaStub]:
    with OllamaStub(dim=24) as s:
        yield s


def make(url: str, *, batch_size: int = 3, timeout: float = 5.0, model: str = MODEL, **kw: object) -> OllamaEmbedder:
    settings = EmbedderSettings(
        kind="ollama", ollama_url=url, ollama_model=model, batch_size=batch_size, ollama_timeout_s=timeout
    )
    kw.setdefault("backoff_s", 0.01)
    return OllamaEmbedder(settings, **kw)  # type: ignore[arg-type]


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def expected(text: str, dim: int = 24, model: str = MODEL) -> np.ndarray:
    v = np.asarray(stub_vector(model, text, dim), dtype=np.float32)
    return v / np.linalg.norm(v)


# -- happy path ----------------------------------------------------------------------------------


def test_identity_and_lazy_construction(stub: OllamaStub) -> None:
    e = make_embedder(EmbedderSettings(kind="ollama", ollama_url=stub.url, ollama_model="nomic-embed-text:latest"))
    assert isinstance(e, OllamaEmbedder)
    assert e.model_id == "ollama:nomic-embed-text"  # ":latest" is the same model
    assert stub.requests == []  # constructing contacts nothing
    assert e.dim == 24
    assert [p for _, p, _ in stub.requests] == ["/api/embed"]  # one probe, then cached
    assert e.dim == 24 and len(stub.requests) == 1
    # (on Python < 3.12, isinstance against the runtime-checkable protocol reads .dim, i.e. probes)
    assert isinstance(e, Embedder) and len(stub.requests) == 1


def test_batches_order_and_normalisation(stub: OllamaStub) -> None:
    e = make(stub.url, batch_size=3)
    texts = [f"text number {i}" for i in range(7)] + [""]
    out = e.embed_documents(texts)
    assert out.shape == (8, 24) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)  # the stub sends length-3 vectors
    for row, text in zip(out, texts):
        np.testing.assert_allclose(row, expected(text), atol=1e-6)
    assert stub.embed_inputs() == [texts[0:3], texts[3:6], texts[6:8]]
    body = stub.requests[0][2]
    assert body["model"] == MODEL and body["truncate"] is True


def test_query_and_document_prefixes(stub: OllamaStub) -> None:
    settings = EmbedderSettings(
        kind="ollama", ollama_url=stub.url, ollama_model=MODEL,
        query_prefix="search_query: ", document_prefix="search_document: ",
    )
    e = OllamaEmbedder(settings)
    np.testing.assert_allclose(e.embed_query("cats"), expected("search_query: cats"), atol=1e-6)
    e.embed_documents(["dogs"])
    assert stub.embed_inputs() == [["search_query: cats"], ["search_document: dogs"]]
    # the document prefix shapes the stored vectors, so it is part of the identity the index records
    plain = OllamaEmbedder(EmbedderSettings(kind="ollama", ollama_url=stub.url, ollama_model=MODEL,
                                            query_prefix="search_query: "))
    assert e.model_id != plain.model_id and e.model_id.startswith(plain.model_id) and "search_document: " in e.model_id


def test_empty_input_needs_no_request_once_dim_known(stub: OllamaStub) -> None:
    e = make(stub.url)
    assert e.embed_documents([]).shape == (0, 24)  # probes the dim once
    n = len(stub.requests)
    assert e.embed_documents([]).shape == (0, 24) and len(stub.requests) == n


def test_list_models_and_check_connection(stub: OllamaStub) -> None:
    e = make(stub.url)
    assert e.list_models() == ["nomic-embed-text:latest", "all-minilm:latest"]
    assert e.check_connection() == "Connected: Ollama 0.5.1, model nomic-embed-text (24-d)"
    e.load()  # an indexing run learns the dim
    stub.dim = 32  # the model behind the name was swapped: Test connection reports what the server does now
    assert "(32-d)" in e.check_connection()
    assert e.dim == 24  # ...but the cached dim stays, so indexing refuses to mix the two
    with pytest.raises(EmbedderError, match="now returns 32-dimensional vectors instead of 24"):
        e.embed_query("x")


def test_something_else_on_the_port(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with pytest.raises(EmbedderError, match="is it Ollama"):
            make(f"http://127.0.0.1:{server.server_address[1]}").check_connection()
    finally:
        server.shutdown()
        server.server_close()


def test_count_tokens_is_an_estimate(stub: OllamaStub) -> None:
    e = make(stub.url)
    assert e.count_tokens(["abcd" * 10, ""]) == [10, 1]
    assert stub.requests == []


def test_legacy_server_without_api_embed(stub: OllamaStub) -> None:
    stub.legacy_only = True
    e = make(stub.url)
    out = e.embed_documents(["one", "two"])
    np.testing.assert_allclose(out, np.vstack([expected("one"), expected("two")]), atol=1e-6)
    paths = [p for _, p, _ in stub.requests]
    assert paths == ["/api/embed", "/api/embeddings", "/api/embeddings"]


# -- failures ------------------------------------------------------------------------------------


def test_server_down_names_the_url() -> None:
    url = closed_port_url()
    e = make(url)
    with pytest.raises(EmbedderError) as info:
        e.embed_documents(["x"])
    msg = str(info.value)
    assert url in msg and "ollama serve" in msg and "4 attempts" in msg
    with pytest.raises(EmbedderError, match="Cannot reach Ollama"):
        e.check_connection()


def test_model_not_pulled(stub: OllamaStub) -> None:
    e = make(stub.url, model="mxbai-embed-large")
    with pytest.raises(OllamaModelMissing) as info:
        e.embed_query("x")
    assert "ollama pull mxbai-embed-large" in str(info.value)
    assert len(stub.requests) == 1  # 4xx is final: no retries
    with pytest.raises(OllamaModelMissing, match="nomic-embed-text:latest"):  # lists what is there
        e.check_connection()


def test_500_then_success_is_retried_with_backoff(stub: OllamaStub) -> None:
    waits: list[float] = []
    e = make(stub.url, backoff_s=0.5, sleep=waits.append)
    stub.fail_next_n = 2
    out = e.embed_documents(["a", "b"])
    np.testing.assert_allclose(out[1], expected("b"), atol=1e-6)
    assert stub.embed_inputs() == [["a", "b"]] * 3  # the whole batch is re-sent
    assert waits == [0.5, 1.0]


def test_500_forever_gives_up(stub: OllamaStub) -> None:
    waits: list[float] = []
    e = make(stub.url, backoff_s=0.5, sleep=waits.append)
    stub.fail_next_n = 100
    with pytest.raises(EmbedderError, match="HTTP 500 after 4 attempts") as info:
        e.embed_documents(["a"])
    assert "stub failure 500" in str(info.value)
    assert waits == [0.5, 1.0, 2.0] and len(stub.requests) == 4


def test_other_4xx_is_not_retried(stub: OllamaStub) -> None:
    stub.fail_next_n, stub.fail_status = 5, 400
    with pytest.raises(EmbedderError, match="HTTP 400"):
        make(stub.url).embed_query("x")
    assert len(stub.requests) == 1


def test_slow_server_times_out(stub: OllamaStub) -> None:
    stub.delay_s = 2.0
    e = make(stub.url, timeout=0.2, retries=1)
    t0 = time.monotonic()
    with pytest.raises(EmbedderError, match=r"did not answer within 0.2 s") as info:
        e.embed_query("x")
    assert time.monotonic() - t0 < 1.5
    assert "timeout" in str(info.value).lower() and len(stub.requests) == 2


def test_dropped_connection_mid_batch_is_retried(stub: OllamaStub) -> None:
    e = make(stub.url, batch_size=2)
    stub.drop_connection_next_n = 1
    out = e.embed_documents(["a", "b", "c"])
    np.testing.assert_allclose(out, np.vstack([expected(t) for t in "abc"]), atol=1e-6)
    assert stub.embed_inputs() == [["a", "b"], ["a", "b"], ["c"]]


def test_dropped_connection_forever_is_an_error(stub: OllamaStub) -> None:
    stub.drop_connection_next_n = 100
    with pytest.raises(EmbedderError, match="closed the connection"):
        make(stub.url).embed_query("x")


def test_failure_in_a_later_batch_returns_nothing_partial(stub: OllamaStub) -> None:
    e = make(stub.url, batch_size=2, retries=0)
    e.load()
    stub.clear()
    stub.models = []  # the model vanished between batches (ollama rm)
    with pytest.raises(OllamaModelMissing):
        e.embed_documents(["a", "b", "c"])


def test_wrong_dimension_for_the_index(stub: OllamaStub) -> None:
    e = make(stub.url, expected_dim=384)
    with pytest.raises(EmbedderError) as info:
        e.embed_documents(["x"])
    msg = str(info.value)
    assert "returns 24-dimensional vectors but this index holds 384-dimensional ones" in msg
    with pytest.raises(EmbedderError, match="384-dimensional"):
        e.check_connection()
    e.expected_dim = 24  # settable later (e.g. once the index is opened)
    assert e.embed_documents(["x"]).shape == (1, 24)


def test_dimension_changing_between_calls(stub: OllamaStub) -> None:
    e = make(stub.url)
    assert e.dim == 24
    stub.dim = 16
    with pytest.raises(EmbedderError, match="now returns 16-dimensional"):
        e.embed_query("x")


def test_inconsistent_dims_in_a_batch(stub: OllamaStub) -> None:
    stub.ragged_next_n = 1
    with pytest.raises(EmbedderError, match="different lengths"):
        make(stub.url).embed_documents(["a", "b"])


def test_wrong_number_of_embeddings(stub: OllamaStub) -> None:
    stub.short_next_n = 1
    with pytest.raises(EmbedderError, match="returned 1 embeddings for 2 texts"):
        make(stub.url).embed_documents(["a", "b"])


@pytest.mark.parametrize("url", ["localhost:11434", "ftp://example.org", ""])
def test_bad_url_is_a_user_error(url: str) -> None:
    with pytest.raises(EmbedderError, match="not an http:// address"):
        make(url).embed_query("x")


def test_unknown_kind() -> None:
    with pytest.raises(EmbedderError, match="Unknown embedder"):
        make_embedder(EmbedderSettings(kind="cohere"))  # type: ignore[arg-type]  # ("openai" is a kind now)


def test_proxy_environment_is_ignored(stub: OllamaStub, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = closed_port_url()
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, dead)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert make(stub.url).embed_query("x").shape == (24,)
