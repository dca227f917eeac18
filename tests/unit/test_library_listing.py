"""desktop_memory.library_listing: the Library's one table of sort keys, its filter and the in-memory reference
grouping (the store's SQL is compared with it on a real library in test_doc_listing.py)."""

from __future__ import annotations

from desktop_memory.gui.library_tree import COLUMNS, TreeSpec
from desktop_memory.library_listing import (
    SORT_KEYS,
    folder_key_of,
    folder_path,
    listing_from_documents,
    order_sql,
    shown_status,
    sort_documents,
    sort_key,
)
from desktop_memory.models import DocumentInfo, FileOutcome, LibraryQuery
from desktop_memory.store import doc_listing


def _doc(i: int, path: str, status: str = "indexed", size: int = 10, error: str = "") -> DocumentInfo:
    return DocumentInfo(i, path, "text", status, error, size, 1.0, 2.0, 3, 1)


def test_one_table_gives_the_columns_the_queries_and_the_sql() -> None:
    assert [k.name for k in SORT_KEYS] == ["name", "status", "chunks", "vectors", "size", "mtime", "indexed_at",
                                           "reason"]
    assert [k.label for k in SORT_KEYS] == COLUMNS
    for col, key in enumerate(SORT_KEYS):  # a click on a column asks the store for that column's key
        assert TreeSpec(sort_col=col).query().sort == key.name
        assert order_sql(LibraryQuery(sort=key.name)) == f"{key.sql}, d.id"
        assert order_sql(LibraryQuery(sort=key.name, descending=True)) == f"{key.sql} desc, d.id"
    assert TreeSpec(sort_col=99).query().sort == "name"
    assert sort_key("no such key") is SORT_KEYS[0]
    assert not hasattr(doc_listing, "_ORDER")  # the store keeps no table of its own


def test_every_key_reads_a_field_of_a_document_and_of_a_library_row() -> None:
    from desktop_memory.gui.library_tree import _Node, file_node

    doc = _doc(1, "/a/B.md", error="why")
    row = file_node(doc, _Node("/a"), {})
    for key in SORT_KEYS:
        assert key.of(doc) == key.of_row(row), key.name
    assert sort_key("name").of(doc) == "/a/b.md"  # without case, as SQL's collate nocase


def test_sorting_keeps_ties_in_id_order_in_both_directions() -> None:
    docs = [_doc(3, "/a/c", size=5), _doc(1, "/a/a", size=5), _doc(2, "/a/b", size=9)]
    sort_documents(docs, LibraryQuery(sort="size"))
    assert [d.id for d in docs] == [1, 3, 2]
    sort_documents(docs, LibraryQuery(sort="size", descending=True))
    assert [d.id for d in docs] == [2, 1, 3]  # "size desc, d.id": ties stay ascending


def test_grouping_filters_by_the_shown_status_and_problems() -> None:
    docs = [_doc(1, "/a/x.md"), _doc(2, "/a/y.pdf", "failed", error="no text"), _doc(3, "/b/z.md", "skipped"),
            _doc(4, "C:\\w\\v.md")]
    outcomes = {"/a/x.md": FileOutcome("/a/x.md", "unchanged"), "/b/z.md": FileOutcome("/b/z.md", "skipped",
                                                                                         "too big")}
    assert shown_status(docs[0], outcomes) == ("unchanged", "")
    assert shown_status(docs[2], outcomes) == ("skipped", "too big")
    whole = listing_from_documents(docs, LibraryQuery())
    assert sorted(whole.files) == ["/a/", "/b/", "C:\\w\\"]
    a = next(f for f in whole.folders if f.key == "/a/")
    assert (a.path, a.files, a.failed, a.skipped, a.chunks, a.size) == ("/a", 2, 1, 0, 6, 20)
    assert list(listing_from_documents(docs, LibraryQuery(problems_only=True)).files) == ["/a/", "/b/"]
    found = listing_from_documents(docs, LibraryQuery(needle="UNCHANGED"), outcomes)
    assert [d.id for g in found.files.values() for d in g] == [1]
    assert [d.id for g in listing_from_documents(docs, LibraryQuery(needle="too big"), outcomes).files.values()
            for d in g] == [3]


def test_folder_keys_for_posix_and_windows_paths() -> None:
    assert folder_key_of("/a/b/c.md") == "/a/b/"
    assert folder_key_of("/c.md") == "/"
    assert folder_key_of("C:\\notes\\a.md") == "C:\\notes\\"
    assert folder_key_of("C:\\a.md") == "C:\\"
    assert folder_key_of("name") == ""
    assert [folder_path(k) for k in ("/a/b/", "/", "C:\\notes\\", "C:\\")] == ["/a/b", "/", "C:\\notes", "C:\\"]
