"""OpenAICompatEmbedder against a real loopback server backed by the bundled MiniLM (tests.support.openai_server)."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator

import numpy as np
import pytest

from desktop_memory.api_keys import clear_key, get_key, key_file, key_status, set_key
from desktop_memory.config import EmbedderSettings, Settings, settings_path
from desktop_memory.embed import (
    Embedder,
    LocalOnnxEmbedder,
    OpenAICompatEmbedder,
    OpenAIModelMissing,
    known_prefixes,
    make_embedder,
)
from desktop_memory.embed.openai_http import normalise_base
from desktop_memory.errors import EmbedderError
from desktop_memory.settings_file import save_settings
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def local() -> LocalOnnxEmbedder:
    e = LocalOnnxEmbedder()
    e.load()
    return e


@pytest.fixture(scope="module")
def server(local: LocalOnnxEmbedder) -> Iterator[OpenAIStub]:
    with OpenAIStub(local) as s:
        yield s


@pytest.fixture()
def stub(server: OpenAIStub) -> OpenAIStub:
    server.reset()
    return server


def make(stub: OpenAIStub, *, batch_size: int = 4, timeout: float = 5.0, model: str = MODEL,
         **kw: object) -> OpenAICompatEmbedder:
    settings = EmbedderSettings(kind="openai", openai_url=stub.url + "/v1", openai_model=model,
                                batch_size=batch_size, openai_timeout_s=timeout)
    kw.setdefault("backoff_s", 0.01)
    return OpenAICompatEmbedder(settings, **kw)  # type: ignore[arg-type]


TEXTS = [f"passage number {i} about {w}" for i, w in enumerate(["cats", "rockets", "bread", "tax law", "rivers",
                                                                  "violins", "glaciers", "chess", "tea"])]


# -- the real model behind the real protocol -------------------------------------------------------


def test_vectors_equal_the_local_model_in_input_order(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    stub.shuffle = True  # the server answers in reverse order; the client must use each item's index
    e = make_embedder(EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL, batch_size=4))
    assert isinstance(e, OpenAICompatEmbedder) and isinstance(e, Embedder)
    assert e.model_id == f"openai:{MODEL}"
    out = e.embed_documents(TEXTS)
    assert out.shape == (9, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)  # the server sends length-2 vectors
    np.testing.assert_allclose(out, local.embed_documents(TEXTS), atol=1e-5)
    assert stub.embed_inputs()[1:] == [TEXTS[0:4], TEXTS[4:8], TEXTS[8:9]]  # [0] is the dimension probe
    np.testing.assert_allclose(e.embed_query("cats"), local.embed_query("cats"), atol=1e-5)


def test_bare_host_gets_v1_and_lazy_construction(stub: OpenAIStub) -> None:
    assert normalise_base("http://localhost:1234/") == "http://localhost:1234/v1"
    assert normalise_base("http://localhost:11434/v1") == "http://localhost:11434/v1"
    assert normalise_base("http://proxy/openai/v1/") == "http://proxy/openai/v1"
    e = make_embedder(EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL))
    assert stub.requests == []  # constructing contacts nothing
    assert e.dim == 384
    assert [p for _, p, _, _ in stub.requests] == ["/v1/embeddings"]


def test_prefixes_are_sent_and_part_of_the_model_id(stub: OpenAIStub) -> None:
    settings = EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL,
                                query_prefix="query: ", document_prefix="passage: ")
    e = OpenAICompatEmbedder(settings)
    e.embed_documents(["a doc"])
    e.embed_query("a question")
    sent = stub.embed_inputs()
    assert ["passage: a doc"] in sent and ["query: a question"] in sent
    assert e.model_id == f"openai:{MODEL} (document prefix 'passage: ')"


def test_known_models_prefill_prefixes() -> None:
    assert known_prefixes("intfloat/e5-base-v2") == ("query: ", "passage: ")
    assert known_prefixes("multilingual-e5-small-Q8_0.gguf") == ("query: ", "passage: ")
    assert known_prefixes("nomic-embed-text:latest") == ("search_query: ", "search_document: ")
    assert known_prefixes("nomic-ai/nomic-embed-text-v1.5") == ("search_query: ", "search_document: ")
    assert known_prefixes("BAAI/bge-small-en-v1.5")[0].startswith("Represent this sentence")  # type: ignore[index]
    assert known_prefixes("intfloat/e5-mistral-7b-instruct") == ("", "")
    assert known_prefixes("all-MiniLM-L6-v2") is None and known_prefixes("") is None


# -- quirks of real servers -----------------------------------------------------------------------


def test_batch_limit_413_halves_and_remembers(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    stub.max_batch = 3  # TEI's "batch size 8 > maximum allowed batch size 3"
    e = make(stub, batch_size=8)
    out = e.embed_documents(TEXTS)
    np.testing.assert_allclose(out, local.embed_documents(TEXTS), atol=1e-5)
    assert e.batch_limit == 3  # read from the server's message
    sizes = [len(b) for b in stub.embed_inputs()]
    assert sizes[0] == 8 and all(s <= 3 for s in sizes[1:])  # one refusal, then it fits
    stub.requests.clear()
    e.embed_documents(TEXTS)
    assert [len(b) for b in stub.embed_inputs()] == [3, 3, 3]  # remembered: no refusal on the next run


def test_oversized_body_413_splits_down(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    e = make(stub, batch_size=8)
    _ = e.dim
    stub.max_body_bytes = 400  # a proxy in front of the server: plain-text 413 on the body size
    texts = ["x" * 120 + str(i) for i in range(8)]
    out = e.embed_documents(texts)
    np.testing.assert_allclose(out, local.embed_documents(texts), atol=1e-5)
    assert e.batch_limit < 8


def test_single_passage_too_large_says_what_to_do(stub: OpenAIStub) -> None:
    e = make(stub, batch_size=4)
    _ = e.dim
    stub.max_input_chars = 50  # vLLM's "maximum context length" 400
    with pytest.raises(EmbedderError, match=r"even a single passage.*too large") as info:
        e.embed_documents(["short", "y" * 80])
    assert "auto-truncate" in str(info.value)


def test_401_without_key_then_works_with_it(stub: OpenAIStub) -> None:
    stub.api_key = "sk-test-123456"
    with pytest.raises(EmbedderError, match=r"needs an API key \(HTTP 401\).*api-key set embedder"):
        make(stub).embed_query("hello")
    with pytest.raises(EmbedderError, match="refused the API key") as info:
        make(stub, api_key="sk-wrong-999999").embed_query("hello")
    assert "sk-wrong-999999" not in str(info.value)
    e = make(stub, api_key="sk-test-123456")
    assert e.embed_query("hello").shape == (384,)
    assert stub.headers_seen()[-1]["authorization"] == "Bearer sk-test-123456"


def test_stored_key_is_used_and_kept_out_of_settings(stub: OpenAIStub) -> None:
    stub.api_key = "sk-stored-abcdef"
    where = set_key("embedder", "sk-stored-abcdef")
    assert str(key_file()) in where
    assert stat.S_IMODE(os.stat(key_file()).st_mode) == 0o600
    assert key_status("embedder").startswith("set (") and "sk-stored" not in key_status("embedder")
    s = Settings(embedder=EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL))
    save_settings(s)
    assert "sk-stored" not in settings_path().read_text()
    e = make_embedder(s.embedder)
    assert "sk-stored" not in repr(e) and "sk-stored" not in repr(e.server)  # type: ignore[attr-defined]
    assert e.embed_query("hello").shape == (384,)
    clear_key("embedder")
    assert get_key("embedder") == "" and not key_file().exists() and key_status("embedder") == "not set"


def test_environment_key_wins(stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    stub.api_key = "sk-env-777777"
    set_key("embedder", "sk-file-000000")
    monkeypatch.setenv("DESKTOP_MEMORY_EMBEDDER_API_KEY", "sk-env-777777")
    assert make(stub, batch_size=2).embed_query("x").shape == (384,)
    assert "environment variable" in key_status("embedder")


def test_model_not_found_lists_the_servers_models(stub: OpenAIStub) -> None:
    stub.models = [MODEL, "bge-small-en-v1.5"]
    e = make(stub, model="nomic-embed-text")
    with pytest.raises(OpenAIModelMissing, match='no model "nomic-embed-text"'):
        e.embed_query("x")
    with pytest.raises(OpenAIModelMissing, match=f"Models on this server: {MODEL}, bge-small-en-v1.5"):
        e.check_connection()


def test_check_connection_lists_models(stub: OpenAIStub) -> None:
    e = make(stub)
    line = e.check_connection()
    assert line.startswith("Connected:") and f"model {MODEL} (384-d)" in line and "lists 1 model" in line
    assert e.list_models() == [MODEL]
    stub.no_models_route = True  # TEI-like: no /v1/models, the probe still proves the connection
    assert "(384-d)" in make(stub).check_connection()


def test_slow_answer_times_out_with_advice(stub: OpenAIStub) -> None:
    stub.delay_s = 1.0
    e = make(stub, timeout=0.2, retries=1)
    with pytest.raises(EmbedderError, match=r"did not answer within 0.2 s \(2 attempts\).*raise the timeout"):
        e.embed_query("x")


def test_transient_500s_are_retried(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    stub.fail_next_n = 2
    e = make(stub, retries=3)
    np.testing.assert_allclose(e.embed_query("cats"), local.embed_query("cats"), atol=1e-5)
    stub.fail_next_n, stub.fail_status = 5, 503
    with pytest.raises(EmbedderError, match="HTTP 503 after 2 attempts"):
        make(stub, retries=1).embed_query("cats")


def test_server_down_and_wrong_route() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    e = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=f"http://127.0.0.1:{port}",
                                              openai_model=MODEL), retries=1, backoff_s=0.01)
    with pytest.raises(EmbedderError, match=r"Cannot reach the embedding server .*is it running"):
        e.embed_query("x")
    with pytest.raises(EmbedderError, match="not an http:// address"):
        OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url="localhost:8080", openai_model=MODEL)
                             ).embed_query("x")
    with pytest.raises(EmbedderError, match="No model is set"):
        OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_model="")).embed_query("x")


def test_wrong_path_says_v1(stub: OpenAIStub) -> None:
    e = OpenAICompatEmbedder(EmbedderSettings(kind="openai", openai_url=stub.url + "/api", openai_model=MODEL))
    with pytest.raises(EmbedderError, match=r"no such route.*under /v1"):
        e.embed_query("x")


def test_dimension_mismatch_with_the_index(stub: OpenAIStub) -> None:
    e = make_embedder(EmbedderSettings(kind="openai", openai_url=stub.url, openai_model=MODEL), expected_dim=768)
    with pytest.raises(EmbedderError, match="384-dimensional vectors but this index holds 768"):
        e.embed_query("x")


def test_a_key_saved_later_is_picked_up_by_a_running_embedder(stub: OpenAIStub) -> None:
    e = make(stub)
    e.embed_query("before any key")  # a client exists, without a key
    stub.api_key = "sk-new-key-2468"
    with pytest.raises(EmbedderError, match="needs an API key"):
        e.embed_query("x")
    set_key("embedder", "sk-new-key-2468")  # e.g. Save key in Settings, same process
    assert e.embed_query("x").shape == (384,)


def test_a_server_answering_500_without_a_key_gets_the_key_hint(stub: OpenAIStub) -> None:
    """Issue 33 newcomer §4: LiteLLM's proxy answers a request without a key with HTTP 500 "Authentication Error,
    No api key passed in."; that is said as a missing key, at once (no retries), with the command that sets it. A
    plain 500 without a key, after its retries, ends with the hint too; with a key set, neither."""
    stub.api_key, stub.no_key_status = "sk-litellm-1357", 500
    with pytest.raises(EmbedderError, match=r"HTTP 500: Authentication Error, No api key passed in.*needs an API "
                                            r"key.*api-key set embedder"):
        make(stub, retries=3).embed_query("x")
    assert len(stub.requests) == 1, "a missing key is not retried"
    stub.reset()
    stub.fail_next_n, stub.fail_status = 5, 500
    with pytest.raises(EmbedderError, match=r"HTTP 500 after 2 attempts.*If it needs an API key \(some servers "
                                            r"answer 500 without one\).*api-key set embedder"):
        make(stub, retries=1).embed_query("x")
    stub.fail_next_n = 5
    set_key("embedder", "sk-some-key-9999")
    with pytest.raises(EmbedderError) as err:
        make(stub, retries=1).embed_query("x")
    assert "api-key set" not in str(err.value)
