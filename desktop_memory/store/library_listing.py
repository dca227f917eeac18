"""The Library's listing for either store: the SQLite file's comes from indexed SQL (store/doc_listing.py); a
PostgreSQL library's is grouped in memory from ``list_documents()`` (one query) by the one listing module
(desktop_memory/library_listing.py), so both give the same folders, counts and orders and the listing needs no
second SQL dialect. In memory because a team library's Library lists what people browse (thousands of files)."""

from __future__ import annotations

from collections.abc import Mapping

from ..library_listing import listing_from_documents
from ..models import DocumentInfo, LibraryListing, LibraryQuery
from . import doc_listing
from .protocol import LibraryStore
from .repository import Store


def listing(store: LibraryStore, query: LibraryQuery, pages: Mapping[str, int], eager_limit: int) -> LibraryListing:
    """Folder summaries and the first ``pages[key]`` files of the folders asked for (see doc_listing.listing)."""
    if isinstance(store, Store):
        return doc_listing.listing(store, query, pages, eager_limit)
    docs = store.list_documents()
    if len(docs) <= eager_limit:
        whole = listing_from_documents(docs, LibraryQuery(sort=query.sort, descending=query.descending))
        whole.query = query
        whole.complete = True
        return whole
    found = listing_from_documents(docs, query)
    found.files = {k: found.files[k][:n] for k, n in pages.items() if k in found.files and n > 0}
    return found


def page(store: LibraryStore, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
    """Rows ``offset`` .. ``offset + limit`` of folder ``key``'s own files, in the query's order."""
    if isinstance(store, Store):
        return doc_listing.page(store, query, key, offset, limit)
    return listing_from_documents(store.list_documents(), query).files.get(key, [])[offset:offset + limit]
