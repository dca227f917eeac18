"""The dense lane's plan (sign-bit candidates + exact re-scoring), its cache, migration 2, and the keyword
planner: correctness against exact search and crash-safety invariants."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_memory.models import ChunkDraft, Location, SearchFilters
from desktop_memory.retrieve import dense as dense_mod
from desktop_memory.retrieve.dense import DenseCodes, dense_exact, dense_search, nearest_by_hamming
from desktop_memory.retrieve.keyword import plan_terms
from desktop_memory.retrieve.lanes import fts_lane
from desktop_memory.store import Store
from desktop_memory.store.connection import open_connection


def _vectors(n: int, dim: int, seed: int = 0, clusters: int = 40, draw: int = 0) -> np.ndarray:
    """Clustered unit vectors with a shared offset (like sentence embeddings), not isotropic noise.

    ``seed`` fixes the distribution (centres, offset); ``draw`` picks different samples from it (e.g. queries)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(clusters, dim)) + 0.5 * rng.normal(size=dim)
    rng = np.random.default_rng([seed, draw])
    v = centers[rng.integers(0, clusters, size=n)] + 0.7 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _fill(store: Store, vectors: np.ndarray, per_doc: int = 50, prefix: str = "/lib", kind: str = "text") -> None:
    store.ensure_model("test-model", vectors.shape[1])
    n = len(vectors)
    for d in range(0, n, per_doc):
        texts = [f"chunk {i} of doc {d}" for i in range(d, min(n, d + per_doc))]
        store.write_document(
            path=f"{prefix}/{'a' if (d // per_doc) % 2 == 0 else 'b'}/doc{d}.txt", kind=kind, language=None,
            title=None, size=1, mtime=float(d), content_hash=str(d),
            chunks=[ChunkDraft(t, Location(char_end=len(t))) for t in texts],
            dedupe_keys=[f"{prefix}{d}:{i}" for i in range(len(texts))],
        )
    pending = store.pending_chunks(n + 10)
    assert len(pending) == n
    for start in range(0, n, 256):
        part = pending[start : start + 256]
        store.store_vectors([cid for cid, _ in part], vectors[start : start + len(part)])


def _recall(fast, exact) -> float:
    return len({c for c, _ in fast} & {c for c, _ in exact}) / max(1, len(exact))


def test_small_index_is_exact(tmp_path):
    s = Store(tmp_path / "d.db")
    vecs = _vectors(500, 32)
    _fill(s, vecs)
    for q in _vectors(20, 32, draw=7):
        fast, exact = dense_search(s, q, 10), dense_exact(s, q, 10)
        assert [c for c, _ in fast] == [c for c, _ in exact]
        assert all(-1.0 <= sc <= 1.0 for _, sc in fast)
        assert fast == sorted(fast, key=lambda r: (-r[1], r[0]))


def test_coarse_plan_recall_against_exact(tmp_path):
    s = Store(tmp_path / "d.db")
    _fill(s, _vectors(6000, 96), per_doc=200)
    queries = _vectors(40, 96, draw=1)
    recalls = [_recall(dense_search(s, q, 10, candidates=600), dense_exact(s, q, 10)) for q in queries]
    assert np.mean(recalls) >= 0.95  # 10 % of the index re-scored
    assert np.mean([_recall(dense_search(s, q, 10), dense_exact(s, q, 10)) for q in queries]) >= 0.97


def test_filters_keep_top_k(tmp_path):
    s = Store(tmp_path / "d.db")
    _fill(s, _vectors(3000, 48), per_doc=100)
    q = _vectors(1, 48, draw=11)[0]
    for filters in (SearchFilters(path_prefix="/lib/b/"), SearchFilters(modified_since=2500.0),
                    SearchFilters(path_glob="*/a/doc1*")):
        fast = dense_search(s, q, 10, filters, candidates=200)
        exact = dense_exact(s, q, 10, filters)
        assert len(fast) == len(exact) == 10
        assert _recall(fast, exact) >= 0.8
        paths = dict(s.conn.execute("select c.id, d.path from chunks c join documents d on d.id = c.doc_id"))
        mtimes = dict(s.conn.execute("select c.id, d.mtime from chunks c join documents d on d.id = c.doc_id"))
        for cid, _ in fast:
            if filters.path_prefix:
                assert paths[cid].startswith("/lib/b/")
            if filters.modified_since:
                assert mtimes[cid] >= 2500.0
    # a filter smaller than the candidate budget is searched exactly
    tiny = SearchFilters(path_glob="*/doc100.txt")
    assert dense_search(s, q, 5, tiny) == dense_exact(s, q, 5, tiny)


