"""The rerank stage: the pure reorder, the HTTP client against a real loopback reranker (MiniLM cosine), and the
search path through the service (order, badges, strength, fallback on a slow, down or refusing server)."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_memory.api_keys import set_key
from desktop_memory.config import SearchSettings, Settings
from desktop_memory.embed import LocalOnnxEmbedder
from desktop_memory.errors import RerankError
from desktop_memory.models import LaneHit
from desktop_memory.retrieve.rerank import HttpReranker, reorder, rerank_endpoint
from desktop_memory.service import MemoryService
from tests.support.openai_server import MODEL, OpenAIStub, cosine_order

TOPICS = {
    "cats.md": "# Cats\n\nCats sleep most of the day and hunt small rodents at night.",
    "dogs.md": "# Dogs\n\nDogs are loyal pets that need daily walks and training.",
    "rockets.md": "# Rockets\n\nA rocket engine burns propellant to produce thrust in space.",
    "bread.md": "# Bread\n\nSourdough bread rises slowly with wild yeast and a long fermentation.",
    "tea.md": "# Tea\n\nGreen tea is steeped briefly in water below boiling point.",
    "pets.md": "# Pet care\n\nPets such as cats and dogs need vaccinations and a vet visit every year.",
    "kittens.md": "# Kittens\n\nA kitten is a young cat; kittens play, pounce and sleep a lot.",
    "rivers.md": "# Rivers\n\nRivers carry sediment from mountains to the sea and shape valleys.",
}
QUERY = "how much do cats sleep"


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


@pytest.fixture()
def svc(tmp_path: Path, local: LocalOnnxEmbedder) -> Iterator[MemoryService]:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in TOPICS.items():
        (folder / name).write_text(text, encoding="utf-8")
    service = MemoryService(Settings(), db_path=tmp_path / "m.db", embedder=local)
    service.index_paths([folder])
    yield service
    service.close()


def with_rerank(svc: MemoryService, stub_url: str, **kw: object) -> None:
    kw = {"rerank_model": MODEL, **kw}
    search = dataclasses.replace(svc.settings.search, rerank=True, rerank_url=stub_url, **kw)  # type: ignore[arg-type]
    svc.apply_settings(dataclasses.replace(svc.settings, search=search))


# -- the pure stage -------------------------------------------------------------------------------


def test_reorder_replaces_the_order_of_scored_passages_only() -> None:
    fused = [(10, 0.9, {"fts": LaneHit(1, 5.0)}), (11, 0.8, {}), (12, 0.7, {}), (13, 0.6, {}), (14, 0.5, {})]
    out = reorder(fused, [(2, 0.9), (0, 0.1)], depth=3)  # scored: positions 2 and 0; 1 unscored; 13, 14 below
    assert [cid for cid, _, _ in out] == [12, 10, 11, 13, 14]
    assert out[0][2]["rerank"] == LaneHit(1, 0.9) and out[1][2]["rerank"] == LaneHit(2, 0.1)
    assert out[1][2]["fts"] == LaneHit(1, 5.0) and "rerank" not in out[2][2]
    assert "rerank" not in fused[0][2]  # the input is untouched
    tied = reorder(fused, [(1, 0.5), (0, 0.5)], depth=2)
    assert [cid for cid, _, _ in tied][:2] == [10, 11]  # equal scores keep the fused order


def test_endpoint_forms() -> None:
    assert rerank_endpoint("http://localhost:8012") == "http://localhost:8012/v1/rerank"
    assert rerank_endpoint("http://localhost:8012/v1/") == "http://localhost:8012/v1/rerank"
    assert rerank_endpoint("http://localhost:8080/rerank") == "http://localhost:8080/rerank"


# -- the client against the real reranker ---------------------------------------------------------


def test_client_ranks_by_the_servers_scores(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    docs = list(TOPICS.values())
    r = HttpReranker(stub.url, MODEL)
    order = r.rerank(QUERY, docs)
    assert [i for i, _ in order] == cosine_order(local, QUERY, docs)
    body = stub.requests[-1][2]
    assert body == {"model": MODEL, "query": QUERY, "documents": docs, "top_n": len(docs)}
    assert "as expected" in r.check_connection()


def test_client_speaks_tei_too(stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    stub.tei_rerank = True  # 422 "missing field `texts`" to the Cohere shape, then TEI's bare list
    docs = list(TOPICS.values())
    r = HttpReranker(stub.url + "/rerank")
    assert [i for i, _ in r.rerank(QUERY, docs)] == cosine_order(local, QUERY, docs)
    assert r.rerank(QUERY, docs[:2])  # remembered: straight to the TEI shape
    assert [("texts" in b) for _, _, b, _ in stub.requests] == [False, True, True]


def test_client_errors_are_clear(stub: OpenAIStub) -> None:
    with pytest.raises(RerankError, match='no model "bge-reranker"'):
        HttpReranker(stub.url, "bge-reranker").rerank("q", ["a", "b"])
    stub.api_key = "rk-secret-4242"
    with pytest.raises(RerankError, match=r"needs an API key.*api-key set rerank"):
        HttpReranker(stub.url, MODEL).rerank("q", ["a", "b"])
    set_key("rerank", "rk-secret-4242")
    assert len(HttpReranker(stub.url, MODEL).rerank("q", ["a", "b"])) == 2


# -- through the service: order, badges, strength, fallbacks --------------------------------------


def test_search_is_reranked_with_badges(svc: MemoryService, stub: OpenAIStub, local: LocalOnnxEmbedder) -> None:
    plain = svc.search_outcome(QUERY, top_k=8)
    with_rerank(svc, stub.url)
    out = svc.search_outcome(QUERY, top_k=8)
    assert not out.notes and "rerank" in out.timings_ms
    texts = [r.text for r in out.results]
    assert sorted(texts) == sorted(r.text for r in plain.results)  # the same passages...
    assert texts == [texts[i] for i in cosine_order(local, QUERY, texts)]  # ...in the reranker's order
    top = out.results[0]
    assert top.lanes["rerank"].rank == 1 and f"rerank #1, score {top.lanes['rerank'].score:.2f}" in top.explain()
    assert top.explain().index("rerank") > top.explain().index("semantic")  # after the lanes it reordered
    assert [r.rank for r in out.results] == list(range(1, len(texts) + 1))
    strength = {r.chunk_id: r.strength for r in plain.results}  # strength stays with the lanes
    assert {r.chunk_id: r.strength for r in out.results} == strength and out.weak == plain.weak
    assert top.to_dict()["lanes"]["rerank"]["rank"] == 1


def test_depth_limits_what_is_reordered(svc: MemoryService, stub: OpenAIStub) -> None:
    plain = [r.chunk_id for r in svc.search_outcome(QUERY, top_k=8).results]
    with_rerank(svc, stub.url, rerank_depth=3)
    out = svc.search_outcome(QUERY, top_k=8).results
    assert sorted(r.chunk_id for r in out[:3]) == sorted(plain[:3])
    assert [r.chunk_id for r in out[3:]] == plain[3:] and all("rerank" not in r.lanes for r in out[3:])
    sent = stub.requests[-1][2]
    assert len(sent["documents"]) == 3


@pytest.mark.parametrize("fault", ["slow", "down", "refused", "no_model"])
def test_failing_reranker_keeps_the_fused_list(svc: MemoryService, stub: OpenAIStub, fault: str) -> None:
    plain = svc.search_outcome(QUERY, top_k=8)
    url = stub.url
    if fault == "slow":
        stub.rerank_delay_s = 1.5
    elif fault == "down":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{s.getsockname()[1]}"
    elif fault == "refused":
        stub.api_key = "nope-nope-nope"
    with_rerank(svc, url, rerank_timeout_s=0.3, **({"rerank_model": "missing"} if fault == "no_model" else {}))
    out = svc.search_outcome(QUERY, top_k=8)
    assert [r.chunk_id for r in out.results] == [r.chunk_id for r in plain.results]
    assert all("rerank" not in r.lanes for r in out.results)
    assert len(out.notes) == 1 and out.notes[0].startswith("rerank off, fused order kept:")
    words = {"slow": "did not answer within 0.3 s", "down": "Cannot reach the reranker", "refused": "API key",
             "no_model": 'no model "missing"'}[fault]
    assert words in out.notes[0]


def test_rerank_off_by_default_contacts_nothing(svc: MemoryService, stub: OpenAIStub) -> None:
    assert SearchSettings().rerank is False and svc.searcher.reranker is None
    svc.search_outcome(QUERY)
    assert stub.requests == []


def test_tei_from_a_bare_server_url_is_learned_once_for_every_later_process(stub: OpenAIStub,
                                                                           local: LocalOnnxEmbedder) -> None:
    """Issue 33 newcomer §4: TEI serves /rerank at its root (its /v1/rerank is a 404) and wants {"query", "texts"}.
    A bare server URL finds that route, and what was learned is kept in the data folder: the next process (a new
    client, as each CLI search is) goes straight to TEI's route and shape, with no 404 or 422 round trip."""
    stub.tei_rerank = True
    docs = list(TOPICS.values())
    first = HttpReranker(stub.url)  # http://127.0.0.1:PORT: nothing after the host
    assert [i for i, _ in first.rerank(QUERY, docs)] == cosine_order(local, QUERY, docs)
    assert [(path, "texts" in body) for _, path, body, _ in stub.requests] == [
        ("/v1/rerank", False), ("/rerank", False), ("/rerank", True)]
    first.close()
    stub.requests.clear()
    later = HttpReranker(stub.url)  # a new process: nothing in memory but the data folder
    assert later.endpoint == stub.url + "/rerank"
    assert [i for i, _ in later.rerank(QUERY, docs)] == cosine_order(local, QUERY, docs)
    assert [(path, "texts" in body) for _, path, body, _ in stub.requests] == [("/rerank", True)]
    assert "as expected" in later.check_connection()
    later.close()
    assert HttpReranker(stub.url + "/rerank").endpoint == stub.url + "/rerank"  # an explicit URL is its own entry
    stub.tei_rerank = False  # a Cohere-style server at that address now: the old lesson is dropped, not fatal
    stub.requests.clear()
    again = HttpReranker(stub.url, MODEL)
    assert [i for i, _ in again.rerank(QUERY, docs)] == cosine_order(local, QUERY, docs)
    assert [(path, "texts" in body) for _, path, body, _ in stub.requests] == [("/rerank", True),
                                                                               ("/v1/rerank", False)]
    assert HttpReranker(stub.url, MODEL).endpoint == stub.url + "/v1/rerank"
