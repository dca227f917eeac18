"""model_servers.py: the probes the front ends ask the service for (Settings' Test connection, the CLI's
``embedder --test`` / ``rerank --test``), against real loopback servers (tests/support/)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.api_keys import get_key
from desktop_memory.config import EmbedderSettings, SearchSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import EmbedderError
from desktop_memory.model_servers import WARN, ModelServers, ServerAnswer, prefixes_to_fill
from desktop_memory.service import MemoryService
from tests.support.ollama_server import OllamaStub
from tests.support.openai_server import MODEL, OpenAIStub


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIStub]:
    with OpenAIStub() as s:
        yield s


@pytest.fixture()
def openai(openai_server: OpenAIStub) -> OpenAIStub:
    openai_server.reset()
    return openai_server


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_openai_lists_the_models_and_embeds_with_the_chosen_one(openai: OpenAIStub) -> None:
    openai.models = [MODEL, "other-model"]
    answer = ModelServers().test_openai(EmbedderSettings(kind="openai", openai_url=openai.url, openai_model=MODEL))
    assert isinstance(answer, ServerAnswer) and answer.models == [MODEL, "other-model"]
    assert not answer.status.startswith(WARN) and f"model {MODEL} (384-d)" in answer.status
    assert openai.embed_inputs(), "a word was embedded, not only the list read"


def test_openai_without_a_model_answers_with_the_list_and_warns_of_an_unlisted_one(openai: OpenAIStub) -> None:
    servers = ModelServers()
    none_chosen = servers.test_openai(EmbedderSettings(kind="openai", openai_url=openai.url, openai_model=""))
    assert none_chosen.status.startswith(WARN) and "no model chosen yet" in none_chosen.status
    assert none_chosen.models == [MODEL]
    openai.unlisted_models = ["wildcard-model"]  # a proxy answers for it without listing it
    unlisted = servers.test_openai(EmbedderSettings(kind="openai", openai_url=openai.url,
                                                    openai_model="wildcard-model"))
    assert unlisted.status.startswith(WARN) and "does not list the model wildcard-model" in unlisted.status


def test_openai_tries_a_typed_key_without_storing_it(openai: OpenAIStub) -> None:
    openai.api_key = "sk-typed-4242"
    es = EmbedderSettings(kind="openai", openai_url=openai.url, openai_model=MODEL)
    with pytest.raises(EmbedderError, match="needs an API key"):
        ModelServers().test_openai(es)
    assert ModelServers().test_openai(es, "sk-typed-4242").models == [MODEL]
    assert get_key("embedder") == ""  # tried, not stored


def test_reranker_ranks_a_test_pair(openai: OpenAIStub) -> None:
    answer = ModelServers().test_reranker(SearchSettings(rerank=True, rerank_url=openai.url, rerank_model=MODEL))
    assert "ranked a test pair as expected" in answer.status and answer.models == []


def test_ollama_lists_its_models_and_says_when_the_chosen_one_is_missing() -> None:
    with OllamaStub(models=["nomic-embed-text:latest"]) as stub:
        servers = ModelServers()
        ok = servers.test_ollama(EmbedderSettings(kind="ollama", ollama_url=stub.url,
                                                  ollama_model="nomic-embed-text"))
        assert ok.models == ["nomic-embed-text:latest"] and "0.5.1" in ok.status
        missing = servers.test_ollama(EmbedderSettings(kind="ollama", ollama_url=stub.url, ollama_model="absent"))
        assert missing.status.startswith("Server reachable, but:") and missing.models == ["nomic-embed-text:latest"]


def test_a_down_server_raises_one_embedder_error() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    servers = ModelServers()
    with pytest.raises(EmbedderError):
        servers.test_ollama(EmbedderSettings(kind="ollama", ollama_url=url))
    with pytest.raises(EmbedderError):
        servers.test_openai(EmbedderSettings(kind="openai", openai_url=url, openai_model=MODEL))
    with pytest.raises(EmbedderError):
        servers.try_embedder(EmbedderSettings(kind="openai", openai_url=url, openai_model=MODEL))


def test_try_embedder_says_what_answered(openai: OpenAIStub) -> None:
    said = ModelServers().try_embedder(EmbedderSettings(kind="openai", openai_url=openai.url, openai_model=MODEL))
    assert MODEL in said


def test_the_service_hands_out_the_probes(tmp_path: Path) -> None:
    svc = MemoryService(Settings(db_path=str(tmp_path / "m.db")), embedder=HashEmbedder(16))
    try:
        assert isinstance(svc.servers, ModelServers)
    finally:
        svc.close()


def test_prefixes_to_fill_clears_only_prefixes_filled_for_another_model() -> None:
    assert prefixes_to_fill("intfloat/e5-base-v2", "", "") == ("query: ", "passage: ")
    assert prefixes_to_fill("my-own-model", "query: ", "passage: ") == ("", "")  # e5's, filled in by us
    assert prefixes_to_fill("my-own-model", "mine: ", "") is None  # a person's own are kept
