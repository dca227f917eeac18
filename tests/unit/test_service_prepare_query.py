"""MemoryService.prepare_query: the window has the query's vector made as it is typed; the search takes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_memory.config import Settings
from desktop_memory.service import MemoryService
from tests.unit.retrieve.test_query_vectors import CountingEmbedder


def _notes(folder: Path) -> Path:
    folder.mkdir()
    for i in range(30):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nTopic {i}: gardens, tomatoes and compost number {i}.\n")
    return folder


@pytest.fixture
def svc(tmp_path: Path):
    emb = CountingEmbedder()
    service = MemoryService(Settings(db_path=str(tmp_path / "lib.db")), embedder=emb)
    service.index_paths([_notes(tmp_path / "notes")])
    yield service
    service.close()


def test_a_prepared_query_is_not_embedded_again_and_ranks_the_same(svc, tmp_path):
    emb = svc.embedder
    plain = svc.search_outcome("compost for tomatoes", backend="hybrid")
    assert emb.asked.count("compost for tomatoes") == 1 and plain.timings_ms["embed"] >= 0

    assert svc.prepare_query("how deep are gardens", backend="hybrid") is True
    assert emb.asked.count("how deep are gardens") == 1
    out = svc.search_outcome("how deep are gardens", backend="hybrid")
    assert emb.asked.count("how deep are gardens") == 1  # the search took the typed vector
    assert out.timings_ms["embed"] < 50  # it waited for nothing (the vector was there)

    # the same ranking as a service that never prepared it (a fresh library of the same files)
    other = MemoryService(Settings(db_path=str(tmp_path / "other.db")), embedder=CountingEmbedder())
    try:
        other.index_paths([tmp_path / "notes"])
        again = other.search_outcome("how deep are gardens", backend="hybrid")
    finally:
        other.close()
    assert [(r.source, r.chunk_id) for r in out.results] == [(r.source, r.chunk_id) for r in again.results]


def test_nothing_is_embedded_for_a_keyword_search_or_an_empty_box(svc):
    emb = svc.embedder
    before = list(emb.asked)
    assert svc.prepare_query("gardens", backend="keyword") is False
    assert svc.prepare_query("   ", backend="hybrid") is False
    assert emb.asked == before


def test_a_failing_embedder_is_reported_by_the_search_not_the_prepare(tmp_path):
    emb = CountingEmbedder()
    service = MemoryService(Settings(db_path=str(tmp_path / "lib.db")), embedder=emb)
    try:
        service.index_paths([_notes(tmp_path / "notes")])
        emb.fail = True
        assert service.prepare_query("gardens at night", backend="hybrid") is False
        out = service.search_outcome("gardens at night", backend="hybrid")
        assert out.results and any("semantic lane off" in n or "server said no" in n for n in out.notes), out.notes
        emb.fail = False  # the failure was not remembered: the next search embeds it and uses both lanes
        out = service.search_outcome("gardens at night", backend="hybrid")
        assert "dense" in out.timings_ms and emb.asked.count("gardens at night") == 3
    finally:
        service.close()
