"""The service end to end on BOTH stores: a folder of real files indexed into a SQLite library and into a
PostgreSQL + pgvector library (a real server: tests/support/postgres.py), then searched with every backend, a
context built, a passage read back, a folder removed, checked and compacted. Same calls, same answers."""

from __future__ import annotations

import shutil

import pytest

from desktop_memory.config import Settings
from desktop_memory.embed.hashing import HashEmbedder
from desktop_memory.models import LibraryQuery
from desktop_memory.retrieve.highlight import MARK_END, MARK_START
from desktop_memory.service import MemoryService
from tests.conftest import EVAL
from tests.support.postgres import pg_server, pg_url  # noqa: F401

NOTES = EVAL.parent / "notes_small"


@pytest.fixture(params=["sqlite", "postgres"])
def service(request, tmp_path):
    db = str(tmp_path / "m.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    svc = MemoryService(Settings(), db_path=db, embedder=HashEmbedder(64))
    yield svc
    svc.close()


def test_index_search_context_remove_on_either_store(service, tmp_path):
    folder = tmp_path / "notes"
    shutil.copytree(NOTES, folder)
    summary = service.index_paths([folder])
    indexed = [o for o in summary.outcomes if o.status == "indexed"]
    assert len(indexed) >= 8 and summary.chunks_embedded > 0
    stats = service.stats()
    assert stats.pending_vectors == 0 and stats.chunks > 0
    assert stats.db_path.startswith("postgresql://") or stats.db_path.endswith("m.db")  # the library, as given

    listing = service.library_listing(LibraryQuery(), {}, eager_limit=1000)  # the Library, whole
    assert listing.complete and listing.total_documents == len(summary.outcomes)
    assert [f.path for f in listing.folders] == [str(folder)] and listing.folders[0].chunks == stats.chunks
    assert listing.roots == [str(folder)]  # the library folders: the Library's top rows
    paged = service.library_listing(LibraryQuery(sort="size", descending=True), {listing.folders[0].key: 3},
                                    eager_limit=0)
    sizes = [d.size for d in paged.files[listing.folders[0].key]]
    assert len(sizes) == 3 and sizes == sorted(sizes, reverse=True)
    more = service.library_page(LibraryQuery(sort="size", descending=True), listing.folders[0].key, 3, 100)
    assert [d.size for d in more] == sorted((d.size for d in more), reverse=True)
    assert max(d.size for d in more) <= sizes[-1]

    for backend in ("keyword", "hybrid", "dense"):
        results = service.search_outcome("sourdough starter levain", backend=backend, top_k=5).results
        assert results, backend
        if backend != "dense":  # hash vectors carry no meaning; the keyword evidence must put the loaf first
            assert results[0].source.endswith("sourdough.md"), (backend, [r.source for r in results])
    outcome = service.search_outcome("sourdough starter", backend="hybrid", marks=True)
    assert outcome.notes == [] and {"fts", "dense"} <= set(outcome.timings_ms)  # both lanes ran, nothing fell back
    assert outcome.marked and any(f"{MARK_START}starter{MARK_END}" in t.lower() for t in outcome.marked.values())
    rep = service.context_outcome("sourdough starter", backend="keyword")[0]
    assert "[Source: notes/sourdough.md" in rep.text

    hit = service.search_outcome("Lisbon", backend="keyword", top_k=3).results[0]
    around = service.passage(hit.chunk_id)
    assert around is not None and around.passage.source.endswith("travel-lisbon.md")

    gone = service.remove_paths([folder / "travel-lisbon.md"], exclude=True)
    assert gone == 1
    hits = service.search_outcome("Lisbon", backend="keyword").results
    assert not [r for r in hits if r.source.endswith("travel-lisbon.md")]
    assert service.check() == []
    before, after = service.compact()
    assert before > 0 and after > 0
