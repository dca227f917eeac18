"""Lanes, fusion, filters and hostile queries on a real store (fast hash embedder)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from desktop_memory.config import SearchSettings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import EmbedderError
from desktop_memory.models import ChunkDraft, Location, SearchFilters
from desktop_memory.retrieve import Searcher
from desktop_memory.retrieve.fusion import fuse, rrf_fuse, zscore_fuse
from desktop_memory.retrieve.query_text import or_match, query_terms, term_counts, weighted_terms
from desktop_memory.store import Store

DOCS = {
    "/lib/notes/fastapi.md": ("markdown", 100.0, ["Query parameters can be optional when you set a default of None.",
                                                  "Path parameters are part of the URL path."]),
    "/lib/notes/hugo.md": ("markdown", 200.0, ["Hugo templates render pages with partials and shortcodes."]),
    "/lib/code/app.py": ("code", 300.0, ["def read_items(q: str | None = None): return q"]),
    "/lib/papers/paper.pdf": ("pdf", 400.0, ["Optional parameters in statistical models reduce variance."]),
}


@pytest.fixture()
def indexed(tmp_path):
    store = Store(tmp_path / "r.db")
    emb = HashEmbedder(64)
    for path, (kind, mtime, texts) in DOCS.items():
        page = 1 if kind == "pdf" else None
        chunks = [ChunkDraft(t, Location(char_start=0, char_end=len(t), page=page)) for t in texts]
        store.write_document(path=path, kind=kind, language=None, title=None, size=1, mtime=mtime, content_hash=path,
                             chunks=chunks, dedupe_keys=[f"{path}{i}" for i in range(len(texts))])
    store.ensure_model(emb.model_id, emb.dim)
    pending = store.pending_chunks(100)
    store.store_vectors([c for c, _ in pending], emb.embed_documents([t for _, t in pending]))
    return store, emb


def test_rrf_weights_and_ties():
    fused = rrf_fuse({"fts": [(5, 1.0), (3, 0.5)], "dense": [(3, 0.9), (7, 0.8)]}, {"fts": 1.0, "dense": 1.0}, k=60)
    assert fused[0][0] == 3  # in both lanes
    assert [f[0] for f in fused[1:]] == [5, 7]  # equal scores: ties broken by id
    assert fused[0][2]["fts"].rank == 2 and fused[0][2]["dense"].rank == 1
    heavy = rrf_fuse({"fts": [(5, 1.0)], "dense": [(7, 0.8)]}, {"fts": 1.0, "dense": 3.0})
    assert heavy[0][0] == 7


def test_zscore_fusion_keeps_margins_and_breaks_ties_by_id():
    # keyword: chunk 1 is a runaway winner; dense: a flat tail where 2 is barely ahead of 1
    fts = [(1, 30.0), (2, 5.0), (3, 4.9), (4, 4.8)]
    dense = [(2, 0.61), (1, 0.60), (3, 0.59), (4, 0.58)]
    z = zscore_fuse({"fts": fts, "dense": dense}, {"fts": 1.0, "dense": 1.0}, depth=4)
    assert z[0][0] == 1  # a clear BM25 margin outweighs a flat dense lead
    assert all(score >= 0 for _, score, _ in z)
    assert z[0][2]["fts"].rank == 1 and z[0][2]["dense"].rank == 2
    assert rrf_fuse({"fts": fts, "dense": dense}, {"fts": 1.0, "dense": 1.0})[0][0] == 1  # (tie on rank sums: id)
    tied = zscore_fuse({"dense": [(9, 0.5), (4, 0.5)]}, {"dense": 1.0})
    assert [c for c, _, _ in tied] == [4, 9]  # equal scores: ties broken by id
    # the order of the top does not depend on how deep the lanes were read past the statistics depth
    longer = zscore_fuse({"fts": fts + [(5, 1.0)], "dense": dense + [(6, 0.1)]}, {"fts": 1.0, "dense": 1.0}, depth=4)
    assert [c for c, _, _ in longer[:4]] == [c for c, _, _ in z[:4]]


def test_fuse_defaults_to_rrf_and_unknown_methods_fall_back_to_it():
    lanes = {"fts": [(5, 1.0), (3, 0.5)], "dense": [(3, 0.9), (7, 0.8)]}
    w = {"fts": 1.0, "dense": 1.0}
    assert fuse(lanes, w) == rrf_fuse(lanes, w) == fuse(lanes, w, method="nonsense")
    assert fuse(lanes, w, method="zscore") == zscore_fuse(lanes, w)


@pytest.mark.parametrize("fusion", ["rrf", "zscore"])
def test_both_fusions_search_end_to_end(indexed, fusion):
    store, emb = indexed
    out = Searcher(SearchSettings(fusion=fusion)).search(store, emb, "optional query parameters None default",
                                                          backend="hybrid", top_k=3)
    assert out.results[0].source == "/lib/notes/fastapi.md"


@pytest.mark.parametrize("backend", ["hybrid", "keyword", "bm25", "dense"])
def test_backends_find_the_passage(indexed, backend):
    store, emb = indexed
    query = "optional query parameters None default"
    out = Searcher(SearchSettings()).search(store, emb, query, backend=backend, top_k=3)
    assert out.results, backend
    top = out.results[0]
    assert top.source == "/lib/notes/fastapi.md"
    assert [r.rank for r in out.results] == list(range(1, len(out.results) + 1))
    if backend == "dense":
        assert -1.0 <= top.lanes["dense"].score <= 1.0


def test_hybrid_results_explain_both_lanes(indexed):
    store, emb = indexed
    out = Searcher(SearchSettings()).search(store, emb, "optional parameters", top_k=5)
    both = [r for r in out.results if set(r.lanes) == {"fts", "dense"}]
    assert both and "keyword #" in both[0].explain() and "cos " in both[0].explain()


def test_deterministic(indexed):
    store, emb = indexed
    s = Searcher(SearchSettings())
    runs = [[(r.chunk_id, r.score) for r in s.search(store, emb, "parameters pages", top_k=10).results]
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize("backend", ["hybrid", "keyword", "bm25", "dense"])
def test_filters_apply_inside_lanes(indexed, backend):
    store, emb = indexed
    s = Searcher(SearchSettings())
    out = s.search(store, emb, "optional parameters", backend=backend, top_k=1, filters=SearchFilters(kinds=("pdf",)))
    assert [r.source for r in out.results] == ["/lib/papers/paper.pdf"]  # top-1 not lost to post-filtering
    out = s.search(store, emb, "parameters", backend=backend, filters=SearchFilters(path_prefix="/lib/notes/"))
    assert out.results and all(r.source.startswith("/lib/notes/") for r in out.results)
    out = s.search(store, emb, "parameters", backend=backend, filters=SearchFilters(modified_since=250))
    assert out.results and all(r.mtime >= 250 for r in out.results)
    out = s.search(store, emb, "parameters", backend=backend, filters=SearchFilters(path_glob="*.py"))
    assert all(r.source.endswith(".py") for r in out.results)


def test_hybrid_degrades_to_keyword_without_vectors(tmp_path):
    store = Store(tmp_path / "k.db")
    store.write_document(path="/a.txt", kind="text", language=None, title=None, size=1, mtime=1, content_hash="x",
                         chunks=[ChunkDraft("keyword only text", Location(char_end=17))], dedupe_keys=["k"])
    out = Searcher(SearchSettings()).search(store, HashEmbedder(), "keyword", backend="hybrid")
    assert [r.source for r in out.results] == ["/a.txt"]
    assert any("semantic lane off" in n for n in out.notes)
    with pytest.raises(EmbedderError):
        Searcher(SearchSettings()).search(store, HashEmbedder(), "keyword", backend="dense")


HOSTILE = ['"', '""', "'", "*", "NEAR(", "NEAR(a b", "a AND", "OR OR", "NOT", "text:foo", "col:*", "-", "^start",
           "'; DROP TABLE chunks; --", "\"unbalanced", "(((", ")", "{a b}", "a + b", "😀🔥", "مرحبا بالعالم",
           "\u202e reversed", "", "   ", "x" * 10000, "\x00", "a" * 300 + " b", "query:parameter*", "AND OR NOT NEAR"]


@pytest.mark.parametrize("query", HOSTILE)
@pytest.mark.parametrize("backend", ["hybrid", "keyword", "bm25"])
def test_hostile_queries_never_raise(indexed, query, backend):
    store, emb = indexed
    out = Searcher(SearchSettings()).search(store, emb, query, backend=backend)
    assert isinstance(out.results, list)


@hsettings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=200))
def test_fts_expression_is_always_valid(tmp_path_factory, text):
    expr = or_match(weighted_terms(term_counts(text)))  # what the keyword lane sends for words it knows
    if not expr:
        assert query_terms(text) == []
        return
    # Every term is a quoted string literal joined by OR: FTS5 parses it whatever the user typed.
    store = _shared_store(tmp_path_factory)
    store.conn.execute("select count(*) from chunks_fts where chunks_fts match ?", (expr,)).fetchone()


_STORE = {}


def _shared_store(factory):
    if "s" not in _STORE:
        s = Store(factory.mktemp("fuzz") / "f.db")
        s.write_document(path="/f.txt", kind="text", language=None, title=None, size=1, mtime=1, content_hash="f",
                         chunks=[ChunkDraft("some text here", Location(char_end=14))], dedupe_keys=["f"])
        _STORE["s"] = s
    return _STORE["s"]


def test_top_results_do_not_depend_on_how_many_were_asked_for(tmp_path, monkeypatch):
    """Lanes always rank at least LANE_DEPTH chunks, so "show 10" is the head of "show 40": a chunk both lanes rank
    55th (RRF 2/115) beats one that only a single lane ranks first (1/61), and must not vanish at top_k = 10."""
    from desktop_memory.retrieve import searcher as searcher_mod

    n = searcher_mod.LANE_DEPTH + 100
    store = Store(tmp_path / "deep.db")
    emb = HashEmbedder(64)
    for i in range(n):
        text = f"passage {i}"
        store.write_document(path=f"/lib/{i:04d}.txt", kind="text", language=None, title=None, size=1, mtime=1.0,
                             content_hash=str(i), chunks=[ChunkDraft(text, Location(char_start=0, char_end=len(text)))],
                             dedupe_keys=[str(i)])
    store.ensure_model(emb.model_id, emb.dim)
    pending = store.pending_chunks(n)
    store.store_vectors([c for c, _ in pending], emb.embed_documents([t for _, t in pending]))
    ids = [c for c, _ in pending]
    agreed = ids[-1]
    others = ids[:-1]
    keyword_order = others[:54] + [agreed] + others[54:]  # disjoint heads: lanes agree on nothing but `agreed`
    dense_order = others[::-1][:54] + [agreed] + others[::-1][54:]

    def fake_fts(store_, query, limit, filters=None, term_budget=0):
        return [(c, 1.0 / (r + 1)) for r, c in enumerate(keyword_order[:limit])]

    def fake_dense(store_, qvec, limit, filters=None, codes=None):
        return [(c, 1.0 - r / 1000) for r, c in enumerate(dense_order[:limit])]

    monkeypatch.setattr(searcher_mod, "fts_lane", fake_fts)
    monkeypatch.setattr(searcher_mod, "dense_lane", fake_dense)
    s = Searcher(SearchSettings())
    head = s.search(store, emb, "anything", top_k=10).results
    deep = s.search(store, emb, "anything", top_k=searcher_mod.LANE_DEPTH // 5).results
    assert head[0].chunk_id == agreed and head[0].lanes["fts"].rank == head[0].lanes["dense"].rank == 55
    assert [r.chunk_id for r in head] == [r.chunk_id for r in deep[:10]]


def test_hybrid_embeds_the_query_beside_the_keyword_lane(indexed):
    """The query is embedded on the shared embedding threads while the caller runs the keyword lane; the results
    are those of the dense and keyword lanes fused as before, an embedder failing there still degrades hybrid to
    keyword with a note, and repeated searches reuse the same threads (no thread per search)."""
    import threading

    from desktop_memory.retrieve.fusion import rrf_fuse
    from desktop_memory.retrieve.lanes import dense_lane, fts_lane

    store, emb = indexed
    seen: list[str] = []

    class Recording(HashEmbedder):
        def embed_query(self, text):
            seen.append(threading.current_thread().name)
            return super().embed_query(text)

    rec = Recording(64)
    s = Searcher(SearchSettings())
    out = s.search(store, rec, "optional parameters", backend="hybrid", top_k=5)
    assert seen and seen[0].startswith("dm-query-embed") and "embed" in out.timings_ms
    lanes = {"fts": fts_lane(store, "optional parameters", 200), "dense": dense_lane(
        store, emb.embed_query("optional parameters"), 200)}
    assert [r.chunk_id for r in out.results] == [c for c, _, _ in rrf_fuse(lanes, s.lane_weights())[:5]]
    before = threading.active_count()
    for _ in range(20):
        s.search(store, rec, "parameters pages", backend="hybrid")
    assert threading.active_count() <= before + 1  # at most the pool's second thread, started once

    class Failing(HashEmbedder):
        def embed_query(self, text):
            raise EmbedderError("model server went away")

    out = s.search(store, Failing(64), "parameters", backend="hybrid")
    assert out.results and "dense" not in out.results[0].lanes
    assert any("model server went away" in n for n in out.notes)
