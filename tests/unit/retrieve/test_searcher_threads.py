"""A hybrid search runs its keyword lane on a lane thread and a second pooled reader, beside the semantic lane: the
same ranked list as one lane after the other, no connection beyond the pool, no thread per search, nothing left
after close, and no waiting for a reader that is not free."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.retrieve import searcher as searcher_mod
from desktop_memory.service import MemoryService

QUERIES = ["compost tomatoes", "garden soil number 7", "winter pruning of apple trees", "kettle", "bees 3"]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    d = tmp_path / "notes"
    d.mkdir()
    topics = ["compost and tomatoes", "garden soil", "apple trees pruned in winter", "bees and honey", "a kettle"]
    for i in range(40):
        t = topics[i % len(topics)]
        (d / f"n{i}.md").write_text(f"# Note {i}\n\nNumber {i}: {t}. Also {topics[(i * 3) % 5]} and more {t}.\n")
    return d


@pytest.fixture
def lane_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the threads the keyword lane ran on, in call order."""
    seen: list[str] = []
    real = searcher_mod.fts_lane

    def recording(*args, **kwargs):
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(searcher_mod, "fts_lane", recording)
    return seen


def _ranked(outcome) -> list[tuple[int, float, dict]]:
    return [(r.chunk_id, r.score, {k: (v.rank, v.score) for k, v in r.lanes.items()}) for r in outcome.results]


def test_concurrent_hybrid_equals_sequential(tmp_path, library, lane_threads):
    svc = MemoryService(Settings(), db_path=tmp_path / "h.db", embedder=HashEmbedder(64))
    try:
        svc.index_paths([library])
        for q in QUERIES:
            lane_threads.clear()
            concurrent = svc.search_outcome(q, backend="hybrid", top_k=20)
            assert lane_threads and lane_threads[0].startswith("dm-keyword-lane")
            with svc.reading() as store:  # the same searcher without a spare reader: the lanes in turn, here
                lane_threads.clear()
                sequential = svc.searcher.search(store, svc.embedder, q, backend="hybrid", top_k=20)
                assert lane_threads == [threading.current_thread().name]
            assert concurrent.results and _ranked(concurrent) == _ranked(sequential)
            assert [f.chunk_id for f in concurrent.files] == [f.chunk_id for f in sequential.files]
            assert "fts" in concurrent.timings_ms and "dense" in concurrent.timings_ms
    finally:
        svc.close()


def test_no_free_reader_means_no_wait_and_no_new_connection(tmp_path, library, lane_threads):
    svc = MemoryService(Settings(), db_path=tmp_path / "h.db", embedder=HashEmbedder(64), readers=1)
    try:
        svc.index_paths([library])
        out = svc.search_outcome("compost tomatoes", backend="hybrid")
        assert out.results and lane_threads == [threading.current_thread().name]  # ran here, did not wait
        assert svc.open_connections() == 2  # the writer and the one reader
    finally:
        svc.close()


def test_threads_and_connections_stay_bounded_and_close_releases_all(tmp_path, library):
    from concurrent.futures import ThreadPoolExecutor

    svc = MemoryService(Settings(), db_path=tmp_path / "h.db", embedder=HashEmbedder(64), readers=2)
    try:
        svc.index_paths([library])
        svc.search_outcome("warm up the pools", backend="hybrid")
        before = threading.active_count()
        with ThreadPoolExecutor(max_workers=4) as callers:  # concurrent searches compete for the two readers
            assert all(callers.map(lambda i: svc.search_outcome(QUERIES[i % len(QUERIES)], backend="hybrid").results,
                                   range(60)))
        # the lane and embedding pools are started once (at most two threads each): no thread per search
        pools = [t for t in threading.enumerate() if t.name.startswith(("dm-keyword-lane", "dm-query-embed"))]
        assert len(pools) <= searcher_mod.LANE_THREADS + searcher_mod.EMBED_THREADS
        assert threading.active_count() <= before + 2
        assert svc.open_connections() <= 3
    finally:
        svc.close()
    assert svc.open_connections() == 0
    with pytest.raises(Exception, match="closed"):
        svc.search_outcome("compost", backend="hybrid")


def test_a_failing_keyword_lane_returns_its_reader(tmp_path, library, monkeypatch):
    svc = MemoryService(Settings(), db_path=tmp_path / "h.db", embedder=HashEmbedder(64), readers=2)

    def broken(*args, **kwargs):
        raise RuntimeError("keyword lane broke")

    try:
        svc.index_paths([library])
        monkeypatch.setattr(searcher_mod, "fts_lane", broken)
        with pytest.raises(RuntimeError, match="keyword lane broke"):
            svc.search_outcome("compost", backend="hybrid")
        monkeypatch.undo()
        assert svc.search_outcome("compost", backend="hybrid").results  # both readers came back to the pool
        assert svc.open_connections() <= 3
    finally:
        svc.close()
