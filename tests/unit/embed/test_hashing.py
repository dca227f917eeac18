"""The fake embedder other tests rely on: deterministic, unit rows, word overlap -> similarity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.config import EmbedderSettings
from desktop_memory.embed import Embedder, HashEmbedder, make_embedder


def test_protocol_shape_and_identity() -> None:
    emb = HashEmbedder(dim=48)
    assert isinstance(emb, Embedder)
    assert emb.model_id == "hash-test-48"
    assert HashEmbedder().model_id == "hash-test-64" and HashEmbedder().dim == 64
    out = emb.embed_documents(["alpha beta", "gamma", ""])
    assert out.shape == (3, 48) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert emb.embed_documents([]).shape == (0, 48)
    assert emb.embed_query("alpha").shape == (48,)
    assert emb.count_tokens(["one two three", ""]) == [3, 0]


def test_deterministic_across_instances() -> None:
    a = HashEmbedder().embed_documents(["the same words here"])
    b = HashEmbedder().embed_documents(["the same words here"])
    assert np.array_equal(a, b)


def test_shared_words_score_higher_than_unrelated() -> None:
    emb = HashEmbedder(dim=256)
    q = emb.embed_query("optional query parameters")
    docs = emb.embed_documents(["Declaring optional query parameters in FastAPI",
                                "Hugo shortcodes and partial templates"])
    scores = docs @ q
    assert scores[0] > 0.5 > scores[1]


def test_prefixes_change_vectors() -> None:
    plain, prefixed = HashEmbedder(), HashEmbedder(query_prefix="search query:")
    assert not np.allclose(plain.embed_query("cats"), prefixed.embed_query("cats"))


def test_make_embedder_hash_kind() -> None:
    emb = make_embedder(EmbedderSettings(kind="hash"), expected_dim=32)
    assert isinstance(emb, HashEmbedder) and emb.dim == 32


def test_rejects_tiny_dim() -> None:
    with pytest.raises(ValueError):
        HashEmbedder(dim=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=5))
def test_any_text_gives_unit_rows(texts: list[str]) -> None:
    out = HashEmbedder(dim=16).embed_documents(texts)
    assert out.shape == (len(texts), 16)
    if texts:
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
