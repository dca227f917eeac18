"""The Library's paged listing (store/doc_listing.py) on a real SQLite library of a few thousand documents: the
folder summaries and pages equal what grouping every document gives, they come from the folder index (no scan of
the documents or chunks), and ``stats`` counts stay exact without reading every chunk."""

from __future__ import annotations

import pytest

from desktop_memory.library_listing import SORT_KEYS, listing_from_documents
from desktop_memory.models import LibraryQuery
from desktop_memory.service import MemoryService
from desktop_memory.store import doc_listing
from tests.support.listing import build_library


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> MemoryService:
    svc = build_library(tmp_path_factory.mktemp("listing") / "lib.db", 2500)
    yield svc
    svc.close()


QUERIES = [LibraryQuery(), LibraryQuery(sort="size", descending=True), LibraryQuery(sort="status"),
           LibraryQuery(sort="vectors", descending=True), LibraryQuery(sort="mtime"), LibraryQuery(sort="reason"),
           LibraryQuery(needle="doc-0001"), LibraryQuery(needle="FAILED"), LibraryQuery(problems_only=True),
           LibraryQuery(needle="reason 1", problems_only=True, sort="name", descending=True),
           LibraryQuery(sort="chunks", descending=True), LibraryQuery(sort="indexed_at")]


def test_every_sort_key_is_tested_against_the_reference_grouping() -> None:
    """The store renders each key of the listing's one table as SQL: every key is compared above."""
    assert {q.sort for q in QUERIES} == {k.name for k in SORT_KEYS}


@pytest.mark.parametrize("query", QUERIES, ids=repr)
def test_paged_listing_equals_grouping_every_document(library: MemoryService, query: LibraryQuery) -> None:
    expected = listing_from_documents(library.documents(), query)
    got = library.library_listing(query, {}, eager_limit=0)
    assert not got.complete and got.files == {}  # nothing asked for: folder summaries only
    assert got.total_documents == len(library.documents())
    assert sorted(got.folders, key=lambda f: f.key) == sorted(expected.folders, key=lambda f: f.key)
    for folder in got.folders:  # every folder read back a page at a time equals its whole sorted list
        pages, offset = [], 0
        while batch := library.library_page(query, folder.key, offset, 97):
            pages.extend(batch)
            offset += len(batch)
        assert pages == expected.files[folder.key], folder.key
    first = {f.key: 10 for f in got.folders}
    asked = library.library_listing(query, first, eager_limit=0)
    assert asked.files == {k: v[:10] for k, v in expected.files.items()}


def test_a_small_library_comes_whole_and_unfiltered(library: MemoryService) -> None:
    got = library.library_listing(LibraryQuery(needle="doc-0001"), {}, eager_limit=10**6)
    assert got.complete and sum(len(v) for v in got.files.values()) == got.total_documents


def test_listing_reads_the_folder_index_not_the_tables(library: MemoryService) -> None:
    """The first screen's queries are ranges of documents_folder (a scan of an index without the table's rows;
    a page: one range), so they cost what they return, not the library's size."""
    with library.reading() as store:
        key = doc_listing._D_FOLDER_KEY
        plans = {
            "folders": f"select {key}, count(*), sum(d.n_chunks), sum(d.size), max(d.mtime) from documents d "
                       f"group by {key}",
            "page": f"select d.id from documents d where {key} = ? order by d.path collate nocase, d.id limit 200",
        }
        for name, sql in plans.items():
            args = ["/lib/a/"] if "?" in sql else []
            detail = " ".join(str(r[3]) for r in store.conn.execute(f"explain query plan {sql}", args))
            assert "COVERING INDEX documents_folder" in detail, (name, detail)
            if name == "page":
                assert "SEARCH d USING COVERING INDEX documents_folder" in detail, detail


def test_stats_counts_are_exact_without_scanning_chunks(library: MemoryService) -> None:
    stats = library.stats()
    with library.reading() as store:
        chunks, embedded, dups = store.conn.execute(
            "select count(*), sum(embedded), sum(dup_of is not null) from chunks").fetchall()[0]
    assert (stats.chunks, stats.vectors, stats.duplicates) == (chunks, embedded, dups)
    assert dups > 0 and 0 < embedded < chunks


def test_folders_do_not_count_vectors_while_a_long_embedding_runs(library: MemoryService, monkeypatch) -> None:
    """Past the limit of waiting chunks the folders' Semantic figure is not joined (13 s at 1M all pending): it
    says it is unknown; each file's own figure stays exact (gui: test_library_view rolls the unknown up)."""
    monkeypatch.setattr(doc_listing, "PER_FOLDER_PENDING_LIMIT", 10)
    got = library.library_listing(LibraryQuery(), {"/lib/a/": 5}, eager_limit=0)
    assert got.folders and all(f.vectors == -1 for f in got.folders)
    expected = listing_from_documents(library.documents(), LibraryQuery())
    assert got.files["/lib/a/"] == expected.files["/lib/a/"][:5]
