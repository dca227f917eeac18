"""The real bundled model (all-MiniLM-L6-v2 int8) through LocalOnnxEmbedder."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from desktop_memory.config import EmbedderSettings, Settings
from desktop_memory.embed import DEFAULT_MODEL_ID, Embedder, LocalOnnxEmbedder, make_embedder
from desktop_memory.errors import EmbedderError

ROOT = Path(__file__).resolve().parents[3]
TOKENIZER = ROOT / "desktop_memory" / "resources" / "minilm-tokenizer.json"

OPTIONAL_PARAMS = (
    "Query parameters are optional when you give them a default value. Declare q: str | None = None "
    "and FastAPI will treat the query parameter q as optional instead of required."
)
HUGO_TEMPLATES = (
    "Hugo templates are written in Go's html/template language. Partials live in layouts/partials "
    "and are included with the partial function; shortcodes extend Markdown content."
)


@pytest.fixture(scope="module")
def emb() -> LocalOnnxEmbedder:
    e = LocalOnnxEmbedder(EmbedderSettings(batch_size=4))
    e.load()
    return e


def words(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    vocab = ["river", "mountain", "engine", "protein", "galaxy", "ledger", "violin", "harbour", "circuit", "meadow",
             "glacier", "lantern"]
    return " ".join(rng.choice(vocab, size=n))


# -- construction and identity -------------------------------------------------------------------


def test_construct_is_free_and_identity_known() -> None:
    e = make_embedder(EmbedderSettings())
    assert isinstance(e, LocalOnnxEmbedder) and isinstance(e, Embedder)
    assert e.model_id == DEFAULT_MODEL_ID == "all-MiniLM-L6-v2-int8"
    assert e.dim == 384
    assert not e.is_loaded


def test_package_import_does_not_pull_heavy_modules() -> None:
    code = (
        "import sys, desktop_memory.embed as m; m.make_embedder(m.EmbedderSettings()); "
        "print(sorted(x for x in ('onnxruntime', 'tokenizers', 'httpx', 'PySide6') if x in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bundled_tokenizer_ships_with_the_package() -> None:
    assert TOKENIZER.is_file()
    assert "Apache" in (TOKENIZER.parent / "README.md").read_text(encoding="utf-8")


# -- vectors -------------------------------------------------------------------------------------


def test_shapes_norms_and_empty_inputs(emb: LocalOnnxEmbedder) -> None:
    out = emb.embed_documents(["hello world", "", "   ", "ünïcödé ✓ 日本語"])
    assert out.shape == (4, 384) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert np.all(np.isfinite(out))
    empty = emb.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    q = emb.embed_query("")
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1) < 1e-5


def test_deterministic_across_calls_and_instances(emb: LocalOnnxEmbedder) -> None:
    a = emb.embed_documents([OPTIONAL_PARAMS])
    b = emb.embed_documents([OPTIONAL_PARAMS])
    c = LocalOnnxEmbedder(EmbedderSettings(batch_size=32, threads=1)).embed_documents([OPTIONAL_PARAMS])
    assert np.array_equal(a, b)
    np.testing.assert_allclose(a, c, atol=1e-5)


def test_semantic_sanity(emb: LocalOnnxEmbedder) -> None:
    q = emb.embed_query("How do I make a query parameter optional?")
    docs = emb.embed_documents([HUGO_TEMPLATES, OPTIONAL_PARAMS])
    scores = docs @ q
    assert scores[1] > scores[0] + 0.2, scores
    assert float(emb.embed_query("optional query parameter") @ emb.embed_query("optional query parameters")) > 0.9


def test_length_sorted_batches_keep_input_order_and_match_one_by_one(
    emb: LocalOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    lengths = [3, 120, 1, 40, 200, 7, 60, 15, 90, 2, 30]
    texts = [words(n, seed=i) for i, n in enumerate(lengths)]
    widths: list[int] = []
    real_run = emb._run_session

    def spy(session, ids, type_ids):  # type: ignore[no-untyped-def]
        widths.append(max(len(r) for r in ids))
        return real_run(session, ids, type_ids)

    monkeypatch.setattr(emb, "_run_session", spy)
    batched = emb.embed_documents(texts)
    assert len(widths) == 3  # 11 texts / batch_size 4
    assert widths == sorted(widths, reverse=True)  # longest first, similar lengths together
    assert widths[-1] < 20  # the short texts were not padded to the long ones
    single = np.vstack([emb.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_batches_respect_the_token_budget(emb: LocalOnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Long texts go in small batches (activation memory), short ones in wide batches; the vectors do not change."""
    texts = [words(220, seed=i) for i in range(6)] + [words(5, seed=100 + i) for i in range(10)]
    shapes: list[tuple[int, int]] = []
    real_run = emb._run_session

    def spy(session, ids, type_ids):  # type: ignore[no-untyped-def]
        shapes.append((len(ids), max(len(r) for r in ids)))
        return real_run(session, ids, type_ids)

    unlimited = emb.embed_documents(texts)
    monkeypatch.setattr(emb, "_run_session", spy)
    monkeypatch.setattr(emb, "settings", dataclasses.replace(emb.settings, batch_size=8, batch_tokens=600))
    budgeted = emb.embed_documents(texts)
    assert all(rows * width <= 600 or rows == 1 for rows, width in shapes), shapes
    assert sum(rows for rows, _ in shapes) == len(texts)
    assert shapes[0][0] <= 2  # long rows two at a time...
    assert max(rows for rows, width in shapes if width < 20) == 8  # ...short rows fill the row cap
    np.testing.assert_allclose(budgeted, unlimited, atol=1e-5)
    monkeypatch.setattr(emb, "settings", dataclasses.replace(emb.settings, batch_tokens=0))  # 0 = rows only
    assert [r for r, _ in _batch_shapes(emb, texts)] == [8, 8]


