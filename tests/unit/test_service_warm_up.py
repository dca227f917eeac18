"""MemoryService.warm_up: what the first search needs is loaded ahead, on readers only, and a cancel stops it."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.errors import Cancelled
from desktop_memory.retrieve.searcher import Searcher
from desktop_memory.service import MemoryService


@pytest.fixture
def svc(tmp_path: Path):
    d = tmp_path / "notes"
    d.mkdir()
    for i in range(30):
        (d / f"n{i}.md").write_text(f"# Note {i}\n\nTopic {i}: gardens, tomatoes and compost number {i}.\n")
    service = MemoryService(Settings(db_path=str(tmp_path / "lib.db")), embedder=HashEmbedder(64))
    service.index_paths([d])
    yield service
    service.close()


def _searches(monkeypatch) -> list[str]:
    ran: list[str] = []
    real = Searcher.search

    def counted(self, store, embedder, query, **kw):
        ran.append(kw.get("backend") or "")
        assert self.reranker is None, "a warm-up never asks a reranking server"
        return real(self, store, embedder, query, **kw)

    monkeypatch.setattr(Searcher, "search", counted)
    return ran


def test_warm_up_loads_the_code_matrices_and_runs_the_search_path_on_readers_only(svc, monkeypatch):
    ran = _searches(monkeypatch)

    @contextlib.contextmanager
    def no_writer():
        raise AssertionError("a warm-up never takes the writer")
        yield

    monkeypatch.setattr(svc, "writing", no_writer)
    with svc.reading() as store:
        matrix = svc.search_state.codes.matrix(store)
        assert matrix.state is None  # nothing loaded yet: the first search would pay for it
    svc.warm_up()
    assert ran == ["keyword"]  # the model is not asked for before the window says it is loaded
    with svc.reading() as store:
        assert matrix.state == store.vector_state() and len(matrix.ids) == 30
    svc.warm_up(semantic=True)
    assert ran == ["keyword", "keyword", "hybrid"]


def test_a_cancelled_warm_up_loads_and_searches_nothing(svc, monkeypatch):
    ran = _searches(monkeypatch)
    cancel = threading.Event()
    cancel.set()  # the window closed before the warm-up's worker started
    svc.warm_up(cancel, semantic=True)
    assert ran == []
    with svc.reading() as store:
        assert svc.search_state.codes.matrix(store).state is None


def test_a_cancel_interrupts_a_long_read_on_the_warm_up_s_connection(svc):
    cancel = threading.Event()
    cancel.set()
    long_read = ("with recursive c(x) as (select 1 union all select x + 1 from c where x < 5000000) "
                 "select count(*) from c")
    with svc.reading() as store:
        with pytest.raises(Cancelled), store.cancellable(cancel):
            store.conn.execute(long_read).fetchall()  # stops within a few thousand steps, not 5 million rows
        assert store.code_count() == 30  # the connection reads normally afterwards


def test_warm_up_with_a_reranker_configured_asks_no_server(tmp_path, monkeypatch):
    import dataclasses

    base = Settings(db_path=str(tmp_path / "r.db"))
    settings = dataclasses.replace(base, search=dataclasses.replace(base.search, rerank=True,
                                                                      rerank_url="http://127.0.0.1:9/v1/rerank"))
    service = MemoryService(settings, embedder=HashEmbedder(64))
    try:
        ran = _searches(monkeypatch)
        service.warm_up(semantic=True)  # an empty library: nothing to load, the path still runs
        assert ran == ["keyword"]
    finally:
        service.close()