def test_cache_follows_appends_deletes_resets(tmp_path):
    s = Store(tmp_path / "d.db")
    codes = DenseCodes()  # kept between searches, as a service keeps them: refreshed, not reloaded
    vecs = _vectors(1200, 32)
    _fill(s, vecs[:600], per_doc=60)
    probe = vecs[1100]
    before = dense_search(s, probe, 5, codes=codes, candidates=100)
    # append: a second connection (another thread/process) writes; this one must see the new vectors
    other = Store(tmp_path / "d.db")
    _fill(other, vecs[600:], per_doc=60, prefix="/more")
    after = dense_search(s, probe, 5, codes=codes, candidates=100)
    top = after[0][0]
    assert top not in {c for c, _ in before} and after[0][1] == pytest.approx(1.0, abs=1e-5)
    # delete the document holding it: never returned again (ghost bits are dropped at re-scoring)
    doc_id = s.conn.execute("select doc_id from chunks where id = ?", (top,)).fetchone()[0]
    other.remove_documents([doc_id])
    assert top not in {c for c, _ in dense_search(s, probe, 50, codes=codes, candidates=100)}
    # reset (model change): nothing is found until vectors come back
    other.reset_vectors()
    assert not s.has_vector_table()
    other.ensure_model("test-model", 32)
    assert dense_search(s, probe, 5, codes=codes) == []
    assert s.check_integrity() == []


def test_out_of_order_vector_reloads(tmp_path, monkeypatch):
    s = Store(tmp_path / "d.db")
    codes = DenseCodes()  # kept between searches, as a service keeps them: refreshed, not reloaded
    vecs = _vectors(300, 16)
    s.ensure_model("m", 16)
    for i in range(3):
        s.write_document(path=f"/x/{i}.txt", kind="text", language=None, title=None, size=1, mtime=1,
                         content_hash=str(i), chunks=[ChunkDraft(f"t{i}{j}", Location(char_end=3)) for j in range(100)],
                         dedupe_keys=[f"{i}:{j}" for j in range(100)])
    pending = s.pending_chunks(1000)
    ids = [c for c, _ in pending]
    s.store_vectors(ids[100:], vecs[100:])  # the newest first
    assert dense_search(s, vecs[150], 1, codes=codes)[0][0] == ids[150]
    epoch = s.vector_state()[0]
    s.store_vectors(ids[:100], vecs[:100])  # older ids afterwards: a full reload, not an append
    assert s.vector_state()[0] == epoch + 1
    assert dense_search(s, vecs[5], 1, codes=codes)[0][0] == ids[5]
    assert s.check_integrity() == []


def test_store_vectors_rejects_wrong_dimension(tmp_path):
    s = Store(tmp_path / "d.db")
    s.write_document(path="/x.txt", kind="text", language=None, title=None, size=1, mtime=1, content_hash="x",
                     chunks=[ChunkDraft("x", Location(char_end=1))], dedupe_keys=["x"])
    s.ensure_model("m", 8)
    (cid, _), = s.pending_chunks(5)
    with pytest.raises(Exception, match="dimensions"):
        s.store_vectors([cid], np.ones((1, 9), dtype=np.float32))
    assert s.pending_count() == 1 and s.check_integrity() == []


def test_integrity_sees_broken_vector_tables(tmp_path):
    s = Store(tmp_path / "d.db")
    _fill(s, _vectors(100, 16), per_doc=50)
    assert s.check_integrity() == []
    some = s.conn.execute("select id from chunk_vector_bits limit 1").fetchone()[0]
    s.conn.execute("delete from chunk_vector_bits where id = ?", (some,))
    assert any("pair" in p for p in s.check_integrity())
    s.conn.execute("insert into chunk_vector_bits(id, bits) values(?, zeroblob(2))", (some,))
    s.conn.execute("insert into chunk_vectors(id, embedding) values(999999, zeroblob(64))")
    problems = s.check_integrity()
    assert any("without a live embedded chunk" in p for p in problems)


