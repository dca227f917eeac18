"""The Library's listing for either store: the SQLite file's comes from indexed SQL (store/doc_listing.py); a
PostgreSQL library's is grouped here in memory from ``list_documents()`` (one query), the same folders, counts and
orders. In memory because a team library's Library lists what people browse (thousands of files), and the
listing module then needs no second dialect of its SQL."""

from __future__ import annotations

from collections.abc import Mapping

from ..models import DocumentInfo, FolderSummary, LibraryListing, LibraryQuery, folder_key_of, folder_path
from . import doc_listing
from .protocol import LibraryStore
from .repository import Store

_KEYS = {
    "name": lambda d: d.path.lower(),
    "status": lambda d: d.status,
    "chunks": lambda d: d.chunks,
    "vectors": lambda d: d.vectors,
    "size": lambda d: d.size,
    "mtime": lambda d: d.mtime,
    "indexed_at": lambda d: d.indexed_at,
    "reason": lambda d: d.error,
}


def _matching(docs: list[DocumentInfo], query: LibraryQuery) -> list[DocumentInfo]:
    needle = query.needle.strip().lower()
    out = [d for d in docs if not needle or needle in f"{d.path} {d.status} {d.error}".lower()]
    return [d for d in out if d.status in ("failed", "skipped")] if query.problems_only else out


def _sorted(docs: list[DocumentInfo], query: LibraryQuery) -> list[DocumentInfo]:
    key = _KEYS.get(query.sort, _KEYS["name"])
    by_id = sorted(docs, key=lambda d: d.id)  # ties by id, as the SQL orders them
    return sorted(by_id, key=key, reverse=query.descending)


def _grouped(docs: list[DocumentInfo], query: LibraryQuery) -> dict[str, list[DocumentInfo]]:
    out: dict[str, list[DocumentInfo]] = {}
    for d in _sorted(_matching(docs, query), query):
        out.setdefault(folder_key_of(d.path), []).append(d)
    return out


def _summaries(groups: dict[str, list[DocumentInfo]]) -> list[FolderSummary]:
    return [FolderSummary(key=k, path=folder_path(k), files=len(ds), failed=sum(d.status == "failed" for d in ds),
                          skipped=sum(d.status == "skipped" for d in ds), chunks=sum(d.chunks for d in ds),
                          vectors=sum(d.vectors for d in ds), size=sum(d.size for d in ds),
                          mtime=max(d.mtime for d in ds), indexed_at=max(d.indexed_at for d in ds))
            for k, ds in groups.items()]


def listing(store: LibraryStore, query: LibraryQuery, pages: Mapping[str, int], eager_limit: int) -> LibraryListing:
    """Folder summaries and the first ``pages[key]`` files of the folders asked for (see doc_listing.listing)."""
    if isinstance(store, Store):
        return doc_listing.listing(store, query, pages, eager_limit)
    docs = store.list_documents()
    if len(docs) <= eager_limit:
        whole = LibraryQuery(sort=query.sort, descending=query.descending)
        groups = _grouped(docs, whole)
        return LibraryListing(query=query, folders=_summaries(groups), files=groups, total_documents=len(docs),
                              complete=True)
    groups = _grouped(docs, query)
    files = {k: groups[k][:n] for k, n in pages.items() if k in groups and n > 0}
    return LibraryListing(query=query, folders=_summaries(groups), files=files, total_documents=len(docs))


def page(store: LibraryStore, query: LibraryQuery, key: str, offset: int, limit: int) -> list[DocumentInfo]:
    """Rows ``offset`` .. ``offset + limit`` of folder ``key``'s own files, in the query's order."""
    if isinstance(store, Store):
        return doc_listing.page(store, query, key, offset, limit)
    return _grouped(store.list_documents(), query).get(key, [])[offset:offset + limit]
