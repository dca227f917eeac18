"""Search state is owned per service: closing a service frees its code matrices, and services on different
libraries never share or evict each other's (issue 31, item 7)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from desktop_memory.config import SearchSettings, Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.retrieve import dense
from desktop_memory.retrieve.search_state import SearchState
from desktop_memory.retrieve.searcher import Searcher
from desktop_memory.service import MemoryService

QUERY = "compost for the tomatoes"


def _library(root: Path, name: str) -> tuple[Path, Path]:
    notes = root / f"{name}-notes"
    notes.mkdir()
    for i in range(12):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\nTopic {i}: gardens, tomatoes and compost number {i}.\n")
    return notes, root / f"{name}.db"


def _service(db: Path) -> MemoryService:
    return MemoryService(Settings(db_path=str(db)), embedder=HashEmbedder(64))


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    notes, db = _library(tmp_path, "lib")
    svc = _service(db)
    svc.index_paths([notes])
    svc.close()
    return db


def test_closing_the_service_frees_its_code_matrices(lib):
    svc = _service(lib)
    assert svc.search_outcome(QUERY, backend="hybrid").results
    assert svc.search_state.nbytes() > 0  # the dense lane's matrices, kept for the next query
    with svc.reading() as store:
        matrix = weakref.ref(svc.search_state.codes.matrix(store))
    assert matrix() is not None
    svc.close()
    gc.collect()
    assert matrix() is None  # nothing else in the process kept them
    assert svc.search_state.nbytes() == 0


def test_reopening_the_same_library_in_a_new_service_searches_with_its_own_state(lib):
    first = _service(lib)
    before = [r.chunk_id for r in first.search_outcome(QUERY, backend="dense").results]
    first.close()
    again = _service(lib)
    try:
        assert again.search_state is not first.search_state
        assert [r.chunk_id for r in again.search_outcome(QUERY, backend="dense").results] == before
        assert again.search_state.nbytes() > 0
    finally:
        again.close()


def test_services_on_different_libraries_do_not_evict_each_other(tmp_path, monkeypatch):
    """Five libraries open at once (more than the old process-wide cache of four): each service's matrices stay
    loaded, so searching the first library again reads no codes."""
    services = []
    for i in range(5):
        notes, db = _library(tmp_path, f"lib{i}")
        svc = _service(db)
        svc.index_paths([notes])
        services.append(svc)
    loads: list[str] = []
    real_load = dense._load
    monkeypatch.setattr(dense, "_load", lambda store, after: loads.append(store.path.name) or real_load(store, after))
    try:
        for svc in services:
            assert svc.search_outcome(QUERY, backend="dense").results
        assert sorted(loads) == [f"lib{i}.db" for i in range(5)]
        loads.clear()
        for svc in services:
            assert svc.search_outcome(QUERY, backend="dense").results
        assert loads == []  # each library's matrices were still its service's
        services[0].close()
        assert services[0].search_state.nbytes() == 0
        assert all(svc.search_state.nbytes() > 0 for svc in services[1:])  # the others keep theirs
    finally:
        for svc in services:
            svc.close()


def test_a_searcher_without_a_state_owns_one_and_a_closed_state_keeps_nothing(lib):
    svc = _service(lib)
    try:
        with svc.reading() as store:
            own = Searcher(SearchSettings())
            assert own.state is not svc.search_state
            assert own.search(store, HashEmbedder(64), QUERY, backend="dense").results
            assert own.state.nbytes() > 0 and svc.search_state.nbytes() == 0
            state = SearchState()
            state.close()
            after_close = Searcher(SearchSettings(), state)
            assert after_close.search(store, HashEmbedder(64), QUERY, backend="dense").results  # still searches
            assert state.nbytes() == 0  # ... and keeps nothing
    finally:
        svc.close()


def test_closing_the_service_drops_the_keyword_lane_s_answers_for_its_library(lib):
    from desktop_memory.retrieve import compounds, keyword

    svc = _service(lib)
    path = str(svc.db_path)
    assert svc.search_outcome(QUERY, backend="keyword").results

    def held() -> list[tuple]:
        return [k for cache in (keyword._N_CACHE, keyword._SPAN_CACHE, keyword._SAMPLES, compounds._CACHE)
                for k in cache if k[0] == path]

    assert held()  # counted once per content version, for the next query
    svc.close()
    assert held() == []
