"""retrieve/query_vectors.py: a query's vector made once, before or during the search that needs it."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.retrieve.query_vectors import QueryVectors


class CountingEmbedder(HashEmbedder):
    """The real hash embedder, counting the queries it was asked to embed (and optionally failing or waiting)."""

    def __init__(self, dim: int = 64, fail: bool = False, gate: threading.Event | None = None) -> None:
        super().__init__(dim)
        self.asked: list[str] = []
        self.fail, self.gate = fail, gate

    def embed_query(self, text: str) -> np.ndarray:
        self.asked.append(text)
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail:
            raise RuntimeError("server said no")
        return super().embed_query(text)


@pytest.fixture
def pool():
    with ThreadPoolExecutor(2) as p:
        yield p


def test_a_query_is_embedded_once_and_its_vector_is_the_embedders(pool):
    emb, qv = CountingEmbedder(), QueryVectors()
    first = qv.vector(emb, "harbour bridge", pool)
    second = qv.vector(emb, "harbour bridge", pool)
    assert first is second
    vec, ms = first.result()
    assert np.array_equal(vec, HashEmbedder(64).embed_query("harbour bridge")) and ms >= 0
    assert emb.asked == ["harbour bridge"]


def test_a_search_during_the_embedding_waits_for_the_same_one(pool):
    gate = threading.Event()
    emb, qv = CountingEmbedder(gate=gate), QueryVectors()
    typed = qv.vector(emb, "spring tides", pool)
    searched = qv.vector(emb, "spring tides", pool)  # Enter while the typed text is still being embedded
    assert not searched.done()
    gate.set()
    assert np.array_equal(searched.result()[0], typed.result()[0])
    assert emb.asked == ["spring tides"]


def test_a_failure_is_not_remembered_and_another_embedder_never_shares(pool):
    bad, qv = CountingEmbedder(fail=True), QueryVectors()
    with pytest.raises(RuntimeError):
        qv.vector(bad, "q", pool).result()
    assert len(qv) == 0  # the next search asks again (and says why it failed)
    with pytest.raises(RuntimeError):
        qv.vector(bad, "q", pool).result()
    assert bad.asked == ["q", "q"]
    a, b = CountingEmbedder(), CountingEmbedder(32)  # a settings change makes a new embedder
    assert qv.vector(a, "q", pool).result()[0].shape == (64,)
    assert qv.vector(b, "q", pool).result()[0].shape == (32,)


def test_it_keeps_a_bounded_number(pool):
    emb, qv = CountingEmbedder(), QueryVectors(capacity=4)
    for i in range(10):
        qv.vector(emb, f"query {i}", pool).result()
    assert len(qv) == 4
    qv.vector(emb, "query 9", pool).result()
    qv.vector(emb, "query 0", pool).result()  # forgotten: embedded again
    assert emb.asked.count("query 9") == 1 and emb.asked.count("query 0") == 2
    qv.clear()
    assert len(qv) == 0