def test_migration_moves_vec0_vectors(tmp_path):
    """A schema-1 database with a float vec0 table keeps its vectors (no re-embedding) after migration 2."""
    from desktop_memory.store.migrations import MIGRATIONS

    path = tmp_path / "old.db"
    conn = open_connection(path)
    with conn:
        conn.execute(MIGRATIONS[0])
        conn.execute("pragma user_version=1")
    vecs = _vectors(40, 16)
    with conn:
        conn.execute("insert into documents(id, path, status) values(1, '/old.txt', 'indexed')")
        for i in range(40):
            conn.execute("insert into chunks(id, doc_id, ord, text, char_start, char_end, embedded) "
                         "values(?, 1, ?, ?, 0, 5, 1)", (i + 1, i, f"old chunk {i}"))
            conn.execute("insert into chunks_fts(rowid, text) values(?, ?)", (i + 1, f"old chunk {i}"))
        conn.execute("create virtual table chunks_vec using vec0(embedding float[16])")
        conn.executemany("insert into chunks_vec(rowid, embedding) values(?, ?)",
                         [(i + 1, vecs[i].tobytes()) for i in range(40)])
        conn.execute("insert into meta(key, value) values('model_id', 'm'), ('dim', '16')")
    conn.close()
    s = Store(path)
    assert s.conn.execute("select count(*) from chunk_vectors").fetchone()[0] == 40
    assert s.conn.execute("select 1 from sqlite_master where name = 'chunks_vec'").fetchone() is None
    assert (tmp_path / "old.db.bak-v1").exists()
    assert dense_search(s, vecs[7], 1)[0][0] == 8
    assert s.check_integrity() == []


def test_nearest_by_hamming_counts_and_ties():
    d = np.array([5, 1, 3, 3, 3, 0, 9], dtype=np.uint16)
    pick = nearest_by_hamming(d, 3)
    assert sorted(pick.tolist()) == [1, 2, 5]  # 0, 1 and the first 3 (position 2)
    assert len(nearest_by_hamming(d, 100)) == len(d)


# ---------------------------------------------------------------- keyword planner


@pytest.fixture()
def fts_store(tmp_path):
    s = Store(tmp_path / "k.db")
    rows = []
    for i in range(400):
        words = ["common"] + (["medium"] if i % 4 == 0 else []) + (["rare"] if i % 100 == 0 else []) + [f"w{i}"]
        rows.append(" ".join(words))
    s.write_document(path="/k.txt", kind="text", language=None, title=None, size=1, mtime=1, content_hash="k",
                     chunks=[ChunkDraft(t, Location(char_end=len(t))) for t in rows],
                     dedupe_keys=[str(i) for i in range(len(rows))])
    return s


def test_plan_terms_keeps_rarest_within_budget(fts_store):
    terms = ["common", "medium", "rare"]
    assert plan_terms(fts_store, terms, 0) == (terms, [])  # off
    assert plan_terms(fts_store, terms, 10_000) == (terms, [])  # everything fits: exact BM25
    assert plan_terms(fts_store, terms, 150) == (["medium", "rare"], ["common"])
    assert plan_terms(fts_store, terms, 50) == (["rare"], ["common", "medium"])
    assert plan_terms(fts_store, ["common", "medium"], 30) == (["medium"], ["common"])  # rarest always kept
    assert plan_terms(fts_store, ["nothing", "common"], 50) == (["nothing"], ["common"])


def test_fts_lane_with_budget_still_ranks_rare_hits_first(fts_store):
    full = fts_lane(fts_store, "common medium rare", 10)
    planned = fts_lane(fts_store, "common medium rare", 10, term_budget=150)
    assert [c for c, _ in planned[:4]] == [c for c, _ in full[:4]]  # the 4 'rare' rows lead either way


def test_dense_module_has_sane_defaults():
    assert dense_mod.candidate_budget(10) >= 1000 and dense_mod.candidate_budget(5000) <= dense_mod.MAX_CANDIDATES