def _batch_shapes(emb: LocalOnnxEmbedder, texts: list[str]) -> list[tuple[int, int]]:
    lengths = emb.count_tokens(texts)
    order = sorted(range(len(texts)), key=lambda i: lengths[i], reverse=True)
    return [(len(b), max(lengths[i] for i in b)) for b in emb._batches(order, lengths)]


def test_embeds_past_128_tokens(emb: LocalOnnxEmbedder) -> None:
    head = words(150, seed=1)
    a, b = head + " " + words(60, seed=2), head + " " + words(60, seed=3)
    assert min(emb.count_tokens([a, b])) > 200
    va, vb = emb.embed_documents([a, b])
    assert float(va @ vb) < 0.999  # the tails (tokens 150..210) change the vector
    short = LocalOnnxEmbedder(EmbedderSettings(max_tokens=128))
    sa, sb = short.embed_documents([a, b])
    np.testing.assert_allclose(sa, sb, atol=1e-6)  # truncated at 128: only the shared head is seen


def test_count_tokens(emb: LocalOnnxEmbedder) -> None:
    assert emb.count_tokens([]) == []
    counts = emb.count_tokens(["hello world", "", words(400, seed=4)])
    assert counts == [4, 2, 256]  # [CLS] hello world [SEP]; [CLS] [SEP]; truncated at max_tokens
    assert LocalOnnxEmbedder(EmbedderSettings(max_tokens=64)).count_tokens([words(400, seed=4)]) == [64]


def test_prefixes_are_applied() -> None:
    e = LocalOnnxEmbedder(EmbedderSettings(query_prefix="query: ", document_prefix="passage: "))
    plain = LocalOnnxEmbedder(EmbedderSettings())
    np.testing.assert_allclose(e.embed_query("cats"), plain.embed_documents(["query: cats"])[0], atol=1e-5)
    np.testing.assert_allclose(e.embed_documents(["cats"]), plain.embed_documents(["passage: cats"]), atol=1e-5)
    assert e.count_tokens(["cats"]) == [plain.count_tokens(["passage: cats"])[0]]



def test_what_shapes_a_vector_is_part_of_the_model_id(tmp_path: Path) -> None:
    """A document prefix or another truncation gives other vectors: the index must see a different model."""
    from desktop_memory.service import MemoryService

    assert LocalOnnxEmbedder(EmbedderSettings(query_prefix="query: ")).model_id == DEFAULT_MODEL_ID  # queries only
    short = LocalOnnxEmbedder(EmbedderSettings(max_tokens=128)).model_id
    prefixed = LocalOnnxEmbedder(EmbedderSettings(document_prefix="passage: ")).model_id
    assert len({DEFAULT_MODEL_ID, short, prefixed}) == 3
    assert all(m.startswith(DEFAULT_MODEL_ID) for m in (short, prefixed))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Rivers\n\nRivers carve valleys over thousands of years.\n", encoding="utf-8")
    svc = MemoryService(Settings(), db_path=tmp_path / "m.db")
    try:
        assert svc.index_paths([notes]).chunks_embedded == 1
        assert svc.set_embedder_settings(EmbedderSettings(query_prefix="query: ")) is False  # vectors still valid
        assert svc.stats().vectors == 1
        assert svc.set_embedder_settings(EmbedderSettings(document_prefix="passage: ")) is True  # a new set
        assert svc.stats().vectors == 1 and svc.stats().model_id == DEFAULT_MODEL_ID  # kept until it is built
        assert svc.embed_pending().chunks_embedded == 1 and svc.stats().model_id == prefixed
    finally:
        svc.close()


def test_concurrent_use_from_threads(emb: LocalOnnxEmbedder) -> None:
    texts = [words(n, seed=n) for n in (5, 80, 20, 150, 9, 33)]
    expected = emb.embed_documents(texts)
    fresh = LocalOnnxEmbedder(EmbedderSettings(batch_size=4))  # first use from many threads: one load
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(fresh.embed_documents(texts))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-5)


def test_too_small_max_tokens_is_a_user_error() -> None:
    with pytest.raises(EmbedderError, match="max_tokens"):
        LocalOnnxEmbedder(EmbedderSettings(max_tokens=2)).load()


# -- custom model folders ------------------------------------------------------------------------


def _model_file() -> Path:
    from desktop_memory.embed.model_check import bundled_model_file

    return bundled_model_file()


def test_custom_model_dir_works(tmp_path: Path, emb: LocalOnnxEmbedder) -> None:
    d = tmp_path / "my-minilm"
    (d / "onnx").mkdir(parents=True)
    os.symlink(_model_file(), d / "onnx" / "model.onnx")
    shutil.copy(TOKENIZER, d / "tokenizer.json")
    custom = LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(d)))
    assert custom.model_id.startswith("onnx:my-minilm#")  # the folder's files' digest: see test_model_check.py
    assert not custom.is_loaded
    assert custom.dim == 384 and custom.is_loaded  # dim of a custom model comes from loading it
    np.testing.assert_allclose(custom.embed_documents([OPTIONAL_PARAMS]), emb.embed_documents([OPTIONAL_PARAMS]),
                               atol=1e-5)


def test_custom_model_dir_missing(tmp_path: Path) -> None:
    e = LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path / "nope")))  # constructing never fails
    with pytest.raises(EmbedderError, match="does not exist"):
        e.load()


def test_custom_model_dir_without_model(tmp_path: Path) -> None:
    shutil.copy(TOKENIZER, tmp_path / "tokenizer.json")
    with pytest.raises(EmbedderError, match=r"model\.onnx"):
        LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).embed_query("x")


def test_custom_model_dir_without_tokenizer(tmp_path: Path) -> None:
    os.symlink(_model_file(), tmp_path / "model.onnx")
    with pytest.raises(EmbedderError, match=r"tokenizer\.json"):
        LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).load()


def test_custom_model_dir_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "a.onnx").write_bytes(b"x")
    (tmp_path / "b.onnx").write_bytes(b"x")
    shutil.copy(TOKENIZER, tmp_path / "tokenizer.json")
    with pytest.raises(EmbedderError, match="several ONNX files"):
        LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).load()


def test_custom_model_dir_single_other_name_is_used(tmp_path: Path) -> None:
    os.symlink(_model_file(), tmp_path / "model_quint8.onnx")
    shutil.copy(TOKENIZER, tmp_path / "tokenizer.json")
    assert LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).dim == 384


def test_custom_model_garbage_files(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"this is not a protobuf")
    shutil.copy(TOKENIZER, tmp_path / "tokenizer.json")
    with pytest.raises(EmbedderError, match="Cannot load the ONNX model"):
        LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).load()
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EmbedderError, match="tokenizer"):
        LocalOnnxEmbedder(EmbedderSettings(local_model_dir=str(tmp_path))).load()
